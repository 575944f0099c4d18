"""Count sketches (MXNet's contrib ``count_sketch``): kernel ``count_sketch``.

- ``forward``: ``out[r, h[j]] += s[j] * x[r, j]`` over the columns ``j`` of each row, the output
  row zeroed first (one ``rows`` block per row: its sums are its own, so no atomics);
- ``backward``: ``out[r, j] = g[r, h[j]] * s[j]`` (the gradient of ``x``: a gather, its columns
  independent).

The caller checks that every ``h[j]`` is in ``[0, k)``.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .columns import cols


@T.macro
def _gather_signed(out, r, g, h, s, j):
    out[r, j] = g[r, h[j]] * s[j]


def count_sketch(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every function of kernel ``count_sketch`` in ``dtype`` (module docstring)."""
    elem = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)

    @T.prim_func(s_tir=True)
    def forward(x: T.handle, h: T.handle, s: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        n = T.int64()
        k = T.int64()
        X = T.match_buffer(x, (m, n), dtype, align=elem)
        H = T.match_buffer(h, (n,), "int64", align=8)
        S = T.match_buffer(s, (n,), dtype, align=elem)
        Out = T.match_buffer(out, (m, k), dtype, align=elem)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(X[vr, 0:n], H[0:n], S[0:n], Out[vr, 0:k])
                T.writes(Out[vr, 0:k])
                for j in T.serial(k):
                    Out[vr, j] = zero
                for j in T.serial(n):
                    Out[vr, H[j]] = Out[vr, H[j]] + S[j] * X[vr, j]

    @T.prim_func(s_tir=True)
    def backward(g: T.handle, h: T.handle, s: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        n = T.int64()
        k = T.int64()
        G = T.match_buffer(g, (m, k), dtype, align=elem)
        H = T.match_buffer(h, (n,), "int64", align=8)
        S = T.match_buffer(s, (n,), dtype, align=elem)
        Out = T.match_buffer(out, (m, n), dtype, align=elem)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(G[vr, 0:k], H[0:n], S[0:n])
                T.writes(Out[vr, 0:n])
                cols.each(n, _gather_signed, Out, vr, G, H, S)

    return {"forward": forward, "backward": backward}
