"""Elementwise numerics at the edges against MXNet 1.9.1, recorded in fixtures/numerics.json.

tests/fixtures/record_numerics.py ran each case through the real MXNet 1.9.1 (CPU); here
sparsegen runs the same inputs and must give the same output storage type, the same stored
positions and the same values: bit for bit where MXNet's arithmetic is exact (signed zeros and
nan bits included: the CPU's default nan for invalid operations, a nan operand passed through),
within a few ulp for transcendental functions, with nan, inf and zeros (and the zeros' signs) in
the same places (a transcendental's nan sign is its library's choice: LLVM's `log(-1)` is -nan,
glibc's +nan). The differences docs/mxnet-differences.md lists are checked as such, each by its
own rule below, never skipped.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import sparsegen as mx

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "numerics.json").read_text())
INPUTS = FIXTURE["inputs"]

EXACT_UNARY = {"abs", "sign", "sqrt", "square", "negative", "relu", "floor", "ceil", "round",
               "rint", "fix", "trunc", "clip"}
"""Unary ops whose IEEE result is exact (correctly rounded): compared bit for bit."""

ULP = {"float16": 1, "float32": 2, "float64": 3}
"""Largest distance in ulp allowed for the transcendental functions (measured against numpy
the kernels stay within 2 ulp, cbrt float64 within 3; MXNet's libm is another implementation)."""


def decode(record: dict) -> np.ndarray:
    """The values of an encoded array, exactly."""
    raw = np.frombuffer(bytes.fromhex(record["data"]), np.dtype(record["dtype"]).newbyteorder("<"))
    return raw.astype(record["dtype"])


def build(record: dict) -> mx.nd.NDArray:
    """The sparsegen array an encoded input describes (explicit zeros stay stored)."""
    dtype, shape = record["dtype"], tuple(record["shape"])
    values = decode(record)
    if record["stype"] == "default":
        return mx.nd.array(values.reshape(shape), dtype=dtype)
    if record["stype"] == "row_sparse":
        return mx.nd.sparse.row_sparse_array(
            (values.reshape(-1, *shape[1:]), np.array(record["indices"], np.int64)),
            shape=shape, dtype=dtype)
    return mx.nd.sparse.csr_matrix(
        (values, np.array(record["indices"], np.int64), np.array(record["indptr"], np.int64)),
        shape=shape, dtype=dtype)


def positions(record: dict) -> set:
    """The stored positions of an encoded array: row ids (row_sparse) or (row, column) pairs."""
    if record["stype"] == "row_sparse":
        return set(record["indices"])
    if record["stype"] == "csr":
        ptr = record["indptr"]
        return {(r, c) for r in range(len(ptr) - 1) for c in record["indices"][ptr[r]:ptr[r + 1]]}
    return set()


def dense(record: dict) -> np.ndarray:
    """The dense form of an encoded array (absent positions +0.0)."""
    shape, values = tuple(record["shape"]), decode(record)
    if record["stype"] == "default":
        return values.reshape(shape)
    out = np.zeros(shape, values.dtype)
    if record["stype"] == "row_sparse":
        out[record["indices"]] = values.reshape(-1, *shape[1:])
    else:
        ptr = record["indptr"]
        for r in range(len(ptr) - 1):
            out[r, record["indices"][ptr[r]:ptr[r + 1]]] = values[ptr[r]:ptr[r + 1]]
    return out


def row_values(record: dict) -> dict:
    """Stored position -> its values (a row of a row_sparse array, an entry of a csr)."""
    values = decode(record)
    if record["stype"] == "row_sparse":
        rows = values.reshape(len(record["indices"]), math.prod(record["shape"][1:]))
        return dict(zip(record["indices"], rows))
    ptr = record["indptr"]
    return {(r, record["indices"][p]): values[p:p + 1]
            for r in range(len(ptr) - 1) for p in range(ptr[r], ptr[r + 1])}


def encode(x: mx.nd.NDArray) -> dict:
    """A sparsegen result in the fixture's encoding."""
    record = {"stype": x.stype, "dtype": np.dtype(x.dtype).name, "shape": list(x.shape)}
    values = x.asnumpy() if x.stype == "default" else x.data.asnumpy()
    if x.stype != "default":
        record["indices"] = x.indices.asnumpy().tolist()
    if x.stype == "csr":
        record["indptr"] = x.indptr.asnumpy().tolist()
    record["data"] = np.ascontiguousarray(values).tobytes().hex()
    return record


def _ordered(x: np.ndarray) -> np.ndarray:
    """Float bit patterns as integers ordered like the floats (for ulp distances)."""
    bits = x.view({2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]).astype(np.int64)
    return np.where(bits < 0, np.iinfo(np.int64).min - bits, bits)


def assert_values(got: np.ndarray, want: np.ndarray, exact: bool, what: str,
                  signed_zero: np.ndarray | None = None) -> None:
    """``got == want``: nan where nan, bit for bit elsewhere when ``exact``, else the same
    non-finite values and zeros (with their signs) and at most ``ULP`` apart. Where
    ``signed_zero`` is False, zeros of either sign are equal."""
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape)
    if want.dtype.kind != "f":
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=what)
        else:  # computed in float64 and truncated: 1 apart where libm's roundings differ
            assert np.all(np.abs(got.astype(object) - want.astype(object)) <= 1), (what, got, want)
        return
    g, w = got.ravel(), want.ravel()
    bad = np.isnan(g) != np.isnan(w)
    if exact:  # nan bit for bit too: IEEE's default nan, or the nan operand passed through
        bad |= np.isnan(g) & np.isnan(w) & (g.view(_uint(g)) != w.view(_uint(w)))
    both = ~np.isnan(g) & ~np.isnan(w)
    gb, wb = _ordered(g), _ordered(w)
    if signed_zero is not None:
        loose = ~signed_zero.ravel() & (g == 0) & (w == 0)
        gb, wb = np.where(loose, 0, gb), np.where(loose, 0, wb)
    if exact:
        bad |= both & (gb != wb)
    else:
        special = both & (~np.isfinite(g) | ~np.isfinite(w) | (g == 0) | (w == 0))
        bad |= special & (gb != wb)
        bad |= both & ~special & (np.abs(gb - wb) > ULP[want.dtype.name])
    assert not bad.any(), (
        f"{what}: at {np.flatnonzero(bad).tolist()} got {g[bad].tolist()} "
        f"(bits {[hex(int(v)) for v in g[bad].view(_uint(g))]}), MXNet {w[bad].tolist()}")


def _uint(x: np.ndarray) -> type:
    return {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]


def run(call) -> dict:
    """``call()``'s result encoded, or the error it raised as ``{"error": class name}``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return encode(call())
    except (mx.MXNetError, TypeError, ValueError) as error:
        return {"error": type(error).__name__, "message": str(error)}


def _case_id(case: dict) -> str:
    parts = [case["op"], case.get("scalar"), case.get("a_min"), case.get("a_max"),
             case.get("input") or f"{case['lhs']}|{INPUTS[case['rhs']]['stype']}"]
    return "-".join(str(p) for p in parts if p is not None)


# -- unary ops ------------------------------------------------------------------------------------
INTEGER_EXACT = {
    "abs": np.abs, "sign": np.sign, "square": lambda x: x * x, "negative": np.negative,
    "relu": lambda x: np.maximum(x, 0), **{op: lambda x: x for op in (
        "floor", "ceil", "round", "rint", "fix", "trunc")},
}
"""Unary ops that stay in integer arithmetic on integer dtypes (wrapping, as numpy); MXNet
computes them through float64, exact only below 2**53 and undefined out of range."""

FLOAT64_MATH = {
    "rsqrt": lambda x: 1 / np.sqrt(x), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "expm1": np.expm1, "log1p": np.log1p,
}


def _with_values(record: dict, values: np.ndarray) -> dict:
    return {**record, "data": np.ascontiguousarray(values).tobytes().hex()}


def _integer_expected(op: str, inp: dict, want: dict) -> dict:
    """The documented result of a unary op on an integer dtype: exact integer arithmetic for
    ``INTEGER_EXACT``; else MXNet's value where the float64 result fits the dtype, and elsewhere
    (nan, out of range: undefined in MXNet) nan -> 0, saturated to int64, wrapped to the dtype."""
    x = decode(inp)
    dtype = x.dtype
    with np.errstate(all="ignore"):
        if op in INTEGER_EXACT:
            exact = INTEGER_EXACT[op](x).astype(dtype)
            safe = (np.abs(x.astype(object)) < 2**53) & np.array(
                [np.iinfo(dtype).min <= int(v) * (int(v) if op == "square" else 1)
                 <= np.iinfo(dtype).max for v in x.astype(object)])
            mx_values = decode(want)
            assert np.array_equal(mx_values[safe], exact[safe]), (op, x[safe], mx_values[safe])
            return _with_values(want, exact)
        y = FLOAT64_MATH.get(op, getattr(np, op, None))(x.astype(np.float64))
    y = np.trunc(y)
    info = np.iinfo(dtype)
    fits = np.isfinite(y) & (y >= info.min) & (y <= info.max)
    saturated = np.where(np.isnan(y), 0, np.clip(y, -2.0**63, 2.0**63 - 1024))
    limits = np.where(y >= 2.0**63, np.iinfo(np.int64).max, saturated.astype(np.int64))
    converted = np.where(y <= -(2.0**63), np.iinfo(np.int64).min, limits).astype(dtype)
    if op in ("degrees", "radians"):  # MXNet's float32 constant: compare with float64's
        return _with_values(want, np.where(fits, np.where(fits, y, 0).astype(dtype), converted))
    return _with_values(want, np.where(fits, decode(want), converted))


def _unary_expected(case: dict, inp: dict) -> tuple[dict, str]:
    """MXNet's result, or numpy's where sparsegen deliberately differs (the reason returned)."""
    want = case["output"]
    op, dtype = case["op"], inp["dtype"]
    if op not in ("clip",) and not dtype.startswith("float") and "error" not in want:
        return _integer_expected(op, inp, want), "integer conversion"
    if op in ("degrees", "radians") and dtype == "float64":
        # MXNet multiplies by a float32 constant; sparsegen by the float64 one
        with np.errstate(all="ignore"):
            values = np.degrees(decode(inp)) if op == "degrees" else np.radians(decode(inp))
        return _with_values(want, values[: decode(want).size]), "float64 constant"
    if op == "clip" and "error" in want:
        # sparse clip with 0 outside [a_min, a_max]: MXNet refuses, sparsegen gives dense
        lo, hi = float(case["a_min"]), float(case["a_max"])
        x = dense(inp)
        with np.errstate(all="ignore"):
            lo_t, hi_t = (np.array(v).astype(dtype) if dtype.startswith("float") else
                          np.array(int(v)).astype(dtype) for v in (lo, hi))
        values = np.where(x > hi_t, hi_t, np.where(x < lo_t, lo_t, x)).astype(dtype)
        # bounds truncate for integer dtypes: (0.5, 2) is (0, 2), which keeps the storage
        stored = decode(inp)
        record = _with_values(inp, np.where(stored > hi_t, hi_t, np.where(
            stored < lo_t, lo_t, stored)).astype(dtype)) if lo_t <= 0 <= hi_t else {
            "stype": "default", "dtype": dtype, "shape": inp["shape"],
            "data": values.tobytes().hex()}
        return record, "clip out of MXNet's sparse range"
    if op == "sign" and dtype.startswith("float"):
        # MXNet's sign(nan) is 0; sparsegen's is nan (numpy)
        values = decode(want).copy()
        values[np.isnan(decode(inp).reshape(-1)[: values.size])] = np.nan
        return {**want, "data": values.tobytes().hex()}, "sign(nan) is nan"
    return want, ""


UNARY = [case for case in FIXTURE["unary"]]


@pytest.mark.parametrize("case", UNARY, ids=[_case_id(c) for c in UNARY])
def test_unary(case: dict) -> None:
    inp = INPUTS[case["input"]]
    x = build(inp)
    if case["op"] == "clip":
        lo, hi = float(case["a_min"]), float(case["a_max"])
        got = run(lambda: mx.nd.clip(x, lo, hi))
    else:
        got = run(lambda: getattr(mx.nd, case["op"])(x))
    want, _ = _unary_expected(case, inp)
    assert "error" not in got, got
    assert got["stype"] == want["stype"]
    if want["stype"] != "default":
        assert positions(got) == positions(want)
    exact = case["op"] in EXACT_UNARY or (inp["dtype"] == "float64" and case["op"] == "square")
    assert_values(dense(got), dense(want), exact, _case_id(case))


# -- array (op) array -------------------------------------------------------------------------
def _mask(record: dict, keys: set) -> np.ndarray:
    """True at the elements of the stored positions ``keys`` (rows or (row, column) pairs)."""
    mask = np.zeros(tuple(record["shape"]), bool)
    for key in keys:
        mask[key] = True
    return mask


def _nonfinite_keys(record: dict) -> set:
    return {key for key, values in row_values(record).items() if not np.isfinite(values).all()}


def _dense_nonfinite_keys(stype: str, record: dict) -> set:
    """The positions of a dense operand holding inf or nan, as a product with a ``stype``
    operand stores them: rows (row_sparse) or (row, column) pairs (csr)."""
    bad = ~np.isfinite(dense(record))
    if stype == "row_sparse":
        return set(np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1)).tolist())
    return {(int(r), int(c)) for r, c in zip(*np.nonzero(bad))}


def _sparsegen_keys(fn: str, lhs: dict, rhs: dict, want: dict) -> set:
    """The positions sparsegen stores where it differs from MXNet on purpose: a product stores
    the positions stored in both, and those of one holding inf or nan (MXNet: every row of
    either, for csr without the zero results); a product with a dense operand also stores the
    positions where the dense operand holds inf or nan (MXNet: the sparse operand's only, 0
    where ``0 * inf`` is nan); a csr sum stores every entry of either (MXNet drops zero
    results)."""
    la, lb = positions(lhs), positions(rhs)
    if lhs["stype"] != rhs["stype"]:
        if fn == "mul" and "default" in (lhs["stype"], rhs["stype"]):
            sparse, other = (lhs, rhs) if rhs["stype"] == "default" else (rhs, lhs)
            return positions(want) | _dense_nonfinite_keys(sparse["stype"], other)
        return positions(want)
    if fn == "mul":
        return (la & lb) | (_nonfinite_keys(lhs) - lb) | (_nonfinite_keys(rhs) - la)
    if lhs["stype"] == "csr" and fn in ("add", "sub"):
        return la | lb
    return positions(want)


def _numpy_binary(fn: str, lhs: dict, rhs: dict) -> dict:
    """numpy's ``lhs <fn> rhs`` in sparsegen's output storage (for cases MXNet refuses: float16
    and integer dtypes with a csr and a dense operand): a product keeps the sparse operand's
    positions."""
    a, b = dense(lhs), dense(rhs)
    with np.errstate(all="ignore"):
        values = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[fn](a, b)
    sparse = lhs if lhs["stype"] != "default" else rhs
    absent = ~_mask(sparse, positions(sparse))
    if fn in ("add", "sub") and sparse is rhs:  # the dense operand, copied where rhs is absent
        values = np.where(absent, a, values)
    if fn in ("add", "sub") and sparse is lhs:  # -d where lhs is absent (-0.0 for 0), as MXNet
        values = np.where(absent, b if fn == "add" else np.negative(b), values)
    if fn != "mul":
        return {"stype": "default", "dtype": values.dtype.name, "shape": list(values.shape),
                "data": values.tobytes().hex()}
    stored = _mask(sparse, positions(sparse))
    record = {k: v for k, v in sparse.items() if k != "data"}
    return _with_values(record, values[stored])


BINARY = FIXTURE["binary"]


@pytest.mark.parametrize("case", BINARY, ids=[_case_id(c) for c in BINARY])
def test_binary(case: dict) -> None:
    lhs, rhs = INPUTS[case["lhs"]], INPUTS[case["rhs"]]
    fn = case["op"].removeprefix("elemwise_")
    got = run(lambda: getattr(mx.nd, case["op"])(build(lhs), build(rhs)))
    want = case["output"]
    assert "error" not in got, got
    if "error" in want:  # MXNet 1.9.1's csr-with-dense kernels take float32 / float64 only
        assert lhs["dtype"] not in ("float32", "float64") and "csr" in (lhs["stype"], rhs["stype"])
        assert lhs["stype"] != rhs["stype"]
        want = _numpy_binary(fn, lhs, rhs)
    assert got["stype"] == want["stype"]
    loose = np.zeros(tuple(want["shape"]), bool)
    expected = dense(want)
    if want["stype"] != "default":
        keys = _sparsegen_keys(fn, lhs, rhs, want)
        assert positions(got) == keys
        differ = keys ^ positions(want)
        for key, values in row_values(want).items():  # MXNet's extra positions hold zeros
            assert key in keys or not values.any(), (key, values)
        loose = _mask(want, differ)
        if lhs["stype"] != rhs["stype"]:  # inf or nan of the dense operand where the sparse
            nan = _mask(want, keys - positions(want))  # stores none: numpy's 0 * inf, stored
            with np.errstate(all="ignore"):
                expected = np.where(nan, dense(lhs) * dense(rhs), expected)
            loose &= ~nan
    assert_values(dense(got), expected, True, _case_id(case), signed_zero=~loose)


# -- array (op) scalar --------------------------------------------------------------------------
SCALAR = FIXTURE["scalar"]
_SCALAR_CALLS = {
    "mul": lambda x, s: x * s, "div": lambda x, s: x / s, "add": lambda x, s: x + s,
    "sub": lambda x, s: x - s, "rmul": lambda x, s: s * x, "radd": lambda x, s: s + x,
    "rsub": lambda x, s: s - x, "rdiv": lambda x, s: s / x,
}


def _zero_image(op: str, s: float) -> float:
    """What the op makes of an absent 0 (numpy float64 arithmetic)."""
    with np.errstate(all="ignore"):
        return float(_SCALAR_CALLS[op](np.float64(0.0), np.float64(s)))


@pytest.mark.parametrize("case", SCALAR, ids=[_case_id(c) for c in SCALAR])
def test_scalar(case: dict) -> None:
    inp = INPUTS[case["input"]]
    s = float(case["scalar"])
    got = run(lambda: _SCALAR_CALLS[case["op"]](build(inp), s))
    want = case["output"]
    assert "error" not in got and "error" not in want, (got, want)
    if inp["stype"] != "default" and _zero_image(case["op"], s) != 0:
        # sparsegen: dense, with the value of the absent zeros (MXNet keeps the storage and
        # leaves them 0, or gives a dense result for `s - x` / `s / x`)
        x = dense(inp)
        with np.errstate(all="ignore"):
            values = _SCALAR_CALLS[case["op"]](x, x.dtype.type(s)).astype(x.dtype)
        want = {"stype": "default", "dtype": x.dtype.name, "shape": inp["shape"],
                "data": values.tobytes().hex()}
        if "rsub" == case["op"] or "rdiv" == case["op"] or case["output"]["stype"] == "default":
            assert_values(dense(case["output"]), values, True, "MXNet's dense result")
    elif inp["stype"] != "default" and want["stype"] == "default":
        # `0 - x` on sparse: MXNet falls back to dense, sparsegen keeps the storage (0 - 0 is
        # 0); absent zeros read +0.0 (for `-0.0 - x` MXNet's dense result has -0.0 there)
        assert case["op"] == "rsub", case
        assert got["stype"] == inp["stype"] and positions(got) == positions(inp)
        absent = ~_mask(inp, positions(inp))
        assert_values(dense(got), dense(want), True, _case_id(case), signed_zero=~absent)
        return
    assert got["stype"] == want["stype"]
    if want["stype"] != "default":
        assert positions(got) == positions(want)
    assert_values(dense(got), dense(want), True, _case_id(case))
