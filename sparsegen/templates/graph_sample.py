"""Neighbour sampling on csr graphs (MXNet's DGL samplers): the ``graph_sample`` kernel.

One sampled subgraph per seed array, in three functions:

- ``bfs`` (one serial block after a ``rows`` block clearing the marks): MXNet's breadth-first
  walk from the seeds. ``layer[u]`` is the hop at which vertex ``u`` joined the sample (-1:
  not in it), ``expand[u]`` the order in which its neighbours were sampled (-1: never). A
  vertex below ``hops`` draws ``min(degree, fanout)`` of its neighbours (all of them when the
  degree is at most ``fanout``); each draw is a Philox-4x32-10 uniform of counter
  ``expand[u] * fanout + j`` under the call's key and stream words, so ``fill`` draws the same
  neighbours again. The neighbours join, in column order, while the sample holds fewer than
  ``m`` vertices. ``counts`` = (vertices, edges, 1 when the walk stopped at ``m`` with a vertex
  below ``hops`` not expanded).
- ``ids`` (serial): the sampled vertices in rising order with their layers (and, when
  ``weighted``, their probabilities), zero past the last, the count in ``out_ids[m]``, and the
  row pointers of the sampled edges.
- ``fill`` (``rows``, one per sampled vertex): its drawn neighbours' columns and edge ids, in
  column order.

A draw without replacement picks among the neighbours not yet drawn with probability
proportional to their weight (``prob[column]`` when ``weighted``, else 1): ``u * total`` against
the running sum in column order. When every weight left is 0 it takes the first neighbour left.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .random import closed_open, philox


@T.macro
def draw(buf, at, d, k, e0, Idx, base, Prob, weighted, s, t, k0, k1, c2, c3, st, fl):
    # buf[at : at + k]: k of the positions 0..d-1 of a row (entries Idx[base:base + d]) drawn
    # without replacement, rising. st: int64[5] local (drawn, walk pointer, chosen, last
    # positive, first left); fl: float64[3] local (total, target, running sum)
    for j in T.serial(k):
        philox(s, t, e0 + j, k0, k1, c2, c3)
        fl[0] = T.float64(0.0)
        st[1] = T.int64(0)
        for r in T.serial(d):  # the weight left: every position not drawn yet
            if st[1] < j:
                if buf[at + st[1]] == r:
                    st[1] = st[1] + T.int64(1)
                elif weighted != T.int64(0):
                    fl[0] = fl[0] + T.Cast("float64", Prob[Idx[base + r]])
                else:
                    fl[0] = fl[0] + T.float64(1.0)
            elif weighted != T.int64(0):
                fl[0] = fl[0] + T.Cast("float64", Prob[Idx[base + r]])
            else:
                fl[0] = fl[0] + T.float64(1.0)
        fl[1] = closed_open(s[0], s[1]) * fl[0]
        fl[2] = T.float64(0.0)
        st[1] = T.int64(0)
        st[2] = T.int64(-1)
        st[3] = T.int64(-1)
        st[4] = T.int64(-1)
        for r in T.serial(d):
            st[0] = T.int64(0)  # 1: r was drawn before
            if st[1] < j:
                if buf[at + st[1]] == r:
                    st[1] = st[1] + T.int64(1)
                    st[0] = T.int64(1)
            if st[0] == T.int64(0) and st[2] < T.int64(0):
                if st[4] < T.int64(0):
                    st[4] = r
                if weighted != T.int64(0):
                    fl[2] = fl[2] + T.Cast("float64", Prob[Idx[base + r]])
                    if Prob[Idx[base + r]] > T.float32(0.0):
                        st[3] = r
                        if fl[2] > fl[1]:
                            st[2] = r
                else:
                    fl[2] = fl[2] + T.float64(1.0)
                    st[3] = r
                    if fl[2] > fl[1]:
                        st[2] = r
        if st[2] < T.int64(0):  # rounding left the target past the sum, or no weight is left
            st[2] = T.if_then_else(st[3] >= T.int64(0), st[3], st[4])
        st[1] = j  # insert, keeping buf[at : at + j + 1] rising
        while st[1] > T.int64(0) and buf[at + T.max(st[1] - T.int64(1), T.int64(0))] > st[2]:
            buf[at + st[1]] = buf[at + st[1] - T.int64(1)]
            st[1] = st[1] - T.int64(1)
        buf[at + st[1]] = st[2]


def graph_sample(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every function of kernel ``graph_sample``, edge ids in ``dtype`` (module docstring)."""
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def bfs(indices: T.handle, indptr: T.handle, seeds: T.handle, prob: T.handle,
            weighted: T.int64, hops: T.int64, fanout: T.int64, k0: T.int64, k1: T.int64,
            c2: T.int64, c3: T.int64, layer: T.handle, expand: T.handle, queue: T.handle,
            picked: T.handle, counts: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        n = T.int64()
        ns = T.int64()
        q = T.int64()
        m = T.int64()
        f = T.int64()
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Seeds = T.match_buffer(seeds, (ns,), "int64", align=8)
        Prob = T.match_buffer(prob, (q,), "float32", align=4)
        Layer = T.match_buffer(layer, (n,), "int64", align=8)
        Expand = T.match_buffer(expand, (n,), "int64", align=8)
        Queue = T.match_buffer(queue, (m,), "int64", align=8)
        Picked = T.match_buffer(picked, (f,), "int64", align=8)
        Counts = T.match_buffer(counts, (3,), "int64", align=8)
        for u in T.serial(n):
            with T.sblock("rows_clear"):
                vu = T.axis.spatial(n, u)
                T.reads()
                T.writes(Layer[vu], Expand[vu])
                Layer[vu] = T.int64(-1)
                Expand[vu] = T.int64(-1)
        with T.sblock("walk"):
            T.reads(Idx[0:nnz], P[0:n + 1], Seeds[0:ns], Prob[0:q], Layer[0:n], Queue[0:m],
                    Picked[0:f])
            T.writes(Layer[0:n], Expand[0:n], Queue[0:m], Picked[0:f], Counts[0:3])
            # w: size, next in queue, expanded, edges, vertex, degree, taken, column
            w = T.alloc_buffer((8,), "int64", scope="local")
            st = T.alloc_buffer((5,), "int64", scope="local")
            fl = T.alloc_buffer((3,), "float64", scope="local")
            s = T.alloc_buffer((6,), "uint32", scope="local")
            t = T.alloc_buffer((2,), "uint64", scope="local")
            w[0] = T.int64(0)
            for i in T.serial(ns):
                if Layer[Seeds[i]] < T.int64(0):
                    Layer[Seeds[i]] = T.int64(0)
                    Queue[w[0]] = Seeds[i]
                    w[0] = w[0] + T.int64(1)
            w[1] = T.int64(0)
            w[2] = T.int64(0)
            w[3] = T.int64(0)
            while w[1] < w[0] and w[0] < m:
                w[4] = Queue[w[1]]
                w[1] = w[1] + T.int64(1)
                if Layer[w[4]] < hops:
                    w[5] = P[w[4] + 1] - P[w[4]]
                    Expand[w[4]] = w[2]
                    w[6] = T.min(w[5], fanout)
                    if w[5] > fanout:
                        draw(Picked, T.int64(0), w[5], fanout, w[2] * fanout, Idx, P[w[4]],
                             Prob, weighted, s, t, k0, k1, c2, c3, st, fl)
                    w[3] = w[3] + w[6]
                    w[2] = w[2] + T.int64(1)
                    for j in T.serial(w[6]):
                        if w[0] < m:
                            if w[5] > fanout:
                                w[7] = Idx[P[w[4]] + Picked[j]]
                            else:
                                w[7] = Idx[P[w[4]] + j]
                            if Layer[w[7]] < T.int64(0):
                                Layer[w[7]] = Layer[w[4]] + T.int64(1)
                                Queue[w[0]] = w[7]
                                w[0] = w[0] + T.int64(1)
            Counts[0] = w[0]
            Counts[1] = w[3]
            Counts[2] = T.int64(0)
            for i in T.serial(m):
                if i >= w[1] and i < w[0]:
                    if Layer[Queue[i]] < hops:
                        Counts[2] = T.int64(1)

    @T.prim_func(s_tir=True)
    def ids(indptr: T.handle, layer: T.handle, expand: T.handle, prob: T.handle,
            weighted: T.int64, fanout: T.int64, out_ids: T.handle, out_layer: T.handle,
            out_prob: T.handle, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        q = T.int64()
        m = T.int64()
        mq = T.int64()
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Layer = T.match_buffer(layer, (n,), "int64", align=8)
        Expand = T.match_buffer(expand, (n,), "int64", align=8)
        Prob = T.match_buffer(prob, (q,), "float32", align=4)
        OutIds = T.match_buffer(out_ids, (m + 1,), "int64", align=8)
        OutLayer = T.match_buffer(out_layer, (m,), "int64", align=8)
        OutProb = T.match_buffer(out_prob, (mq,), "float32", align=4)
        Q = T.match_buffer(out_indptr, (m + 1,), "int64", align=8)
        with T.sblock("sorted"):
            T.reads(P[0:n + 1], Layer[0:n], Expand[0:n], Prob[0:q])
            T.writes(OutIds[0:m + 1], OutLayer[0:m], OutProb[0:mq], Q[0:m + 1])
            c = T.alloc_buffer((1,), "int64", scope="local")
            c[0] = T.int64(0)
            Q[0] = T.int64(0)
            for u in T.serial(n):
                if Layer[u] >= T.int64(0):
                    OutIds[c[0]] = u
                    OutLayer[c[0]] = Layer[u]
                    if weighted != T.int64(0):
                        OutProb[c[0]] = Prob[u]
                    if Expand[u] >= T.int64(0):
                        Q[c[0] + 1] = Q[c[0]] + T.min(P[u + 1] - P[u], fanout)
                    else:
                        Q[c[0] + 1] = Q[c[0]]
                    c[0] = c[0] + T.int64(1)
            OutIds[m] = c[0]
        with T.sblock("tail"):  # past the last vertex: zeros, and no edges
            T.reads(OutIds[m], Q[0:m + 1])
            T.writes(OutIds[0:m], OutLayer[0:m], OutProb[0:mq], Q[0:m + 1])
            for i in T.serial(m):
                if i >= OutIds[m]:
                    OutIds[i] = T.int64(0)
                    OutLayer[i] = T.int64(0)
                    if weighted != T.int64(0):
                        OutProb[i] = T.float32(0.0)
                    Q[i + 1] = Q[i]

    @T.prim_func(s_tir=True)
    def fill(data: T.handle, indices: T.handle, indptr: T.handle, prob: T.handle,
             weighted: T.int64, fanout: T.int64, k0: T.int64, k1: T.int64, c2: T.int64,
             c3: T.int64, expand: T.handle, out_ids: T.handle, out_indptr: T.handle,
             out_indices: T.handle, out_data: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        n = T.int64()
        q = T.int64()
        m1 = T.int64()
        e = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Prob = T.match_buffer(prob, (q,), "float32", align=4)
        Expand = T.match_buffer(expand, (n,), "int64", align=8)
        OutIds = T.match_buffer(out_ids, (m1,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (m1,), "int64", align=8)
        OutIdx = T.match_buffer(out_indices, (e,), "int64", align=8)
        OutData = T.match_buffer(out_data, (e,), dtype, align=itemsize)
        for i in T.serial(m1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(m1 - 1, i)
                T.reads(Data[0:nnz], Idx[0:nnz], P[0:n + 1], Prob[0:q], Expand[0:n],
                        OutIds[vi], Q[vi:vi + 2])
                T.writes(OutIdx[0:e], OutData[0:e])
                st = T.alloc_buffer((5,), "int64", scope="local")
                fl = T.alloc_buffer((3,), "float64", scope="local")
                s = T.alloc_buffer((6,), "uint32", scope="local")
                t = T.alloc_buffer((2,), "uint64", scope="local")
                if Q[vi + 1] > Q[vi]:
                    if P[OutIds[vi] + 1] - P[OutIds[vi]] > fanout:
                        draw(OutIdx, Q[vi], P[OutIds[vi] + 1] - P[OutIds[vi]], fanout,
                             Expand[OutIds[vi]] * fanout, Idx, P[OutIds[vi]], Prob, weighted,
                             s, t, k0, k1, c2, c3, st, fl)
                    else:
                        for j in T.serial(Q[vi + 1] - Q[vi]):
                            OutIdx[Q[vi] + j] = j
                    for j in T.serial(Q[vi + 1] - Q[vi]):
                        OutData[Q[vi] + j] = Data[P[OutIds[vi]] + OutIdx[Q[vi] + j]]
                        OutIdx[Q[vi] + j] = Idx[P[OutIds[vi]] + OutIdx[Q[vi] + j]]

    return {"bfs": bfs, "ids": ids, "fill": fill}
