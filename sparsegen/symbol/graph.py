"""The graph under ``mx.sym``: nodes (an op, a name, MXNet's string attributes, inputs as
``(node, output index)``); a variable is a node whose op is ``"null"``."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

VARIABLE = "null"
"""The op of a variable node, as MXNet's JSON writes it."""

DTYPE_IDS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
             "int64": 6, "bool": 7}
"""MXNet's dtype codes (a variable's ``__dtype__`` attribute)."""

STYPE_IDS = {"default": 0, "row_sparse": 1, "csr": 2}
"""MXNet's storage-type codes (a variable's ``__storage_type__`` attribute)."""

HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
"""Attributes MXNet also lists without their double underscores (``__lr_mult__`` and
``lr_mult``)."""


@dataclass(frozen=True, eq=False)
class Node:
    """One op of a graph (or a variable: op ``"null"``), compared by identity."""

    op: str
    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    inputs: tuple[tuple["Node", int], ...] = ()

    @property
    def is_variable(self) -> bool:
        """Whether the node is a variable (an argument of the graph)."""
        return self.op == VARIABLE


Entry = tuple[Node, int]
"""One output of a node: the node and the output's index."""


def topological(heads: tuple[Entry, ...]) -> list[Node]:
    """Every node ``heads`` reach, inputs before users, in MXNet's depth-first order."""
    order: list[Node] = []
    seen: set[int] = set()
    for head, _ in heads:
        stack: list[tuple[Node, int]] = [(head, 0)]
        while stack:
            node, position = stack.pop()
            if position == 0 and id(node) in seen:
                continue
            if position < len(node.inputs):
                stack.append((node, position + 1))
                child = node.inputs[position][0]
                if id(child) not in seen:
                    stack.append((child, 0))
                continue
            if id(node) not in seen:
                seen.add(id(node))
                order.append(node)
    return order


def dtype_name(code: str) -> str:
    """The numpy name of MXNet's dtype code ``code`` (a string, as an attribute holds it)."""
    for name, value in DTYPE_IDS.items():
        if str(value) == code:
            return name
    return np.dtype(code).name


def stype_name(code: str) -> str:
    """The storage-type name of MXNet's code ``code``."""
    for name, value in STYPE_IDS.items():
        if str(value) == code:
            return name
    return code


def parse_attr(value: str) -> object:
    """An attribute string as the Python value it writes (``'True'``, ``'(2, 3)'``, ``'0.5'``);
    a string that is no literal (``'relu'``) stays a string."""
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def strings(node: Node) -> dict[str, str]:
    """A node's attributes that are op parameters (not ``__key__`` or scope keys), as strings."""
    return {key: value for key, value in node.attrs.items()
            if not key.startswith("__") and key not in HIDDEN_KEYS}


def params(node: Node) -> dict[str, object]:
    """A node's op parameters, parsed (``'True'`` -> True, ``'(2, 3)'`` -> (2, 3))."""
    return {key: parse_attr(value) for key, value in strings(node).items()}
