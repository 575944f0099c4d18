"""The fast paths of sparse reductions: csr column sums over several chunks of rows
(``csr_cols_*`` in parallel tasks, then ``fold``) and row_sparse row sums written into a dense
vector in one pass (``rsp_rows_*``: gaps zeroed, stored rows reduced).

Oracles: numpy in float64 rounded once into float32 (the kernels accumulate in float64).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.ops import reduce as ops_reduce


def _csr(draw, rows: int, cols: int) -> np.ndarray:
    density = draw(st.sampled_from((0.0, 0.3, 1.0)))
    x = scipy.sparse.random(rows, cols, density=density, format="csr", dtype=np.float32,
                            random_state=draw(st.integers(0, 2**32 - 1))).toarray()
    if draw(st.booleans()) and x.size:
        x[draw(st.integers(0, rows - 1)), 0] = draw(st.sampled_from((np.nan, -np.inf, -0.0)))
    return x


def _want(x: np.ndarray, op: str, axis: int) -> np.ndarray:
    wide = x.astype(np.float64)
    if op == "sum":
        return wide.sum(axis).astype(np.float32)
    if op == "mean":
        with np.errstate(invalid="ignore"):  # 0 / 0 over an empty axis: nan
            return (wide.sum(axis) / x.shape[axis]).astype(np.float32)
    return np.sqrt((wide * wide).sum(axis)).astype(np.float32)


def _call(a: mx.nd.NDArray, op: str, axis: int) -> mx.nd.NDArray:
    return mx.nd.norm(a, axis=axis) if op == "norm" else getattr(mx.nd, op)(a, axis=axis)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(1, 7), st.sampled_from(("sum", "mean", "norm")))
def test_csr_column_sums_over_any_number_of_chunks(data, tasks, op):
    rows, cols = data.draw(st.integers(0, 40)), data.draw(st.integers(1, 9))
    x = _csr(data.draw, rows, cols) if rows else np.zeros((0, cols), np.float32)
    with pytest.MonkeyPatch.context() as patch:  # chunks of a few entries, up to 7 of them
        patch.setattr(ops_reduce, "CHUNK_ENTRIES", 1)
        patch.setattr(ops_reduce, "num_threads", lambda: tasks)
        got = _call(mx.nd.array(x).tostype("csr"), op, 0).asnumpy()
    np.testing.assert_allclose(got, _want(x, op, 0), rtol=2e-7, atol=0, equal_nan=True)


def test_csr_column_sums_of_a_large_matrix_in_parallel_chunks():
    rng = np.random.default_rng(5)
    x = scipy.sparse.random(3000, 40, density=0.8, format="csr", dtype=np.float32,
                            random_state=rng).toarray()  # 96,000 entries: several chunks
    got = mx.nd.sum(mx.nd.array(x).tostype("csr"), axis=0).asnumpy()
    np.testing.assert_allclose(got, _want(x, "sum", 0), rtol=2e-7, atol=0)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.data(), st.sampled_from(("sum", "mean", "norm")))
def test_row_sparse_row_sums_fill_every_gap(rows, cols, data, op):
    stored = sorted(data.draw(st.sets(st.integers(0, rows - 1))))
    x = np.zeros((rows, cols), np.float32)
    x[stored] = np.random.default_rng(len(stored)).standard_normal((len(stored), cols))
    a = mx.nd.sparse.row_sparse_array((x[stored], np.array(stored, np.int64)), shape=x.shape)
    got = _call(a, op, 1).asnumpy()
    np.testing.assert_allclose(got, _want(x, op, 1), rtol=2e-7, atol=0)
    square = mx.nd._internal._square_sum(a, axis=1).asnumpy()
    wide = x.astype(np.float64)
    np.testing.assert_allclose(square, (wide * wide).sum(1).astype(np.float32), rtol=2e-7, atol=0)


def test_both_passes_on_an_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    monkeypatch.setattr(ops_reduce, "CHUNK_ENTRIES", 1)  # a GPU's chunks: several here
    rng = np.random.default_rng(8)
    x = rng.standard_normal((200, 20)).astype(np.float32)
    x[rng.random(x.shape) < 0.3] = 0
    x[rng.random(200) < 0.5] = 0
    ctx = mx.gpu(0)
    csr = mx.nd.array(x, ctx=ctx).tostype("csr")
    rsp = mx.nd.array(x, ctx=ctx).tostype("row_sparse")
    for got, want in ((mx.nd.sum(csr, axis=0), _want(x, "sum", 0)),
                      (mx.nd.sum(rsp, axis=1), _want(x, "sum", 1)),
                      (mx.nd.norm(rsp, axis=1), _want(x, "norm", 1))):
        assert got.context == ctx
        np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-7, atol=0)
