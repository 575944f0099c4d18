"""The comparison the MXNet tutorial and example runners (tools/mxnet_tests) make between what
MXNet printed and what sparsegen prints, on hand-written outputs."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "mxnet_tests"))
import recorded  # noqa: E402
from tutorial import cells, python_of  # noqa: E402


def test_exact_output_must_match_number_for_number():
    runs = ["[1. 2.]\n<NDArray 2 @cpu(0)>\n"] * 3
    assert recorded.compare("[1. 2.]\n<NDArray 2 @cpu(0)>\n", runs) is None
    assert recorded.compare("[1.00001 2.]\n<NDArray 2 @cpu(0)>\n", runs) is None  # rounding
    assert "number 1" in recorded.compare("[1. 2.1]\n<NDArray 2 @cpu(0)>\n", runs)
    assert "word 0" in recorded.compare("[1. 2.]\n<CSRNDArray 2 @cpu(0)>\n", runs)
    assert "numbers" in recorded.compare("[1. 2. 3.]\n<NDArray 2 @cpu(0)>\n", runs)
    assert recorded.compare("nan inf", ["nan inf"]) is None
    assert recorded.compare("<class 'sparsegen.ndarray.sparse.CSRNDArray'>",
                            ["<class 'mxnet.ndarray.sparse.CSRNDArray'>"]) is None
    assert recorded.compare("nan -inf", ["nan inf"]) is not None


def test_random_output_compares_words_and_statistics_only():
    runs = ["loss 0.500 draw 0.91 epoch 3", "loss 0.502 draw 0.12 epoch 3",
            "loss 0.501 draw 0.55 epoch 3"]
    assert recorded.compare("loss 0.503 draw 0.37 epoch 7", runs) is None  # 7: equal in all
    assert recorded.compare("loss 0.4995 draw 0.0 epoch 3", runs) is None
    assert "number 0" in recorded.compare("loss 0.520 draw 0.37 epoch 3", runs)
    assert "word" in recorded.compare("cost 0.501 draw 0.37 epoch 3", runs)


def test_statistics_widen_by_twice_the_span_or_stat_rtol():
    runs = ["acc 0.600", "acc 0.601"]
    for got, ok in [(0.5985, True), (0.6025, True), (0.597, False), (0.604, False)]:
        assert (recorded.compare(f"acc {got}", runs) is None) == ok, got
    tiny = ["mse 100.0000", "mse 100.0001"]  # span 1e-4: STAT_RTOL's 0.1 is the widening
    assert recorded.compare("mse 100.09", tiny) is None
    assert recorded.compare("mse 100.2", tiny) is not None


def test_timestamps_speeds_and_addresses_are_never_compared():
    runs = ["2026-12-07 18:30:22,897 Epoch[0] Speed: 1000.00 samples/sec\tmse=3.9 at 0x7f00",
            "2026-12-07 18:30:23,001 Epoch[0] Speed: 1010.00 samples/sec\tmse=3.9 at 0x7f08"]
    got = "2026-12-08 09:01:02,000 Epoch[0] Speed: 99.00 samples/sec\tmse=3.9 at 0xdead"
    assert recorded.compare(got, runs) is None
    assert recorded.numbers(got) == [0.0, 3.9]


def test_numpy_1x_restores_the_removed_aliases():
    options = np.get_printoptions()
    try:
        recorded.numpy_1x()
        assert np.product([2, 3]) == 6 and np.isnan(np.NaN)
        assert repr(np.float64(1.5)) == "1.5"
    finally:
        np.set_printoptions(**options)


@pytest.mark.parametrize("source, want", [
    ("%%timeit\nx = 1\ny = 2", "x = 1\ny = 2"),
    ("%matplotlib inline\nx = 1\n!pip install foo", "x = 1"),
])
def test_notebook_magics(source, want):
    assert python_of(source) == want


def test_cells_are_the_python_fences_with_their_lines():
    markdown = "text\n\n```python\na = 1\n```\n\n```\nnot code\n```\n  ```python\n  b = 2\n  ```\n"
    assert cells(markdown) == [(3, "a = 1"), (10, "b = 2")]
