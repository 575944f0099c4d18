"""Maps over flat buffers, ``out[i] = f(x[i], ...)``: the loop shape every elementwise and
comparison kernel of dense buffers (and of the stored values of sparse ones) shares.

Buffers are declared with the element size as their alignment: TVM otherwise assumes 64-byte
aligned data and emits aligned vector loads, which fault on numpy buffers (16-byte aligned).
"""

from __future__ import annotations

from collections.abc import Callable

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .columns import cols

Expr = tvm.ir.Expr

BLOCK = 512
"""Elements per ``rows`` block of a flat map: a constant inner loop that LLVM vectorizes (the
schedule parallelizes the blocks and decides who runs a block's elements); the
last ``n % BLOCK`` elements run in a serial tail."""


# each_element(n, apply, *args): apply(*args, base, j) for every element base + j < n, as
# n // BLOCK parallel-safe ``rows`` blocks of one column loop each, then a serial tail
@T.macro
def each_element(n, apply, *args):
    for i in T.serial(n // BLOCK):
        with T.sblock("rows"):
            vi = T.axis.spatial(n // BLOCK, i)
            cols.each(BLOCK, apply, *args, vi * BLOCK)
    for t in T.serial(n % BLOCK):
        with T.sblock("tail"):
            vt = T.axis.spatial(n % BLOCK, t)
            apply(*args, n - n % BLOCK, vt)


def scalar_type(dtype: str) -> Callable[..., Expr]:
    """Scalars cross the FFI as float64 or int64 and are cast to the element dtype in the kernel
    (the front end has already rounded or wrapped them into the dtype, so the cast is exact)."""
    return T.float64 if dtype.startswith("float") else T.int64


def unary_map(element: Callable[[Expr], Expr], dtype: str) -> tvm.tirx.PrimFunc:
    """``(x, out)``: ``out[i] = element(x[i])``."""
    align = element_bytes(dtype)

    @T.macro
    def apply(out, x, base, j):
        out[base + j] = element(x[base + j])

    @T.prim_func(s_tir=True)
    def func(x: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, apply, Out, X)

    return func


def binary_map(element: Callable[[Expr, Expr], Expr], dtype: str) -> tvm.tirx.PrimFunc:
    """``(a, b, out)``: ``out[i] = element(a[i], b[i])``."""
    align = element_bytes(dtype)

    @T.macro
    def apply(out, a, b, base, j):
        out[base + j] = element(a[base + j], b[base + j])

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        A = T.match_buffer(a, (n,), dtype, align=align)
        B = T.match_buffer(b, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, apply, Out, A, B)

    return func


def ternary_map(element: Callable[[Expr, Expr, Expr], Expr], dtype: str) -> tvm.tirx.PrimFunc:
    """``(a, b, c, out)``: ``out[i] = element(a[i], b[i], c[i])``."""
    align = element_bytes(dtype)

    @T.macro
    def apply(out, a, b, c, base, j):
        out[base + j] = element(a[base + j], b[base + j], c[base + j])

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, c: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        A = T.match_buffer(a, (n,), dtype, align=align)
        B = T.match_buffer(b, (n,), dtype, align=align)
        C = T.match_buffer(c, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, apply, Out, A, B, C)

    return func


def scalar_map(element: Callable[[Expr, Expr], Expr], dtype: str) -> tvm.tirx.PrimFunc:
    """``(x, s, out)``: ``out[i] = element(x[i], s)``, ``s`` cast to the element dtype."""
    align = element_bytes(dtype)
    scalar_t = scalar_type(dtype)

    @T.macro
    def apply(out, x, s, base, j):
        out[base + j] = element(x[base + j], T.Cast(dtype, s))

    @T.prim_func(s_tir=True)
    def func(x: T.handle, s: scalar_t, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, apply, Out, X, s)

    return func


def clip_map(element: Callable[[Expr, Expr, Expr], Expr], dtype: str) -> tvm.tirx.PrimFunc:
    """``(x, lo, hi, out)``: ``out[i] = element(x[i], lo, hi)``, bounds cast to the dtype."""
    align = element_bytes(dtype)
    scalar_t = scalar_type(dtype)

    @T.macro
    def apply(out, x, lo, hi, base, j):
        out[base + j] = element(x[base + j], T.Cast(dtype, lo), T.Cast(dtype, hi))

    @T.prim_func(s_tir=True)
    def func(x: T.handle, lo: scalar_t, hi: scalar_t, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, apply, Out, X, lo, hi)

    return func
