"""sort, argsort and topk against numpy oracles: stable in both directions, nan after every
number ascending and before every number descending, every ret_typ, axis and dtype."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue

nd = mx.nd


def _order(x: np.ndarray, axis: int, ascend: bool) -> np.ndarray:
    """The stable order along ``axis``: numpy's (nan last) ascending; descending, nan first,
    then the largest, equal values in position order."""
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    moved = np.moveaxis(x, axis, -1)
    lines = moved.reshape(-1, moved.shape[-1]).astype(np.float64) if x.size else []
    order = np.array([np.lexsort((-line, ~np.isnan(line))) for line in lines], np.int64)
    return np.moveaxis(order.reshape(moved.shape), -1, axis)


@st.composite
def _lines(draw):
    ndim = draw(st.integers(1, 3))
    shape = list(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    axis = draw(st.integers(-ndim, ndim - 1))
    shape[axis] = draw(st.one_of(st.integers(1, 9), st.sampled_from([0, 64, 300])))
    dtype = draw(st.sampled_from(["float32", "float32", "int32"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(-3, 4, size=shape).astype(dtype)  # few values: many ties
    if dtype == "float32" and draw(st.booleans()):
        x[rng.random(shape) < 0.2] = np.nan
        x[rng.random(shape) < 0.1] = np.inf
        x[rng.random(shape) < 0.1] = -0.0
    return x, axis


@settings(max_examples=40)
@given(_lines(), st.booleans())
def test_sort_and_argsort_match_numpy(case, ascend):
    x, axis = case
    order = _order(x, axis, ascend)
    got = nd.argsort(nd.array(x, dtype=x.dtype), axis=axis, is_ascend=ascend, dtype="int64")
    assert got.dtype == np.int64 and got.shape == x.shape
    np.testing.assert_array_equal(got.asnumpy(), order)
    values = nd.sort(nd.array(x, dtype=x.dtype), axis=axis, is_ascend=ascend)
    assert values.dtype == x.dtype
    np.testing.assert_array_equal(values.asnumpy(), np.take_along_axis(x, order, axis))


@settings(max_examples=30)
@given(_lines(), st.booleans(), st.integers(-1, 9), st.sampled_from(["float32", "int32"]))
def test_topk_matches_numpy(case, ascend, k, dtype):
    x, axis = case
    n = x.shape[axis]
    if k > n:
        with pytest.raises(InvalidValue, match="exceeds"):
            nd.topk(nd.array(x, dtype=x.dtype), axis=axis, k=k)
        return
    kk = n if k <= 0 else k
    first = np.take(_order(x, axis, ascend), range(kk), axis=axis)
    a = nd.array(x, dtype=x.dtype)
    values, ids = nd.topk(a, axis=axis, k=k, ret_typ="both", is_ascend=ascend, dtype=dtype)
    assert ids.dtype == np.dtype(dtype) and values.dtype == x.dtype
    np.testing.assert_array_equal(ids.asnumpy(), first)
    np.testing.assert_array_equal(values.asnumpy(), np.take_along_axis(x, first, axis))
    only = a.topk(axis=axis, k=k, is_ascend=ascend)  # ret_typ='indices', float32 by default
    assert only.dtype == np.float32
    np.testing.assert_array_equal(only.asnumpy(), first)
    mask = nd.topk(a, axis=axis, k=k, ret_typ="mask", is_ascend=ascend)
    want = np.zeros(x.shape, x.dtype)
    np.put_along_axis(want, first, 1, axis)
    assert mask.dtype == x.dtype
    np.testing.assert_array_equal(mask.asnumpy(), want)


def test_nan_ties_and_signed_zeros():
    x = np.array([3, 1, np.nan, 2, 1, -np.inf, np.inf, -0.0, 0.0], np.float32)
    np.testing.assert_array_equal(nd.argsort(nd.array(x)).asnumpy(), [5, 7, 8, 1, 4, 3, 0, 6, 2])
    np.testing.assert_array_equal(nd.argsort(nd.array(x), is_ascend=False).asnumpy(),
                                  [2, 6, 0, 3, 1, 4, 7, 8, 5])
    top = nd.topk(nd.array(x), k=2)  # MXNet's defaults: the largest one's index, float32
    np.testing.assert_array_equal(top.asnumpy(), [2, 6])


def test_axis_none_methods_and_errors():
    x = nd.array([[3, 1], [0, 2]])
    np.testing.assert_array_equal(nd.sort(x, axis=None).asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(x.argsort(axis=None).asnumpy(), [2, 1, 3, 0])
    np.testing.assert_array_equal(x.topk(axis=None, k=2).asnumpy(), [0, 3])
    # the mask of the flattened array keeps the input's shape, as MXNet's does
    np.testing.assert_array_equal(nd.topk(x, axis=None, k=2, ret_typ="mask").asnumpy(),
                                  [[1, 0], [0, 1]])
    out = nd.zeros((2, 2))
    assert nd.topk(x, axis=None, k=1, ret_typ="mask", is_ascend=True, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0], [1, 0]])
    np.testing.assert_array_equal(x.sort(axis=0, is_ascend=False).asnumpy(), [[3, 2], [0, 1]])
    assert nd.argsort(x, dtype="uint8").dtype == np.uint8
    with pytest.raises(InvalidValue, match="ret_typ"):
        nd.topk(x, ret_typ="values")
    with pytest.raises(InvalidValue, match="axis 2"):
        nd.sort(x, axis=2)
    with pytest.raises(mx.MXNetError, match="is_ascend"):
        nd.sort(x, is_ascend="yes")
    csr = nd.array([[1.0, 0.0]]).tostype("csr")
    with pytest.warns(mx.StorageFallbackWarning):
        got = nd.sort(csr)
    assert got.stype == "default"
    np.testing.assert_array_equal(got.asnumpy(), [[0, 1]])
