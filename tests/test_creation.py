"""Creation ops (``arange``, ``linspace``, ``eye``, the ``*_like`` and sparse creators) against
numpy oracles that compute as MXNet 1.9.1 does (arange in the dtype, linspace in float64)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx

small = st.floats(-50, 50, allow_nan=False).map(lambda v: round(v, 2))


def _arange_oracle(start, stop, step, repeat, dtype):
    """MXNet's arange: start and step cast to the dtype, ``start + i * step`` in the dtype."""
    count = math.ceil((stop - start) / step)
    dt = np.dtype(dtype)
    cast = (lambda v: dt.type(v)) if dt.kind == "f" else (lambda v: dt.type(int(v)))
    i = np.arange(count).astype(dt)
    return np.repeat(cast(start) + i * cast(step), repeat).astype(dt)


@settings(max_examples=40, deadline=None)
@given(small, small, st.sampled_from((0.1, 0.7, 1.0, 3.0, -0.3, -2.0)), st.integers(1, 3),
       st.sampled_from(("float32", "int32")))
def test_arange_against_its_oracle(start, stop, step, repeat, dtype):
    if (stop - start) / step <= 0:
        with pytest.raises(mx.MXNetError, match="empty"):
            mx.nd.arange(start, stop, step, repeat=repeat, dtype=dtype)
        return
    got = mx.nd.arange(start, stop, step, repeat=repeat, dtype=dtype)
    assert got.dtype == np.dtype(dtype) and got.stype == "default"
    np.testing.assert_array_equal(got.asnumpy(), _arange_oracle(start, stop, step, repeat, dtype))


def test_arange_forms_and_errors():
    np.testing.assert_array_equal(mx.nd.arange(5).asnumpy(), np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(mx.nd.arange(3, infer_range=True).asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(mx.nd.arange(1, 7, 2, repeat=2).asnumpy(), [1, 1, 3, 3, 5, 5])
    np.testing.assert_array_equal(mx.nd.arange(0.5, 5, 1.5, dtype="int32").asnumpy(), [0, 1, 2])
    # rounded twice, as MXNet (a fused multiply-add gives 0.49999994): 2 + f32(5 * f32(-0.3))
    assert mx.nd.arange(2.0, 0.0, -0.3).asnumpy()[5] == np.float32(0.5)
    np.testing.assert_array_equal(mx.nd.arange(-2.5, 3, 1, dtype="int32").asnumpy(),
                                  np.arange(-2, 4))
    with pytest.raises(mx.MXNetError, match="step must not be 0"):
        mx.nd.arange(0, 5, 0)
    with pytest.raises(mx.MXNetError, match="repeat"):
        mx.nd.arange(0, 5, repeat=0)
    with pytest.raises(mx.MXNetError, match="empty"):
        mx.nd.arange(5, 0)


@settings(max_examples=30, deadline=None)
@given(small, small, st.integers(0, 40), st.booleans(), st.sampled_from(("float32", "int32")))
def test_linspace_against_float64(start, stop, num, endpoint, dtype):
    got = mx.nd.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    intervals = num - 1 if endpoint else num
    step = (stop - start) / intervals if intervals > 0 else 0.0
    expect = (start + np.arange(num, dtype=np.float64) * step).astype(dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == (num,)
    np.testing.assert_array_equal(got.asnumpy(), expect)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.integers(-7, 7),
       st.sampled_from(("float32", "int32")))
def test_eye_against_numpy(n, m, k, dtype):
    got = mx.nd.eye(n, m, k=k, dtype=dtype)
    np.testing.assert_array_equal(got.asnumpy(), np.eye(n, m or n, k, dtype=dtype))
    assert got.dtype == np.dtype(dtype)
    assert mx.nd.eye(2).dtype == np.float32


def test_like_and_sparse_creators_keep_mxnet_storage_types():
    c = mx.nd.array([[1, 0], [0, 2]], dtype="float64").tostype("csr")
    r = mx.nd.array([[1, 0], [0, 0]]).tostype("row_sparse")
    for made, stype in ((mx.nd.sparse.zeros_like(c), "csr"), (mx.nd.zeros_like(c), "csr"),
                        (mx.nd.sparse.zeros_like(r), "row_sparse"), (mx.nd.ones_like(c), "default"),
                        (mx.nd.sparse.empty("csr", (2, 3)), "csr"),
                        (mx.nd.sparse.empty("row_sparse", (2, 3), dtype="float64"), "row_sparse")):
        assert made.stype == stype
    assert mx.nd.sparse.zeros_like(c).dtype == np.float64
    np.testing.assert_array_equal(mx.nd.ones_like(c).asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(mx.nd.full((2, 2), 3.5, dtype="int32").asnumpy(),
                                  np.full((2, 2), 3, np.int32))


def test_creation_on_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    gpu = mx.gpu(0)
    for got, expect in ((mx.nd.arange(2, 9, 3, ctx=gpu), np.arange(2, 9, 3, dtype=np.float32)),
                        (mx.nd.linspace(0, 1, 5, ctx=gpu), np.linspace(0, 1, 5, dtype=np.float32)),
                        (mx.nd.eye(3, 2, k=-1, ctx=gpu), np.eye(3, 2, -1, dtype=np.float32))):
        assert got.context == gpu
        np.testing.assert_array_equal(got.asnumpy(), expect)
    with mx.gpu(0):
        assert mx.nd.arange(3).context == gpu


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from(("float16", "float32", "float64", "uint8", "int8", "int32", "int64")),
       seed=st.integers(0, 2**16))
def test_from_numpy_shares_memory_and_makes_numpy_read_only(shape, dtype, seed):
    """``mx.nd.from_numpy``: the NDArray reads and writes numpy's memory, numpy's array turns
    read-only; ``zero_copy=False`` copies, leaving numpy's array writeable."""
    values = np.asarray(np.random.default_rng(seed).random(shape) * 100).astype(dtype)
    expected = values.copy()
    shared = mx.nd.from_numpy(values)
    assert shared.dtype == np.dtype(dtype) and shared.shape == shape
    assert shared.context == mx.cpu(0) and not values.flags.writeable
    np.testing.assert_array_equal(shared.asnumpy(), expected)
    shared[:] = 3
    np.testing.assert_array_equal(values, np.full(shape, 3, dtype))  # the write reached numpy
    copied_from = expected.copy()
    copied = mx.nd.from_numpy(copied_from, zero_copy=False)
    assert copied.dtype == np.dtype(dtype) and copied_from.flags.writeable
    copied[:] = 5
    np.testing.assert_array_equal(copied_from, expected)


def test_from_numpy_ops_read_numpy_memory():
    """An op on a shared array reads numpy's current values (no copy was made)."""
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    base = values.ctypes.data
    x = mx.nd.from_numpy(values)
    lhs = mx.nd.sparse.csr_matrix(np.eye(2, 3, dtype=np.float32))
    np.testing.assert_array_equal(mx.nd.dot(lhs, x).asnumpy(), values[:2])
    x += 1  # in place, on the shared memory
    assert values.ctypes.data == base
    np.testing.assert_array_equal(values, np.arange(1, 13, dtype=np.float32).reshape(3, 4))


def test_from_numpy_refusals_name_the_problem():
    with pytest.raises(ValueError, match=r"C-contiguous .* shape \(3, 2\) with strides \(4, 12\)"):
        mx.nd.from_numpy(np.zeros((2, 3), np.float32).T)
    frozen = np.zeros(3, np.float32)
    frozen.flags.writeable = False  # read-only by its owner, not by an earlier from_numpy
    with pytest.raises(ValueError, match="read-only"):
        mx.nd.from_numpy(frozen)
    np.testing.assert_array_equal(mx.nd.from_numpy(frozen, zero_copy=False).asnumpy(), frozen)
    with pytest.raises(TypeError, match="numpy.ndarray, got list"):
        mx.nd.from_numpy([1.0, 2.0])
    with pytest.raises(TypeError, match="zero_copy must be True or False, got 1"):
        mx.nd.from_numpy(np.zeros(2, np.float32), zero_copy=1)
    with pytest.raises(ValueError, match="complex64 is not supported"):
        mx.nd.from_numpy(np.zeros(2, np.complex64))
