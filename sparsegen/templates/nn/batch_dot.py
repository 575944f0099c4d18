"""batch_dot (kernel ``nn_batch_dot``): ``out[b] = op(lhs[b]) · rhs[b]`` for each matrix of a
batch, the lhs transposed or not (a transposed rhs is transposed by the caller, as for
``dot_dense``). One ``rows`` block per output row of every batch entry, its columns in register
tiles of ``templates/dot.py``'s ``DENSE_TILES`` whose sums run over the reduced axis in order.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from .. import element_bytes
from ..dot import DENSE_TILES


def batch_dot(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``nn (lhs[b,m,k], rhs[b,k,n], out[b,m,n])`` and ``tn (lhs[b,k,m], ...)``."""
    elem = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)
    widest = DENSE_TILES[0]

    def form(trans_a: bool) -> tvm.tirx.PrimFunc:
        def lhs_at(A, s, i, kk):
            return A[s, kk, i] if trans_a else A[s, i, kk]

        @T.macro
        def tile(A, B, Out, acc, s, i, k, start, width):
            for l in T.serial(width):
                acc[l] = zero
            for kk in T.serial(k):
                for l in T.serial(width):
                    acc[l] = acc[l] + lhs_at(A, s, i, kk) * B[s, kk, start + l]
            for l in T.serial(width):
                Out[s, i, start + l] = acc[l]

        @T.prim_func(s_tir=True)
        def kernel(lhs: T.handle, rhs: T.handle, out: T.handle):
            T.func_attr({"tirx.noalias": True})
            b = T.int64()
            m = T.int64()
            k = T.int64()
            n = T.int64()
            A = T.match_buffer(lhs, (b, k, m) if trans_a else (b, m, k), dtype, align=elem)
            B = T.match_buffer(rhs, (b, k, n), dtype, align=elem)
            Out = T.match_buffer(out, (b, m, n), dtype, align=elem)
            for r in T.serial(b * m):
                with T.sblock("rows"):
                    vr = T.axis.spatial(b * m, r)
                    T.reads(A[vr // m, 0:k, vr % m] if trans_a else A[vr // m, vr % m, 0:k],
                            B[vr // m, 0:k, 0:n])
                    T.writes(Out[vr // m, vr % m, 0:n])
                    acc = T.alloc_buffer((widest,), dtype, scope="local")
                    for t in T.serial(n // widest):
                        tile(A, B, Out, acc, vr // m, vr % m, k, t * widest, widest)
                    for t in T.serial(n % widest // DENSE_TILES[1]):
                        tile(A, B, Out, acc, vr // m, vr % m, k,
                             n - n % widest + t * DENSE_TILES[1], DENSE_TILES[1])
                    for t in T.serial(n % DENSE_TILES[1]):
                        tile(A, B, Out, acc, vr // m, vr % m, k, n - n % DENSE_TILES[1] + t, 1)

        return kernel

    return {"nn": form(False), "tn": form(True)}
