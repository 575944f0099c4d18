"""Shape rules of MXNet's DGL graph ops (``infer.SHAPE_RULES`` merges them): output shapes
from the input shapes and attributes alone, as MXNet's, since the ops refuse dense zeros."""

from __future__ import annotations

from ..params import items
from .shape_types import Answer, Params, Shape, ShapeRule


def _subgraph(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """One ``(n, n)`` per vertex set of ``n`` (twice with ``return_mapping``)."""
    out = [None if s is None else (s[0], s[0]) for s in shapes[1:]]
    return shapes, out * 2 if p.get("return_mapping") else out


def _compact(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """One ``(size, size)`` per graph size (twice with ``return_mapping``)."""
    out = [(int(size), int(size)) for size in items(p.get("graph_sizes", ()))]
    return shapes, out * 2 if p.get("return_mapping") else out


def _sampler(weighted: bool) -> ShapeRule:
    """Per seed array: ids ``(max + 1,)``, the edge csr ``(max, vertices)``, (``weighted``)
    probabilities ``(max,)`` and layers ``(max,)``."""

    def rule(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
        limit, sets = int(p.get("max_num_vertices", 100)), len(shapes) - 1 - weighted
        columns = None if shapes[0] is None else shapes[0][1]
        per = [(limit + 1,), None if columns is None else (limit, columns),
               *([(limit,)] if weighted else []), (limit,)]
        return shapes, [shape for shape in per for _ in range(sets)]

    return rule


GRAPH_SHAPE_RULES: dict[str, ShapeRule] = {
    "_contrib_dgl_subgraph": _subgraph, "_contrib_dgl_graph_compact": _compact,
    "_contrib_dgl_csr_neighbor_uniform_sample": _sampler(False),
    "_contrib_dgl_csr_neighbor_non_uniform_sample": _sampler(True),
}
"""The rule of each DGL op that builds subgraphs (``edge_id`` and ``dgl_adjacency`` run on
zeros of their shapes: their own rules are the evaluated ones)."""
