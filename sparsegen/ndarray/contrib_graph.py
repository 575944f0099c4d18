"""``mx.nd.contrib``'s graph ops on csr adjacency matrices (MXNet 1.9.1's DGL ops):
``edge_id``, ``dgl_subgraph`` and ``dgl_graph_compact`` on the generated ``graph`` kernel,
``dgl_adjacency`` (the same csr structure, its values ones) on kernel ``shape``'s fill, and the
neighbour samplers ``dgl_csr_neighbor_uniform_sample`` / ``dgl_csr_neighbor_non_uniform_sample``
on kernel ``graph_sample``."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np

from ..device import device_of, item
from ..errors import InvalidIndex, InvalidType, InvalidValue
from ..formats import INDEX_DTYPE
from ..ops import graph as graph_ops
from ..ops import random as random_ops
from ..ops import shape as shape_ops
from ..ops.retain import first_unsorted
from ..params import flag, integer, items
from . import reduce
from .contrib_index import delivered
from .indexing import array_arg
from .ndarray import NDArray
from .sparse import CSRNDArray


def _graph(data: Any, op: str, name: str = "data") -> CSRNDArray:
    """``data`` checked to be a csr matrix (a graph's adjacency, MXNet's DGL ops take no other),
    named ``name`` in messages."""
    data = array_arg(data, name, op)
    if data.stype != "csr":
        raise InvalidType(f"{op}: {name} must be a csr matrix (a graph), got storage type "
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


def _edge_ids(data: Any, name: str, op: str) -> CSRNDArray:
    """``data`` checked to be a csr matrix of int64 edge ids (MXNet's DGL ops read no other)."""
    graph = _graph(data, op, name)
    if np.dtype(graph.dtype) != INDEX_DTYPE:
        raise InvalidType(f"{op}: {name} must hold int64 edge ids, got dtype "
                          f"{np.dtype(graph.dtype).name}")
    return graph


def _vertex_set(value: Any, name: str, rows: int, op: str) -> NDArray:
    """``value`` checked to be 1-D int64 vertex ids, sorted, unique and in ``[0, rows)``."""
    value = array_arg(value, name, op)
    if value.ndim != 1 or value.stype != "default" or np.dtype(value.dtype) != INDEX_DTYPE:
        raise InvalidType(f"{op}: {name} must be a 1-D dense int64 array of vertex ids, got "
                          f"shape {value.shape}, storage type {value.stype!r}, dtype "
                          f"{np.dtype(value.dtype).name}")
    bad = first_unsorted(value._storage, rows)
    if bad >= 0:
        raise InvalidValue(f"{op}: {name} must be sorted, unique vertex ids in [0, {rows}); "
                           f"position {bad} holds {value[bad].asscalar()}")
    return value


def _arrays(data: tuple[Any, ...], num_args: Any, fewest: int, op: str) -> tuple[Any, ...]:
    """The positional arrays of a variadic DGL op, ``num_args`` checked against their count."""
    if num_args is not None and integer(num_args, f"{op}: num_args") != len(data):
        raise InvalidValue(f"{op}: num_args is {num_args} but {len(data)} arrays were given")
    if len(data) < fewest:
        raise InvalidValue(f"{op}: takes at least {fewest} arrays, got {len(data)}")
    return data


def dgl_subgraph(*data: NDArray, return_mapping: Any, num_args: Any = None,
                 out: Any = None) -> CSRNDArray | list[CSRNDArray]:
    """The subgraphs of ``data[0]`` (a csr graph of int64 edge ids) induced by each vertex set
    ``data[1:]`` (sorted, unique, int64), as ``mxnet.nd.contrib.dgl_subgraph``: for each set
    ``v``, a ``(len(v), len(v))`` csr whose entry ``(i, j)`` is stored where the graph stores
    ``(v[i], v[j])``, holding new edge ids 0, 1, ... in row-major order; with
    ``return_mapping``, each followed by the same structure holding the graph's edge ids (all
    the first matrices, then all the mappings, as MXNet orders its outputs)."""
    op = "dgl_subgraph"
    arrays = _arrays(data, num_args, 2, op)
    mapping = flag(return_mapping, f"{op}: return_mapping")
    graph = _edge_ids(arrays[0], "graph", op)
    firsts, maps = [], []
    for i, varray in enumerate(arrays[1:]):
        v = _vertex_set(varray, f"varray{i}", graph.shape[0], op)
        new, old = graph_ops.subgraph(graph._storage, v._storage)
        firsts.append(CSRNDArray(new, graph.context))
        maps.append(CSRNDArray(old, graph.context))
    results = firsts + maps if mapping else firsts
    return _delivered_all(op, results, out)


def _delivered_all(op: str, results: list[NDArray], out: Any) -> Any:
    """``results`` (one array alone, else a list), or written into ``out`` (as many arrays)."""
    if out is None:
        return results[0] if len(results) == 1 else results
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != len(results):
        raise InvalidValue(f"{op}: out holds {len(outs)} arrays, the op gives {len(results)}")
    done = [delivered(op, r, o) for r, o in zip(results, outs)]
    return done[0] if len(done) == 1 else done


def dgl_graph_compact(*graph_data: NDArray, graph_sizes: Any, return_mapping: Any,
                      num_args: Any = None, out: Any = None) -> CSRNDArray | list[CSRNDArray]:
    """Sampled graphs made compact, as ``mxnet.nd.contrib.dgl_graph_compact``: ``graph_data``
    holds the csr graphs (int64 edge ids) the DGL samplers give, then as many vertex arrays
    (the samplers' vertex ids: sorted, their count last); graph ``i`` keeps its first
    ``graph_sizes[i]`` rows and each column becomes its vertex's position, ``(size, size)``
    holding new edge ids 0, 1, ...; with ``return_mapping``, each followed by the same
    structure holding the sampled graph's edge ids (MXNet leaves that one empty)."""
    op = "dgl_graph_compact"
    arrays = _arrays(graph_data, num_args, 2, op)
    if len(arrays) % 2:
        raise InvalidValue(f"{op}: graph_data must hold as many vertex arrays as graphs, got "
                           f"{len(arrays)} arrays")
    count = len(arrays) // 2
    given = graph_sizes.reshape(-1) if isinstance(graph_sizes, np.ndarray) else graph_sizes
    sizes = [integer(s, f"{op}: graph_sizes") for s in items(given)]  # numpy's too, as MXNet
    if len(sizes) != count:
        raise InvalidValue(f"{op}: graph_sizes has {len(sizes)} sizes for {count} graphs")
    mapping = flag(return_mapping, f"{op}: return_mapping")
    firsts, maps = [], []
    for i, size in enumerate(sizes):
        graph = _edge_ids(arrays[i], f"graph{i}", op)
        rows, name = graph.shape[0], f"varray{i}"
        ids = array_arg(arrays[count + i], name, op)
        if ids.shape != (rows + 1,) or np.dtype(ids.dtype) != INDEX_DTYPE:
            raise InvalidValue(f"{op}: {name} must be int64 of shape ({rows + 1},) (graph{i}'s "
                               f"rows and the vertex count), got {np.dtype(ids.dtype).name} "
                               f"of shape {ids.shape}")
        if size > min(graph.shape) or ids[rows].asscalar() != size:
            raise InvalidValue(f"{op}: graph_sizes[{i}] is {size}; graph{i} has shape "
                               f"{graph.shape} and {name} counts {ids[rows].asscalar()} "
                               "vertices")
        vertices = _vertex_set(ids[:size], name, graph.shape[1], op)
        stored = graph._storage
        if item(stored.indptr, size) != item(stored.indptr, -1):
            raise InvalidValue(f"{op}: graph{i} stores edges in rows past graph_sizes[{i}] = "
                               f"{size}")
        found = graph_ops.compact(stored, vertices._storage, size)
        if isinstance(found, int):
            raise InvalidValue(f"{op}: graph{i} has an edge to vertex {found}, which "
                               f"{name}[:{size}] does not hold")
        firsts.append(CSRNDArray(found[0], graph.context))
        maps.append(CSRNDArray(found[1], graph.context))
    results = firsts + maps if mapping else firsts
    return _delivered_all(op, results, out)


def dgl_adjacency(data: CSRNDArray, out: NDArray | None = None) -> CSRNDArray:
    """The adjacency matrix of the graph ``data`` (a csr matrix of int64 edge ids): the same
    entries, each 1 (float32), as ``mxnet.nd.contrib.dgl_adjacency``."""
    op = "dgl_adjacency"
    graph = _edge_ids(data, "data", op)
    stored = graph._storage
    ones = shape_ops.arange(stored.data.size, 1.0, 0.0, 1, np.dtype("float32"),
                            device_of(graph.context))
    result = CSRNDArray(dataclasses.replace(stored, data=ones), graph.context)
    return delivered(op, result, out)


def _sampled(data: tuple[Any, ...], num_args: Any, weighted: bool, num_hops: Any,
             num_neighbor: Any, max_num_vertices: Any, op: str) -> list[NDArray]:
    """The DGL samplers' outputs for the graph, probability (``weighted``) and seed arrays in
    ``data``: every subgraph's vertex ids, then every edge csr, then (``weighted``) every
    probability array, then every layer array."""
    arrays = _arrays(data, num_args, 3 if weighted else 2, op)
    graph = _edge_ids(arrays[0], "csr_matrix", op)
    rows = graph.shape[0]
    if graph.shape[1] != rows:
        raise InvalidValue(f"{op}: csr_matrix must be square (a graph's adjacency), got shape "
                           f"{graph.shape}")
    hops = integer(num_hops, f"{op}: num_hops")
    fanout = integer(num_neighbor, f"{op}: num_neighbor")
    limit = integer(max_num_vertices, f"{op}: max_num_vertices")
    prob = None
    if weighted:
        prob = array_arg(arrays[1], "probability", op)
        if prob.shape != (rows,):
            raise InvalidValue(f"{op}: probability must have shape ({rows},) (one per vertex), "
                               f"got {prob.shape}")
        prob = prob.tostype("default").astype("float32")
        if rows and reduce.min(prob).asscalar() < 0:
            raise InvalidValue(f"{op}: probability must not be negative, got "
                               f"{reduce.min(prob).asscalar()}")
    seeds = arrays[2 if weighted else 1:]
    samples = []
    where = (graph.context.device_type, graph.context.device_id)
    for i, seed in enumerate(seeds):
        name = f"seed_arrays[{i}]"
        ids = _vertices(seed, name, rows, op)
        if ids.shape[0] > limit:
            raise InvalidValue(f"{op}: max_num_vertices is {limit}, below the {ids.shape[0]} "
                               f"vertices of {name}")
        samples.append(graph_ops.neighbor_sample(
            graph._storage, ids._storage, None if prob is None else prob._storage, hops, fanout,
            limit, random_ops.next_stream(where)))
    if any(s.truncated for s in samples):
        warnings.warn(f"{op}: the sampling stopped at max_num_vertices = {limit} vertices "
                      "before every vertex within num_hops was expanded (as MXNet warns: use "
                      "fewer seeds or a smaller neighbourhood)", stacklevel=4)
    context = graph.context
    return [*(NDArray(s.ids, context) for s in samples),
            *(CSRNDArray(s.edges, context) for s in samples),
            *(NDArray(s.prob, context) for s in samples if s.prob is not None),
            *(NDArray(s.layer, context) for s in samples)]


def dgl_csr_neighbor_uniform_sample(*data: NDArray, num_hops: Any = 1, num_neighbor: Any = 2,
                                    max_num_vertices: Any = 100, num_args: Any = None,
                                    out: Any = None) -> list[NDArray]:
    """Subgraphs sampled from the square csr graph ``data[0]`` (int64 edge ids) around each
    seed array ``data[1:]``, as ``mxnet.nd.contrib.dgl_csr_neighbor_uniform_sample``:
    breadth-first from the seeds to ``num_hops`` hops, each vertex drawing up to
    ``num_neighbor`` of its neighbours uniformly without replacement, until the sample holds
    ``max_num_vertices`` vertices. Per seed array: the sampled vertex ids (int64, rising, zero
    past the last, their count in the last of ``max_num_vertices + 1``), the drawn edges
    (csr ``(max_num_vertices, vertices)``: row ``i`` holds vertex ``ids[i]``'s drawn
    neighbours by their vertex ids, valued by edge id) and each vertex's hop (int64); all ids
    arrays first, then all csrs, then all layers."""
    op = "dgl_csr_neighbor_uniform_sample"
    results = _sampled(data, num_args, False, num_hops, num_neighbor, max_num_vertices, op)
    return _delivered_all(op, results, out) if out is not None else results


def dgl_csr_neighbor_non_uniform_sample(*data: NDArray, num_hops: Any = 1,
                                        num_neighbor: Any = 2, max_num_vertices: Any = 100,
                                        num_args: Any = None, out: Any = None) -> list[NDArray]:
    """``dgl_csr_neighbor_uniform_sample`` with the neighbours drawn in proportion to
    ``data[1]`` (one non-negative probability per vertex, float32) and seeds ``data[2:]``, as
    ``mxnet.nd.contrib.dgl_csr_neighbor_non_uniform_sample``; per seed array it also gives the
    sampled vertices' probabilities (float32, after the csrs, before the layers)."""
    op = "dgl_csr_neighbor_non_uniform_sample"
    results = _sampled(data, num_args, True, num_hops, num_neighbor, max_num_vertices, op)
    return _delivered_all(op, results, out) if out is not None else results


__all__ = ["dgl_adjacency", "dgl_csr_neighbor_non_uniform_sample",
           "dgl_csr_neighbor_uniform_sample", "dgl_graph_compact", "dgl_subgraph", "edge_id"]
