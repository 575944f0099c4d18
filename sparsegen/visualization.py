"""``mx.viz`` / ``mx.visualization``: ``print_summary`` of a symbol, as MXNet 1.9.1 prints it
(each layer, its output shape without the batch axis, its parameters, the layers it reads)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .errors import InvalidType, InvalidValue, NotSupported


def _row(fields: Sequence[Any], positions: Sequence[int]) -> str:
    line = ""
    for field, end in zip(fields, positions):
        line = (line + str(field))[:end]
        line += " " * (end - len(line))
    return line


def print_summary(symbol: Any, shape: dict[str, Any] | None = None, line_length: int = 120,
                  positions: Sequence[float] = (.44, .64, .74, 1.)) -> None:
    """Print a table of ``symbol``'s layers: name (op), output shape (given the input
    ``shape`` dict; the batch axis left out), parameter count and the layers it reads, then
    the total. Parameters are counted from the inferred shapes of each layer's own variables
    (its inputs other than data and labels: weights, biases, ...), so every op counts, not only
    those MXNet knows."""
    from .symbol import Symbol
    from .symbol.graph import entry_name, topological
    from .symbol.ops import input_names

    if not isinstance(symbol, Symbol):
        raise InvalidType(f"print_summary: symbol must be a Symbol, got {type(symbol).__name__}")
    if len(positions) != 4 or list(positions) != sorted(positions):
        raise InvalidValue(f"print_summary: positions must be 4 rising numbers, got "
                           f"{list(positions)}")
    ends = [int(line_length * p) for p in positions] if positions[-1] <= 1 else \
        [int(p) for p in positions]
    given = dict(shape or {})
    internals = symbol.get_internals()
    shapes: dict[str, tuple[int, ...]] = {}
    arg_shapes: dict[str, tuple[int, ...]] = {}
    if shape is not None:
        args, outs, _ = internals.infer_shape(**given)
        if outs is None or any(s is None for s in outs):
            raise InvalidValue(f"print_summary: the input shapes {given} do not determine every "
                               "layer's shape")
        shapes = dict(zip(internals.list_outputs(), outs))
        arg_shapes = dict(zip(internals.list_arguments(), args))
    heads = {id(node) for node, _ in symbol._outputs}
    lines = ["_" * line_length,
             _row(("Layer (type)", "Output Shape", "Param #", "Previous Layer"), ends),
             "=" * line_length]
    total = 0
    nodes = [n for n in topological(symbol._outputs) if not n.is_variable or id(n) in heads]
    first_variable = next((n for n in topological(symbol._outputs) if n.is_variable), None)
    if first_variable is not None and first_variable not in nodes:
        nodes.insert(0, first_variable)  # MXNet prints the first input as a layer
    for index, node in enumerate(nodes):
        out = shapes.get(node.name if node.is_variable else entry_name((node, 0)), ())
        previous = [n.name for n, _ in node.inputs
                    if not n.is_variable or id(n) in heads or n is first_variable]
        roles = [] if node.is_variable else input_names(node)
        params = sum(math.prod(arg_shapes[n.name]) for (n, _), role in zip(node.inputs, roles)
                     if n.is_variable and role not in ("data", "label")
                     and n.name not in given and n.name in arg_shapes)
        total += params
        op = "null" if node.is_variable else node.op
        lines.append(_row((f"{node.name}({op})", "x".join(map(str, out[1:])), params,
                           previous[0] if previous else ""), ends))
        lines += [_row(("", "", "", name), ends) for name in previous[1:]]
        lines.append(("=" if index == len(nodes) - 1 else "_") * line_length)
    lines += [f"Total params: {total}", "_" * line_length]
    print("\n".join(lines))


def plot_network(*args: Any, **kwargs: Any) -> Any:
    """MXNet's graphviz drawing of a symbol: not provided (print_summary lists the layers)."""
    raise NotSupported("mx.viz.plot_network is not provided (it needs graphviz); "
                       "mx.viz.print_summary lists the layers")


__all__ = ["plot_network", "print_summary"]
