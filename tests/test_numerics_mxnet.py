"""Elementwise numerics at the edges against MXNet 1.9.1, recorded in fixtures/numerics.json.

tests/fixtures/record_numerics.py ran each case through the real MXNet 1.9.1 (CPU); here
sparsegen runs the same inputs and must give the same output storage type, the same stored
positions and the same values: bit for bit where MXNet's arithmetic is exact (signed zeros
included, nan only matched as nan: its sign bit is whatever the CPU's invalid operation gives),
within a few ulp for transcendental functions, with nan, inf and zeros (and their signs) in the
same places. The differences docs/mxnet-differences.md lists are checked as such, each by its
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
        rows = values.reshape(len(record["indices"]), -1)
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
def _unary_expected(case: dict, inp: dict) -> tuple[dict, str]:
    """MXNet's result, or numpy's where sparsegen deliberately differs (the reason returned)."""
    want = case["output"]
    op, dtype = case["op"], inp["dtype"]
    if op == "clip" and "error" in want:
        # sparse clip with 0 outside [a_min, a_max]: MXNet refuses, sparsegen gives dense
        lo, hi = float(case["a_min"]), float(case["a_max"])
        x = dense(inp)
        with np.errstate(all="ignore"):
            lo_t, hi_t = (np.array(v).astype(dtype) if dtype.startswith("float") else
                          np.array(int(v)).astype(dtype) for v in (lo, hi))
        values = np.where(x > hi_t, hi_t, np.where(x < lo_t, lo_t, x)).astype(dtype)
        return {"stype": "default", "dtype": dtype, "shape": inp["shape"],
                "data": values.tobytes().hex()}, "dense clip"
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
