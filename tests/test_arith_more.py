"""power, maximum, minimum, modulo (``**``, ``%``), hypot and the logical ops, add_n, where and
contrib.quadratic against numpy oracles; storage types as MXNet 1.9.1 (facts asked of it)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx


pytestmark = pytest.mark.usefixtures("fresh_warnings")  # each test sees its first warnings

EDGES = np.array([-3, 3, 5.5, -5.5, 0, -0.0, np.nan, 1, np.inf, -8, 7, 1e30, -np.inf, 0.5],
                 np.float32)
EDGES_B = np.array([2, -2, -2, -2, 0, 1, 1, np.nan, np.nan, 1 / 3, 0, 1e30, 2, -np.inf],
                   np.float32)
INTS = np.array([-3, 3, 7, -7, 0, 2, -2**31, 3, 0, 1, 2, 3, 5, -1], np.int32)
INTS_B = np.array([2, -2, 0, 3, -1, -1, -1, 40, -1, -1, 0, 31, -5, 7], np.int32)


def _as_int(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The documented conversion of a float64 result: truncated toward zero, saturated, nan 0."""
    info = np.iinfo(dtype)
    return np.nan_to_num(np.clip(np.trunc(value), info.min, info.max), nan=0).astype(dtype)


def _in_float64(op):
    """``op`` of integer operands computed in float64 and converted back (as MXNet)."""
    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return _as_int(op(a.astype(np.float64), b.astype(np.float64)), a.dtype)
    return run


def _python_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(b == 0, np.zeros((), a.dtype), np.mod(a, np.where(b == 0, 1, b)))


def _logical(test):
    return lambda a, b: test(a != 0, b != 0).astype(a.dtype)


ORACLES = {
    "power": lambda a, b: np.power(a, b) if a.dtype.kind == "f" else _in_float64(np.power)(a, b),
    "maximum": np.maximum,
    "minimum": np.minimum,
    "mod": _python_mod,
    "hypot": lambda a, b: np.hypot(a, b) if a.dtype.kind == "f" else _in_float64(np.hypot)(a, b),
    "logical_and": _logical(np.logical_and),
    "logical_or": _logical(np.logical_or),
    "logical_xor": _logical(np.logical_xor),
}


def _function(fn: str):
    return {"power": mx.nd.power, "maximum": mx.nd.maximum, "minimum": mx.nd.minimum,
            "mod": mx.nd.modulo}.get(fn, getattr(mx.nd, f"broadcast_{fn}"))


@pytest.mark.parametrize("fn", sorted(ORACLES))
@pytest.mark.parametrize("values", [(EDGES, EDGES_B), (INTS, INTS_B)], ids=["float32", "int32"])
def test_binary_ops_on_edge_values(fn, values):
    a, b = values
    with np.errstate(all="ignore"):
        want = ORACLES[fn](a, b)
    got = _function(fn)(mx.nd.array(a, dtype=a.dtype), mx.nd.array(b, dtype=b.dtype))
    assert got.dtype == a.dtype and got.stype == "default"
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-7, atol=0)


def test_signs_of_zero_and_nan_follow_mxnet():
    """Facts from MXNet 1.9.1: maximum returns ``b`` on ties and ``a`` when it is nan; mod of
    -0.0 keeps the sign; hypot(inf, nan) is inf."""
    z, nz = mx.nd.array([0.0, -0.0]), mx.nd.array([-0.0, 0.0])
    assert np.signbit(mx.nd.maximum(z, nz).asnumpy()).tolist() == [True, False]
    assert np.signbit(mx.nd.minimum(nz, z).asnumpy()).tolist() == [False, True]
    assert np.signbit((mx.nd.array([-0.0]) % 3).asnumpy()).tolist() == [True]
    got = mx.nd.broadcast_hypot(mx.nd.array([np.inf, np.nan]), mx.nd.array([np.nan, np.inf]))
    assert got.asnumpy().tolist() == [np.inf, np.inf]
    assert np.isnan(mx.nd.maximum(mx.nd.array([np.nan, 1]), np.nan).asnumpy()).all()


@settings(max_examples=15)
@given(data=st.data())
def test_scalar_ops_and_reflections_match_numpy(data):
    dtype = data.draw(st.sampled_from(("float32", "int32")))
    shape = data.draw(st.sampled_from(((0,), (7,), (3, 4), (1100,))))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.integers(-9, 10, shape).astype(dtype) / (4 if dtype == "float32" else 1)
    x = x.astype(dtype)
    s = data.draw(st.sampled_from((2, -3, 0.5, 0)))
    cast = np.array(s).astype(dtype)[()]  # MXNet converts the scalar to the dtype first
    a = mx.nd.array(x, dtype=dtype)
    with np.errstate(all="ignore"):
        cases = {
            "x ** s": (a ** s, ORACLES["power"](x, np.full_like(x, cast))),
            "s ** x": (s ** a, ORACLES["power"](np.full_like(x, cast), x)),
            "x % s": (a % s, _python_mod(x, np.full_like(x, cast))),
            "s % x": (s % a, _python_mod(np.full_like(x, cast), x)),
            "maximum(x, s)": (mx.nd.maximum(a, s), np.maximum(x, cast)),
            "minimum(s, x)": (mx.nd.minimum(s, a), np.minimum(x, cast)),
        }
    for name, (got, want) in cases.items():
        assert got.dtype == np.dtype(dtype), name
        np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-6, err_msg=name)


def test_scalars_and_python_numbers():
    assert mx.nd.power(2, 3) == 8 and mx.nd.maximum(2, 3) == 3 and mx.nd.modulo(7, 3) == 1
    x = mx.nd.array([[2, 3]], dtype="int32")
    assert (x ** 2.5).asnumpy().tolist() == [[4, 9]]  # 2.5 is 2 as int32, as MXNet
    assert mx.nd.maximum(x, 2.7).asnumpy().tolist() == [[2, 3]]
    with pytest.raises(TypeError, match="type list is not supported"):
        x ** [1]
    with pytest.raises(TypeError, match="type str is not supported"):
        mx.nd.maximum("a", x)
    with pytest.raises(mx.MXNetError, match="float32 and int32"):
        mx.nd.power(x.astype("float32"), x)
    with pytest.raises(mx.MXNetError, match="nan has no int32 value"):
        x % float("nan")


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_sparse_operands_fall_back_to_dense_as_mxnet(stype):
    """MXNet 1.9.1 has no sparse kernel for these: every result is dense, with the warning."""
    x = np.array([[0, 1.5, 0], [2, 0, 3]], np.float32)
    s = mx.nd.array(x).tostype(stype)
    cases = {"s ** 2": (lambda: s ** 2, x ** 2), "2 ** s": (lambda: 2 ** s, 2 ** x),
             "maximum(s, 0)": (lambda: mx.nd.maximum(s, 0), x),
             "minimum(s, s)": (lambda: mx.nd.minimum(s, s), x),
             "s % 2": (lambda: s % 2, np.mod(x, 2))}
    for name, (run, want) in cases.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = run()
        assert got.stype == "default", name
        assert any(issubclass(w.category, mx.StorageFallbackWarning) for w in caught), name
        np.testing.assert_allclose(got.asnumpy(), want, err_msg=name)


def test_out_argument():
    a = mx.nd.array([[1, 2], [3, 4]])
    out = mx.nd.zeros((2, 2))
    assert mx.nd.broadcast_power(a, a, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), [[1, 4], [27, 256]])
    with pytest.raises(mx.MXNetError, match=r"out has shape \(2, 3\)"):
        mx.nd.broadcast_maximum(a, a, out=mx.nd.zeros((2, 3)))


# -- add_n ----------------------------------------------------------------------------------------
@settings(max_examples=20)
@given(data=st.data())
def test_add_n_matches_numpy(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    rows, cols = data.draw(st.sampled_from(((0, 3), (1, 1), (9, 4), (600, 3))))
    stypes = data.draw(st.lists(st.sampled_from(("default", "row_sparse", "csr")), min_size=1,
                                max_size=4))
    values = []
    for _ in stypes:
        v = rng.standard_normal((rows, cols)).astype(np.float32)
        v[rng.random(rows) < data.draw(st.sampled_from((0.0, 0.5, 1.0)))] = 0
        values.append(v)
    arrays = [mx.nd.array(v).tostype(s) for v, s in zip(values, stypes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mx.StorageFallbackWarning)
        got = mx.nd.add_n(*arrays)
    want_stype = "row_sparse" if set(stypes) == {"row_sparse"} else "default"
    if stypes == ["csr"]:
        want_stype = "default"  # one csr input: the dense copy (MXNet's fallback)
    assert got.stype == want_stype
    np.testing.assert_allclose(got.asnumpy(), np.sum(values, axis=0), rtol=1e-5, atol=1e-6)
    if want_stype == "row_sparse":
        stored = np.flatnonzero(np.any([v.any(axis=1) for v in values], axis=0))
        np.testing.assert_array_equal(got.indices.asnumpy(), stored)


def test_add_n_arguments():
    r = mx.nd.array([[0, 0], [1, 2]]).tostype("row_sparse")
    assert mx.nd.ElementWiseSum(r, r).stype == "row_sparse"
    assert mx.nd.sparse.add_n(r, r, r).asnumpy().tolist() == [[0, 0], [3, 6]]
    out = mx.nd.zeros((2, 2))
    assert mx.nd.add_n(r, r, out=out) is out and out.asnumpy().tolist() == [[0, 0], [2, 4]]
    with pytest.raises(ValueError, match="at least one array"):
        mx.nd.add_n()
    with pytest.raises(TypeError, match="argument 0 must be an NDArray, got list"):
        mx.nd.add_n([r, r])
    with pytest.raises(mx.MXNetError, match=r"argument 1 has shape \(3, 2\)"):
        mx.nd.add_n(r, mx.nd.ones((3, 2)))
    with pytest.raises(mx.MXNetError, match="argument 1 has shape .* dtype float64"):
        mx.nd.add_n(r, mx.nd.ones((2, 2), dtype="float64"))


# -- where ----------------------------------------------------------------------------------------
@settings(max_examples=15)
@given(data=st.data())
def test_where_matches_numpy(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    rows, cols = data.draw(st.sampled_from(((0, 3), (1, 1), (7, 5), (700, 2))))
    cdtype = data.draw(st.sampled_from(("float32", "int32")))
    cond = (rng.random((rows, cols)) < 0.4) * rng.integers(-2, 3, (rows, cols))
    if cdtype == "float32":
        cond = np.where(rng.random((rows, cols)) < 0.1, np.nan, cond)
    cond = cond.astype(cdtype)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = rng.standard_normal((rows, cols)).astype(np.float32)
    dx, dy = mx.nd.array(x), mx.nd.array(y)
    want = np.where(cond != 0, x, y)  # nan counts as true
    for stype in ("default", "csr"):
        c = mx.nd.array(cond, dtype=cdtype).tostype(stype)
        got = mx.nd.where(c, dx, dy)
        assert got.stype == "default"
        np.testing.assert_array_equal(got.asnumpy(), want)
    pick = (rng.random(rows) < 0.5).astype(np.float32)
    got = mx.nd.where(mx.nd.array(pick), dx, dy)
    np.testing.assert_array_equal(got.asnumpy(), np.where(pick[:, None] != 0, x, y))


def test_where_storage_and_errors():
    cond, x = mx.nd.array([[1, 0], [0, 1]]), mx.nd.array([[1, 2], [3, 4]])
    with pytest.warns(mx.StorageFallbackWarning):
        got = mx.nd.where(cond.tostype("row_sparse"), x, -x)
    assert got.stype == "default" and got.asnumpy().tolist() == [[1, -2], [-3, 4]]
    assert mx.nd.sparse.where(cond, x, -x).asnumpy().tolist() == [[1, -2], [-3, 4]]
    with pytest.raises(ValueError, match=r"condition of shape \(3,\)"):
        mx.nd.where(mx.nd.array([1, 0, 1]), x, x)
    with pytest.raises(mx.MXNetError, match="x and y must have one shape and dtype"):
        mx.nd.where(cond, x, mx.nd.ones((2, 1)))
    with pytest.raises(mx.MXNetError, match="x and y must have one shape and dtype"):
        mx.nd.where(cond, x, x.astype("float64"))
    with pytest.raises(mx.MXNetError, match="condition must be an NDArray"):
        mx.nd.where(1, x, x)


# -- quadratic ------------------------------------------------------------------------------------
def test_quadratic_values_and_storage():
    x = np.array([[0, 1.5, 0], [2, 0, -3]], np.float32)
    want = 1 * x * x + 2 * x
    c = mx.nd.contrib.quadratic(mx.nd.array(x).tostype("csr"), a=1, b=2, c=0)
    assert c.stype == "csr" and c.indices.asnumpy().tolist() == [1, 0, 2]
    np.testing.assert_allclose(c.asnumpy(), want)
    np.testing.assert_allclose(mx.nd.contrib.quadratic(mx.nd.array(x), 1, 2, 3).asnumpy(),
                               want + 3)
    for stype, c_value in (("csr", 1), ("row_sparse", 0)):
        with pytest.warns(mx.StorageFallbackWarning):
            got = mx.nd.contrib.quadratic(mx.nd.array(x).tostype(stype), a=1, b=2, c=c_value)
        assert got.stype == "default"
        np.testing.assert_allclose(got.asnumpy(), want + c_value)
    ints = mx.nd.contrib.quadratic(mx.nd.array([[1, 2, -2]], dtype="int32"), a=1.5, b=2.5, c=0.5)
    assert ints.asnumpy().tolist() == [[4, 11, 1]]  # 4.5, 11.5, 1.5 truncated, as MXNet
    tenth = mx.nd.contrib.quadratic(mx.nd.array([3.0], dtype="float64"), a=0.1)
    assert tenth.asnumpy()[0] == 9 * float(np.float32(0.1))  # a float32 parameter, as MXNet
    assert mx.nd.contrib.quadratic(mx.nd.array([2.0])).asnumpy().tolist() == [0.0]
    with pytest.raises(mx.MXNetError, match="quadratic: a must be a finite number"):
        mx.nd.contrib.quadratic(mx.nd.array([1.0]), a=float("nan"))
