"""``mx.nd.contrib``'s graph ops on csr adjacency matrices (MXNet 1.9.1's DGL ops):
``edge_id`` on the generated ``graph`` kernel, ``dgl_adjacency`` (the same csr structure, its
values ones) on kernel ``shape``'s fill."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..device import device_of
from ..errors import InvalidIndex, InvalidType, InvalidValue
from ..formats import INDEX_DTYPE
from ..ops import graph as graph_ops
from ..ops import shape as shape_ops
from . import reduce
from .contrib_index import delivered
from .indexing import array_arg
from .ndarray import NDArray
from .sparse import CSRNDArray


def _graph(data: Any, op: str) -> CSRNDArray:
    """``data`` checked to be a csr matrix (a graph's adjacency, MXNet's DGL ops take no other)."""
    data = array_arg(data, "data", op)
    if data.stype != "csr":
        raise InvalidType(f"{op}: data must be a csr matrix (a graph), got storage type "
                          f"{data.stype!r}")
    return data


def _vertices(value: Any, name: str, rows: int, op: str) -> NDArray:
    """``value`` as int64 vertex ids (1-D), each checked to be in ``[0, rows)``."""
    value = array_arg(value, name, op)
    if value.ndim != 1:
        raise InvalidValue(f"{op}: {name} must be 1-D, got shape {value.shape}")
    ids = value.tostype("default").astype(INDEX_DTYPE)
    if ids.size:
        low, high = reduce.min(ids).asscalar(), reduce.max(ids).asscalar()
        if low < 0 or high >= rows:
            raise InvalidIndex(f"{op}: {name} holds {low if low < 0 else high}, outside "
                               f"[0, {rows}) (the graph's vertices)")
    return ids


def edge_id(data: CSRNDArray, u: NDArray, v: NDArray, out: NDArray | None = None) -> NDArray:
    """``data[u[i], v[i]]`` (the id of the edge from ``u[i]`` to ``v[i]``) where ``data`` stores
    that entry, else -1, in ``data``'s dtype, as ``mxnet.nd.contrib.edge_id``; a source vertex
    outside the graph raises ``InvalidIndex`` (a target outside it has no edge: -1)."""
    op = "edge_id"
    graph = _graph(data, op)
    u = _vertices(u, "u", graph.shape[0], op)
    v = array_arg(v, "v", op)
    if v.shape != u.shape:
        raise InvalidValue(f"{op}: u has shape {u.shape}, v {v.shape}; they must match")
    v = v.tostype("default").astype(INDEX_DTYPE)
    values = graph_ops.edge_id(graph._storage, u._storage, v._storage)
    return delivered(op, NDArray(values, graph.context), out)


def dgl_adjacency(data: CSRNDArray, out: NDArray | None = None) -> CSRNDArray:
    """The adjacency matrix of the graph ``data`` (a csr matrix of int64 edge ids): the same
    entries, each 1 (float32), as ``mxnet.nd.contrib.dgl_adjacency``."""
    op = "dgl_adjacency"
    graph = _graph(data, op)
    if np.dtype(graph.dtype) != INDEX_DTYPE:
        raise InvalidType(f"{op}: data must hold int64 edge ids, got dtype "
                          f"{np.dtype(graph.dtype).name}")
    stored = graph._storage
    ones = shape_ops.arange(stored.data.size, 1.0, 0.0, 1, np.dtype("float32"),
                            device_of(graph.context))
    result = CSRNDArray(dataclasses.replace(stored, data=ones), graph.context)
    return delivered(op, result, out)


__all__ = ["dgl_adjacency", "edge_id"]
