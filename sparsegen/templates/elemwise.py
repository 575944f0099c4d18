"""Elementwise kernels: flat maps, unary maps, and the row_sparse / csr merges (index set, values).

Arithmetic follows MXNet 1.9.1: every op computes in the element dtype (float16 through float32,
rounded once), integer division truncates toward zero, and unary math on integer dtypes computes
in float64 and converts back (saturating to int64, then wrapping to the dtype, never undefined).

Flat maps over dense buffers take their loop shape from ``flat.py``.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from functools import partial

import tvm
from tvm import tirx
from tvm.script import tirx as T

from . import element_bytes
from .columns import cols
from .flat import binary_map, clip_map, scalar_map, unary_map
from .scan import offsets

Expr = tvm.ir.Expr

UNION_OPS = ("add", "sub")
"""Binary ops whose sparse result stores the union of the operands' positions."""


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def _is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint")


def _const(value: float | int, dtype: str) -> Expr:
    return tirx.const(value, dtype)


def _in_compute_type(dtype: str, build: Callable[..., Expr], *args: Expr) -> Expr:
    """``build(*args)`` evaluated in float32 for float16 (MXNet's half_t arithmetic), else as is."""
    if dtype != "float16":
        return build(*args)
    return T.Cast("float16", build(*(T.Cast("float32", a) for a in args)))


def _int_div(dtype: str, a: Expr, b: Expr) -> Expr:
    """``a / b`` truncated toward zero; 0 for ``b == 0`` and wrapping ``-a`` for ``b == -1``, so the
    kernel never traps (the front end refuses integer division by zero before calling it)."""
    zero, one = _const(0, dtype), _const(1, dtype)
    if _is_unsigned(dtype):
        return T.Select(b == zero, zero, tirx.truncdiv(a, T.Select(b == zero, one, b)))
    minus_one = _const(-1, dtype)
    safe = T.Select((b == zero) | (b == minus_one), one, b)
    return T.Select(b == zero, zero, T.Select(b == minus_one, zero - a, tirx.truncdiv(a, safe)))


def binary(fn: str, dtype: str, a: Expr, b: Expr) -> Expr:
    """``a <fn> b`` for fn in add, sub, mul, div, in ``dtype``."""
    if fn == "div" and not _is_float(dtype):
        return _int_div(dtype, a, b)
    ops = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
    }
    return _in_compute_type(dtype, ops[fn], a, b)


def _float_with_zero(fn: str, dt: str, x: Expr, zero_first: bool) -> Expr:
    """``x <fn> 0`` (``0 <fn> x`` when ``zero_first``) in IEEE arithmetic, written out because
    TVM's simplifier folds ``x * 0`` to 0 and ``x + 0`` to ``x``: ``x * 0`` is a zero with the
    sign of ``x`` (the target's default nan for inf, nan itself for nan), ``x + 0`` and ``0 - x``
    turn -0.0 into +0, and a nan operand passes unchanged (its sign included)."""
    zero = _const(0, dt)
    if fn == "mul":
        # finite: a zero with x's sign; else a real multiplication by a zero the simplifier
        # cannot see, so inf * 0 is the target's default nan and a nan operand stays itself
        signed_zero = tirx.copysign(zero, x)
        return T.Select(tirx.isfinite(x), signed_zero, x * signed_zero)
    if fn == "add":
        return T.Select(x == zero, zero, x)
    if zero_first:  # 0 - x: -x, but +0 for both zeros and nan unchanged
        return T.Select(x == zero, zero, T.Select(tirx.isnan(x), x, -x))
    return x  # x - 0 is x, -0.0 and nan included


def with_zero(fn: str, dtype: str, x: Expr, zero_first: bool = False) -> Expr:
    """``x <fn> 0`` (``0 <fn> x`` when ``zero_first``) in ``dtype``, for fn in add, sub, mul: the
    value at a position stored in one operand only."""
    if not _is_float(dtype):
        zero = _const(0, dtype)
        return binary(fn, dtype, zero, x) if zero_first else binary(fn, dtype, x, zero)
    compute = "float32" if dtype == "float16" else dtype
    return _in_compute_type(dtype, lambda v: _float_with_zero(fn, compute, v, zero_first), x)


def _libm(name: str) -> Callable[[Expr, str], Expr]:
    """A C math library function (float32 ``namef`` or float64 ``name``): used where TVM's own
    lowering is inaccurate (tanh, atanh near 0) or missing (expm1, cbrt)."""

    def call(x: Expr, dt: str) -> Expr:
        return tirx.call_pure_extern(dt, name + ("f" if dt == "float32" else ""), x)

    return call


def _round_half_away(x: Expr, dt: str) -> Expr:
    """C ``round`` (MXNet's ``round``): halves go away from zero; ``x - trunc(x)`` is exact."""
    t = tirx.trunc(x)
    return T.Select(tirx.abs(x - t) >= _const(0.5, dt), t + tirx.copysign(_const(1, dt), x), t)


def _rint(x: Expr, dt: str) -> Expr:
    """MXNet's ``rint``: the nearer of ``floor(x)`` and ``ceil(x)``, ``floor`` on a tie, so halves
    go toward -inf (``rint(1.5) = 1``, ``rint(-2.5) = -3``); ``inf`` stays, nan stays nan."""
    lo, hi = tirx.floor(x), tirx.ceil(x)
    return T.Select(x - lo <= hi - x, lo, hi)


def _sign(x: Expr, dt: str) -> Expr:
    zero, one = _const(0, dt), _const(1, dt)
    if _is_unsigned(dt):
        return T.Select(x > zero, one, zero)
    # +0 for both zeros (MXNet, numpy); x itself for nan (numpy's sign(nan) is nan)
    return T.Select(x > zero, one, T.Select(x < zero, _const(-1, dt), T.Select(x == zero, zero, x)))


def _relu(x: Expr, dt: str) -> Expr:
    """MXNet's relu: ``x`` if ``x > 0`` or nan, else +0 (also for -0.0)."""
    if _is_unsigned(dt):
        return x
    return T.Select((x > _const(0, dt)) | tirx.isnan(x), x, _const(0, dt))


def _degrees_factor(dt: str, numerator: float, denominator: float) -> Expr:
    """``numerator / denominator`` as MXNet's float32 constant (both rounded to float32, then
    divided in float32) for float16 / float32, as the correctly rounded float64 for float64."""
    if dt == "float64":
        return _const(numerator / denominator, dt)
    return _const(_f32(_f32(numerator) / _f32(denominator)), dt)


def _f32(value: float) -> float:
    """``value`` rounded to float32 (exact for float32 division of float32 operands)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _abs(x: Expr, dt: str) -> Expr:
    return x if _is_unsigned(dt) else tirx.abs(x)


def _intrinsic(f: Callable[[Expr], Expr]) -> Callable[[Expr, str], Expr]:
    return lambda x, dt: f(x)


FLOAT_UNARY: dict[str, Callable[[Expr, str], Expr]] = {
    "abs": _abs,
    "sign": _sign,
    "sqrt": _intrinsic(tirx.sqrt),
    "square": lambda x, dt: x * x,
    "negative": lambda x, dt: _const(0, dt) - x if not _is_float(dt) else -x,
    "relu": _relu,
    "sin": _intrinsic(tirx.sin),
    "sinh": _intrinsic(tirx.sinh),
    "tan": _intrinsic(tirx.tan),
    "tanh": _libm("tanh"),
    "arcsin": _intrinsic(tirx.asin),
    "arcsinh": _intrinsic(tirx.asinh),
    "arctan": _intrinsic(tirx.atan),
    "arctanh": _libm("atanh"),
    "floor": _intrinsic(tirx.floor),
    "ceil": _intrinsic(tirx.ceil),
    "round": _round_half_away,
    "rint": _rint,
    "fix": _intrinsic(tirx.trunc),
    "trunc": _intrinsic(tirx.trunc),
    "expm1": _libm("expm1"),
    "log1p": _intrinsic(tirx.log1p),
    "cbrt": _libm("cbrt"),
    "degrees": lambda x, dt: x * _degrees_factor(dt, 180.0, math.pi),
    "radians": lambda x, dt: x * _degrees_factor(dt, math.pi, 180.0),
    "exp": _intrinsic(tirx.exp),
    "log": _intrinsic(tirx.log),
    "log10": _intrinsic(tirx.log10),
    "log2": _intrinsic(tirx.log2),
    "rsqrt": _intrinsic(tirx.rsqrt),
    "cos": _intrinsic(tirx.cos),
    "cosh": _intrinsic(tirx.cosh),
    "arccos": _intrinsic(tirx.acos),
    "arccosh": _intrinsic(tirx.acosh),
    "sigmoid": lambda x, dt: _const(1, dt) / (_const(1, dt) + tirx.exp(-x)),
}
"""Unary ops by MXNet name: ``(x, compute dtype) -> expression`` (float16 computes in float32)."""

_INTEGER_OPS = {"abs", "sign", "square", "negative", "relu"}
"""Unary ops that stay in integer arithmetic on integer dtypes (wrapping, as MXNet)."""

_ROUNDING = {"floor", "ceil", "round", "rint", "fix", "trunc"}
"""Rounding ops: the identity on integer dtypes."""

_INT64_LIMIT = 9.2233720368547758e18  # 2**63 as float64


def _float_to_int(y: Expr, dtype: str) -> Expr:
    """float64 -> ``dtype``: nan -> 0, saturate to int64, then wrap (C's integer narrowing)."""
    limit = _const(_INT64_LIMIT, "float64")
    as_int64 = T.Select(
        tirx.isnan(y),
        _const(0, "int64"),
        T.Select(
            y >= limit,
            _const(2**63 - 1, "int64"),
            T.Select(y <= -limit, _const(-(2**63), "int64"), T.Cast("int64", y)),
        ),
    )
    return as_int64 if dtype == "int64" else T.Cast(dtype, as_int64)


def unary(fn: str, dtype: str, x: Expr) -> Expr:
    """The unary op ``fn`` applied to ``x`` of ``dtype``, result in ``dtype``."""
    build = FLOAT_UNARY[fn]
    if dtype == "float16":
        return T.Cast("float16", build(T.Cast("float32", x), "float32"))
    if _is_float(dtype) or fn in _INTEGER_OPS:
        return build(x, dtype)
    if fn in _ROUNDING:
        return x
    return _float_to_int(build(T.Cast("float64", x), "float64"), dtype)


def clip(dtype: str, x: Expr, lo: Expr, hi: Expr) -> Expr:
    """MXNet's clip: ``hi`` if ``x > hi``, else ``lo`` if ``x < lo``, else ``x`` (nan stays nan)."""
    return _in_compute_type(
        dtype, lambda v, a, b: T.Select(v > b, b, T.Select(v < a, a, v)), x, lo, hi
    )


SCALAR_OPS: dict[str, Callable[[str, Expr, Expr], Expr]] = {
    "add_scalar": lambda dt, x, s: binary("add", dt, x, s),
    "sub_scalar": lambda dt, x, s: binary("sub", dt, x, s),
    "rsub_scalar": lambda dt, x, s: binary("sub", dt, s, x),
    "mul_scalar": lambda dt, x, s: binary("mul", dt, x, s),
    "div_scalar": lambda dt, x, s: binary("div", dt, x, s),
    "rdiv_scalar": lambda dt, x, s: binary("div", dt, s, x),
}
"""``x <op> s`` and the reflected ``s <op> x``."""


def nonfinite(dtype: str, x: Expr) -> Expr:
    """Whether ``x`` is inf, -inf or nan (never for integer dtypes)."""
    if not _is_float(dtype):
        return tirx.const(False, "bool")
    return tirx.bitwise_not(tirx.isfinite(T.Cast("float32", x) if dtype == "float16" else x))


def _nonfinite_count(dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(x: T.handle, counts: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        c1 = T.int64()  # blocks + 1
        X = T.match_buffer(x, (n,), dtype, align=align)
        C = T.match_buffer(counts, (c1,), "int64", align=8)
        for i in T.serial(c1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(c1 - 1, i)
                T.reads(X[0:n])
                T.writes(C[vi + 1])
                acc = T.alloc_buffer((1,), "int64", scope="local")
                acc[0] = T.int64(0)
                for j in T.serial(_chunk_edge(vi + 1, n, c1 - 1) - _chunk_edge(vi, n, c1 - 1)):
                    acc[0] = acc[0] + T.Cast(
                        "int64", nonfinite(dtype, X[_chunk_edge(vi, n, c1 - 1) + j]))
                C[vi + 1] = acc[0]
        offsets(C, c1 - 1)

    return func


def dense(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Flat maps ``out[i] = f(...)``: the binary ops ``(a, b, out)``, the scalar ops
    ``(x, s, out)`` and ``clip (x, lo, hi, out)``; used on dense buffers and on stored values.
    ``nonfinite (x, counts)`` counts the inf and nan values of ``x`` in ``len(counts) - 1``
    even chunks (in parallel) and scans the counts: ``counts[-1]`` is the total."""
    funcs = {fn: binary_map(partial(binary, fn, dtype), dtype)
             for fn in ("add", "sub", "mul", "div")}
    funcs.update({fn: scalar_map(partial(SCALAR_OPS[fn], dtype), dtype)
                  for fn in SCALAR_OPS})
    funcs["clip"] = clip_map(partial(clip, dtype), dtype)
    funcs["nonfinite"] = _nonfinite_count(dtype)
    return funcs


def unary_maps(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """One flat map ``(x, out)`` per unary op of ``FLOAT_UNARY``."""
    return {fn: unary_map(partial(unary, fn, dtype), dtype) for fn in FLOAT_UNARY}


# -- index sets (dtype-free) ------------------------------------------------------------------
@T.macro
def _diagonal(A, B, ka, kb, d, p):
    """``p[0], p[1]``: how many of the first ``d`` merged ids come from ``a`` and from ``b`` (the
    merge path crossing diagonal ``d``; on equal ids ``a`` comes first), by binary search."""
    p[0] = T.max(d - kb, T.int64(0))  # the answer lies in [p[0], p[1]]
    p[1] = T.min(d, ka)
    while p[0] < p[1]:
        if A[(p[0] + p[1]) // 2] <= B[d - (p[0] + p[1]) // 2 - 1]:
            p[0] = (p[0] + p[1]) // 2 + T.int64(1)
        else:
            p[1] = (p[0] + p[1]) // 2
    p[1] = d - p[0]


# Merge steps while both lists last: ``v`` holds ``a[p[0]]`` and ``b[p[1]]``, ``p[2]`` is the
# output position (or the count so far).
@T.macro
def _union_store(p, v, Idx, SA, SB):
    """Write the smaller id with its positions (both on equal ids), without a branch."""
    Idx[p[2]] = T.min(v[0], v[1])
    SA[p[2]] = T.Select(v[0] <= v[1], p[0], T.int64(-1))
    SB[p[2]] = T.Select(v[1] <= v[0], p[1], T.int64(-1))
    p[2] = p[2] + T.int64(1)


@T.macro
def _union_tally(p, v):
    """Count the smaller id."""
    p[2] = p[2] + T.int64(1)


@T.macro
def _match_store(p, v, Idx, SA, SB):
    """Write equal ids with both positions."""
    if v[0] == v[1]:
        Idx[p[2]] = v[0]
        SA[p[2]] = p[0]
        SB[p[2]] = p[1]
        p[2] = p[2] + T.int64(1)


@T.macro
def _match_tally(p, v):
    """Count equal ids."""
    p[2] = p[2] + T.Cast("int64", v[0] == v[1])


@T.macro
def _rest_store(A, B, ka, kb, p, Idx, SA, SB):
    """Write the ids left in either list up to the chunk's end ``p[3]`` (a union's tail)."""
    while p[0] + p[1] < p[3] and p[0] < ka:
        Idx[p[2]] = A[p[0]]
        SA[p[2]] = p[0]
        SB[p[2]] = T.int64(-1)
        p[0] = p[0] + T.int64(1)
        p[2] = p[2] + T.int64(1)
    while p[0] + p[1] < p[3] and p[1] < kb:
        Idx[p[2]] = B[p[1]]
        SA[p[2]] = T.int64(-1)
        SB[p[2]] = p[1]
        p[1] = p[1] + T.int64(1)
        p[2] = p[2] + T.int64(1)


@T.macro
def _rest_tally(A, B, ka, kb, p):
    """Count the ids left in either list up to the chunk's end ``p[3]``."""
    p[2] = p[2] + T.max(p[3] - p[0] - p[1], T.int64(0))


def _merge_chunk(step: Callable[..., None],
                 rest: Callable[..., None] | None) -> Callable[..., None]:
    """The merge of the diagonal steps ``[start, end)`` of two sorted id lists: ``step`` while
    both lists last, then ``rest`` (the union's unmatched tail; None for an intersection).

    Equal ids ``a[i] == b[j]`` are adjacent on the merge path (``a`` first) and merged in one
    step, by the chunk whose range holds ``a[i]``'s step; a chunk starting between the two skips
    ``b[j]``, so a pair split by a chunk edge is emitted exactly once."""

    @T.macro
    def merge(A, B, ka, kb, start, end, p, v, *outs):
        _diagonal(A, B, ka, kb, start, p)
        p[3] = end
        if p[0] > T.int64(0) and p[1] < kb:
            if A[p[0] - 1] == B[p[1]]:
                p[1] = p[1] + T.int64(1)
        while p[0] + p[1] < p[3] and p[0] < ka and p[1] < kb:
            v[0] = A[p[0]]
            v[1] = B[p[1]]
            step(p, v, *outs)
            p[0] = p[0] + T.Cast("int64", v[0] <= v[1])
            p[1] = p[1] + T.Cast("int64", v[1] <= v[0])
        if rest is not None:
            rest(A, B, ka, kb, p, *outs)

    return merge


def _chunk_edge(chunk: Expr, steps: Expr, chunks: Expr) -> Expr:
    """The first of ``steps`` merge steps split evenly over ``chunks`` that belongs to ``chunk``."""
    return T.min(chunk * ((steps + chunks - 1) // chunks), steps)


def _rsp_merge(keep_unmatched: bool) -> tvm.tirx.PrimFunc:
    """Merge-path merge of two sorted row-id lists: the output ids, and for each the position of
    the row in ``a`` and in ``b`` (-1 where absent); ``count[0]`` is the number written.

    The ``ka + kb`` steps of the merge are split evenly over the ``c = len(runs) - 1`` chunks
    (``c >= 1``, chosen by the caller). ``rows_count`` merges each chunk counting its outputs
    into ``runs[chunk + 1]``, the blocked scan turns the counts into offsets, ``rows_write``
    merges each chunk again writing at its offset."""
    if keep_unmatched:
        tally = _merge_chunk(_union_tally, _rest_tally)
        write = _merge_chunk(_union_store, _rest_store)
    else:
        tally, write = _merge_chunk(_match_tally, None), _merge_chunk(_match_store, None)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, idx: T.handle, src_a: T.handle, src_b: T.handle,
             count: T.handle, runs: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        m = T.int64()
        c1 = T.int64()  # chunks + 1
        A = T.match_buffer(a, (ka,), "int64", align=8)
        B = T.match_buffer(b, (kb,), "int64", align=8)
        Idx = T.match_buffer(idx, (m,), "int64", align=8)
        SA = T.match_buffer(src_a, (m,), "int64", align=8)
        SB = T.match_buffer(src_b, (m,), "int64", align=8)
        C = T.match_buffer(count, (1,), "int64", align=8)
        Runs = T.match_buffer(runs, (c1,), "int64", align=8)
        for c in T.serial(c1 - 1):
            with T.sblock("rows_count"):
                vc = T.axis.spatial(c1 - 1, c)
                T.reads(A[0:ka], B[0:kb])
                T.writes(Runs[vc + 1])
                p = T.alloc_buffer((4,), "int64", scope="local")  # in a, in b, count, chunk end
                v = T.alloc_buffer((2,), "int64", scope="local")
                p[2] = T.int64(0)
                tally(A, B, ka, kb, _chunk_edge(vc, ka + kb, c1 - 1),
                      _chunk_edge(vc + 1, ka + kb, c1 - 1), p, v)
                Runs[vc + 1] = p[2]
        offsets(Runs, c1 - 1)
        for c in T.serial(c1 - 1):
            with T.sblock("rows_write"):
                vc = T.axis.spatial(c1 - 1, c)
                T.reads(A[0:ka], B[0:kb], Runs[vc])
                T.writes(Idx[Runs[vc] : Runs[vc + 1]], SA[Runs[vc] : Runs[vc + 1]],
                         SB[Runs[vc] : Runs[vc + 1]])
                p = T.alloc_buffer((4,), "int64", scope="local")  # in a, in b, in out, chunk end
                v = T.alloc_buffer((2,), "int64", scope="local")
                p[2] = Runs[vc]
                write(A, B, ka, kb, _chunk_edge(vc, ka + kb, c1 - 1),
                      _chunk_edge(vc + 1, ka + kb, c1 - 1), p, v, Idx, SA, SB)
        with T.sblock("count"):
            T.reads(Runs[c1 - 1])
            T.writes(C[0])
            C[0] = Runs[c1 - 1]

    return func


def _csr_count(keep_unmatched: bool) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): the size of the union or intersection of the two rows' column ids;
    then ``indptr`` as their prefix sum (a blocked scan, parallel over chunks)."""

    @T.prim_func(s_tir=True)
    def func(a_ptr: T.handle, a_idx: T.handle, b_ptr: T.handle, b_idx: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1: no buffer has the row count itself
        na = T.int64()
        nb = T.int64()
        AP = T.match_buffer(a_ptr, (n1,), "int64", align=8)
        AI = T.match_buffer(a_idx, (na,), "int64", align=8)
        BP = T.match_buffer(b_ptr, (n1,), "int64", align=8)
        BI = T.match_buffer(b_idx, (nb,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(AP[vi : vi + 2], BP[vi : vi + 2], AI[0:na], BI[0:nb])
                T.writes(P[vi + 1])
                p = T.alloc_buffer((3,), "int64", scope="local")  # position in a, in b; count
                p[0] = AP[vi]
                p[1] = BP[vi]
                p[2] = T.int64(0)
                while p[0] < AP[vi + 1] and p[1] < BP[vi + 1]:
                    if AI[p[0]] == BI[p[1]]:
                        p[0] = p[0] + T.int64(1)
                        p[1] = p[1] + T.int64(1)
                        p[2] = p[2] + T.int64(1)
                    elif AI[p[0]] < BI[p[1]]:
                        p[0] = p[0] + T.int64(1)
                        if keep_unmatched:
                            p[2] = p[2] + T.int64(1)
                    else:
                        p[1] = p[1] + T.int64(1)
                        if keep_unmatched:
                            p[2] = p[2] + T.int64(1)
                if keep_unmatched:
                    P[vi + 1] = p[2] + (AP[vi + 1] - p[0]) + (BP[vi + 1] - p[1])
                else:
                    P[vi + 1] = p[2]
        offsets(P, n1 - 1)

    return func


def index_sets() -> dict[str, tvm.tirx.PrimFunc]:
    """Phase 1 of the data-dependent ops: row_sparse union / intersection (chunked merges writing
    the output ids and source positions) and csr union / intersection sizes per row (indptr)."""
    return {
        "rsp_union": _rsp_merge(True),
        "rsp_intersect": _rsp_merge(False),
        "csr_union_count": _csr_count(True),
        "csr_intersect_count": _csr_count(False),
    }


# -- row_sparse values ------------------------------------------------------------------------
def _row_ops(fn: str, dtype: str) -> tuple[Callable[..., None], ...]:
    """Column macros writing an output row from rows of both operands, of ``a`` only, of ``b``
    only (the other operand's zero made explicit)."""

    @T.macro
    def both(out, r, a, ra, b, rb, j):
        out[r, j] = binary(fn, dtype, a[ra, j], b[rb, j])

    @T.macro
    def left(out, r, a, ra, j):
        out[r, j] = with_zero(fn, dtype, a[ra, j])

    @T.macro
    def right(out, r, b, rb, j):
        out[r, j] = with_zero(fn, dtype, b[rb, j], True)

    return both, left, right


def _row_writer(fn: str, dtype: str) -> Callable[..., None]:
    """A macro writing output row ``r`` from row ``sa`` of ``a`` and ``sb`` of ``b`` (-1 where
    the operand does not store it)."""
    both, left, right = _row_ops(fn, dtype)

    @T.macro
    def write(out, r, a, sa, b, sb, d):
        if sa >= T.int64(0) and sb >= T.int64(0):
            cols.each(d, both, out, r, a, sa, b, sb)
        elif sa >= T.int64(0):
            cols.each(d, left, out, r, a, sa)
        else:
            cols.each(d, right, out, r, b, sb)

    return write


def _rsp_fill(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)
    write = _row_writer(fn, dtype)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, src_a: T.handle, src_b: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        k = T.int64()
        d = T.int64()
        A = T.match_buffer(a, (ka, d), dtype, align=align)
        B = T.match_buffer(b, (kb, d), dtype, align=align)
        SA = T.match_buffer(src_a, (k,), "int64", align=8)
        SB = T.match_buffer(src_b, (k,), "int64", align=8)
        Out = T.match_buffer(out, (k, d), dtype, align=align)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(A[0:ka, 0:d], B[0:kb, 0:d], SA[vr], SB[vr])
                T.writes(Out[vr, 0:d])
                write(Out, vr, A, SA[vr], B, SB[vr], d)

    return func


def _rsp_update(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.macro
    def apply(dst, r, src, s, j):
        dst[r, j] = binary(fn, dtype, dst[r, j], src[s, j])

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        d = T.int64()
        D = T.match_buffer(dense, (n, d), dtype, align=align)
        Data = T.match_buffer(data, (k, d), dtype, align=align)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(D[Idx[vr], 0:d], Data[vr, 0:d], Idx[vr])
                T.writes(D[Idx[vr], 0:d])
                cols.each(d, apply, D, Idx[vr], Data, vr)

    return func


def _rsp_gather_mul(dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.macro
    def apply(out, r, src, other, s, j):
        out[r, j] = binary("mul", dtype, src[r, j], other[s, j])

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        d = T.int64()
        D = T.match_buffer(dense, (n, d), dtype, align=align)
        Data = T.match_buffer(data, (k, d), dtype, align=align)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        Out = T.match_buffer(out, (k, d), dtype, align=align)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(D[Idx[vr], 0:d], Data[vr, 0:d], Idx[vr])
                T.writes(Out[vr, 0:d])
                cols.each(d, apply, Out, vr, Data, D, Idx[vr])

    return func


def _rsp_keep_mul(dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, src_a: T.handle, src_b: T.handle, pos: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        k = T.int64()
        k1 = T.int64()
        d = T.int64()
        A = T.match_buffer(a, (ka, d), dtype, align=align)
        B = T.match_buffer(b, (kb, d), dtype, align=align)
        SA = T.match_buffer(src_a, (k,), "int64", align=8)
        SB = T.match_buffer(src_b, (k,), "int64", align=8)
        P = T.match_buffer(pos, (k1,), "int64", align=8)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(A[0:ka, 0:d], B[0:kb, 0:d], SA[vr], SB[vr])
                T.writes(P[vr + 1])
                acc = T.alloc_buffer((1,), "int64", scope="local")
                acc[0] = T.int64(0)
                if SA[vr] >= T.int64(0) and SB[vr] >= T.int64(0):
                    acc[0] = T.int64(1)
                elif SA[vr] >= T.int64(0):
                    for j in T.serial(d):
                        acc[0] = T.max(acc[0], T.Cast("int64", nonfinite(dtype, A[SA[vr], j])))
                else:
                    for j in T.serial(d):
                        acc[0] = T.max(acc[0], T.Cast("int64", nonfinite(dtype, B[SB[vr], j])))
                P[vr + 1] = acc[0]
        offsets(P, k1 - 1)

    return func


def _rsp_fill_kept(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)
    write = _row_writer(fn, dtype)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, src_a: T.handle, src_b: T.handle, pos: T.handle,
             ids: T.handle, out: T.handle, out_ids: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        k = T.int64()
        m = T.int64()
        d = T.int64()
        A = T.match_buffer(a, (ka, d), dtype, align=align)
        B = T.match_buffer(b, (kb, d), dtype, align=align)
        SA = T.match_buffer(src_a, (k,), "int64", align=8)
        SB = T.match_buffer(src_b, (k,), "int64", align=8)
        P = T.match_buffer(pos, (k + 1,), "int64", align=8)
        Ids = T.match_buffer(ids, (k,), "int64", align=8)
        Out = T.match_buffer(out, (m, d), dtype, align=align)
        OutIds = T.match_buffer(out_ids, (m,), "int64", align=8)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(A[0:ka, 0:d], B[0:kb, 0:d], SA[vr], SB[vr], P[vr : vr + 2], Ids[vr])
                T.writes(Out[P[vr], 0:d], OutIds[P[vr]])
                if P[vr + 1] > P[vr]:
                    OutIds[P[vr]] = Ids[vr]
                    write(Out, P[vr], A, SA[vr], B, SB[vr], d)

    return func


def row_sparse(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Phase 2 of row_sparse ops, parallel over rows: ``fill_<op>`` writes each output row from
    its source rows (zero where absent); ``update_<op>`` applies stored rows to a dense array in
    place; ``gather_mul`` multiplies stored rows by the dense rows of the same ids.

    ``keep_mul`` marks the rows of a union (``src_a``, ``src_b`` from ``ew_index.rsp_union``)
    that a product stores when an operand holds inf or nan: rows stored in both, and rows stored
    in one that hold a non-finite value (``x * 0`` is nan there); ``pos`` becomes their offsets.
    ``fill_mul_kept`` writes those rows and their ids at the offsets."""
    funcs = {f"fill_{fn}": _rsp_fill(fn, dtype) for fn in (*UNION_OPS, "mul")}
    funcs.update({f"update_{fn}": _rsp_update(fn, dtype) for fn in UNION_OPS})
    funcs["gather_mul"] = _rsp_gather_mul(dtype)
    funcs["keep_mul"] = _rsp_keep_mul(dtype)
    funcs["fill_mul_kept"] = _rsp_fill_kept("mul", dtype)
    return funcs


# -- csr values -------------------------------------------------------------------------------
def _csr_fill(fn: str, dtype: str, keep: str) -> tvm.tirx.PrimFunc:
    """Per row, merge the two rows' entries into the positions ``indptr`` gives: ``keep`` is
    ``"all"`` (a union: every entry of either), ``"both"`` (entries stored in both) or
    ``"nonfinite"`` (those, and entries stored in one whose value is inf or nan)."""
    align = element_bytes(dtype)

    def kept(value: Expr) -> Expr:
        if keep == "all":
            return tirx.const(True, "bool")
        if keep == "both":
            return tirx.const(False, "bool")
        return nonfinite(dtype, value)

    @T.prim_func(s_tir=True)
    def func(a_ptr: T.handle, a_idx: T.handle, a_data: T.handle, b_ptr: T.handle,
             b_idx: T.handle, b_data: T.handle, indptr: T.handle, indices: T.handle,
             data: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1: no buffer has the row count itself
        na = T.int64()
        nb = T.int64()
        nnz = T.int64()
        AP = T.match_buffer(a_ptr, (n1,), "int64", align=8)
        AI = T.match_buffer(a_idx, (na,), "int64", align=8)
        AD = T.match_buffer(a_data, (na,), dtype, align=align)
        BP = T.match_buffer(b_ptr, (n1,), "int64", align=8)
        BI = T.match_buffer(b_idx, (nb,), "int64", align=8)
        BD = T.match_buffer(b_data, (nb,), dtype, align=align)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(AP[vi : vi + 2], BP[vi : vi + 2], AI[0:na], BI[0:nb], AD[0:na],
                        BD[0:nb], P[vi])
                T.writes(I[P[vi] : P[vi + 1]], D[P[vi] : P[vi + 1]])
                p = T.alloc_buffer((3,), "int64", scope="local")  # position in a, in b, in out
                p[0] = AP[vi]
                p[1] = BP[vi]
                p[2] = P[vi]
                while p[0] < AP[vi + 1] and p[1] < BP[vi + 1]:
                    if AI[p[0]] == BI[p[1]]:
                        I[p[2]] = AI[p[0]]
                        D[p[2]] = binary(fn, dtype, AD[p[0]], BD[p[1]])
                        p[0] = p[0] + T.int64(1)
                        p[1] = p[1] + T.int64(1)
                        p[2] = p[2] + T.int64(1)
                    elif AI[p[0]] < BI[p[1]]:
                        if keep != "both":
                            if kept(AD[p[0]]):
                                I[p[2]] = AI[p[0]]
                                D[p[2]] = with_zero(fn, dtype, AD[p[0]])
                                p[2] = p[2] + T.int64(1)
                        p[0] = p[0] + T.int64(1)
                    else:
                        if keep != "both":
                            if kept(BD[p[1]]):
                                I[p[2]] = BI[p[1]]
                                D[p[2]] = with_zero(fn, dtype, BD[p[1]], True)
                                p[2] = p[2] + T.int64(1)
                        p[1] = p[1] + T.int64(1)
                if keep != "both":
                    while p[0] < AP[vi + 1]:
                        if kept(AD[p[0]]):
                            I[p[2]] = AI[p[0]]
                            D[p[2]] = with_zero(fn, dtype, AD[p[0]])
                            p[2] = p[2] + T.int64(1)
                        p[0] = p[0] + T.int64(1)
                    while p[1] < BP[vi + 1]:
                        if kept(BD[p[1]]):
                            I[p[2]] = BI[p[1]]
                            D[p[2]] = with_zero(fn, dtype, BD[p[1]], True)
                            p[2] = p[2] + T.int64(1)
                        p[1] = p[1] + T.int64(1)

    return func


def _csr_count_nonfinite(dtype: str) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): how many entries ``_csr_fill(..., "nonfinite")`` writes (entries
    stored in both rows, and entries of one holding inf or nan); then ``indptr`` as their
    prefix sum."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(a_ptr: T.handle, a_idx: T.handle, a_data: T.handle, b_ptr: T.handle,
             b_idx: T.handle, b_data: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()
        na = T.int64()
        nb = T.int64()
        AP = T.match_buffer(a_ptr, (n1,), "int64", align=8)
        AI = T.match_buffer(a_idx, (na,), "int64", align=8)
        AD = T.match_buffer(a_data, (na,), dtype, align=align)
        BP = T.match_buffer(b_ptr, (n1,), "int64", align=8)
        BI = T.match_buffer(b_idx, (nb,), "int64", align=8)
        BD = T.match_buffer(b_data, (nb,), dtype, align=align)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(AP[vi : vi + 2], BP[vi : vi + 2], AI[0:na], BI[0:nb], AD[0:na],
                        BD[0:nb])
                T.writes(P[vi + 1])
                p = T.alloc_buffer((3,), "int64", scope="local")  # position in a, in b; count
                p[0] = AP[vi]
                p[1] = BP[vi]
                p[2] = T.int64(0)
                while p[0] < AP[vi + 1] and p[1] < BP[vi + 1]:
                    if AI[p[0]] == BI[p[1]]:
                        p[0] = p[0] + T.int64(1)
                        p[1] = p[1] + T.int64(1)
                        p[2] = p[2] + T.int64(1)
                    elif AI[p[0]] < BI[p[1]]:
                        p[2] = p[2] + T.Cast("int64", nonfinite(dtype, AD[p[0]]))
                        p[0] = p[0] + T.int64(1)
                    else:
                        p[2] = p[2] + T.Cast("int64", nonfinite(dtype, BD[p[1]]))
                        p[1] = p[1] + T.int64(1)
                while p[0] < AP[vi + 1]:
                    p[2] = p[2] + T.Cast("int64", nonfinite(dtype, AD[p[0]]))
                    p[0] = p[0] + T.int64(1)
                while p[1] < BP[vi + 1]:
                    p[2] = p[2] + T.Cast("int64", nonfinite(dtype, BD[p[1]]))
                    p[1] = p[1] + T.int64(1)
                P[vi + 1] = p[2]
        offsets(P, n1 - 1)

    return func


def _csr_update(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        m = T.int64()
        nnz = T.int64()
        Dn = T.match_buffer(dense, (n, m), dtype, align=align)
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Dn[vi, 0:m], D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2])
                T.writes(Dn[vi, 0:m])
                for q in T.serial(P[vi + 1] - P[vi]):
                    Dn[vi, I[P[vi] + q]] = binary(fn, dtype, Dn[vi, I[P[vi] + q]], D[P[vi] + q])

    return func


def _csr_gather_mul(dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle, indptr: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        m = T.int64()
        nnz = T.int64()
        Dn = T.match_buffer(dense, (n, m), dtype, align=align)
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Out = T.match_buffer(out, (nnz,), dtype, align=align)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Dn[vi, 0:m], D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2])
                T.writes(Out[P[vi] : P[vi + 1]])
                for q in T.serial(P[vi + 1] - P[vi]):
                    Out[P[vi] + q] = binary("mul", dtype, D[P[vi] + q], Dn[vi, I[P[vi] + q]])

    return func


def csr(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Phase 2 of csr ops, parallel over rows: ``fill_<op>`` merges each row's column ids and
    values into the positions ``indptr`` gives; ``update_<op>`` applies stored values to a dense
    matrix in place; ``gather_mul`` multiplies stored values by the dense values at their
    positions. ``count_mul_nonfinite`` / ``fill_mul_nonfinite`` are the product's index set and
    values when an operand holds inf or nan: entries stored in both, and entries stored in one
    that hold a non-finite value (``x * 0`` is nan there)."""
    funcs = {f"fill_{fn}": _csr_fill(fn, dtype, "all") for fn in UNION_OPS}
    funcs["fill_mul"] = _csr_fill("mul", dtype, "both")
    funcs["count_mul_nonfinite"] = _csr_count_nonfinite(dtype)
    funcs["fill_mul_nonfinite"] = _csr_fill("mul", dtype, "nonfinite")
    funcs.update({f"update_{fn}": _csr_update(fn, dtype) for fn in UNION_OPS})
    funcs["gather_mul"] = _csr_gather_mul(dtype)
    return funcs
