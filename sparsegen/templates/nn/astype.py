"""Element dtype casts: ``out[i] = x[i]`` converted from dtype ``src`` to ``dst`` (kernel
``astype``).

Floats to integers truncate toward zero, nan becomes 0 and values past int64 saturate, then
narrower integers wrap (templates/elemwise/unary.py's conversion); integers to narrower
integers wrap; floats to narrower floats round (to inf past the range).
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from ..elemwise.unary import _float_to_int
from ..flat import each_element
from .. import element_bytes


def convert(src: str, dst: str, x: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """``x`` of dtype ``src`` as dtype ``dst``."""
    if src.startswith("float") and not dst.startswith("float"):
        return _float_to_int(T.Cast("float64", x), dst)
    return x if src == dst else T.Cast(dst, x)


def astype(src: str, dst: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``convert (x, out)``: every element of ``x`` (dtype ``src``) cast to ``dst``."""

    @T.macro
    def apply(out, x, base, j):
        out[base + j] = convert(src, dst, x[base + j])

    @T.prim_func(s_tir=True)
    def func(x: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n,), src, align=element_bytes(src))
        Out = T.match_buffer(out, (n,), dst, align=element_bytes(dst))
        each_element(n, apply, Out, X)

    return {"convert": func}
