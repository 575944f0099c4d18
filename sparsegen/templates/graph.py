"""Graph queries on csr adjacency matrices (MXNet's DGL contrib ops): the ``graph`` kernel.

- ``edge_id``: ``out[i] = data[p]`` where ``indices[p] == v[i]`` among the entries of csr row
  ``u[i]``, else -1 (a binary search of the row's sorted columns; the caller checks that
  ``u[i]`` is a row, so every read is in bounds).
- ``subgraph_count`` / ``subgraph_fill``: the subgraph induced by the sorted, unique vertices
  ``v``: row ``i`` holds the entries of row ``v[i]`` whose column is some ``v[j]``, at column
  ``j`` (a binary search of ``v`` per entry); their counts, scanned into row pointers, then the
  entries: column ids, new edge ids (their positions) and the parent's edge ids.
- ``compact``: the columns of a sampled graph renumbered by their positions in the sorted
  vertices ``v`` (a binary search per entry), new edge ids (positions) and the parent's edge
  ids beside them; ``bad[0]`` is -1, or the position of an entry whose column is not in ``v``
  (any one: entries are searched concurrently).
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .retain import find_in_range
from .scan import offsets


def graph(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every function of kernel ``graph`` in ``dtype`` (module docstring)."""
    itemsize = element_bytes(dtype)
    missing = tvm.tirx.const(-1, dtype)

    @T.prim_func(s_tir=True)
    def edge_id(data: T.handle, indices: T.handle, indptr: T.handle, u: T.handle, v: T.handle,
                out: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        n1 = T.int64()
        k = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        U = T.match_buffer(u, (k,), "int64", align=8)
        V = T.match_buffer(v, (k,), "int64", align=8)
        Out = T.match_buffer(out, (k,), dtype, align=itemsize)
        for i in T.serial(k):
            with T.sblock("rows"):
                vi = T.axis.spatial(k, i)
                T.reads(Data[0:nnz], Idx[0:nnz], P[0:n1], U[vi], V[vi])
                T.writes(Out[vi])
                at = T.alloc_buffer((3,), "int64", scope="local")
                find_in_range(at, Idx, P[U[vi]], P[U[vi] + 1], V[vi])
                if at[2] == T.int64(1):
                    Out[vi] = Data[at[0]]
                else:
                    Out[vi] = missing

    return {"edge_id": edge_id, **_subgraphs(dtype)}


def _subgraphs(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``subgraph_count``, ``subgraph_fill`` and ``compact`` (module docstring)."""
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def subgraph_count(indices: T.handle, indptr: T.handle, v: T.handle, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        n1 = T.int64()
        k = T.int64()
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        V = T.match_buffer(v, (k,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (k + 1,), "int64", align=8)
        for i in T.serial(k):
            with T.sblock("rows"):
                vi = T.axis.spatial(k, i)
                T.reads(Idx[0:nnz], P[0:n1], V[0:k])
                T.writes(Q[vi + 1])
                at = T.alloc_buffer((3,), "int64", scope="local")
                acc = T.alloc_buffer((1,), "int64", scope="local")
                acc[0] = T.int64(0)
                for p in T.serial(P[V[vi] + 1] - P[V[vi]]):
                    find_in_range(at, V, T.int64(0), k, Idx[P[V[vi]] + p])
                    acc[0] = acc[0] + at[2]
                Q[vi + 1] = acc[0]
        offsets(Q, k)

    @T.prim_func(s_tir=True)
    def subgraph_fill(data: T.handle, indices: T.handle, indptr: T.handle, v: T.handle,
                      out_indptr: T.handle, out_indices: T.handle, out_new: T.handle,
                      out_old: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        n1 = T.int64()
        k = T.int64()
        e = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        V = T.match_buffer(v, (k,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (k + 1,), "int64", align=8)
        OutIdx = T.match_buffer(out_indices, (e,), "int64", align=8)
        OutNew = T.match_buffer(out_new, (e,), dtype, align=itemsize)
        OutOld = T.match_buffer(out_old, (e,), dtype, align=itemsize)
        for i in T.serial(k):
            with T.sblock("rows"):
                vi = T.axis.spatial(k, i)
                T.reads(Data[0:nnz], Idx[0:nnz], P[0:n1], V[0:k], Q[vi])
                T.writes(OutIdx[0:e], OutNew[0:e], OutOld[0:e])
                at = T.alloc_buffer((3,), "int64", scope="local")
                c = T.alloc_buffer((1,), "int64", scope="local")
                c[0] = Q[vi]
                for p in T.serial(P[V[vi] + 1] - P[V[vi]]):
                    find_in_range(at, V, T.int64(0), k, Idx[P[V[vi]] + p])
                    if at[2] == T.int64(1):
                        OutIdx[c[0]] = at[0]
                        OutNew[c[0]] = T.Cast(dtype, c[0])
                        OutOld[c[0]] = Data[P[V[vi]] + p]
                        c[0] = c[0] + T.int64(1)

    @T.prim_func(s_tir=True)
    def compact(data: T.handle, indices: T.handle, v: T.handle, out_indices: T.handle,
                out_new: T.handle, out_old: T.handle, bad: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        k = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        V = T.match_buffer(v, (k,), "int64", align=8)
        OutIdx = T.match_buffer(out_indices, (nnz,), "int64", align=8)
        OutNew = T.match_buffer(out_new, (nnz,), dtype, align=itemsize)
        OutOld = T.match_buffer(out_old, (nnz,), dtype, align=itemsize)
        Bad = T.match_buffer(bad, (1,), "int64", align=8)
        with T.sblock("init"):
            Bad[0] = T.int64(-1)
        for p in T.serial(nnz):
            with T.sblock("rows"):
                vp = T.axis.spatial(nnz, p)
                T.reads(Data[vp], Idx[vp], V[0:k])
                T.writes(OutIdx[vp], OutNew[vp], OutOld[vp], Bad[0])
                at = T.alloc_buffer((3,), "int64", scope="local")
                find_in_range(at, V, T.int64(0), k, Idx[vp])
                OutNew[vp] = T.Cast(dtype, vp)
                OutOld[vp] = Data[vp]
                if at[2] == T.int64(1):
                    OutIdx[vp] = at[0]
                else:
                    OutIdx[vp] = T.int64(-1)
                    Bad[0] = vp

    return {"subgraph_count": subgraph_count, "subgraph_fill": subgraph_fill, "compact": compact}
