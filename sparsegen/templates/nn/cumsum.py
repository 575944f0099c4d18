"""cumsum (kernel ``nn_cumsum``): the running sums along the middle axis of a C-contiguous array
viewed as ``(pre, n, post)``, one ``rows`` block per line, summed in the element dtype in order
(as numpy and MXNet sum)."""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from .. import element_bytes


def cumsum(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``lines (x[pre,n,post], out[pre,n,post])``: ``out[p, i, q] = sum(x[p, :i+1, q])``."""
    elem = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def lines(x: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=elem)
        Out = T.match_buffer(out, (pre, n, post), dtype, align=elem)
        for line in T.serial(pre * post):
            with T.sblock("rows"):
                vl = T.axis.spatial(pre * post, line)
                T.reads(X[vl // post, 0:n, vl % post])
                T.writes(Out[vl // post, 0:n, vl % post])
                acc = T.alloc_buffer((1,), dtype, scope="local")
                acc[0] = T.Cast(dtype, 0)
                for i in T.serial(n):
                    acc[0] = acc[0] + X[vl // post, i, vl % post]
                    Out[vl // post, i, vl % post] = acc[0]

    return {"lines": lines}
