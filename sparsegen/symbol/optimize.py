"""MXNet's common-expression elimination on a graph: nodes of one op, the same attributes and
the same inputs computed once (``MXNET_ELIMINATE_COMMON_EXPR``, on unless ``0``)."""

from __future__ import annotations

import os

from .graph import Entry, Node, topological
from .ops import SAMPLERS
from .symbol import Symbol

KEPT_OPS = frozenset({"Dropout", "Custom", "_shuffle", *SAMPLERS})
"""Ops never merged: each call draws or holds its own state (MXNet: ops with resources)."""


def enabled() -> bool:
    """Whether executors eliminate common expressions (``MXNET_ELIMINATE_COMMON_EXPR``)."""
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1") != "0"


def eliminate_common_expr(symbol: Symbol) -> Symbol:
    """``symbol`` with each repeated computation (same op, attributes and inputs) done once;
    two outputs that become one entry get a ``_copy`` node, as MXNet's, to stay distinct."""
    merged: dict[int, Node] = {}
    found: dict[tuple, Node] = {}
    for node in topological(symbol._outputs):
        if node.is_variable:
            merged[id(node)] = node
            continue
        inputs = tuple((merged[id(child)], index) for child, index in node.inputs)
        key = (node.op, tuple(sorted(node.attrs.items())),
               tuple((id(child), index) for child, index in inputs))
        if node.op not in KEPT_OPS and key in found:
            merged[id(node)] = found[key]
            continue
        kept = inputs == node.inputs  # an unchanged node stays itself (its identity too)
        found[key] = merged[id(node)] = node if kept else Node(node.op, node.name,
                                                               dict(node.attrs), inputs)
    outputs: list[Entry] = []
    taken: set[tuple[int, int]] = set()
    for node, index in symbol._outputs:
        entry = (merged[id(node)], index)
        if (id(entry[0]), index) in taken:
            entry = (Node("_copy", f"{entry[0].name}_copy{len(outputs)}", {}, (entry,)), 0)
        taken.add((id(entry[0]), entry[1]))
        outputs.append(entry)
    return Symbol(tuple(outputs))
