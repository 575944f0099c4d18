"""``Symbol``: the outputs of a graph, with MXNet 1.9.1's listing, attribute, composition and
operator methods; ``Variable`` / ``var`` and ``Group``."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..attribute import AttrScope
from ..base import NotImplementedForSymbol
from ..errors import InvalidIndex, InvalidType, InvalidValue
from ..name import NameManager
from ..util import is_np_shape
from .graph import (DTYPE_IDS, HIDDEN_KEYS, STYPE_IDS, VARIABLE, Entry, Node, auxiliary,
                    entry_name, topological, visible_outputs)

_BINARY = {  # python operator: (op with a symbol, its name hint, op with a scalar, its hint)
    "add": ("elemwise_add", "_plus", "_plus_scalar", "_plusscalar"),
    "sub": ("elemwise_sub", "_minus", "_minus_scalar", "_minusscalar"),
    "rsub": (None, None, "_rminus_scalar", "_rminusscalar"),
    "mul": ("elemwise_mul", "_mul", "_mul_scalar", "_mulscalar"),
    "truediv": ("elemwise_div", "_div", "_div_scalar", "_divscalar"),
    "rtruediv": (None, None, "_rdiv_scalar", "_rdivscalar"),
    "mod": ("_mod", "_mod", "_mod_scalar", "_modscalar"),
    "rmod": (None, None, "_rmod_scalar", "_rmodscalar"),
    "pow": ("_power", "_power", "_power_scalar", "_powerscalar"),
    "rpow": (None, None, "_rpower_scalar", "_rpower_scalar"),
    "eq": ("_equal", "_equal", "_equal_scalar", "_equal_scalar"),
    "ne": ("_not_equal", "_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "gt": ("_greater", "_greater", "_greater_scalar", "_greater_scalar"),
    "ge": ("_greater_equal", "_greater_equal", "_greater_equal_scalar", "_greater_equal_scalar"),
    "lt": ("_lesser", "_lesser", "_lesser_scalar", "_lesser_scalar"),
    "le": ("_lesser_equal", "_lesser_equal", "_lesser_equal_scalar", "_lesser_equal_scalar"),
}
"""MXNet's op and auto-name hint behind each arithmetic and comparison operator."""


def create(op: str, name: str, inputs: list[Entry], attrs: dict[str, str],
           subgraphs: tuple[object, ...] = ()) -> "Symbol":
    """A new node of ``op`` named ``name`` (see ``NameManager``), carrying ``attrs`` and the
    current ``AttrScope``'s attributes (and the graphs it runs, ``subgraphs``); the symbol holds
    its visible outputs."""
    return Symbol(tuple(visible_outputs(Node(op, name, AttrScope.current().get(attrs),
                                             tuple(inputs), subgraphs))))


def _binary(operator: str, left: "Symbol", other: Any) -> "Symbol":
    op, hint, scalar_op, scalar_hint = _BINARY[operator]
    if isinstance(other, Symbol) and op is not None:
        return create(op, NameManager.current().get(None, hint),
                      [left._entry("lhs"), other._entry("rhs")], {})
    if isinstance(other, numbers.Number) and not isinstance(other, bool) or isinstance(
            other, np.generic):
        return create(scalar_op, NameManager.current().get(None, scalar_hint),
                      [left._entry("data")], {"scalar": str(other)})
    raise InvalidType(f"Symbol {operator}: the other operand must be a Symbol or a number, got "
                      f"{type(other).__name__}")


class Symbol:
    """The outputs of a graph (one or more ``(node, index)``), as ``mxnet.symbol.Symbol``."""

    __hash__ = object.__hash__

    def __init__(self, outputs: tuple[Entry, ...]) -> None:
        self._outputs = tuple(outputs)

    # -- listing --
    def _nodes(self) -> list[Node]:
        return topological(self._outputs)

    def _entry(self, argument: str) -> Entry:
        """The one output of this symbol, to feed ``argument`` of another op."""
        if len(self._outputs) != 1:
            raise InvalidValue(f"{argument}: a symbol of {len(self._outputs)} outputs cannot be "
                               "an op's input; pick one with symbol[i]")
        return self._outputs[0]

    @property
    def name(self) -> str | None:
        """The name of the node whose outputs this symbol holds (None for a group of several
        nodes)."""
        return self._outputs[0][0].name if len({id(n) for n, _ in self._outputs}) == 1 else None

    def list_arguments(self) -> list[str]:
        """The names of the variables that no op updates (arguments), in the graph's
        depth-first order."""
        aux = auxiliary(self._outputs)
        return [node.name for node in self._nodes() if node.is_variable and id(node) not in aux]

    def list_auxiliary_states(self) -> list[str]:
        """The names of the variables that ops update (BatchNorm's moving_mean and
        moving_var, a custom op's auxiliary states), in depth-first order."""
        aux = auxiliary(self._outputs)
        return [node.name for node in self._nodes() if id(node) in aux]

    def list_inputs(self) -> list[str]:
        """The arguments, then the auxiliary states."""
        return self.list_arguments() + self.list_auxiliary_states()

    def list_outputs(self) -> list[str]:
        """The names of the outputs: a variable's own, else ``<node name>_output`` (one
        output), ``<node name>_output0`` ... or the op's output names (BatchNorm's ``mean``)."""
        return [entry_name(entry) for entry in self._outputs]

    def get_internals(self) -> "Symbol":
        """Every visible output of every node of the graph, as one symbol."""
        return Symbol(tuple(entry for node in self._nodes() for entry in visible_outputs(node)))

    def get_children(self) -> "Symbol | None":
        """The inputs of the outputs' nodes (None for a variable)."""
        nodes = list({id(node): node for node, _ in self._outputs}.values())
        inputs = tuple(entry for node in nodes for entry in node.inputs)
        return Symbol(inputs) if inputs else None

    def __getitem__(self, index: int | str) -> "Symbol":
        """One output, by position or by name (``list_outputs``)."""
        names = self.list_outputs()
        if isinstance(index, str):
            if index not in names:
                raise InvalidValue(f"Symbol: no output named {index!r}; outputs are {names}")
            index = names.index(index)
        if not isinstance(index, int) or not -len(names) <= index < len(names):
            raise InvalidIndex(f"Symbol: output index {index!r} out of range for {len(names)} "
                               "outputs")
        return Symbol((self._outputs[index],))

    def __len__(self) -> int:
        return len(self._outputs)

    def __bool__(self) -> bool:
        """A symbol has no truth value (``if sym:`` is a mistake), as MXNet's."""
        raise NotImplementedForSymbol(self.__bool__, "bool")

    def __iter__(self):
        return (Symbol((entry,)) for entry in self._outputs)

    def __repr__(self) -> str:
        name = self.name
        return f"<Symbol {name}>" if name else f"<Symbol group [{', '.join(self.list_outputs())}]>"

    # -- attributes --
    def attr(self, key: str) -> str | None:
        """The attribute ``key`` of this symbol's node (a hidden key also as ``__key__``)."""
        return self.list_attr().get(key)

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The attributes of this symbol's node (``recursive``: ``attr_dict``'s, flattened as
        ``name$key``)."""
        if recursive:
            return {f"{name}${key}": value for name, attrs in self.attr_dict().items()
                    for key, value in attrs.items()}
        return _listed(self._outputs[0][0].attrs) if len(self._outputs) == 1 else {}

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """The attributes of every node that has some, by node name."""
        return {node.name: _listed(node.attrs) for node in self._nodes() if node.attrs}

    def _set_attr(self, **kwargs: str) -> None:
        """Set string attributes on this symbol's node."""
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise InvalidValue(f"_set_attr: {key} must be a string, got {value!r}")
            self._outputs[0][0].attrs[key] = value

    # -- composition --
    def __call__(self, *args: "Symbol", name: str | None = None, **kwargs: "Symbol") -> "Symbol":
        """A copy with arguments replaced by symbols: by position (``list_arguments`` order)
        or by name."""
        arguments = self.list_arguments()
        if args and kwargs:
            raise InvalidValue("Symbol compose: give arguments by position or by name, not both")
        if len(args) > len(arguments):
            raise InvalidValue(f"Symbol compose: {len(args)} symbols for {len(arguments)} "
                               "arguments")
        given = dict(zip(arguments, args)) if args else kwargs
        for key, value in given.items():
            if key not in arguments:
                raise InvalidValue(f"Symbol compose: {key!r} is not an argument; arguments are "
                                   f"{arguments}")
            if not isinstance(value, Symbol):
                raise InvalidType(f"Symbol compose: {key} must be a Symbol, got "
                                  f"{type(value).__name__}")
        copies: dict[int, Entry] = {}
        for node in self._nodes():
            if node.is_variable:
                copies[id(node)] = given[node.name]._entry(node.name) if node.name in given \
                    else (node, 0)
                continue
            inputs = tuple((copies[id(child)][0], copies[id(child)][1] + index)
                           for child, index in node.inputs)
            copies[id(node)] = (Node(node.op, node.name, dict(node.attrs), inputs), 0)
        outputs = tuple((copies[id(node)][0], index) for node, index in self._outputs)
        if name is not None and self.name is not None and not outputs[0][0].is_variable:
            head = outputs[0][0]
            renamed = Node(head.op, name, head.attrs, head.inputs)
            outputs = tuple((renamed, index) for _, index in outputs)
        return Symbol(outputs)

    def __copy__(self) -> "Symbol":
        return self()

    def __deepcopy__(self, memo: Any) -> "Symbol":
        return self()

    # -- operators --
    def __add__(self, other: Any) -> "Symbol":
        return _binary("add", self, other)

    def __radd__(self, other: Any) -> "Symbol":
        return _binary("add", self, other)

    def __sub__(self, other: Any) -> "Symbol":
        return _binary("sub", self, other)

    def __rsub__(self, other: Any) -> "Symbol":
        return _binary("rsub", self, other)

    def __mul__(self, other: Any) -> "Symbol":
        return _binary("mul", self, other)

    def __rmul__(self, other: Any) -> "Symbol":
        return _binary("mul", self, other)

    def __truediv__(self, other: Any) -> "Symbol":
        return _binary("truediv", self, other)

    def __rtruediv__(self, other: Any) -> "Symbol":
        return _binary("rtruediv", self, other)

    def __mod__(self, other: Any) -> "Symbol":
        return _binary("mod", self, other)

    def __rmod__(self, other: Any) -> "Symbol":
        return _binary("rmod", self, other)

    def __pow__(self, other: Any) -> "Symbol":
        return _binary("pow", self, other)

    def __rpow__(self, other: Any) -> "Symbol":
        return _binary("rpow", self, other)

    def __neg__(self) -> "Symbol":
        return _binary("mul", self, -1.0)

    def __abs__(self) -> "Symbol":
        """``abs(symbol)``: MXNet's ``abs`` op."""
        return create("abs", NameManager.current().get(None, "abs"), [self._entry("data")], {})

    def __eq__(self, other: Any) -> "Symbol":  # type: ignore[override]
        return _binary("eq", self, other)

    def __ne__(self, other: Any) -> "Symbol":  # type: ignore[override]
        return _binary("ne", self, other)

    def __gt__(self, other: Any) -> "Symbol":
        return _binary("gt", self, other)

    def __ge__(self, other: Any) -> "Symbol":
        return _binary("ge", self, other)

    def __lt__(self, other: Any) -> "Symbol":
        return _binary("lt", self, other)

    def __le__(self, other: Any) -> "Symbol":
        return _binary("le", self, other)


def _listed(attrs: dict[str, str]) -> dict[str, str]:
    """A node's attributes as MXNet lists them: each hidden ``__key__`` also as ``key``."""
    listed = dict(attrs)
    for key in HIDDEN_KEYS:
        if f"__{key}__" in attrs:
            listed[key] = attrs[f"__{key}__"]
    return listed


def _shape(name: str, shape: Any) -> tuple[int, ...]:
    """A variable's ``shape``: ints (an int alone is a 1-D shape, as MXNet's ``shape=(1)``),
    >= 0, or >= -1 (-1: unknown) under numpy shape semantics (``mx.util.set_np_shape``)."""
    dims = (shape,) if isinstance(shape, numbers.Integral) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = None
    least = -1 if is_np_shape() else 0
    if dims is None or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                               and d >= least for d in dims):
        raise InvalidValue(f"Variable {name}: shape must be an int or a sequence of ints >= "
                           f"{least}, got {shape!r}")
    return tuple(int(d) for d in dims)


def Variable(name: str, attr: dict[str, str] | None = None, shape: Any = None,  # noqa: N802
             lr_mult: float | None = None, wd_mult: float | None = None, dtype: Any = None,
             init: Any = None, stype: str | None = None, **kwargs: Any) -> Symbol:
    """A variable (an argument of the graph), as ``mx.sym.Variable``; the keywords become
    MXNet's attributes (``__shape__``, ``__lr_mult__``, ``__storage_type__`` ...)."""
    if not isinstance(name, str):
        raise InvalidType(f"Variable: name must be a string, got {type(name).__name__}")
    attrs = AttrScope.current().get(attr)
    if shape is not None:
        attrs["__shape__"] = str(_shape(name, shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        dtype_name = np.dtype(dtype).name
        if dtype_name not in DTYPE_IDS:
            raise InvalidValue(f"Variable {name}: dtype {dtype_name} is not one of MXNet's")
        attrs["__dtype__"] = str(DTYPE_IDS[dtype_name])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        if stype not in STYPE_IDS:
            raise InvalidValue(f"Variable {name}: stype must be one of {tuple(STYPE_IDS)}, got "
                               f"{stype!r}")
        attrs["__storage_type__"] = str(STYPE_IDS[stype])
    for key, value in kwargs.items():
        if not (key.startswith("__") and key.endswith("__")):
            raise InvalidValue(f"Variable {name}: extra attribute {key} must start and end with "
                               "double underscores")
        attrs[key] = str(value)
    return Symbol(((Node(VARIABLE, name, attrs), 0),))


var = Variable


def Group(symbols: list[Symbol]) -> Symbol:  # noqa: N802
    """One symbol holding the outputs of ``symbols``, in order."""
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise InvalidType("Group: symbols must be a non-empty list of Symbols")
    return Symbol(tuple(entry for s in symbols for entry in s._outputs))
