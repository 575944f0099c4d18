"""The ops MXNet's test_sparse_operator.py needed: erf / erfinv / gamma / gammaln (and digamma,
their gradients), _maximum / _minimum / _hypot over the union of sparse positions, the scatter
ops and LeakyReLU's gelu, against numpy / scipy.special oracles."""

import math
import warnings

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx

SPECIAL = np.array([0.0, -0.0, 1, -1, -2.5, np.inf, -np.inf, np.nan, 0.5, 171, 172, -171.5,
                    1e-30, 3.3, -0.7])


def quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, oracle", [("erf", sp.erf), ("gamma", sp.gamma),
                                          ("gammaln", sp.gammaln)])
def test_special_values_match_scipy(name, oracle, dtype):
    x = SPECIAL.astype(dtype)
    want = oracle(x.astype(np.float64)).astype(dtype)
    if name == "gammaln":
        want[x == -np.inf] = np.inf  # C's lgamma(-inf), as MXNet 1.9.1 prints (scipy: -inf)
    got = getattr(mx.nd, name)(mx.nd.array(x, dtype=dtype)).asnumpy()
    # atol: gamma(-171.5) is subnormal in float64 (C), scipy flushes it to 0
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-13,
                               atol=1e-300)
    assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2]))  # 0 and -0.0


@pytest.mark.parametrize("dtype, rtol", [("float32", 3e-7), ("float64", 2e-15)])
def test_erfinv_matches_scipy_to_the_edges(dtype, rtol):
    y = np.array([0.0, -0.0, 1, -1, 0.999, -0.5, 1.5, -1.0001, np.nan, 1e-30, 0.3, 0.7, 0.5,
                  0.5000001, 1 - 1e-7, -(1 - 1e-7), np.nextafter(1, 0), 1e-3]).astype(dtype)
    got = mx.nd.erfinv(mx.nd.array(y, dtype=dtype)).asnumpy()
    want = sp.erfinv(y.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(got, want, rtol=rtol)
    assert np.array_equal(np.signbit(got[:2]), [False, True])


def test_digamma_matches_scipy_with_mxnet_poles():
    z = np.array([0.1, 1, 2.5, 5.99, 6, 10, 100, 1e6, -0.5, -1.5, -2.7, 1e-8, 0, -3, np.inf,
                  np.nan])
    got = mx.nd._internal._digamma(mx.nd.array(z, dtype="float64")).asnumpy()
    want = sp.psi(z)
    want[(z <= 0) & (np.floor(z) == z)] = np.inf  # the poles, as MXNet's test maps them
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("name, zero_kept", [("erf", True), ("erfinv", True), ("softsign", True),
                                             ("gamma", False), ("gammaln", False),
                                             ("reciprocal", False), ("rcbrt", False)])
@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_storage_types(name, zero_kept, stype):
    x = np.array([[0.0, 0], [0.25, -0.5], [0, 0]], dtype=np.float32)
    out = quiet(getattr(mx.nd, name), mx.nd.array(x).tostype(stype))
    assert out.stype == (stype if zero_kept else "default")


DERIVATIVES = {
    "erf": lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x),
    "erfinv": lambda x: np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x) ** 2),
    "gamma": lambda x: sp.gamma(x) * sp.psi(x),
    "gammaln": sp.psi,
    "softsign": lambda x: 1 / (1 + np.abs(x)) ** 2,
    "reciprocal": lambda x: -1 / x ** 2,
    "rcbrt": lambda x: -1 / 3 * np.abs(x) ** (-4 / 3),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), stype=st.sampled_from(["default", "row_sparse", "csr"]),
       rows=st.integers(1, 6))
def test_gradients_match_scipy(name, seed, stype, rows):
    rng = np.random.default_rng(seed)
    lo, hi = (-0.95, 0.95) if name == "erfinv" else (0.2, 3.0)
    x = rng.uniform(lo, hi, (rows, 3))
    head = rng.uniform(-2, 2, (rows, 3))
    data = mx.nd.array(x, dtype="float64").tostype(stype)
    data.attach_grad()
    with mx.autograd.record():
        y = quiet(getattr(mx.nd, name), data)
    y.backward(mx.nd.array(head, dtype="float64"))
    np.testing.assert_allclose(data.grad.asnumpy(), head * DERIVATIVES[name](x), rtol=1e-9)


def test_gelu_value_and_gradient():
    x = np.array([-3.0, -1, -0.25, 0, 0.5, 2, 6])
    data = mx.nd.array(x, dtype="float64")
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(data, act_type="gelu")
    y.backward()
    phi = 0.5 * (1 + sp.erf(x / math.sqrt(2)))
    np.testing.assert_allclose(y.asnumpy(), x * phi, rtol=1e-14, atol=1e-300)
    grad = phi + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(data.grad.asnumpy(), grad, rtol=1e-13)


def _sparse(rng, rows, cols, density, stype):
    x = rng.uniform(-3, 3, (rows, cols))
    x[rng.random(rows) >= density] = 0
    specials = rng.random((rows, cols)) < 0.1
    x[specials] = rng.choice([np.nan, np.inf, -np.inf, -0.0], size=specials.sum())
    return x, mx.nd.array(x, dtype="float64").tostype(stype)


UNION = {"_maximum": np.maximum, "_minimum": np.minimum, "_hypot": np.hypot}


@pytest.mark.parametrize("name", sorted(UNION))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(0, 9), cols=st.sampled_from([1, 4]),
       da=st.floats(0, 1), db=st.floats(0, 1),
       stypes=st.sampled_from([("row_sparse", "row_sparse"), ("csr", "csr"),
                               ("default", "row_sparse"), ("csr", "default")]))
def test_union_ops_match_numpy(name, seed, rows, cols, da, db, stypes):
    rng = np.random.default_rng(seed)
    (a, lhs), (b, rhs) = _sparse(rng, rows, cols, da, stypes[0]), _sparse(rng, rows, cols, db,
                                                                          stypes[1])
    out = quiet(getattr(mx.nd._internal, name), lhs, rhs)
    same = stypes[0] == stypes[1]
    assert out.stype == (stypes[0] if same else "default")
    with np.errstate(all="ignore"):
        want = UNION[name](a, b)
    if name == "_hypot":  # MXNet's scaled formula, within an ulp of libm's
        np.testing.assert_allclose(out.asnumpy(), want, rtol=5e-16)
    else:
        np.testing.assert_array_equal(out.asnumpy(), want)
    if same and stypes[0] == "row_sparse":  # the union of the stored rows, sorted
        want = np.union1d(lhs.indices.asnumpy(), rhs.indices.asnumpy())
        np.testing.assert_array_equal(out.indices.asnumpy(), want)


def test_union_ops_check_their_arguments():
    with pytest.raises(mx.MXNetError, match="shapes"):
        mx.nd._internal._maximum(mx.nd.zeros((2, 3)), mx.nd.zeros((3, 2)))
    with pytest.raises(mx.MXNetError, match="rhs must be an NDArray"):
        mx.nd._internal._hypot(mx.nd.zeros((2, 3)), 2)


@pytest.mark.parametrize("rhs_stype", ["default", "row_sparse", "csr"])
@pytest.mark.parametrize("lhs_stype", ["default", "row_sparse", "csr"])
def test_scatter_elemwise_div_as_mxnet(lhs_stype, rhs_stype):
    rng = np.random.default_rng(3)
    a, lhs = _sparse(rng, 8, 3, 0.5, lhs_stype)
    b, rhs = _sparse(rng, 8, 3, 0.5, rhs_stype)
    out = quiet(mx.nd._internal._scatter_elemwise_div, lhs, rhs)
    with np.errstate(all="ignore"):
        want = a / b
    if lhs_stype == "row_sparse":  # lhs's rows only, others stay 0 (MXNet 1.9.1)
        assert out.stype == "row_sparse"
        np.testing.assert_array_equal(out.indices.asnumpy(), lhs.indices.asnumpy())
        want[~np.isin(np.arange(8), lhs.indices.asnumpy())] = 0
    else:
        assert out.stype == "default"
    np.testing.assert_array_equal(out.asnumpy(), want)


@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
def test_scatter_scalar_ops_touch_stored_values_only(stype):
    x = np.array([[1.0, 2], [0, 0], [3, -4], [0, 0]])
    array = mx.nd.array(x).tostype(stype)
    stored = x != 0 if stype == "csr" else np.repeat(x.any(axis=1, keepdims=True), 2, 1)
    if stype == "default":
        stored[:] = True
    plus = mx.nd._internal._scatter_plus_scalar(array, 9)
    minus = mx.nd._internal._scatter_minus_scalar(array, scalar=9)
    assert plus.stype == minus.stype == stype
    np.testing.assert_array_equal(plus.asnumpy(), np.where(stored, x + 9, 0))
    np.testing.assert_array_equal(minus.asnumpy(), np.where(stored, x - 9, 0))


def test_zero_gradient_is_written():
    data = mx.nd.array([[1.0, -2]])
    data.attach_grad(stype="row_sparse")
    data.grad[:] = 5  # a stale value: grad_req='write' must replace it with sign's zero
    with mx.autograd.record():
        y = mx.nd.sign(data)
    y.backward()
    np.testing.assert_array_equal(data.grad.asnumpy(), [[0, 0]])
