"""The broadcast_<op> family and NDArray operators between arrays of different shapes against
numpy broadcasting; csr (op) a dense vector against a masked numpy oracle (kept csr, as MXNet
1.9.1); storage fallbacks, errors, and the ops on an emulated GPU."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx


pytestmark = pytest.mark.usefixtures("fresh_warnings")  # each test sees its first warnings

NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "mod": lambda a, b: np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b))),
    "power": np.power, "maximum": np.maximum, "minimum": np.minimum, "hypot": np.hypot,
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal,
    "logical_and": lambda a, b: np.logical_and(a != 0, b != 0),
    "logical_or": lambda a, b: np.logical_or(a != 0, b != 0),
    "logical_xor": lambda a, b: np.logical_xor(a != 0, b != 0),
}
OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
             "div": operator.truediv, "mod": operator.mod, "power": operator.pow,
             "equal": operator.eq, "not_equal": operator.ne, "greater": operator.gt,
             "greater_equal": operator.ge, "lesser": operator.lt, "lesser_equal": operator.le}


@st.composite
def broadcast_pairs(draw):
    """Two shapes that broadcast together (numpy's rule), with 0 to 4 dimensions."""
    out = draw(st.lists(st.integers(0, 5), min_size=0, max_size=4))
    shapes = []
    for _ in range(2):
        dims = [1 if draw(st.booleans()) else d for d in out]
        shapes.append(tuple(dims[draw(st.integers(0, len(dims))):]))
    return shapes


def _values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    values = (rng.integers(-6, 7, shape) / 2).astype(np.float32)
    return np.where(rng.random(shape) < 0.05, np.nan, values).astype(np.float32)


def _oracle(fn: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(NUMPY[fn](a, b)).astype(np.float32)


@settings(max_examples=40)
@given(shapes=broadcast_pairs(), fn=st.sampled_from(sorted(NUMPY)), seed=st.integers(0, 2**16))
def test_broadcast_ops_match_numpy(shapes, fn, seed):
    rng = np.random.default_rng(seed)
    a, b = (_values(rng, s) for s in shapes)
    want = _oracle(fn, a, b)
    got = getattr(mx.nd, f"broadcast_{fn}")(mx.nd.array(a), mx.nd.array(b))
    assert got.shape == want.shape and got.dtype == np.float32 and got.stype == "default"
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-6)
    if fn in OPERATORS:
        np.testing.assert_allclose(OPERATORS[fn](mx.nd.array(a), mx.nd.array(b)).asnumpy(), want,
                                   rtol=2e-6)


def test_aliases_and_function_forms():
    a, row = mx.nd.array([[1, 2, 3], [4, 5, 6]]), mx.nd.array([10, 20, 30])
    want = np.array([[1, 2, 3], [4, 5, 6]]) + [10, 20, 30]
    for got in (mx.nd.broadcast_plus(a, row), mx.nd.add(a, row),
                mx.nd.sparse.broadcast_add(a, row)):
        np.testing.assert_array_equal(got.asnumpy(), want)
    values = a.asnumpy()
    np.testing.assert_array_equal(mx.nd.broadcast_minus(a, row).asnumpy(), values - [10, 20, 30])
    np.testing.assert_array_equal(mx.nd.power(a, mx.nd.array([[2], [1]])).asnumpy(),
                                  [[1, 4, 9], [4, 5, 6]])
    np.testing.assert_array_equal(mx.nd.maximum(a, mx.nd.array([3])).asnumpy(),
                                  np.maximum(values, 3))
    np.testing.assert_array_equal((mx.nd.array([[1], [0]]) == a).asnumpy(), [[1, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(mx.nd.greater(a, mx.nd.array([3])).asnumpy(), a.asnumpy() > 3)


def test_integer_broadcasting():
    a = mx.nd.array([[-7, 7, 9]], dtype="int32")
    b = mx.nd.array([[2], [-3]], dtype="int32")
    np.testing.assert_array_equal(mx.nd.broadcast_mod(a, b).asnumpy(),
                                  np.mod(a.asnumpy(), b.asnumpy()))
    np.testing.assert_array_equal(mx.nd.broadcast_div(a, b).asnumpy(),
                                  np.trunc(a.asnumpy() / b.asnumpy()).astype(np.int32))
    with pytest.raises(mx.MXNetError, match="integer division by zero"):
        mx.nd.broadcast_div(a, mx.nd.array([[0]], dtype="int32"))
    with pytest.raises(mx.MXNetError, match="integer division by zero"):
        a / mx.nd.array([[0]], dtype="int32")


def test_shape_and_dtype_errors():
    a = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match=r"broadcast_add: operands could not be broadcast "
                                         r"together with shapes \(2, 3\) and \(2,\)"):
        mx.nd.broadcast_add(a, mx.nd.ones((2,)))
    with pytest.raises(mx.MXNetError, match=r"shapes \(2, 3\) and \(3, 1\)"):
        a * mx.nd.ones((3, 1))
    with pytest.raises(mx.MXNetError, match="got float32 and int32"):
        mx.nd.broadcast_mul(a, mx.nd.ones((1, 3), dtype="int32"))
    with pytest.raises(mx.MXNetError, match="rhs must be an NDArray, got int"):
        mx.nd.broadcast_mul(a, 2)
    with pytest.raises(mx.MXNetError, match=r"elemwise_add: shapes \(2, 3\) and \(1, 3\) differ"):
        mx.nd.elemwise_add(a, mx.nd.ones((1, 3)))
    out = mx.nd.zeros((2, 3))
    assert mx.nd.broadcast_sub(a, mx.nd.ones((1, 3)), out=out) is out
    with pytest.raises(mx.MXNetError, match=r"out has shape \(1, 3\)"):
        mx.nd.broadcast_sub(a, mx.nd.ones((1, 3)), out=mx.nd.zeros((1, 3)))


# -- csr (op) dense vector -> csr ------------------------------------------------------------------
def _csr(rng: np.random.Generator, rows: int, cols: int, density: float) -> np.ndarray:
    values = rng.standard_normal((rows, cols)).astype(np.float32)
    return np.where(rng.random((rows, cols)) < density, values, 0).astype(np.float32)


@settings(max_examples=30)
@given(rows=st.sampled_from((0, 1, 3, 40, 700)), cols=st.sampled_from((1, 2, 7)),
       density=st.sampled_from((0.0, 0.3, 1.0)), fn=st.sampled_from(("mul", "div")),
       kind=st.sampled_from(("(n,)", "(1, n)", "(m, 1)", "(1, 1)", "(1,)", "(m, n)")),
       special=st.sampled_from(((), (0.0,), (0.0, -0.0, np.nan), (np.inf, -np.inf, np.nan))),
       dtype=st.sampled_from(("float32", "float16", "float64")), seed=st.integers(0, 2**16))
def test_csr_times_or_over_a_vector_stays_csr(rows, cols, density, fn, kind, special, dtype,
                                              seed):
    """csr (op) a dense vector stays csr with numpy's values: the csr's entries (op) the vector,
    and where ``0 (op) v`` is nan (``0 / 0``, ``0 / nan``, ``0 * inf``) the positions the csr
    does not store too, holding nan (MXNet 1.9.1 leaves 0 there); nothing else is stored."""
    rng = np.random.default_rng(seed)
    x = _csr(rng, rows, cols, density).astype(dtype)
    shape = {"(n,)": (cols,), "(1, n)": (1, cols), "(m, 1)": (rows, 1), "(1, 1)": (1, 1),
             "(1,)": (1,), "(m, n)": (rows, cols)}[kind]
    v = rng.standard_normal(shape).astype(dtype)
    v.reshape(-1)[: v.size // 3] = 0  # zeros in a divisor
    if special:  # zeros, inf, nan at random places
        spots = rng.random(v.shape) < 0.3
        v[spots] = rng.choice(special, size=int(spots.sum()))
    c = mx.nd.sparse.csr_matrix(x, dtype=dtype)
    if fn == "div" and kind == "(m, n)":
        return  # a matrix divisor has no csr kernel (test_csr_fallbacks)
    with warnings.catch_warnings():
        warnings.simplefilter("error", mx.StorageFallbackWarning)
        got = getattr(mx.nd, f"broadcast_{fn}")(c, mx.nd.array(v, dtype=dtype))
        via_operator = (c * mx.nd.array(v, dtype=dtype)) if fn == "mul" else (
            c / mx.nd.array(v, dtype=dtype))
    assert got.stype == "csr" == via_operator.stype and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = NUMPY[fn](x, v).astype(dtype)
    np.testing.assert_array_equal(got.asnumpy(), want)
    np.testing.assert_array_equal(via_operator.asnumpy(), want)
    expected = scipy.sparse.csr_matrix((x != 0) | np.isnan(want))
    np.testing.assert_array_equal(got.indices.asnumpy(), expected.indices)
    np.testing.assert_array_equal(got.indptr.asnumpy(), expected.indptr)


def test_csr_fallbacks_and_out():
    x = np.array([[0, 1.5, 0], [2, 0, 3]], np.float32)
    c, row = mx.nd.sparse.csr_matrix(x), mx.nd.array([[1, 2, 4]])
    cases = {
        "csr + row": (lambda: c + row, x + [1, 2, 4]),
        "row * csr": (lambda: row * c, x * [1, 2, 4]),
        "rsp * row": (lambda: mx.nd.array(x).tostype("row_sparse") * row, x * [1, 2, 4]),
        "csr / matrix": (lambda: mx.nd.broadcast_div(c, mx.nd.array(x + 1)), x / (x + 1)),
        "csr * 3-D": (lambda: c * mx.nd.ones((2, 1, 3)), np.broadcast_to(x, (2, 2, 3))),
        "csr == row": (lambda: c == row, (x == [1, 2, 4]).astype(np.float32)),
        "csr + csr": (lambda: mx.nd.broadcast_add(c, c), x + x),
    }
    for name, (run, want) in cases.items():
        with pytest.warns(mx.StorageFallbackWarning):
            got = run()
        assert got.stype == "default", name
        np.testing.assert_allclose(got.asnumpy(), want, err_msg=name)
    out = mx.nd.zeros((2, 3))
    assert mx.nd.broadcast_mul(c, row, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), x * [1, 2, 4])
    kept = mx.nd.sparse.zeros("csr", (2, 3))
    mx.nd.sparse.broadcast_mul(c, row, out=kept)
    assert kept.stype == "csr"
    np.testing.assert_allclose(kept.asnumpy(), x * [1, 2, 4])
    empty = mx.nd.broadcast_mul(mx.nd.sparse.zeros("csr", (2, 3)), row)
    assert empty.stype == "csr" and empty.data.shape == (0,)


# -- GPU (emulated) --------------------------------------------------------------------------------
def _check_on(ctx: mx.Context) -> None:
    """Each new kernel family on ``ctx``: results stay there and match numpy."""
    rng = np.random.default_rng(3)
    x = _csr(rng, 30, 5, 0.4)
    y = rng.standard_normal((1, 5)).astype(np.float32)
    dx, dy = mx.nd.array(x, ctx=ctx), mx.nd.array(y, ctx=ctx)
    rsp = mx.nd.sparse.row_sparse_array(x, ctx=ctx)
    results = {
        "power": (dx ** 2, x ** 2),
        "maximum": (mx.nd.maximum(dx, dx * 0.5), np.maximum(x, x * 0.5)),
        "broadcast hypot": (mx.nd.broadcast_hypot(dx, dy), np.hypot(x, y)),
        "csr * row": (mx.nd.sparse.csr_matrix(x, ctx=ctx) * dy, x * y),
        "add_n": (mx.nd.add_n(rsp, rsp, rsp), 3 * x),
        "where csr": (mx.nd.where(mx.nd.sparse.csr_matrix(x, ctx=ctx), dx * 0 + 1, dx),
                      np.where(x != 0, 1, x)),
        "quadratic": (mx.nd.contrib.quadratic(dx, 1, 2, 3), x * x + 2 * x + 3),
    }
    for name, (got, want) in results.items():
        assert got.context == ctx, name
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_ops_on_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    _check_on(mx.gpu(0))
