"""``Executor.debug_str``: the graph an executor runs as text, in the layout of MXNet 1.9.1's
(``Symbol Outputs``, then each variable and op with its inputs and attributes), and the
memory its arrays take.

sparsegen has no memory planner, so the last line counts what the executor's run holds: each
op output's bytes (by the inferred shapes and dtypes; an op that passes its input on,
``PASS_THROUGH``, takes none), and as much again for every op output a gradient flows back
through (reached from an argument whose ``grad_req`` is not ``'null'`` and leading to an
output other than through ``BlockGrad``, as MXNet's zero-gradient pass prunes it). MXNet
reuses memory between arrays, so its totals are smaller; they move the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .graph import Node, output_names, strings, topological
from .infer import dtypes, key, shapes

PASS_THROUGH = frozenset({"BlockGrad", "identity", "_copy", "Reshape", "Flatten",
                          "expand_dims"})
"""Ops whose output is their input, viewed or forwarded (MXNet runs them in place)."""

_BLOCKING = frozenset({"BlockGrad"})
"""Ops through which no gradient flows back."""


def _label(entry: tuple[Node, int]) -> str:
    node, index = entry
    return f"{node.name}({index})"


def listing(heads: tuple[tuple[Node, int], ...]) -> list[str]:
    """The lines MXNet prints for the graph of ``heads``: its outputs, then each node."""
    lines = ["Symbol Outputs:"]
    lines += [f"\toutput[{i}]={_label(head)}" for i, head in enumerate(heads)]
    for node in topological(heads):
        if node.is_variable:
            lines.append(f"Variable:{node.name}")
            continue
        lines += ["-" * 20, f"Op:{node.op}, Name={node.name}", "Inputs:"]
        lines += [f"\targ[{i}]={_label(entry)}" + (" version=0" if entry[0].is_variable else "")
                  for i, entry in enumerate(node.inputs)]
        attrs = strings(node)
        if attrs:
            lines.append("Attrs:")
            lines += [f"\t{name}={value}" for name, value in attrs.items()]
    return lines


def allocated_bytes(heads: tuple[tuple[Node, int], ...], arg_shapes: dict[str, Any],
                    arg_dtypes: dict[str, Any], grad_reqs: dict[str, str]) -> int:
    """The bytes of the op outputs of the graph of ``heads`` and of the gradients flowing back
    through them (see the module's text), from the arguments' shapes, dtypes and
    ``grad_req``."""
    found_shapes = shapes(heads, arg_shapes)
    found_dtypes = dtypes(heads, arg_dtypes)
    nodes = topological(heads)
    needs: dict[int, bool] = {}  # whether a gradient is wanted from the node's outputs back
    for node in nodes:
        needs[id(node)] = (grad_reqs.get(node.name, "null") != "null" if node.is_variable else
                           node.op not in _BLOCKING and any(needs[id(c)] for c, _ in node.inputs))
    reaches = {id(head) for head, _ in heads}  # the nodes a head gradient reaches
    for node in reversed(nodes):
        if id(node) in reaches and node.op not in _BLOCKING:
            reaches.update(id(child) for child, _ in node.inputs)
    total = 0
    for node in nodes:
        if node.is_variable or node.op in PASS_THROUGH:
            continue
        for index in range(len(output_names(node))):
            shape = found_shapes.get(key((node, index)))
            if shape is None:
                continue
            dtype = np.dtype(found_dtypes.get(key((node, index))) or "float32")
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            total += size * (2 if needs[id(node)] and id(node) in reaches else 1)
    return total


def debug_str(heads: tuple[tuple[Node, int], ...], arg_shapes: dict[str, Any],
              arg_dtypes: dict[str, Any], grad_reqs: dict[str, str]) -> str:
    """MXNet's ``Executor.debug_str`` text for the graph of ``heads`` bound to arrays of
    ``arg_shapes`` and ``arg_dtypes`` with ``grad_reqs`` (by argument name)."""
    total = allocated_bytes(heads, arg_shapes, arg_dtypes, grad_reqs)
    return "\n".join([*listing(heads), f"Total {total >> 20} MB allocated", ""])
