"""Graph queries on csr adjacency matrices (MXNet's DGL contrib ops), on the generated ``graph``
kernel (edge ids, induced subgraphs, compaction) and ``graph_sample`` (neighbour sampling)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..device import empty_like, head, item
from ..formats import CSR, INDEX_DTYPE
from .layout import dtype_name, kernel


def edge_id(m: CSR, u: Any, v: Any) -> Any:
    """``m[u[i], v[i]]`` where that entry is stored, else -1, in ``m``'s dtype: ``u`` and ``v``
    are int64 buffers of one length beside ``m``'s, every ``u[i]`` a row of ``m``."""
    out = empty_like(m.data, (u.shape[0],), m.dtype)
    if u.shape[0]:
        graph = kernel("graph", (dtype_name(m.dtype),), m.data, u.shape[0])
        graph.edge_id(m.data, m.indices, m.indptr, u, v, out)
    return out


def subgraph(m: CSR, v: Any) -> tuple[CSR, CSR]:
    """The subgraph of ``m`` induced by the sorted, unique rows ``v`` (int64, beside ``m``'s
    buffers): ``(new, old)``, one structure (row ``i`` holds the entries of row ``v[i]`` whose
    column is some ``v[j]``, at column ``j``) with new edge ids (0, 1, ...) and with ``m``'s."""
    k = v.shape[0]
    graph = kernel("graph", (dtype_name(m.dtype),), m.data, m.data.size + k)
    indptr = empty_like(m.data, (k + 1,), INDEX_DTYPE)
    graph.subgraph_count(m.indices, m.indptr, v, indptr)
    nnz = item(indptr, -1)
    indices = empty_like(m.data, (nnz,), INDEX_DTYPE)
    new, old = (empty_like(m.data, (nnz,), m.dtype) for _ in range(2))
    graph.subgraph_fill(m.data, m.indices, m.indptr, v, indptr, indices, new, old)
    return CSR(new, indices, indptr, (k, k)), CSR(old, indices, indptr, (k, k))


def compact(m: CSR, v: Any, size: int) -> tuple[CSR, CSR] | int:
    """The first ``size`` rows of ``m`` with each column ``c`` renumbered to its position in
    the sorted, unique ``v`` (int64, beside ``m``'s buffers): ``(new, old)`` as ``subgraph``
    gives, shape ``(size, size)``, sharing ``m``'s row pointers; or, when a column is not in
    ``v``, that column."""
    indptr = head(m.indptr, size + 1)
    nnz = item(indptr, -1)
    indices = empty_like(m.data, (nnz,), INDEX_DTYPE)
    new, old = (empty_like(m.data, (nnz,), m.dtype) for _ in range(2))
    bad = empty_like(m.data, (1,), INDEX_DTYPE)
    graph = kernel("graph", (dtype_name(m.dtype),), m.data, nnz)
    graph.compact(head(m.data, nnz), head(m.indices, nnz), v, indices, new, old, bad)
    if item(bad, 0) >= 0:
        return item(m.indices, item(bad, 0))
    return CSR(new, indices, indptr, (size, size)), CSR(old, indices, indptr, (size, size))


@dataclasses.dataclass(frozen=True)
class Sample:
    """One sampled subgraph: vertex ids (rising, zero past the last, their count last), the
    sampled edges as a csr of ``(max_vertices, columns)``, each vertex's layer, each vertex's
    probability (None for uniform sampling), and whether the walk stopped at the size limit
    with a vertex left unexpanded."""

    ids: Any
    edges: CSR
    layer: Any
    prob: Any
    truncated: bool


def neighbor_sample(m: CSR, seeds: Any, prob: Any, hops: int, fanout: int, max_vertices: int,
                    stream: tuple[int, int, int, int]) -> Sample:
    """MXNet's DGL neighbour sampling of the square graph ``m`` (int64 edge ids) from the
    int64 vertices ``seeds`` (in range, at most ``max_vertices``): breadth-first to ``hops``
    hops, up to ``fanout`` neighbours of each vertex drawn without replacement, uniformly or
    (``prob``: float32 per vertex, beside ``m``) in proportion to the neighbour's probability,
    under the random key and stream words ``stream``."""
    n, weighted = m.shape[0], prob is not None
    weights = prob if weighted else empty_like(m.data, (1,), np.float32)
    samples = kernel("graph_sample", (dtype_name(m.dtype),), m.data, m.data.size)
    layer, expand = (empty_like(m.data, (n,), INDEX_DTYPE) for _ in range(2))
    queue = empty_like(m.data, (max_vertices,), INDEX_DTYPE)
    picked = empty_like(m.data, (max(fanout, 1),), INDEX_DTYPE)
    counts = empty_like(m.data, (3,), INDEX_DTYPE)
    samples.bfs(m.indices, m.indptr, seeds, weights, int(weighted), hops, fanout, *stream,
                layer, expand, queue, picked, counts)
    edges, truncated = item(counts, 1), bool(item(counts, 2))
    ids = empty_like(m.data, (max_vertices + 1,), INDEX_DTYPE)
    layers = empty_like(m.data, (max_vertices,), INDEX_DTYPE)
    probs = empty_like(m.data, (max_vertices if weighted else 1,), np.float32)
    indptr = empty_like(m.data, (max_vertices + 1,), INDEX_DTYPE)
    samples.ids(m.indptr, layer, expand, weights, int(weighted), fanout, ids, layers, probs,
                indptr)
    indices = empty_like(m.data, (edges,), INDEX_DTYPE)
    data = empty_like(m.data, (edges,), m.dtype)
    samples.fill(m.data, m.indices, m.indptr, weights, int(weighted), fanout, *stream, expand,
                 ids, indptr, indices, data)
    return Sample(ids, CSR(data, indices, indptr, (max_vertices, m.shape[1])), layers,
                  probs if weighted else None, truncated)
