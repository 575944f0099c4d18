"""MXNet 1.9.1's JSON graph format: ``tojson`` / ``save`` and ``load_json`` / ``load``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InvalidValue
from ..util import is_np_shape
from .graph import VARIABLE, Node, mutable_inputs, output_names
from .ops import canonical
from .symbol import Symbol

MXNET_VERSION = 10901
"""The version MXNet 1.9.1 writes in a graph's ``attrs.mxnet_version``."""


def tojson(symbol: Symbol, remove_amp_cast: bool = True) -> str:
    """The graph of ``symbol`` as MXNet's JSON (nodes, arg_nodes, node_row_ptr, heads, attrs;
    ``arg_nodes`` lists every variable, auxiliary states too, as MXNet's), without AMP's cast
    nodes when ``remove_amp_cast`` (MXNet's default)."""
    if remove_amp_cast:
        symbol = without_amp_casts(symbol)
    nodes = symbol._nodes()
    index = {id(node): position for position, node in enumerate(nodes)}
    written = []
    for node in nodes:
        entry: dict[str, Any] = {"op": node.op, "name": node.name}
        if node.attrs:
            entry["attrs"] = dict(node.attrs)
        mutable = mutable_inputs(node)  # MXNet writes version 1 for an updated variable
        entry["inputs"] = [[index[id(child)], output, int(position in mutable)]
                           for position, (child, output) in enumerate(node.inputs)]
        written.append(entry)
    row_ptr = [0]
    for node in nodes:
        row_ptr.append(row_ptr[-1] + len(output_names(node)))
    graph = {
        "nodes": written,
        "arg_nodes": [i for i, node in enumerate(nodes) if node.is_variable],
        "node_row_ptr": row_ptr,
        "heads": [[index[id(node)], output, 0] for node, output in symbol._outputs],
        "attrs": {"mxnet_version": ["int", MXNET_VERSION],
                  **({"is_np_shape": ["int", 1]} if is_np_shape() else {})},
    }
    return json.dumps(graph, indent=2)


def load_json(json_str: str) -> Symbol:
    """The symbol of MXNet's JSON ``json_str`` (also the older ``attr`` / ``param`` keys); an
    op written by one of MXNet's aliases (``_Plus``, ``_sparse_dot``) is read as its op; a
    graph written without numpy shape semantics, read with them on, has its variables' 0s read
    as unknown dimensions (-1), as MXNet's."""
    try:
        graph = json.loads(json_str)
        legacy = is_np_shape() and "is_np_shape" not in graph.get("attrs", {})
        nodes: list[Node] = []
        for entry in graph["nodes"]:
            attrs = {key: str(value) for key, value in
                     (entry.get("attrs") or entry.get("attr") or entry.get("param") or {}).items()}
            if legacy and "__shape__" in attrs:
                attrs["__shape__"] = _numpy_shape(attrs["__shape__"])
            inputs = tuple((nodes[i], output) for i, output, *_ in entry["inputs"])
            op = canonical(entry["op"]) if entry["op"] != VARIABLE else VARIABLE
            nodes.append(Node(op, entry["name"], attrs, inputs))
        return Symbol(tuple((nodes[i], output) for i, output, *_ in graph["heads"]))
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise InvalidValue(f"load_json: json_str is not an MXNet graph: {error!r}") from None


def _numpy_shape(legacy: str) -> str:
    """A variable's ``__shape__`` written in MXNet's legacy shape semantics (0: unknown), as
    numpy shape semantics write it (-1), for a graph saved without them read with them on."""
    dims = [d.strip() for d in legacy.strip("()[] ").split(",") if d.strip()]
    return str(tuple(-1 if int(d) == 0 else int(d) for d in dims))


AMP_CASTS = ("amp_cast", "amp_multicast")
"""The ops ``save(remove_amp_cast=True)`` leaves out (output ``i`` is their input ``i``)."""


def without_amp_casts(symbol: Symbol) -> Symbol:
    """``symbol`` with every ``amp_cast`` / ``amp_multicast`` node left out, its consumers
    reading the node's inputs instead (MXNet's ``remove_amp_cast``)."""
    nodes = symbol._nodes()
    if not any(node.op in AMP_CASTS for node in nodes):
        return symbol
    replaced: dict[int, Any] = {}  # id(node) -> its new node, or the inputs that replace it

    def entry(node: Node, output: int) -> tuple[Node, int]:
        new = replaced[id(node)]
        return new[output] if isinstance(new, tuple) else (new, output)

    for node in nodes:
        inputs = tuple(entry(child, output) for child, output in node.inputs)
        if node.op in AMP_CASTS:
            replaced[id(node)] = inputs
        else:
            same = all(a[0] is b[0] and a[1] == b[1] for a, b in zip(inputs, node.inputs))
            replaced[id(node)] = node if same else Node(node.op, node.name, node.attrs, inputs)
    return Symbol(tuple(entry(node, output) for node, output in symbol._outputs))


def save(symbol: Symbol, fname: str, remove_amp_cast: bool = True) -> None:
    """Write ``symbol.tojson()`` to the file ``fname`` (without AMP's cast nodes when
    ``remove_amp_cast``, as MXNet)."""
    Path(fname).write_text(tojson(symbol, remove_amp_cast))


def load(fname: str) -> Symbol:
    """The symbol in the JSON file ``fname`` (written by ``save`` or by MXNet)."""
    return load_json(Path(fname).read_text())


Symbol.tojson = tojson  # type: ignore[attr-defined]
Symbol.save = save  # type: ignore[attr-defined]
