"""Reductions (kernel ``reduce``): dense sum / mean / prod / nansum / nanprod / max / min / norm /
argmax / argmin over every axis spelling, csr and row_sparse sums, ``_square_sum``, ``getnnz``.

Oracles: numpy in float64 (int64 for integers) rounded once into the dtype, scipy for sparse
inputs; MXNet 1.9.1's choices where only MXNet defines them (shapes of full reductions, integer
mean truncation, error classes) are written out by hand from asking MXNet.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.device import DeviceArray, buffers
from sparsegen.errors import StorageFallbackWarning

OPS = ("sum", "mean", "prod", "nansum", "nanprod", "max", "min", "norm1", "norm2")


def _values(draw, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return rng.integers(-9, 10, size=shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    special = draw(st.sampled_from((None, np.nan, np.inf, -np.inf, -0.0)))
    if special is not None and x.size:
        x.flat[rng.integers(0, x.size, size=1 + x.size // 7)] = special
    return x


@st.composite
def reductions(draw):
    """(values, op, axis argument, keepdims, exclude) over 1-4 dimensions of 0-5 each."""
    dtype = draw(st.sampled_from(("float32", "int32")))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=4)))
    ndim = len(shape)
    axis = draw(st.one_of(
        st.none(),
        st.integers(-ndim, ndim - 1),
        st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(
            lambda axes: tuple(a - ndim if a % 2 else a for a in axes)),
    ))
    return (_values(draw, shape, dtype), draw(st.sampled_from(OPS)), axis, draw(st.booleans()),
            draw(st.booleans()) and axis is not None)


def _axes(axis, exclude: bool, ndim: int) -> tuple[int, ...]:
    """The axes an MXNet reduction reduces (None and () mean all)."""
    if axis is None or axis == ():
        return tuple(range(ndim))
    named = {a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))}
    return tuple(a for a in range(ndim) if (a in named) != exclude)


def _expected(x: np.ndarray, op: str, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """numpy's value in float64 / int64, rounded into x's dtype; MXNet's (1,) for a scalar."""
    wide = x.astype(np.float64 if x.dtype.kind == "f" else np.int64)
    count = int(np.prod([x.shape[a] for a in axes]))
    with np.errstate(all="ignore"):
        if op == "mean" and x.dtype.kind == "i":
            total = wide.sum(axis=axes, keepdims=True)
            got = np.sign(total) * (np.abs(total) // max(count, 1))
        elif op == "mean":
            got = wide.sum(axis=axes, keepdims=True) / count
        elif op == "norm1":
            got = np.abs(wide).sum(axis=axes, keepdims=True)
        elif op == "norm2":
            got = np.sqrt((wide * wide).sum(axis=axes, keepdims=True))
            if x.dtype.kind == "i":
                got = np.floor(got).astype(np.int64)
        else:
            got = getattr(np, op)(wide, axis=axes, keepdims=True)
        got = got.astype(x.dtype)
    if keepdims:
        return got
    kept = tuple(d for a, d in enumerate(x.shape) if a not in axes)
    return got.reshape(kept or (1,))


def _call(a: mx.nd.NDArray, op: str, axis, keepdims: bool, exclude: bool) -> mx.nd.NDArray:
    if op.startswith("norm"):
        return mx.nd.norm(a, ord=int(op[-1]), axis=axis, keepdims=keepdims)
    return getattr(mx.nd, op)(a, axis=axis, keepdims=keepdims, exclude=exclude)


@settings(max_examples=150)
@given(reductions())
def test_dense_reductions_match_numpy(case):
    x, op, axis, keepdims, exclude = case
    if op.startswith("norm"):
        exclude = False
    axes = _axes(axis, exclude, x.ndim)
    a = mx.nd.array(x, dtype=x.dtype)
    if op in ("max", "min") and any(x.shape[d] == 0 for d in axes):
        with pytest.raises(ValueError, match="empty axis"):
            _call(a, op, axis, keepdims, exclude)
        return
    got = _call(a, op, axis, keepdims, exclude)
    want = _expected(x, op, axes, keepdims)
    assert got.stype == "default" and got.dtype == x.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-7, atol=0, equal_nan=True)


@settings(max_examples=60)
@given(st.data())
def test_argmax_argmin_match_numpy(data):
    dtype = data.draw(st.sampled_from(("float32", "int32")))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    x = _values(data.draw, shape, dtype)
    if dtype == "float32" and data.draw(st.booleans()):
        x = np.round(x)  # ties
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    keepdims = data.draw(st.booleans())
    for op in ("argmax", "argmin"):
        got = getattr(mx.nd.array(x, dtype=dtype), op)(axis=axis, keepdims=keepdims)
        want = getattr(np, op)(x if axis is not None else x.reshape(-1), axis=axis or 0)
        shape_want = ((1,) * x.ndim if axis is None else np.expand_dims(want, axis).shape) \
            if keepdims else (np.shape(want) or (1,))
        assert got.dtype == np.dtype(dtype) and got.shape == shape_want, op
        np.testing.assert_array_equal(got.asnumpy().reshape(-1), np.reshape(want, -1), err_msg=op)


def test_mxnet_conventions():
    """Shapes, dtypes and integer rules as MXNet 1.9.1 answers them."""
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert mx.nd.sum(a).shape == (1,) and mx.nd.sum(a, keepdims=True).shape == (1, 1, 1)
    assert mx.nd.sum(a, axis=()).shape == (1,)
    assert mx.nd.sum(a, axis=1, exclude=True, keepdims=True).shape == (1, 3, 1)
    np.testing.assert_array_equal(mx.nd.sum(a, axis=(0, 1, 2), exclude=True).asnumpy(),
                                  np.arange(24).reshape(2, 3, 4))  # nothing reduced: a copy
    np.testing.assert_array_equal(a.sum(1).asnumpy(), np.arange(24).reshape(2, 3, 4).sum(1))
    assert a.argmax(axis=1).dtype == np.float32  # indices in the input's dtype
    ints = mx.nd.array([[-3, 0], [-1, 0]], dtype="int32")
    np.testing.assert_array_equal(ints.mean(axis=1).asnumpy(), [-1, 0])  # truncated
    assert ints.mean(axis=1).dtype == np.int32
    wraps = mx.nd.array([2**31 - 1, 1], dtype="int32").sum()  # as MXNet's int8 100 + 100 = -56
    np.testing.assert_array_equal(wraps.asnumpy(), [-2**31])
    np.testing.assert_array_equal(mx.nd.max(mx.nd.array([-0.0, 0.0])).asnumpy(), [0.0])
    np.testing.assert_array_equal(mx.nd.argmax(mx.nd.array([1, np.nan, 2]), axis=0).asnumpy(), [1])
    np.testing.assert_array_equal(mx.nd.nansum(mx.nd.array([np.nan])).asnumpy(), [0])
    out = mx.nd.zeros((2, 4))
    assert mx.nd.sum(a, axis=1, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.arange(24).reshape(2, 3, 4).sum(1))
    empty = mx.nd.zeros((2, 0))
    np.testing.assert_array_equal(empty.sum(axis=1).asnumpy(), [0, 0])
    np.testing.assert_array_equal(empty.prod(axis=1).asnumpy(), [1, 1])
    assert np.isnan(empty.mean(axis=1).asnumpy()).all()


def test_float32_sums_accumulate_in_float64():
    x = np.array([1e8, 1.0, -1e8] * 1000 + [0.5], dtype=np.float32)
    assert mx.nd.sum(mx.nd.array(x)).asscalar() == 1000.5
    assert mx.nd.sum(mx.nd.array(x.reshape(-1, 1)), axis=0).asscalar() == 1000.5  # _mid


def test_bad_arguments_raise_as_mxnet():
    a = mx.nd.ones((2, 3, 4))
    for call in (lambda: mx.nd.sum(a, axis=3), lambda: mx.nd.sum(a, axis=-4),
                 lambda: mx.nd.sum(a, axis=(1, 1)), lambda: mx.nd.sum(a, axis=(2, -1)),
                 lambda: mx.nd.sum(a, axis=1.0), lambda: mx.nd.sum(a, axis=True),
                 lambda: mx.nd.sum(a, axes=1), lambda: mx.nd.argmax(a, axis=(1, 2)),
                 lambda: mx.nd.norm(a, ord=3), lambda: mx.nd.norm(a, exclude=True),
                 lambda: mx.nd._internal._square_sum(a, axis=0),
                 lambda: mx.nd.contrib.getnnz(a)):
        with pytest.raises(mx.MXNetError):
            call()
    with pytest.raises(ValueError):
        mx.nd.max(mx.nd.zeros((0, 3)), axis=0)
    with pytest.raises(mx.MXNetError, match="out"):
        mx.nd.sum(a, axis=1, out=mx.nd.zeros((2, 3)))


@st.composite
def sparse_matrices(draw):
    rows, cols = draw(st.integers(0, 30)), draw(st.integers(0, 7))
    density = draw(st.sampled_from((0.0, 0.2, 1.0)))
    seed = draw(st.integers(0, 2**32 - 1))
    x = scipy.sparse.random(rows, cols, density=density, format="csr", dtype=np.float32,
                            random_state=seed).toarray()
    if draw(st.booleans()) and x.size:
        x[0, 0] = draw(st.sampled_from((np.nan, np.inf)))
    return x


@settings(max_examples=60)
@given(sparse_matrices(), st.sampled_from(("csr", "row_sparse")),
       st.sampled_from(("sum", "mean", "norm2")), st.sampled_from((None, 0, 1, -1, (0, 1))),
       st.booleans())
@example(np.zeros((2, 0), np.float32), "row_sparse", "mean", 1, False)  # 0 / 0 per row: NaN
@example(np.zeros((0, 3), np.float32), "row_sparse", "mean", 0, True)
def test_sparse_sum_mean_norm_on_sparse_kernels(x, stype, op, axis, keepdims):
    a = mx.nd.array(x).tostype(stype)
    axes = _axes(axis, False, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StorageFallbackWarning)
        got = _call(a, op, axis, keepdims, False)
    want = _expected(x, op, axes, keepdims)
    assert got.stype == "default" and got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-7, atol=0, equal_nan=True)


def test_other_sparse_reductions_fall_back_with_the_warning():
    x = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, -5, 0]], dtype=np.float32)
    for stype in ("csr", "row_sparse"):
        a = mx.nd.array(x).tostype(stype)
        with pytest.warns(StorageFallbackWarning):
            np.testing.assert_array_equal(mx.nd.min(a, axis=0).asnumpy(), x.min(0))
        with pytest.warns(StorageFallbackWarning):
            np.testing.assert_array_equal(a.argmax(axis=1).asnumpy(), x.argmax(1))


def test_square_sum_and_getnnz():
    x = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, -5, 0]], dtype=np.float32)
    rsp = mx.nd.array(x).tostype("row_sparse")
    square = mx.nd._internal._square_sum
    np.testing.assert_array_equal(square(rsp, axis=0).asnumpy(), (x * x).sum(0))
    assert square(rsp, axis=0, keepdims=True).shape == (1, 4)
    by_row = square(rsp, axis=1)
    assert by_row.stype == "default"
    np.testing.assert_array_equal(by_row.asnumpy(), (x * x).sum(1))
    kept = square(rsp, axis=1, keepdims=True)
    assert kept.stype == "row_sparse" and kept.shape == (3, 1)
    np.testing.assert_array_equal(kept.asnumpy(), (x * x).sum(1, keepdims=True))
    np.testing.assert_array_equal(kept.indices.asnumpy(), [0, 2])
    for axis in (None, -1, (0, 1)):
        with pytest.raises(mx.MXNetError):
            square(rsp, axis=axis)
    csr = mx.nd.array(x).tostype("csr")
    nnz = mx.nd.contrib.getnnz(csr)
    assert nnz.dtype == np.int64 and nnz.shape == (1,) and nnz.asscalar() == 4
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(csr, axis=1).asnumpy(), [2, 0, 2])
    for axis in (0, -1, 2):
        with pytest.raises(mx.MXNetError):
            mx.nd.contrib.getnnz(csr, axis=axis)
    np.testing.assert_array_equal(mx.nd.sparse.sum(csr, axis=0).asnumpy(), x.sum(0))


def test_reductions_on_an_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    ctx = mx.gpu(0)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 600)).astype(np.float32)
    x[rng.random(40) < 0.5] = 0
    dense, csr = mx.nd.array(x, ctx=ctx), mx.nd.array(x, ctx=ctx).tostype("csr")
    rsp = mx.nd.array(x, ctx=ctx).tostype("row_sparse")
    results = {
        "sum0": (dense.sum(axis=0), x.sum(0)),
        "max1": (dense.max(axis=1), x.max(1)),
        "argmin0": (dense.argmin(axis=0), x.argmin(0).astype(np.float32)),
        "csr sum0": (mx.nd.sum(csr, axis=0), x.sum(0)),
        "csr mean1": (mx.nd.mean(csr, axis=1), x.mean(1)),
        "rsp norm1": (mx.nd.norm(rsp, axis=1), np.linalg.norm(x, axis=1)),
        "square_sum": (mx.nd._internal._square_sum(rsp, axis=0), (x * x).sum(0)),
        "getnnz": (mx.nd.contrib.getnnz(csr, axis=1), (x != 0).sum(1)),
    }
    for name, (got, want) in results.items():
        assert got.context == ctx, name
        assert all(isinstance(b, DeviceArray) for b in buffers(got._storage)), name
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5, err_msg=name)
