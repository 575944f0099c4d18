"""Elementwise ops: values, storage types and dtypes against numpy oracles and MXNet's rules."""

import math
import operator
import warnings

import numpy as np
import pytest
import scipy.special
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sparsegen as mx
from conftest import DTYPES
from sparsegen.cache import get_kernel
from sparsegen.ops import elemwise as elemwise_ops
from sparsegen.opnames import ELEMWISE_UNARY_DENSE, ELEMWISE_UNARY_SPARSE

STYPES = ("default", "row_sparse", "csr")
FNS = ("add", "sub", "mul", "div")

# Output storage of ``lhs <op> rhs`` (equal shapes) as MXNet 1.9.1's elemwise ops give it (checked
# with mxnet); combinations not listed have no sparse kernel and run densely -> default.
_ADD = {("default", "default"): "default", ("row_sparse", "row_sparse"): "row_sparse",
        ("csr", "csr"): "csr", ("default", "row_sparse"): "default",
        ("row_sparse", "default"): "default", ("default", "csr"): "default",
        ("csr", "default"): "default"}
_MUL = {**_ADD, ("default", "row_sparse"): "row_sparse", ("row_sparse", "default"): "row_sparse",
        ("default", "csr"): "csr", ("csr", "default"): "csr"}
RULES = {"add": _ADD, "sub": _ADD, "mul": _MUL, "div": {("default", "default"): "default"}}


def expected_stype(fn: str, how: str, s1: str, s2: str, shape: tuple) -> str:
    """The output storage MXNet gives: the table above, except that ``/`` and ``mx.nd.divide``
    are broadcast_div, which keeps csr for a csr divided by a dense row or column vector (an
    (M, 1) or (1, N) operand is one; checked with mxnet)."""
    if (fn == "div" and how in ("operator", "nd") and (s1, s2) == ("csr", "default")
            and 1 in shape):
        return "csr"
    return RULES[fn].get((s1, s2), "default")

OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
CALLS = {  # the ways MXNet code spells one op on two arrays
    "operator": lambda fn: OPERATORS[fn],
    "nd": lambda fn: getattr(mx.nd, {"add": "add", "sub": "subtract", "mul": "multiply",
                                     "div": "divide"}[fn]),
    "elemwise": lambda fn: getattr(mx.nd, f"elemwise_{fn}"),
    "sparse": lambda fn: getattr(mx.nd.sparse, f"elemwise_{fn}"),
}


def to_stype(x: np.ndarray, stype: str):
    return mx.nd.array(x, dtype=x.dtype).tostype(stype)


def trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (C, MXNet), from numpy's flooring division."""
    q = np.floor_divide(a, b)
    return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)


def np_op(fn: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The oracle: numpy arithmetic in the operands' dtype (wrapping integers)."""
    with np.errstate(all="ignore"):
        if fn == "div" and a.dtype.kind in "iu":
            return trunc_div(a, b)
        return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[fn](a, b)


def stored_rows(x: np.ndarray) -> np.ndarray:
    return np.flatnonzero(x.reshape(x.shape[0], -1).any(axis=1)) if x.shape[0] else np.zeros(0, int)


def values(rng: np.random.Generator, shape: tuple, dtype: np.dtype, row_density: float,
           elem_density: float) -> np.ndarray:
    x = rng.integers(1, 100, size=shape)
    if dtype.kind != "u":
        x = x * rng.choice((-1, 1), size=shape)
    x = (x / 7 if dtype.kind == "f" else x).astype(dtype)
    mask = rng.random(shape) < elem_density
    mask &= (rng.random(shape[0]) < row_density).reshape((shape[0],) + (1,) * (len(shape) - 1))
    return np.where(mask, x, np.zeros((), dtype))


PARALLEL_DTYPES = ("float32", "int8")
"""Dtypes drawn with enough rows to run the parallel kernel builds (each build costs seconds)."""


@st.composite
def operands(draw, count: int, dtypes=DTYPES, ndims=(1, 2, 2, 2, 3)):
    """``count`` arrays of one shape and dtype; rows stored in none, some or all rows."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    ndim = draw(st.sampled_from(ndims))
    big = (700,) if dtype.name in PARALLEL_DTYPES else ()
    rows = draw(st.one_of(st.integers(0, 30), st.sampled_from(big or (0,))))
    trailing = tuple(draw(st.lists(st.sampled_from((1, 1, 2, 5, 9)), min_size=ndim - 1,
                                   max_size=ndim - 1)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    densities = st.sampled_from((0.0, 0.3, 1.0))
    return tuple(values(rng, (rows, *trailing), dtype, draw(densities),
                        draw(st.sampled_from((0.5, 1.0)))) for _ in range(count))


def operand_pairs(dtypes=DTYPES):
    """Two arrays of one shape and dtype."""
    return operands(2, dtypes)


def single_arrays(dtypes=DTYPES, ndims=(1, 2, 2, 2, 3)):
    """One array."""
    return operands(1, dtypes, ndims).map(lambda arrays: arrays[0])


def quiet(call, *args):
    """Call with storage fallback warnings silenced (test_fallback.py checks them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mx.StorageFallbackWarning)
        return call(*args)


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("s1", STYPES)
@pytest.mark.parametrize("s2", STYPES)
@settings(max_examples=15)
@given(pair=operand_pairs(), how=st.sampled_from(sorted(CALLS)))
@example(pair=(np.ones((3, 1), np.float32), np.full((3, 1), 2, np.float32)), how="nd")
@example(pair=(np.ones((1, 4), np.float32), np.full((1, 4), 2, np.float32)), how="operator")
def test_binary_ops_match_numpy(pair, s1, s2, fn, how):
    a, b = pair
    if a.ndim != 2:  # csr is 2-D only
        s1, s2 = (s if s != "csr" else "row_sparse" for s in (s1, s2))
    x, y = to_stype(a, s1), to_stype(b, s2)
    call = CALLS[how](fn)
    if fn == "div" and a.dtype.kind in "iu" and not b.all():
        with pytest.raises(mx.MXNetError, match="integer division by zero"):
            quiet(call, x, y)
        return
    result = quiet(call, x, y)
    assert result.stype == expected_stype(fn, how, s1, s2, a.shape)
    assert result.dtype == a.dtype.type and result.shape == a.shape
    np.testing.assert_array_equal(result.asnumpy(), np_op(fn, a, b))
    # the stored positions: a union for + and -, an intersection for *, or the sparse operand's
    if result.stype == "row_sparse":
        rows = [stored_rows(v) for v, s in ((a, s1), (b, s2)) if s == "row_sparse"]
        combine = np.union1d if fn in ("add", "sub") else np.intersect1d
        np.testing.assert_array_equal(result.indices.asnumpy(), combine(rows[0], rows[-1]))
    if result.stype == "csr":
        masks = [v != 0 for v, s in ((a, s1), (b, s2)) if s == "csr"]
        pattern = (masks[0] | masks[-1]) if fn in ("add", "sub") else (masks[0] & masks[-1])
        np.testing.assert_array_equal(result.indptr.asnumpy(),
                                      np.concatenate([[0], np.cumsum(pattern.sum(axis=1))]))
        np.testing.assert_array_equal(result.indices.asnumpy(), np.nonzero(pattern)[1])


@given(operand_pairs(dtypes=("float32", "int32")), st.sampled_from(STYPES), st.sampled_from(FNS))
@example((np.array([[0, 2]], np.float32), np.zeros((1, 2), np.float32)), "csr", "div")  # 0 / 0
@example((np.array([[0], [2]], np.float32), np.array([[0], [0]], np.float32)), "csr", "div")
def test_inplace_operators_keep_storage_and_object(pair, stype, fn):
    a, b = pair
    if a.ndim != 2:
        stype = "row_sparse" if stype == "csr" else stype
    for rhs_stype in STYPES if a.ndim == 2 else STYPES[:2]:
        x, y = to_stype(a, stype), to_stype(b, rhs_stype)
        if fn == "div" and a.dtype.kind == "i" and not b.all():
            with pytest.raises(mx.MXNetError, match="division by zero"):
                x /= y
            np.testing.assert_array_equal(x.asnumpy(), a)  # unchanged
            continue
        before = x
        x = quiet({"add": operator.iadd, "sub": operator.isub, "mul": operator.imul,
                   "div": operator.itruediv}[fn], x, y)
        assert x is before and x.stype == stype and x.dtype == a.dtype.type
        np.testing.assert_array_equal(x.asnumpy(), np_op(fn, a, b))


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_nan_results_kept_by_sparse_destinations(stype):
    x = mx.nd.array([[0, 1], [0, 0]]).tostype(stype)
    x = quiet(operator.itruediv, x, mx.nd.zeros((2, 2)))  # 0 / 0: MXNet stores the nan rows
    np.testing.assert_array_equal(x.asnumpy(), [[np.nan, np.inf], [np.nan, np.nan]])


EDGE_VALUES = (0.0, 0.0, 0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan)
"""Elements of ``edge_pairs``: zeros of both signs (+0.0 most often), inf, -inf, nan, finite."""


@st.composite
def edge_pairs(draw, ndims=(1, 2, 2, 2, 3)):
    """Two float arrays of one shape holding ``EDGE_VALUES``; some rows of each all zero (rows a
    row_sparse form does not store)."""
    dtype = np.dtype(draw(st.sampled_from(("float16", "float32", "float64"))))
    ndim = draw(st.sampled_from(ndims))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    pair = []
    for _ in range(2):
        x = draw(hnp.arrays(dtype, shape, elements=st.sampled_from(EDGE_VALUES)))
        empty = draw(st.lists(st.booleans(), min_size=shape[0], max_size=shape[0]))
        x[np.array(empty, bool)] = 0
        pair.append(x)
    return tuple(pair)


def _iop(op):
    def run(x, y):
        before = x
        x = op(x, y)
        assert x is before
        return x
    return run


# sparse lhs x, dense rhs y (one shape): the spellings MXNet code uses, and what each computes
SPARSE_DENSE_CALLS = {
    "x / y": ("div", operator.truediv), "x /= y": ("div", _iop(operator.itruediv)),
    "divide": ("div", mx.nd.divide), "sparse.divide": ("div", mx.nd.sparse.divide),
    "broadcast_div": ("div", mx.nd.broadcast_div), "elemwise_div": ("div", mx.nd.elemwise_div),
    "x * y": ("mul", operator.mul), "y * x": ("rmul", lambda x, y: y * x),
    "x *= y": ("mul", _iop(operator.imul)),
    "y *= x": ("rmul", lambda x, y: _iop(operator.imul)(y.copy(), x)),
    "multiply": ("mul", mx.nd.multiply), "broadcast_mul": ("mul", mx.nd.broadcast_mul),
    "elemwise_mul": ("mul", mx.nd.elemwise_mul),
    "elemwise_mul(y, x)": ("rmul", lambda x, y: mx.nd.elemwise_mul(y, x)),
}


def _edge_stype(call: str, stype: str, shape: tuple) -> str:
    """The result's storage type, MXNet 1.9.1's: in-place updates keep the updated array's;
    products keep the sparse operand's (broadcast_mul only csr's); ``/`` of csr by a dense row
    or column (broadcast_div) keeps csr; every other division is dense. (``mx.nd.sparse.divide``
    is ``mx.nd.divide`` here; MXNet's runs elemwise_div for one shape: dense.)"""
    if call.endswith("= y"):
        return stype
    if call == "y *= x":
        return "default"
    if SPARSE_DENSE_CALLS[call][0] != "div":
        return "default" if call == "broadcast_mul" and stype != "csr" else stype
    keeps = (call in ("x / y", "divide", "sparse.divide", "broadcast_div") and stype == "csr"
             and 1 in shape)
    return "csr" if keeps else "default"


@given(pair=edge_pairs(), stype=st.sampled_from(("row_sparse", "csr")),
       call=st.sampled_from(sorted(SPARSE_DENSE_CALLS)))
@example(pair=(np.array([[0, 2]], np.float32), np.array([[0, 0]], np.float32)), stype="csr",
         call="x / y")  # 0 / 0 where the csr stores nothing: nan (MXNet: 0)
@example(pair=(np.array([[0, 2], [0, 0]], np.float32), np.array([[np.inf, 1], [1, np.nan]],
                                                                 np.float32)),
         stype="row_sparse", call="x * y")  # 0 * inf, 0 * nan in rows the rsp lacks
@example(pair=(np.array([[0, 2], [0, 0]], np.float32), np.array([[np.inf, 1], [1, 1]],
                                                                 np.float32)),
         stype="csr", call="x *= y")
def test_sparse_with_dense_edges_match_numpy(pair, stype, call):
    """A sparse operand with a dense one holding zeros, inf and nan gives numpy's values on the
    dense forms: where the sparse operand stores nothing, ``0 / 0``, ``0 / nan``, ``0 * inf``
    are nan (MXNet 1.9.1 leaves 0 where it keeps the sparse storage type), stored; signed zeros
    at positions a sparse result does not store read +0.0. The storage type is MXNet's."""
    a, b = pair
    if a.ndim != 2:
        stype = "row_sparse"
    fn, run = SPARSE_DENSE_CALLS[call]
    x, y = to_stype(a, stype), to_stype(b, "default")
    sa, da = x.asnumpy(), b  # the dense forms (a csr drops -0.0)
    stored = sa != 0
    result = quiet(run, x, y)
    with np.errstate(all="ignore"):
        want = da * sa if fn == "rmul" else {"div": np.divide, "mul": np.multiply}[fn](sa, da)
    assert result.stype == _edge_stype(call, stype, a.shape), (result.stype, call)
    assert result.dtype == a.dtype.type and result.shape == a.shape
    np.testing.assert_array_equal(result.asnumpy(), want)  # nan where nan; 0.0 == -0.0
    if result.stype == "default" or call.endswith("= y") or call.endswith("= x"):
        return
    # the sparse result stores the sparse operand's positions and the new nans, nothing else
    new_nan = np.isnan(want) & ~stored
    if result.stype == "csr":
        got = np.zeros(a.shape, bool)
        indptr, indices = result.indptr.asnumpy(), result.indices.asnumpy()
        for r in range(a.shape[0]):
            row = indices[indptr[r]:indptr[r + 1]]
            assert np.all(np.diff(row) > 0), row  # sorted, unique
            got[r, row] = True
        np.testing.assert_array_equal(got, stored | new_nan)
    else:
        rows = stored.reshape(len(a), -1).any(axis=1) | new_nan.reshape(len(a), -1).any(axis=1)
        np.testing.assert_array_equal(result.indices.asnumpy(), np.flatnonzero(rows))


def with_nonfinite(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    """``x`` with some stored values replaced by inf, -inf or nan."""
    y = x.copy()
    spots = (y != 0) & (rng.random(y.shape) < 0.3)
    y[spots] = rng.choice([np.inf, -np.inf, np.nan], size=int(spots.sum()))
    return y


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
@pytest.mark.parametrize("device", ["cpu", "emulated gpu"])
@settings(max_examples=15)
@given(pair=operands(2, dtypes=("float16", "float32", "float64"), ndims=(2,)),
       seed=st.integers(0, 2**32 - 1), which=st.sampled_from(("lhs", "rhs", "both", "none")),
       chunk=st.sampled_from((3, elemwise_ops.NONFINITE_CHUNK)))
def test_sparse_products_keep_nan_of_inf_times_absent(stype, device, pair, seed, which, chunk):
    """rsp * rsp and csr * csr give numpy's dense product (``inf * 0`` is nan, as MXNet), storing
    the positions stored in both plus those of one holding inf or nan (host, or emulated GPU
    buffers; the non-finite check in chunks as shipped and small)."""
    rng = np.random.default_rng(seed)
    a, b = (with_nonfinite(rng, v) if which in (side, "both") else v
            for v, side in zip(pair, ("lhs", "rhs")))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(elemwise_ops, "NONFINITE_CHUNK", chunk)
        if device != "cpu":
            patch.setenv("SPARSEGEN_GPU", "host")
        ctx = mx.cpu() if device == "cpu" else mx.gpu(0)
        x, y = (mx.nd.array(v, dtype=v.dtype, ctx=ctx).tostype(stype) for v in (a, b))
        result = x * y
        assert result.context == ctx
        assert result.stype == stype
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(result.asnumpy(), (a * b).astype(a.dtype))
        sa, sb = a != 0, b != 0  # stored elements (no explicit zeros here)
        if stype == "row_sparse":
            rows_a, rows_b = sa.any(axis=1), sb.any(axis=1)
            bad_a, bad_b = ((~np.isfinite(v)).any(axis=1) for v in (a, b))
            keep = (rows_a & rows_b) | (bad_a & ~rows_b) | (bad_b & ~rows_a)
            np.testing.assert_array_equal(result.indices.asnumpy(), np.flatnonzero(keep))
        else:
            keep = (sa & sb) | (~np.isfinite(a) & ~sb) | (~np.isfinite(b) & ~sa)
            np.testing.assert_array_equal(result.indptr.asnumpy(),
                                          np.concatenate([[0], np.cumsum(keep.sum(axis=1))]))
            np.testing.assert_array_equal(result.indices.asnumpy(), np.nonzero(keep)[1])


SCALARS = (0, 1, -3, 2.5, -0.5, 300, 1e6, math.inf, -math.inf, math.nan, np.float32(1.5),
           np.int64(7), True)


def mxnet_scalar(value, dtype: np.dtype):
    """MXNet converts a scalar operand to the array's dtype: rounded, or truncated and wrapped."""
    if dtype.kind == "f":
        with np.errstate(over="ignore"):
            return np.array(value, dtype=np.float64).astype(dtype)
    if not math.isfinite(value):
        return None
    return np.array(int(value)).astype(np.int64).astype(dtype)


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("stype", STYPES)
@settings(max_examples=20)
@given(x=single_arrays(), reflected=st.booleans(), value=st.sampled_from(SCALARS))
def test_scalar_ops_match_numpy(x, stype, fn, reflected, value):
    if x.ndim != 2:
        stype = "row_sparse" if stype == "csr" else stype
    array = to_stype(x, stype)
    call = OPERATORS[fn]
    run = (lambda: call(value, array)) if reflected else (lambda: call(array, value))
    s = mxnet_scalar(value, x.dtype)
    if s is None:
        with pytest.raises(mx.MXNetError, match="has no"):
            run()
        return
    divisor = x if reflected else s
    if fn == "div" and x.dtype.kind in "iu" and not np.all(divisor):
        with pytest.raises(mx.MXNetError, match="integer division by zero"):
            run()
        return
    lhs, rhs = (s, x) if reflected else (x, s)
    expected = np_op(fn, np.asarray(lhs, x.dtype), np.asarray(rhs, x.dtype))
    zero = np.zeros((), x.dtype)
    if reflected:  # s / 0 is inf or nan for floats, and refused for integers
        zero_image = np.nan if fn == "div" else np_op(fn, s, zero)
    else:
        zero_image = np_op(fn, zero, s)
    result = quiet(run)
    assert result.stype == (stype if zero_image == 0 else "default")
    assert result.dtype == x.dtype.type and result.shape == x.shape
    np.testing.assert_array_equal(result.asnumpy(), expected)


@settings(max_examples=80)
@given(dtype=st.sampled_from(("float16", "float32", "float64")),
       value=st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True))
def test_a_scalar_is_rounded_to_the_dtype_as_numpy_rounds_it(dtype, value):
    ones = mx.nd.array(np.ones(3, dtype), dtype=dtype)
    with np.errstate(over="ignore"):
        expected = np.full(3, np.float64(value).astype(dtype))
    result = (ones * value).asnumpy()
    np.testing.assert_array_equal(result, expected)
    assert np.array_equal(np.signbit(result), np.signbit(expected))  # -0.0 stays -0.0


def round_half_away(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def rint_half_down(x):
    """MXNet's rint: the nearer of floor and ceil, floor on a tie (halves toward -inf)."""
    lo, hi = np.floor(x), np.ceil(x)
    return np.where(x - lo <= hi - x, lo, hi)


NUMPY_UNARY = {
    "abs": np.abs, "sign": np.sign, "sqrt": np.sqrt, "square": np.square, "negative": np.negative,
    "relu": lambda x: np.where(x < 0, 0, x), "sin": np.sin, "sinh": np.sinh, "tan": np.tan,
    "tanh": np.tanh, "arcsin": np.arcsin, "arcsinh": np.arcsinh, "arctan": np.arctan,
    "arctanh": np.arctanh, "floor": np.floor, "ceil": np.ceil, "round": round_half_away,
    "rint": rint_half_down, "fix": np.fix, "trunc": np.trunc, "expm1": np.expm1, "log1p": np.log1p,
    "cbrt": np.cbrt, "degrees": np.degrees, "radians": np.radians, "exp": np.exp, "log": np.log,
    "log10": np.log10, "log2": np.log2, "rsqrt": lambda x: 1 / np.sqrt(x), "cos": np.cos,
    "cosh": np.cosh, "arccos": np.arccos, "arccosh": np.arccosh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": scipy.special.erf, "erfinv": scipy.special.erfinv, "gamma": scipy.special.gamma,
    "gammaln": scipy.special.gammaln, "softsign": lambda x: x / (1 + np.abs(x)),
    "reciprocal": lambda x: 1 / x, "rcbrt": lambda x: 1 / np.cbrt(x),
}
DOMAINS = {"erfinv": (-1, 1), "arcsin": (-1, 1), "arccos": (-1, 1), "arctanh": (-1, 1), "arccosh": (1, 6),
           "sqrt": (0, 9), "log": (0, 9), "log10": (0, 9), "log2": (0, 9), "rsqrt": (0, 9),
           "log1p": (-1, 9)}
TOLERANCE = {"float16": 2e-3, "float32": 4e-6, "float64": 1e-13}
EXACT = {"abs", "sign", "square", "negative", "relu", "floor", "ceil", "round", "rint", "fix",
         "trunc", "sqrt"}


def test_unary_tables_are_consistent():
    assert set(NUMPY_UNARY) == set(ELEMWISE_UNARY_SPARSE) | set(ELEMWISE_UNARY_DENSE)
    assert not set(ELEMWISE_UNARY_SPARSE) & set(ELEMWISE_UNARY_DENSE)
    for name in ELEMWISE_UNARY_SPARSE:  # every op that keeps sparse storage maps 0 to 0
        with np.errstate(all="ignore"):
            assert NUMPY_UNARY[name](np.zeros(1))[0] == 0, name


@pytest.mark.parametrize("name", sorted(NUMPY_UNARY))
@settings(max_examples=8)
@given(data=st.data())
def test_unary_ops_match_numpy(name, data):
    dtype = np.dtype(data.draw(st.sampled_from(("float16", "float32", "float64"))))
    stype = data.draw(st.sampled_from(STYPES))
    rows, cols = data.draw(st.integers(0, 12)), data.draw(st.sampled_from((1, 3, 5)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lo, hi = DOMAINS.get(name, (-4, 4))
    x = rng.uniform(lo, hi, size=(rows, cols))
    x[rng.random(rows) < 0.5] = 0
    x[rng.random((rows, cols)) < 0.2] = np.round(rng.uniform(-3, 3)) + 0.5  # halves round
    x = x.astype(dtype)
    array = to_stype(x, stype)
    result = quiet(getattr(mx.nd, name), array)
    sparse_kept = name in ELEMWISE_UNARY_SPARSE
    assert result.stype == (stype if sparse_kept else "default")
    assert result.dtype == dtype.type and result.shape == x.shape
    if stype != "default" and sparse_kept:  # stored positions unchanged
        np.testing.assert_array_equal(result.indices.asnumpy(), array.indices.asnumpy())
    with np.errstate(all="ignore"):
        expected = NUMPY_UNARY[name](x.astype(np.float64)).astype(dtype)
    got = result.asnumpy()
    if name in EXACT:
        np.testing.assert_array_equal(got, expected)
    else:
        atol = TOLERANCE[dtype.name] if name == "gammaln" else 1e-30  # gammaln has roots
        np.testing.assert_allclose(got, expected, rtol=TOLERANCE[dtype.name], atol=atol)


def int_oracle(name, x):
    """Unary math on integers: in float64, then nan -> 0, saturated to int64, wrapped."""
    if name in ("abs", "sign", "square", "negative", "relu"):
        with np.errstate(all="ignore"):
            return NUMPY_UNARY[name](x).astype(x.dtype)
    if name in ("floor", "ceil", "round", "rint", "fix", "trunc"):
        return x.copy()
    with np.errstate(all="ignore"):
        y = NUMPY_UNARY[name](x.astype(np.float64))
    big = 2.0**63
    as_int = np.where(np.isnan(y), 0, np.clip(y, -big, big - 1024)).astype(np.int64)
    as_int[y >= big] = np.iinfo(np.int64).max
    return as_int.astype(x.dtype)


@pytest.mark.parametrize("name", ["abs", "sign", "square", "negative", "relu", "floor", "round",
                                  "sqrt", "degrees", "radians", "cbrt"])
@given(x=single_arrays(dtypes=("uint8", "int32"), ndims=(2,)), stype=st.sampled_from(STYPES))
@settings(max_examples=10)
def test_unary_ops_on_integers(name, x, stype):
    result = getattr(mx.nd, name)(to_stype(x, stype))
    assert result.stype == stype and result.dtype == x.dtype.type
    np.testing.assert_array_equal(result.asnumpy(), int_oracle(name, x))


def test_unary_integer_values_follow_mxnet():
    # values printed by MXNet 1.9.1 (exp wraps through int64 as MXNet's float->int cast does)
    v = np.array([4, 0, 9, 2])
    assert mx.nd.exp(mx.nd.array(v, dtype="uint8")).asnumpy().tolist() == [54, 1, 167, 7]
    assert mx.nd.exp(mx.nd.array(v, dtype="int8")).asnumpy().tolist() == [54, 1, -89, 7]
    assert mx.nd.degrees(mx.nd.array(v, dtype="int8")).asnumpy().tolist() == [-27, 0, 3, 114]
    assert mx.nd.sqrt(mx.nd.array(v, dtype="int32")).asnumpy().tolist() == [2, 0, 3, 1]
    assert mx.nd.negative(mx.nd.array(v, dtype="uint8")).asnumpy().tolist() == [252, 0, 247, 254]
    # log(0) = -inf: MXNet gives INT_MIN through undefined behaviour; sparsegen saturates to
    # int64's minimum and wraps, which is 0 for int32 (docs/mxnet-differences.md)
    assert mx.nd.log(mx.nd.array(v, dtype="int32")).asnumpy().tolist() == [1, 0, 2, 0]


def test_rounding_follows_mxnet():
    halves = mx.nd.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5])
    assert mx.nd.round(halves).asnumpy().tolist() == [1, 2, 3, -1, -2, -3]  # half away from zero
    assert mx.nd.rint(halves).asnumpy().tolist() == [0, 1, 2, -1, -2, -3]  # half toward -inf
    assert mx.nd.rint(mx.nd.array([1.5, -2.5])).asnumpy().tolist() == [1, -3]  # issue 11
    assert mx.nd.fix(mx.nd.array([0.5, 2.7, -2.7])).asnumpy().tolist() == [0, 2, -2]
    near = np.nextafter(np.float32(0.5), np.float32(0))  # 0.49999997: x + 0.5 would round up
    assert mx.nd.round(mx.nd.array([near, -near])).asnumpy().tolist() == [0, 0]
    np.testing.assert_array_equal(mx.nd.sign(mx.nd.array([2, -0.0, np.nan, -3])).asnumpy(),
                                  [1, 0, np.nan, -1])
    np.testing.assert_array_equal(mx.nd.relu(mx.nd.array([np.nan, -1, 2])).asnumpy(),
                                  [np.nan, 0, 2])
    for op in ("sign", "relu"):  # +0.0 for -0.0, as MXNet
        assert not np.signbit(getattr(mx.nd, op)(mx.nd.array([-0.0])).asnumpy()).any(), op


BOUNDS = ((-1, 3), (0, 3), (-2, 0), (1, 3), (-3, -1), (0, 0), (-0.5, 2.5), (-1e9, 1e9))


def clip_bound(value, dtype: np.dtype):
    """A clip bound in the array's dtype: integer bounds saturate to the dtype's range."""
    if dtype.kind == "f":
        return np.array(value, dtype=np.float64).astype(dtype)
    info = np.iinfo(dtype)
    return np.array(min(max(int(value), info.min), info.max), dtype=dtype)


@given(single_arrays(), st.sampled_from(STYPES), st.sampled_from(BOUNDS))
def test_clip_matches_numpy(x, stype, bounds):
    if x.ndim != 2:
        stype = "row_sparse" if stype == "csr" else stype
    lo, hi = (clip_bound(v, x.dtype) for v in bounds)
    result = mx.nd.clip(to_stype(x, stype), *bounds)
    assert result.stype == (stype if lo <= 0 <= hi else "default")
    assert result.dtype == x.dtype.type
    np.testing.assert_array_equal(result.asnumpy(), np.clip(x, lo, hi))


def test_clip_edges():
    np.testing.assert_array_equal(mx.nd.clip(mx.nd.array([np.nan, 1, 5]), 0, 3).asnumpy(),
                                  [np.nan, 1, 3])
    with pytest.raises(mx.MXNetError, match=r"a_min \(3\) must not exceed a_max \(1\)"):
        mx.nd.clip(mx.nd.ones((2,)), 3, 1)
    assert mx.nd.sparse.clip(mx.nd.ones((2, 2)).tostype("csr"), 1, 3).stype == "default"


def test_tutorial_storage_inference():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [0, 3]), shape=(5, 2))
    b = a * 2
    c = a + mx.nd.ones((5, 2))
    assert b.stype == "row_sparse" and c.stype == "default"
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy() * 2)
    np.testing.assert_array_equal(c.asnumpy(), a.asnumpy() + 1)
    assert (2 * a).stype == "row_sparse" and (a / 2).stype == "row_sparse"
    assert (a + 0).stype == "row_sparse" and (a - 1).stype == "default"  # as MXNet
    assert (-a).stype == "row_sparse" and (a * np.float32(3)).stype == "row_sparse"
    assert (np.float32(3) * a).stype == "row_sparse"  # numpy scalars defer to the array


def test_scalar_dtypes_follow_mxnet():
    rsp = mx.nd.ones((3, 2)).tostype("row_sparse")
    assert (rsp * 2).dtype == np.float32 and (rsp * 2.5).dtype == np.float32
    ints = mx.nd.array([[7, -7, 1]], dtype="int32")
    assert (ints / 2).dtype == np.int32 and (ints / 2).asnumpy().tolist() == [[3, -3, 0]]
    assert (ints * 2.5).asnumpy().tolist() == [[14, -14, 2]]  # 2.5 is 2 as int32
    small = mx.nd.array([1, 2], dtype="uint8")
    assert (small * 300).asnumpy().tolist() == [44, 88]  # 300 wraps to 44 as uint8
    assert (-small).asnumpy().tolist() == [255, 254]
    half = mx.nd.array([1, 2], dtype="float16")
    assert (half * 1e6).asnumpy().tolist() == [np.inf, np.inf]  # 1e6 is inf as float16
    with pytest.raises(mx.MXNetError, match="the scalar nan has no int32 value"):
        ints + math.nan


def test_rows_beyond_dense_memory():
    """shape[0] = 2**40: the ops touch stored rows only (a dense array would need 16 TiB)."""
    shape = (2**40, 4)
    a = mx.nd.sparse.row_sparse_array((np.arange(12, dtype=np.float32).reshape(3, 4),
                                       [5, 2**39, 2**40 - 1]), shape=shape)
    b = mx.nd.sparse.row_sparse_array((np.ones((2, 4), np.float32), [2**39, 2**40 - 2]),
                                      shape=shape)
    for result, ids, data in (
        (a + b, [5, 2**39, 2**40 - 2, 2**40 - 1],
         [[0, 1, 2, 3], [5, 6, 7, 8], [1, 1, 1, 1], [8, 9, 10, 11]]),
        (a - b, [5, 2**39, 2**40 - 2, 2**40 - 1],
         [[0, 1, 2, 3], [3, 4, 5, 6], [-1, -1, -1, -1], [8, 9, 10, 11]]),
        (a * b, [2**39], [[4, 5, 6, 7]]),
        (a * 2, [5, 2**39, 2**40 - 1], np.arange(12).reshape(3, 4) * 2),
        (mx.nd.sqrt(a), [5, 2**39, 2**40 - 1], np.sqrt(np.arange(12).reshape(3, 4))),
    ):
        assert result.stype == "row_sparse" and result.shape == shape
        np.testing.assert_array_equal(result.indices.asnumpy(), ids)
        np.testing.assert_allclose(result.data.asnumpy(), data, rtol=1e-6)
    a += b
    assert a.stype == "row_sparse" and a.indices.asnumpy().tolist() == [5, 2**39, 2**40 - 2,
                                                                         2**40 - 1]


def test_empty_and_edge_shapes():
    for shape in ((0, 3), (4, 0), (0,), (3,)):
        a = mx.nd.zeros(shape).tostype("row_sparse")
        assert (a + a).shape == shape and (a * a).stype == "row_sparse"
        assert (a + mx.nd.ones(shape)).asnumpy().tolist() == np.ones(shape).tolist()
    e = mx.nd.sparse.zeros("csr", (3, 4))
    assert (e + e).stype == "csr" and (e * mx.nd.ones((3, 4))).indptr.asnumpy().tolist() == [0] * 4


def test_out_keeps_its_storage_type():
    a = mx.nd.array([[1, 0], [0, 2]]).tostype("row_sparse")
    b = mx.nd.array([[0, 3], [0, 4]]).tostype("row_sparse")
    for stype in STYPES:
        out = mx.nd.sparse.zeros(stype, (2, 2))
        assert mx.nd.elemwise_add(a, b, out=out) is out and out.stype == stype
        np.testing.assert_array_equal(out.asnumpy(), [[1, 3], [0, 6]])
    out = mx.nd.zeros((2, 2), dtype="float64")
    with pytest.raises(mx.MXNetError, match="dtype float64; the result has shape"):
        mx.nd.elemwise_mul(a, b, out=out)
    with pytest.raises(mx.MXNetError, match=r"out has shape \(3, 2\)"):
        mx.nd.sqrt(a, out=mx.nd.zeros((3, 2)))
    assert not out.asnumpy().any()


def test_dense_broadcasting_and_shape_errors():
    a = mx.nd.array(np.arange(6).reshape(2, 3))
    row = mx.nd.array([[10, 20, 30]])
    np.testing.assert_array_equal((a + row).asnumpy(), np.arange(6).reshape(2, 3) + [10, 20, 30])
    np.testing.assert_array_equal(mx.nd.multiply(mx.nd.array([[2], [3]]), row).asnumpy(),
                                  [[20, 40, 60], [30, 60, 90]])
    x = a.copy()
    x += row
    np.testing.assert_array_equal(x.asnumpy(), (a + row).asnumpy())
    with pytest.raises(mx.MXNetError,
                       match=r"could not be broadcast together with shapes \(2, 3\) and \(2, 2\)"):
        a + mx.nd.ones((2, 2))
    with pytest.raises(mx.MXNetError, match=r"elemwise_add: shapes \(2, 3\) and \(1, 3\) differ"):
        mx.nd.elemwise_add(a, row)
    with pytest.warns(mx.StorageFallbackWarning):  # sparse operands broadcast as dense
        summed = a.tostype("row_sparse") + row
    assert summed.stype == "default"
    np.testing.assert_array_equal(summed.asnumpy(), (a + row).asnumpy())
    with pytest.raises(mx.MXNetError, match=r"does not fit the updated array of shape \(1, 3\)"):
        row += a
    np.testing.assert_array_equal(row.asnumpy(), [[10, 20, 30]])  # unchanged


def test_operand_errors(monkeypatch):
    a = mx.nd.ones((2, 2))
    with pytest.raises(mx.MXNetError, match="got float32 and int32"):
        a * mx.nd.ones((2, 2), dtype="int32")
    with pytest.raises(TypeError, match="type ndarray is not supported"):
        a + np.ones((2, 2))
    with pytest.raises(TypeError, match="type list is not supported"):
        [1, 2] - a
    with pytest.raises(mx.MXNetError, match="elemwise_add: rhs must be an NDArray"):
        mx.nd.elemwise_add(a, 1)
    with pytest.raises(mx.MXNetError, match="on one context"):
        monkeypatch.setenv("SPARSEGEN_GPU", "host")  # cpu ids mix; a GPU and the host do not
        a + mx.nd.ones((2, 2), ctx=mx.gpu(0))
    assert mx.nd.add(1, 2) == 3 and mx.nd.divide(1, 2) == 0.5  # scalars only: Python arithmetic
    ints = mx.nd.array([[1, 2], [0, 0]], dtype="int64").tostype("row_sparse")
    for bad in (lambda: ints / 0, lambda: 5 / ints, lambda: ints / ints):
        with pytest.raises(mx.MXNetError, match="integer division by zero"):
            quiet(bad)


# -- the row_sparse merges: merge path over chunks (ew_index.rsp_union / rsp_intersect) ----------
MERGE_CHUNK = elemwise_ops.MERGE_CHUNK
MERGE_SIZES = (0, 1, MERGE_CHUNK - 1, MERGE_CHUNK, MERGE_CHUNK + 1, 3 * MERGE_CHUNK + 5)
"""Stored-row counts at the merge chunk's edges: none, one, a chunk's steps - 1 / + 0 / + 1,
several chunks."""

ID_LISTS = ("identical", "disjoint", "one empty", "interleaved", "equal pairs", "random")
"""How the two sorted id lists of a merge relate."""


def id_lists(rng: np.random.Generator, kind: str, ka: int, kb: int) -> tuple[np.ndarray, ...]:
    """Two sorted unique int64 id lists of (about) ``ka`` and ``kb`` ids related as ``kind``."""
    if kind == "identical":
        a = np.sort(rng.choice(3 * ka + 1, ka, replace=False))
        return a, a.copy()
    if kind == "disjoint":
        return np.arange(ka), np.arange(ka, ka + kb)
    if kind == "one empty":
        return np.arange(0, 2 * ka, 2), np.zeros(0, np.int64)
    if kind == "interleaved":
        return np.arange(0, 2 * ka, 2), np.arange(1, 2 * kb, 2)
    if kind == "equal pairs":  # runs of equal ids and of ids in one list only, at every offset
        ids = np.arange(ka + kb)
        return (np.sort(rng.choice(ids, min(ka, ids.size), replace=False)),
                np.sort(rng.choice(ids, min(kb, ids.size), replace=False)))
    universe = max(ka, kb) + rng.integers(0, ka + kb + 1)
    return (np.sort(rng.choice(universe, min(ka, universe), replace=False)),
            np.sort(rng.choice(universe, min(kb, universe), replace=False)))


def positions(ids: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Where each of ``ids`` is in the sorted ``stored``, -1 where absent."""
    at = np.minimum(np.searchsorted(stored, ids), max(stored.size - 1, 0))
    found = (stored[at] == ids) if stored.size else np.zeros(ids.size, bool)
    return np.where(found, at, -1)


def check_merge(a: np.ndarray, b: np.ndarray, union: bool, chunks: int, size: int) -> None:
    """``ew_index.rsp_union`` / ``rsp_intersect`` over ``chunks`` chunks against numpy, in the
    serial (``size`` small) or parallel build."""
    a, b = a.astype(np.int64), b.astype(np.int64)
    expected = np.union1d(a, b) if union else np.intersect1d(a, b)
    m = a.size + b.size if union else min(a.size, b.size)
    ids, src_a, src_b = (np.full(m, -7, np.int64) for _ in range(3))
    count, runs = np.full(1, -7, np.int64), np.full(chunks + 1, -7, np.int64)
    index = get_kernel("ew_index", (), size=size)
    (index.rsp_union if union else index.rsp_intersect)(a, b, ids, src_a, src_b, count, runs)
    k = expected.size
    assert count[0] == k, (chunks, a, b)
    np.testing.assert_array_equal(ids[:k], expected)
    np.testing.assert_array_equal(src_a[:k], positions(expected, a))
    np.testing.assert_array_equal(src_b[:k], positions(expected, b))


@pytest.mark.parametrize("union", [True, False])
@given(kind=st.sampled_from(ID_LISTS), ka=st.integers(0, 12), kb=st.integers(0, 12),
       seed=st.integers(0, 2**32 - 1), size=st.sampled_from((0, 10**6)))
def test_merge_splits_at_every_diagonal(union, kind, ka, kb, seed, size):
    """Small lists merged over every chunk count from 1 to one chunk per step (and more chunks
    than steps): each chunk edge falls at every diagonal, between every pair of equal ids."""
    a, b = id_lists(np.random.default_rng(seed), kind, ka, kb)
    for chunks in range(1, a.size + b.size + 3):
        check_merge(a, b, union, chunks, size)


def test_merge_equal_pair_split_by_a_chunk_edge():
    """``a[i] == b[j]`` on the steps ``2i`` (a first) and ``2i + 1``: chunks of one or three
    steps start between the two, chunks of two steps hold both."""
    ids = np.arange(6)
    for chunks in (12, 6, 4):
        check_merge(ids, ids, True, chunks, 0)
        check_merge(ids, ids, False, chunks, 0)
    check_merge(np.array([5]), np.array([5]), True, 2, 0)  # the pair is both chunks' steps


@pytest.mark.parametrize("union", [True, False])
@given(kind=st.sampled_from(ID_LISTS), ka=st.sampled_from(MERGE_SIZES),
       kb=st.sampled_from(MERGE_SIZES), seed=st.integers(0, 2**32 - 1),
       size=st.sampled_from((0, 10**6)))
def test_merge_around_the_chunk_size(union, kind, ka, kb, seed, size):
    """Lists of 0, 1, MERGE_CHUNK - 1 .. + 1 and several chunks of ids, in chunks of
    MERGE_CHUNK steps (as ``rsp_rsp`` splits them) and of a few steps."""
    a, b = id_lists(np.random.default_rng(seed), kind, ka, kb)
    steps = a.size + b.size
    for chunks in {max(1, -(-steps // MERGE_CHUNK)), max(1, steps // 7)}:
        check_merge(a, b, union, chunks, size)


def rsp_of(ids: np.ndarray, rows: int, rng: np.random.Generator, ctx: mx.Context):
    """A float32 row_sparse array storing the rows ``ids`` (values 1..9) of ``rows`` x 3."""
    data = rng.integers(1, 10, size=(ids.size, 3)).astype(np.float32)
    return mx.nd.sparse.row_sparse_array((data, ids.astype(np.int64)), shape=(rows, 3), ctx=ctx)


@pytest.mark.parametrize("device", ["cpu", "emulated gpu"])
@settings(max_examples=20)
@given(kind=st.sampled_from(ID_LISTS), ka=st.sampled_from(MERGE_SIZES),
       kb=st.sampled_from(MERGE_SIZES), chunk=st.sampled_from((3, MERGE_CHUNK)),
       serial=st.sampled_from((0, elemwise_ops.SERIAL_MERGE_STEPS)),
       seed=st.integers(0, 2**32 - 1))
def test_rsp_rsp_merges_at_chunk_edges(device, kind, ka, kb, chunk, serial, seed):
    """rsp ± rsp and rsp * rsp through the ops (host, or device buffers allocated one by one)
    with MERGE_CHUNK as shipped and small, and the CPU's serial merge on (as shipped) or off,
    against dense numpy."""
    rng = np.random.default_rng(seed)
    ids_a, ids_b = id_lists(rng, kind, ka, kb)
    rows = int(max(ids_a.max(initial=0), ids_b.max(initial=0))) + 2
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(elemwise_ops, "MERGE_CHUNK", chunk)
        patch.setattr(elemwise_ops, "SERIAL_MERGE_STEPS", serial)
        if device != "cpu":
            patch.setenv("SPARSEGEN_GPU", "host")
        ctx = mx.cpu() if device == "cpu" else mx.gpu(0)
        x, y = rsp_of(ids_a, rows, rng, ctx), rsp_of(ids_b, rows, rng, ctx)
        for result, expected, stored in ((x + y, x.asnumpy() + y.asnumpy(),
                                          np.union1d(ids_a, ids_b)),
                                         (x - y, x.asnumpy() - y.asnumpy(),
                                          np.union1d(ids_a, ids_b)),
                                         (x * y, x.asnumpy() * y.asnumpy(),
                                          np.intersect1d(ids_a, ids_b))):
            assert result.stype == "row_sparse"
            np.testing.assert_array_equal(result.indices.asnumpy(), stored)
            np.testing.assert_array_equal(result.asnumpy(), expected)


@pytest.mark.parametrize("union", [True, False])
@settings(max_examples=10)
@given(kind=st.sampled_from(ID_LISTS), seed=st.integers(0, 2**32 - 1))
def test_rsp_rsp_serial_merge_below_the_threshold(union, kind, seed):
    """On the CPU a merge below SERIAL_MERGE_STEPS is one chunk (one pass, no count pass): its
    ids, positions and count match numpy; at the threshold the merge is chunked again."""
    steps = elemwise_ops.SERIAL_MERGE_STEPS
    host = np.zeros(1, np.int64)
    assert elemwise_ops._merge_chunks(steps - 1, host) == 1
    assert elemwise_ops._merge_chunks(steps, host) == -(-steps // MERGE_CHUNK)
    a, b = id_lists(np.random.default_rng(seed), kind, 3 * MERGE_CHUNK + 5, 2 * MERGE_CHUNK)
    check_merge(a, b, union, 1, 10**6)
    x = mx.nd.sparse.row_sparse_array((np.full((a.size, 2), 2, np.float32), a),
                                      shape=(int(max(a.max(initial=0), b.max(initial=0))) + 1, 2))
    y = mx.nd.sparse.row_sparse_array((np.ones((b.size, 2), np.float32), b), shape=x.shape)
    result = x + y if union else x * y
    np.testing.assert_array_equal(result.indices.asnumpy(),
                                  np.union1d(a, b) if union else np.intersect1d(a, b))
    np.testing.assert_array_equal(result.asnumpy(),
                                  x.asnumpy() + y.asnumpy() if union else x.asnumpy() * y.asnumpy())
