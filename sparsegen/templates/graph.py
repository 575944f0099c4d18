"""Graph queries on csr adjacency matrices (MXNet's DGL contrib ops): the ``graph`` kernel.

- ``edge_id``: ``out[i] = data[p]`` where ``indices[p] == v[i]`` among the entries of csr row
  ``u[i]``, else -1 (a binary search of the row's sorted columns; the caller checks that
  ``u[i]`` is a row, so every read is in bounds).
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .retain import find_in_range


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

    return {"edge_id": edge_id}
