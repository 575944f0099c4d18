"""``mx.autograd.get_symbol``: the computation recorded behind an array, rebuilt as a Symbol.

Each ``mx.nd`` function called while recording is noted on the nodes it recorded
(``tape.Call``: its dotted name and its arguments, ``tape.front_end``). The graph is rebuilt
from those calls: each becomes the ``mx.sym`` function of the same name called on the symbols
of its array arguments (so its op and attributes are MXNet's, and ``bind`` runs the same
``mx.nd`` function again). A node no ``mx.nd`` function noted (an NDArray operator: ``x * y``,
``2 * x``) is rebuilt from its own op when that op's parameters are MXNet's attributes (the
elementwise and scalar ops); any other raises ``NotSupported`` naming it. A leaf array is a
variable: ``var<k>`` when it has a gradient buffer (``attach_grad``), else ``null<k>``, ``k``
counting the leaves in the graph's order; ops are named ``node_<k>`` in the same order.
"""

from __future__ import annotations

import sys
from typing import Any

from .. import tape
from ..errors import InvalidType, NotSupported
from ..ndarray import NDArray
from ..ndarray._internal import ARRAY_OPS, SCALAR_OPS
from ..opaliases import MXNET_NAMES
from ..opnames import ELEMWISE_UNARY_DENSE, ELEMWISE_UNARY_SPARSE
from .graph import CACHED_OP, VARIABLE, Node
from .ops import BROADCAST_BINARY, attr_string, definition
from .symbol import Symbol, create

_ELEMENTWISE = frozenset({*ELEMWISE_UNARY_SPARSE, *ELEMWISE_UNARY_DENSE, *ARRAY_OPS,
                          *BROADCAST_BINARY, "elemwise_add", "elemwise_sub", "elemwise_mul",
                          "elemwise_div"})
"""The ops the front end records under MXNet's name with no parameter but its kernel function
(``fn``): rebuilt as they are, when no ``mx.nd`` call was noted."""


class _Rebuild:
    """One ``get_symbol``: the symbol of each recorded array and call met so far, and the
    counters of MXNet's names (``var<k>``, ``node_<k>``)."""

    def __init__(self, namespace: Any) -> None:
        self.namespace = namespace  # mx.sym, whose functions rebuild the calls
        self.arrays: dict[int, Symbol] = {}  # id(leaf array) -> its variable
        self.entries: dict[tuple[int, int], Symbol] = {}  # (id(node), output) -> symbol
        self.calls: dict[int, Symbol] = {}  # id(call) -> its symbol (all its outputs)
        self.leaves = 0
        self.ops = 0
        self.held: list[Any] = []  # what the ids above name stays alive for the rebuild

    def symbol(self, array: Any) -> Symbol:
        """The symbol of ``array``'s recorded computation (a variable for a leaf)."""
        if not isinstance(array, NDArray):
            raise InvalidType(f"autograd.get_symbol: x must be an NDArray, got "
                              f"{type(array).__name__}")
        if array._entry is None:
            found = self.arrays.get(id(array))
            if found is None:
                kind = "var" if array._grad is not None and array._grad_req != "null" else "null"
                found = Symbol(((Node(VARIABLE, f"{kind}{self.leaves}"), 0),))
                self.leaves += 1
                self.arrays[id(array)] = found
                self.held.append(array)
            return found
        node, position = array._entry
        found = self.entries.get((id(node), position))
        if found is None:
            noted = (node.calls or {}).get(position)
            found = self._call(*noted) if noted is not None else self._node(node, position)
            self.entries[id(node), position] = found
            self.held.append(node)
        return found

    def _name(self) -> str:
        self.ops += 1
        return f"node_{self.ops - 1}"

    def _call(self, call: tape.Call, position: int) -> Symbol:
        """Output ``position`` of the ``mx.sym`` function of ``call`` on its inputs' symbols."""
        made = self.calls.get(id(call))
        if made is None and not isinstance(call.function, str):
            made = self._cached_op(call)
            self.calls[id(call)] = made
            self.held.append(call)
        if made is None:
            function: Any = self.namespace
            for part in call.function.split("."):
                function = getattr(function, part, None)
            if function is None:
                raise NotSupported(f"autograd.get_symbol: mx.nd.{call.function} was recorded "
                                   "and mx.sym has no op of that name")
            args = [self._value(a) for a in call.args]
            kwargs = {k: self._value(v) for k, v in call.kwargs.items()}
            made = function(*args, name=self._name(), **kwargs)
            self.calls[id(call)] = made
            self.held.append(call)
        if isinstance(made, (list, tuple)):  # a function returning several symbols
            return made[position]
        return made if len(made._outputs) == 1 else made[position]

    def _cached_op(self, call: tape.Call) -> Symbol:
        """A hybridized block's recorded call (``call.function``: a ``gluon.cached_graph.
        CachedCall``) as one ``_CachedOp`` node running the block's graph, its inputs the
        call's arrays then the block's parameters (the graph's inputs in order), as MXNet
        writes it."""
        cached = call.function
        inputs = [self.symbol(array)._entry("data") for array in cached.inputs(call.args)]
        return create(CACHED_OP, self._name(), inputs, {}, subgraphs=(cached.graph,))

    def _value(self, value: Any) -> Any:
        """An argument of a noted call with its arrays (also in lists) as their symbols."""
        if isinstance(value, NDArray):
            return self.symbol(value)
        if isinstance(value, (list, tuple)) and any(isinstance(v, NDArray) for v in value):
            return type(value)(self._value(v) for v in value)
        return value

    def _node(self, node: tape.Node, position: int) -> Symbol:
        """A recorded node no ``mx.nd`` call noted, rebuilt from its op when its parameters
        are MXNet's attributes."""
        op = MXNET_NAMES.get(node.op, node.op)
        given = {k: v for k, v in node.params.items() if k != "fn"}
        if op in SCALAR_OPS and set(given) == {"scalar"}:
            attrs = {"scalar": attr_string("scalar", given["scalar"])}
        elif op in _ELEMENTWISE and not given and (op in ARRAY_OPS or definition(op)):
            attrs = {}
        else:
            raise NotSupported(f"autograd.get_symbol: the recorded op {node.op} (an NDArray "
                               "method or operator) cannot be rebuilt as an op of a graph; "
                               "call its mx.nd function inside record() instead")
        inputs = [self.symbol(a)._entry("data") for a in node.inputs]
        made = create(op, self._name(), inputs, attrs)
        return made if len(made._outputs) == 1 else made[position]


def get_symbol(x: Any) -> Symbol:
    """The computation recorded behind ``x`` (inside ``autograd.record()``) as a Symbol whose
    arguments are its leaf arrays (``var0``, ``var1``, ... for arrays with ``attach_grad``), as
    ``mxnet.autograd.get_symbol``."""
    return _Rebuild(sys.modules[__package__]).symbol(x)
