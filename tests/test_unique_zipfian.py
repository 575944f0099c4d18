"""``mx.nd._internal._sample_unique_zipfian`` (kernel ``random_unique_zipfian``): distinct
log-uniform classes per row, against the distribution (a numpy simulation of the same draws)
and MXNet 1.9.1's own bounds, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue

SAMPLE = mx.nd._internal._sample_unique_zipfian


@settings(max_examples=12, deadline=None)
@given(range_max=st.integers(1, 300), batch=st.integers(0, 4), data=st.data())
def test_rows_hold_distinct_classes(range_max: int, batch: int, data) -> None:
    width = data.draw(st.integers(0, range_max))
    mx.random.seed(range_max * 7 + batch)
    classes, tries = SAMPLE(range_max, shape=(batch, width))
    got, draws = classes.asnumpy(), tries.asnumpy()
    assert got.shape == (batch, width) and got.dtype == np.int64 and draws.dtype == np.int64
    for row, count in zip(got, draws):
        assert len(set(row.tolist())) == width
        assert ((0 <= row) & (row < range_max)).all()
        assert count >= width
    mx.random.seed(range_max * 7 + batch)
    again, _ = SAMPLE(range_max, shape=(batch, width))
    np.testing.assert_array_equal(again.asnumpy(), got)  # a seed gives the same classes


def _simulated_tries(range_max: int, width: int, rows: int) -> np.ndarray:
    """Draws until ``width`` distinct classes, by numpy's generator (the distribution's
    oracle: round(exp(u * log(range_max))) - 1)."""
    rng = np.random.default_rng(0)
    counts = []
    for _ in range(rows):
        seen: set[int] = set()
        draws = 0
        while len(seen) < width:
            block = np.floor(np.exp(rng.random(4096) * np.log(range_max)) + 0.5).astype(int) - 1
            for value in block:
                draws += 1
                seen.add(int(value))
                if len(seen) == width:
                    break
        counts.append(draws)
    return np.array(counts)


def test_draw_counts_follow_the_distribution() -> None:
    mx.random.seed(3)
    classes, tries = SAMPLE(1000, shape=(400, 100))
    want = _simulated_tries(1000, 100, 400)
    got = tries.asnumpy()
    # means of 400 rows: within 4 standard errors of each other
    assert abs(got.mean() - want.mean()) < 4 * np.sqrt(got.var() / 400 + want.var() / 400)
    first = classes.asnumpy()[:, 0]  # each row's first class is one plain log-uniform draw
    expected = np.log((np.arange(1000) + 1.5) / np.maximum(np.arange(1000) + 0.5, 1)) / \
        np.log(1000)
    assert abs((first == 0).mean() - expected[0]) < 4 * np.sqrt(expected[0] / 400)


def test_mxnet_bounds() -> None:
    # MXNet 1.9.1's test_unique_zipfian_generator: 8192 of 793472 classes take 14500-17000 draws
    classes, tries = SAMPLE(793472, shape=(2, 8192))
    assert all(14500 < t < 17000 for t in tries.asnumpy())
    assert all(np.unique(row).size == 8192 for row in classes.asnumpy())


def test_refusals() -> None:
    with pytest.raises(InvalidValue, match="cannot exceed range_max 3"):
        SAMPLE(3, shape=(1, 4))
    with pytest.raises(InvalidValue, match=r"shape must be \(batch_size, num_sampled\)"):
        SAMPLE(10, shape=(4,))
    with pytest.raises(mx.MXNetError, match="range_max must be at least 1, got 0"):
        SAMPLE(0, shape=(1, 0))
