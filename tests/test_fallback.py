"""Storage fallback: op and storage combinations without a sparse kernel run densely, warn once
per (op, storage types), give the dense values, and keep the storage type of ``out=``."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx


def fallback_warnings(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [w for w in caught if issubclass(w.category, mx.StorageFallbackWarning)]


def rsp(values):
    return mx.nd.array(values).tostype("row_sparse")


def test_tutorial_fallback(fresh_warnings):
    a = rsp([[0, 0], [7, 8], [0, 0], [1, 2], [0, 0]])
    e = mx.nd.sparse.zeros("row_sparse", a.shape)
    d, first = fallback_warnings(lambda: mx.nd.log(a))
    e, second = fallback_warnings(lambda: mx.nd.log(a, out=e))
    assert (a.stype, d.stype, e.stype) == ("row_sparse", "default", "row_sparse")
    assert len(first) == 1 and not second  # one warning per (op, storage types)
    message = str(first[0].message)
    assert "log" in message and "('row_sparse',)" in message
    with np.errstate(divide="ignore"):
        expected = np.log(a.asnumpy())
    np.testing.assert_allclose(d.asnumpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(e.asnumpy(), expected, rtol=1e-6)
    np.testing.assert_array_equal(e.indices.asnumpy(), np.arange(5))  # log(0) = -inf is stored


def test_one_warning_per_op_and_storage_types(fresh_warnings):
    a, c = rsp([[1, 0], [0, 2]]), mx.nd.array([[1, 0], [0, 2]]).tostype("csr")
    calls = [lambda: a / a, lambda: a / a, lambda: a / c, lambda: c / a, lambda: a / c,
             lambda: mx.nd.exp(a), lambda: mx.nd.exp(c), lambda: mx.nd.exp(a), lambda: a + c]
    counts = [len(fallback_warnings(call)[1]) for call in calls]
    assert counts == [1, 0, 1, 1, 0, 1, 1, 0, 1]
    # kernels exist for these: no warning
    assert [len(fallback_warnings(call)[1]) for call in
            (lambda: a + a, lambda: a * mx.nd.ones((2, 2)), lambda: mx.nd.sqrt(c), lambda: a * 3,
             lambda: a + 3, lambda: 3 - c)] == [0] * 6


ORACLES = {"exp": np.exp, "log": np.log, "cos": np.cos, "arccos": np.arccos,
           "rsqrt": lambda v: 1 / np.sqrt(v), "sigmoid": lambda v: 1 / (1 + np.exp(-v))}


@settings(max_examples=30)
@given(st.sampled_from(sorted(ORACLES)),
       st.sampled_from(["row_sparse", "csr"]), st.sampled_from(["default", "row_sparse", "csr"]),
       st.integers(0, 2**32 - 1))
def test_unary_fallback_values_and_out(name, stype, out_stype, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 0.9, size=(6, 3)).astype(np.float32)
    x[rng.random(6) < 0.5] = 0
    array = mx.nd.array(x).tostype(stype)
    out = mx.nd.sparse.zeros(out_stype, x.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mx.StorageFallbackWarning)
        plain = getattr(mx.nd, name)(array)
        into = getattr(mx.nd, name)(array, out=out)
    with np.errstate(divide="ignore"):
        expected = ORACLES[name](x.astype(np.float64)).astype(np.float32)
    assert plain.stype == "default" and into is out and out.stype == out_stype
    np.testing.assert_allclose(plain.asnumpy(), expected, rtol=4e-6)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=4e-6)


@pytest.mark.parametrize("pair", [("row_sparse", "csr"), ("csr", "row_sparse")])
@pytest.mark.parametrize("fn", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("out_stype", ["default", "row_sparse", "csr"])
def test_binary_fallback_values_and_out(fresh_warnings, pair, fn, out_stype):
    a = np.array([[1, 0, 2], [0, 0, 0], [3, 4, 0]], np.float32)
    b = np.array([[0, 5, 1], [0, 0, 0], [2, 0, 0]], np.float32)
    x, y = (mx.nd.array(v).tostype(s) for v, s in zip((a, b), pair))
    out = mx.nd.sparse.zeros(out_stype, a.shape)
    op = getattr(mx.nd, f"elemwise_{fn}")
    result, caught = fallback_warnings(lambda: op(x, y, out=out))
    assert result is out and out.stype == out_stype and len(caught) == 1
    with np.errstate(all="ignore"):
        expected = {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[fn]
    if out_stype == "default" or fn != "div":  # nan rows into a sparse out: see test_elemwise
        np.testing.assert_array_equal(out.asnumpy(), expected)
    assert op(x, y).stype == "default"


def test_inplace_fallback_keeps_the_updated_array(fresh_warnings):
    c = mx.nd.array([[1, 0], [0, 2]]).tostype("csr")
    before = c
    c, caught = fallback_warnings(lambda: _iadd(c, rsp([[0, 1], [0, 1]])))
    assert c is before and c.stype == "csr" and len(caught) == 1
    np.testing.assert_array_equal(c.asnumpy(), [[1, 1], [0, 3]])


def _iadd(x, y):
    x += y
    return x
