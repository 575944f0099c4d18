"""Flat maps over dense buffers and stored values (kernel ``ew_dense``).

Their loop shape comes from ``templates/flat.py``.
"""

from __future__ import annotations

from functools import partial

import tvm
from tvm.script import tirx as T

from ...opnames import ARITH_BINARY_OPS, ARITH_SCALAR_OPS, ELEMWISE_SCALAR_OPS
from .. import element_bytes
from ..flat import binary_map, clip_map, each_element, scalar_map
from ..scan import offsets
from .arith import ARITH_SCALAR, SCALAR_OPS, binary, clip, nonfinite, quadratic
from .merge import _chunk_edge

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
                  for fn in ELEMWISE_SCALAR_OPS})
    funcs["clip"] = clip_map(partial(clip, dtype), dtype)
    funcs["nonfinite"] = _nonfinite_count(dtype)
    return funcs


def _quadratic(dtype: str) -> tvm.tirx.PrimFunc:
    """``(x, a, b, c, out)``: ``out[i] = quadratic(x[i])``, the coefficients as float64."""
    align = element_bytes(dtype)

    @T.macro
    def apply(out, x, a, b, c, base, j):
        out[base + j] = quadratic(dtype, x[base + j], a, b, c)

    @T.prim_func(s_tir=True)
    def func(x: T.handle, a: T.float64, b: T.float64, c: T.float64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, apply, Out, X, a, b, c)

    return func


def arith(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Flat maps of the ops beyond ``dense``'s: the binary ``ARITH_BINARY_OPS`` ``(a, b, out)``,
    the scalar ``ARITH_SCALAR_OPS`` ``(x, s, out)`` and ``quadratic (x, a, b, c, out)``."""
    funcs = {fn: binary_map(partial(binary, fn, dtype), dtype) for fn in ARITH_BINARY_OPS}
    funcs.update({fn: scalar_map(partial(ARITH_SCALAR[fn], dtype), dtype)
                  for fn in ARITH_SCALAR_OPS})
    funcs["quadratic"] = _quadratic(dtype)
    return funcs
