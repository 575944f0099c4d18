"""The update rule language: a row-wise optimizer update written as a Python function of
element values, traced once into an expression graph (free of TVM) that templates/optim.py
turns into kernels.

A rule is ``update(x, h, g, f)`` returning the new weight and states, in the order
``(weight, *states, *row_states)`` (a bare value when there are none):

- ``x.weight``, ``x.<state>``: the element's value before the update; ``x.<row state>``: the
  row's (one value per row, RowWiseAdagrad's history).
- ``h.<hyper-parameter>``: a scalar float32 kernel parameter; ``g``: the gradient value (``0``
  for the rows without a gradient row in ``std``).
- ``f``: functions: ``f.one``, ``f.clip(x, bound)``, ``f.sign``, ``f.sqrt``, ``f.abs``,
  ``f.exp``, ``f.log``, ``f.max``, ``f.min``, ``f.where(cond, a, b)``, ``f.cast(cond)`` (a
  comparison as 0 or 1), and the per-row reductions ``f.row_sum(e)``, ``f.row_mean(e)``,
  ``f.row_norm(e)`` (``sqrt(sum(e*e))``) of an element expression ``e`` over the row.

Values are expressions: ``+ - * /``, unary ``-``, comparisons (``< <= > >= == !=``, giving a
condition), Python numbers. Arithmetic runs in the compute type (float32, float64 for float64
weights); a new value is rounded to its array's dtype once, and an output used by another output
is read back rounded, as it is stored. What the graph cannot say is refused by ``define_update``
with ``UpdateRuleError`` naming ``file:line`` of the user's function: indexing a value
(non-elementwise access), Python control flow on a value (``if``, ``while``, ``and``, ``or``,
``max``, ``float``), the wrong number of outputs, and dtype mismatches (arithmetic on a
condition, a condition stored, a constant that is not a real number).
"""

from __future__ import annotations

import dis
import hashlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import SparsegenError

Update = Callable[[Any, Any, Any, Any], Any]
"""``update(x, h, g, f)``: returns the new weight and states (see above)."""

FUNCTIONS = ("lazy", "std", "dense")
"""The kernel functions a rule can have: gradient rows only, every row, dense gradient."""

REDUCTIONS = ("row_sum", "row_mean", "row_norm")
"""The per-row reductions of ``f``."""

_HERE = os.path.abspath(__file__)


class UpdateRuleError(SparsegenError, TypeError):
    """A rule that cannot compile to a kernel; the message starts with the user's file:line."""


def _where() -> str:
    """``file:line`` of the innermost frame outside this module (the user's code)."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) == _HERE:
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"


def refuse(message: str, where: str | None = None) -> UpdateRuleError:
    """The error for ``message`` at ``where`` (by default the user's innermost line)."""
    return UpdateRuleError(f"{where or _where()}: {message}")


class Node:
    """One value of a traced rule: an operation on other values, made by the user's code."""

    __hash__ = object.__hash__

    def __init__(self, op: str, args: tuple[Any, ...] = (), kind: str = "value",
                 level: str = "element") -> None:
        self.op, self.args, self.kind, self.level = op, args, kind, level
        self.where = _where()

    # arithmetic
    def _arith(self, op: str, a: Any, b: Any) -> Node:
        a, b = _value(a), _value(b)
        for v in (a, b):
            if v.kind != "value":
                raise refuse(f"dtype mismatch: arithmetic ({op}) on a condition; "
                              "f.cast(condition) gives 0 or 1")
        return Node(op, (a, b), level=_level(a, b))

    def __add__(self, o: Any) -> Node: return self._arith("add", self, o)
    def __radd__(self, o: Any) -> Node: return self._arith("add", o, self)
    def __sub__(self, o: Any) -> Node: return self._arith("sub", self, o)
    def __rsub__(self, o: Any) -> Node: return self._arith("sub", o, self)
    def __mul__(self, o: Any) -> Node: return self._arith("mul", self, o)
    def __rmul__(self, o: Any) -> Node: return self._arith("mul", o, self)
    def __truediv__(self, o: Any) -> Node: return self._arith("div", self, o)
    def __rtruediv__(self, o: Any) -> Node: return self._arith("div", o, self)

    def __neg__(self) -> Node:
        if self.kind != "value":
            raise refuse("dtype mismatch: negating a condition")
        return Node("neg", (self,), level=self.level)

    def __pos__(self) -> Node:
        return self

    def __abs__(self) -> Node:
        return _FUNCTIONS.abs(self)

    def __pow__(self, exponent: Any) -> Node:
        """``x ** n`` for a whole number ``n`` (``|n| <= 64``): products of ``x`` (``1 / ...``
        for ``n < 0``, 1 for ``n == 0``)."""
        if self.kind != "value":
            raise refuse("dtype mismatch: a power of a condition")
        whole = (isinstance(exponent, int) or _is_float_scalar(exponent)
                 or isinstance(exponent, float)) and not isinstance(exponent, bool)
        if not whole or float(exponent) != int(exponent) or abs(int(exponent)) > 64:
            raise refuse(f"x ** {exponent!r}: a rule raises values to whole-number powers "
                          "(|n| <= 64) only; use f.sqrt(x) or f.exp(p * f.log(x))")
        n = int(exponent)
        result, base, rest = None, self, abs(n)
        while rest:  # square and multiply
            if rest & 1:
                result = base if result is None else result * base
            rest >>= 1
            if rest:
                base = base * base
        if result is None:
            return _value(1.0)
        return _value(1.0) / result if n < 0 else result

    def __rpow__(self, base: Any) -> Node:
        raise refuse(f"{base!r} ** x: a rule raises values to whole-number powers only; use "
                      "f.exp(x * f.log(b))")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Node:
        """numpy scalars in arithmetic with a value (``np.float32(2) * g``), numpy's sqrt,
        absolute, exp, log and negative on a value (f's functions); other numpy functions are
        refused."""
        name = getattr(ufunc, "__name__", "")
        if method == "__call__" and not kwargs:
            if name in _UFUNCS and len(inputs) == 2:
                return self._arith(_UFUNCS[name], *inputs)
            if name in _UNARY_UFUNCS and len(inputs) == 1:
                return _UNARY_UFUNCS[name](inputs[0])
            if name == "power" and len(inputs) == 2 and inputs[0] is self:
                return self ** inputs[1]
        raise refuse(f"numpy's {name or ufunc} on a value: a value is not a Python number while "
                      "the rule is traced; use the functions of f")

    # comparisons give conditions
    def _compare(self, op: str, o: Any) -> Node:
        a, b = self, _value(o)
        if a.kind != "value" or b.kind != "value":
            raise refuse(f"dtype mismatch: comparing ({op}) a condition")
        return Node(op, (a, b), kind="cond", level=_level(a, b))

    def __gt__(self, o: Any) -> Node: return self._compare("gt", o)
    def __ge__(self, o: Any) -> Node: return self._compare("ge", o)
    def __lt__(self, o: Any) -> Node: return self._compare("lt", o)
    def __le__(self, o: Any) -> Node: return self._compare("le", o)
    def __eq__(self, o: Any) -> Node: return self._compare("eq", o)  # type: ignore[override]
    def __ne__(self, o: Any) -> Node: return self._compare("ne", o)  # type: ignore[override]

    # what a traced value cannot do
    def __bool__(self) -> bool:
        raise refuse("Python control flow on a value (if / while / and / or / not / max / min "
                      "of values): a rule is one expression per element; use f.where(cond, a, "
                      "b), f.max or f.min")

    def __getitem__(self, key: Any) -> Any:
        raise refuse(f"non-elementwise access [{key!r}]: a rule sees one element of each "
                      "array (f.row_sum / f.row_mean / f.row_norm reduce over its row)")

    def __iter__(self) -> Any:
        raise refuse("iterating over a value: a rule sees one element of each array")

    def _not_a_number(self, *_: Any) -> Any:
        raise refuse("a value is not a Python number while the rule is traced (float(), "
                      "int(), math.* or numpy functions on it); use the functions of f")

    __float__ = __int__ = __index__ = __complex__ = __len__ = __round__ = _not_a_number
    __mod__ = __floordiv__ = __and__ = __or__ = _not_a_number


_UFUNCS = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div",
           "divide": "div"}
"""numpy's arithmetic ufuncs as operations (a numpy scalar meeting a value)."""

_UNARY_UFUNCS: dict[str, Callable[[Any], Node]] = {
    "sqrt": lambda v: _FUNCTIONS.sqrt(v), "absolute": lambda v: _FUNCTIONS.abs(v),
    "exp": lambda v: _FUNCTIONS.exp(v), "log": lambda v: _FUNCTIONS.log(v),
    "negative": lambda v: -v}
"""numpy's element functions that are f's (``np.sqrt(v)`` is ``f.sqrt(v)``)."""


def _level(*nodes: Node) -> str:
    return "element" if any(n.level == "element" for n in nodes) else "row"


def _value(v: Any) -> Node:
    """``v`` as a node: a node, or a real Python / numpy number as a constant."""
    if isinstance(v, Node):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) and not _is_float_scalar(v):
        raise refuse(f"dtype mismatch: {v!r} ({type(v).__name__}) in a rule; values are "
                      "expressions of x, h, g, f and real numbers")
    return Node("const", (float(v),), level="row")


def _is_float_scalar(v: Any) -> bool:
    dtype = getattr(v, "dtype", None)
    return getattr(v, "shape", None) == () and dtype is not None and dtype.kind in "fi"


class _Names:
    """``x`` / ``h`` of a rule: its values by name, read-only."""

    def __init__(self, what: str, nodes: dict[str, Node]) -> None:
        object.__setattr__(self, "_nodes", (what, nodes))

    def __getattr__(self, name: str) -> Node:
        what, nodes = object.__getattribute__(self, "_nodes")
        if name not in nodes:
            raise refuse(f"the rule has no {what} {name!r}; it has {sorted(nodes)}")
        return nodes[name]

    def __setattr__(self, name: str, value: Any) -> None:
        raise refuse(f"assigning {name!r}: a rule returns its new values "
                      "(weight, *states, *row_states)")


class _Functions:
    """``f`` of a rule."""

    def __init__(self) -> None:
        self.one = Node("one", level="row")

    @staticmethod
    def _call(op: str, *args: Any, kind: str = "value") -> Node:
        nodes = tuple(_value(a) for a in args)
        for n in nodes:
            if n.kind != "value":
                raise refuse(f"dtype mismatch: f.{op} of a condition")
        return Node(op, nodes, kind=kind, level=_level(*nodes))

    def clip(self, x: Any, bound: Any) -> Node:
        """MXNet's ``clip::Map``: values beyond ``±bound`` become the bound; NaN passes."""
        return self._call("clip", x, bound)

    def sign(self, x: Any) -> Node:
        """1, -1 or 0."""
        return self._call("sign", x)

    def sqrt(self, x: Any) -> Node:
        """Square root."""
        return self._call("sqrt", x)

    def abs(self, x: Any) -> Node:
        """Absolute value."""
        return self._call("abs", x)

    def exp(self, x: Any) -> Node:
        """Exponential."""
        return self._call("exp", x)

    def log(self, x: Any) -> Node:
        """Natural logarithm."""
        return self._call("log", x)

    def max(self, a: Any, b: Any) -> Node:
        """The larger value."""
        return self._call("max", a, b)

    def min(self, a: Any, b: Any) -> Node:
        """The smaller value."""
        return self._call("min", a, b)

    def cast(self, cond: Any) -> Node:
        """A condition as 1 or 0 (a value passes unchanged)."""
        cond = _value(cond)
        return cond if cond.kind == "value" else Node("cast", (cond,), level=cond.level)

    def where(self, cond: Any, a: Any, b: Any) -> Node:
        """``a`` where ``cond`` holds, else ``b``."""
        cond, a, b = _value(cond), _value(a), _value(b)
        if cond.kind != "cond" or a.kind != "value" or b.kind != "value":
            raise refuse("dtype mismatch: f.where(condition, value, value)")
        return Node("where", (cond, a, b), level=_level(cond, a, b))

    def _reduce(self, op: str, e: Any) -> Node:
        e = _value(e)
        if e.kind != "value":
            raise refuse(f"dtype mismatch: f.{op} of a condition")
        if _reductions(e):
            raise refuse(f"f.{op} of an expression holding a row reduction: one level only")
        return Node(op, (e,), level="row")

    def row_sum(self, e: Any) -> Node:
        """The sum of element expression ``e`` over the row."""
        return self._reduce("row_sum", e)

    def row_mean(self, e: Any) -> Node:
        """The mean of ``e`` over the row."""
        return self._reduce("row_mean", e)

    def row_norm(self, e: Any) -> Node:
        """``sqrt(row_sum(e * e))``."""
        return self._reduce("row_norm", e)


_FUNCTIONS = _Functions()
"""f's functions for the operators and numpy functions of a value (``abs(v)``, ``np.sqrt(v)``)."""


def walk(node: Node, stop: Callable[[Node], bool] = lambda n: False) -> list[Node]:
    """The nodes under ``node`` (itself first), each once, not descending below ``stop``."""
    seen: dict[int, Node] = {}
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        if n is node or not stop(n):
            todo.extend(a for a in n.args if isinstance(a, Node))
    return list(seen.values())


def _reductions(node: Node) -> list[Node]:
    return [n for n in walk(node) if n.op in REDUCTIONS]


@dataclass(frozen=True)
class UpdateRule:
    """A traced update rule: the kernel ``optim_<name>`` and its template."""

    name: str
    states: tuple[str, ...]  # (n, d) arrays next to the weight, in argument order
    hyper: tuple[str, ...]  # float32 hyper-parameters, in argument order
    update: Update  # the user's function; its docstring is the template's docstring
    doc: str  # the kernel's one-line description
    functions: tuple[str, ...] = FUNCTIONS
    row_states: tuple[str, ...] = ()  # (n,) arrays, one value per row
    outputs: tuple[Node, ...] = field(default=(), compare=False, repr=False)
    reads: dict[str, Node] = field(default_factory=dict, compare=False, repr=False)
    definition: str = field(default="", repr=False)  # canonical text of the graph

    @property
    def arrays(self) -> tuple[str, ...]:
        """The arrays a kernel writes, in argument and output order."""
        return ("weight", *self.states, *self.row_states)

    @property
    def sparse_gradients(self) -> bool:
        """Whether a row_sparse gradient runs as it is (the rule has a ``lazy`` function: with
        ``std`` too, rows without a gradient row can be updated); otherwise it is made dense."""
        return "lazy" in self.functions

    @property
    def reductions(self) -> list[Node]:
        """The distinct row reductions, in a fixed order (their accumulators)."""
        found: dict[int, Node] = {}
        for out in self.outputs:
            for n in _reductions(out):
                found.setdefault(id(n), n)
        return sorted(found.values(), key=lambda n: _text(n, {}))

    @property
    def two_pass(self) -> bool:
        """Whether a row runs a reduction pass first, or has row states (one thread per row)."""
        return bool(self.row_states) or bool(self.reductions)

    def arguments(self, hyper: Mapping[str, float]) -> tuple[float, ...]:
        """The kernel's hyper-parameter arguments from ``hyper`` by name, in the rule's order; a
        missing or unknown name is refused, naming it."""
        missing = [name for name in self.hyper if name not in hyper]
        unknown = [name for name in hyper if name not in self.hyper]
        if missing or unknown:
            raise UpdateRuleError(
                f"rule {self.name!r} takes hyper-parameters {list(self.hyper)}; "
                + "; ".join(([f"missing {missing}"] if missing else [])
                            + ([f"unknown {unknown}"] if unknown else [])))
        return tuple(hyper[name] for name in self.hyper)

    @property
    def digest(self) -> str:
        """A short hash of the definition (what the kernel cache keys on)."""
        return hashlib.sha256(self.definition.encode()).hexdigest()[:16]


def _text(node: Node, names: dict[int, str]) -> str:
    """A canonical text of ``node`` (shared sub-expressions spelled out)."""
    if id(node) in names:
        return names[id(node)]
    if node.op in ("read", "hyper"):
        return f"{node.op}:{node.args[0]}"
    if node.op == "const":
        return repr(node.args[0])
    return f"({node.op} {' '.join(_text(a, names) for a in node.args)})"


def _return_lines(fn: Callable[..., Any]) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return "?"
    lines = sorted({i.positions.lineno for i in dis.get_instructions(code)
                    if i.opname in ("RETURN_VALUE", "RETURN_CONST") and i.positions.lineno})
    return f"{code.co_filename}:{lines[-1] if lines else code.co_firstlineno}"


def _check_names(what: str, names: Sequence[str]) -> tuple[str, ...]:
    names = tuple(names)
    for name in names:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise UpdateRuleError(f"{what} must be Python identifiers, got {name!r}")
    return names


def define_update(name: str, update: Update, *, states: Sequence[str] = (),
                  hyper: Sequence[str] = (), row_states: Sequence[str] = (),
                  functions: Sequence[str] = FUNCTIONS, doc: str | None = None) -> UpdateRule:
    """Trace ``update(x, h, g, f)`` into an ``UpdateRule``; refuse what cannot compile."""
    if not isinstance(name, str) or not name.isidentifier():
        raise UpdateRuleError(f"name must be an identifier, got {name!r}")
    if not callable(update):
        raise UpdateRuleError(f"update must be a function update(x, h, g, f), got {update!r}")
    states, hyper = _check_names("states", states), _check_names("hyper", hyper)
    row_states = _check_names("row_states", row_states)
    arrays = ("weight", *states, *row_states)
    names = (*arrays, *hyper)
    if len(set(names)) != len(names) or "grad" in names:
        raise UpdateRuleError(f"the names of states, row_states and hyper must differ from each "
                              f"other and from weight and grad, got {list(names)}")
    functions = tuple(functions)
    if not functions or any(fn not in FUNCTIONS for fn in functions) or \
            len(set(functions)) != len(functions):
        raise UpdateRuleError(f"functions must be some of {FUNCTIONS}, got {functions}")
    reads = {a: Node("read", (a,), level="row" if a in row_states else "element")
             for a in arrays}
    x = _Names("array", reads)
    h = _Names("hyper-parameter", {p: Node("hyper", (p,), level="row") for p in hyper})
    g = Node("grad")
    out = update(x, h, g, _Functions())
    where = _return_lines(update)
    outputs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(outputs) != len(arrays):
        raise refuse(f"wrong number of outputs: the rule returns {len(outputs)} values, it must "
                      f"return {len(arrays)}: the new {', '.join(arrays)}", where)
    outputs = tuple(_output(v, a, a in row_states, where) for v, a in zip(outputs, arrays))
    rule = UpdateRule(name, states, hyper, update, doc or (update.__doc__ or name).strip(),
                      functions, row_states, outputs, reads)
    _check_order(rule, where)
    names_of = {id(n): f"new:{a}" for n, a in zip(outputs, arrays) if n is not reads[a]}
    definition = "\n".join([
        f"rule {name} states={list(states)} row_states={list(row_states)} hyper={list(hyper)} "
        f"functions={list(functions)}",
        *(f"{a} = {_text(n, {k: v for k, v in names_of.items() if k != id(n)})}"
          for n, a in zip(outputs, arrays))])
    return UpdateRule(name, states, hyper, update, rule.doc, functions, row_states, outputs,
                      reads, definition)


def _output(value: Any, array: str, row: bool, where: str) -> Node:
    """One output of a rule, checked: a value (not a condition) of the right level."""
    node = _value(value) if not isinstance(value, Node) else value
    if node.kind != "value":
        raise refuse(f"dtype mismatch: the new {array} is a condition; f.cast(condition) "
                      "gives 0 or 1", node.where)
    if row:
        bad = [n for n in walk(node, lambda n: n.op in REDUCTIONS)
               if n.level == "element" and n.op not in REDUCTIONS and not n.args]
        if bad:
            raise refuse(f"non-elementwise access: row state {array!r} (one value per row) "
                          f"depends on an element value ({_text(bad[0], {})}); reduce it with "
                          "f.row_sum / f.row_mean / f.row_norm", node.where or where)
    return node  # an element output of row level is that value broadcast over the row


def store_order(rule: UpdateRule) -> list[int]:
    """The element outputs' store order (indices into ``rule.outputs``): an output that reads
    the old value of an array goes before that array's store; one that uses another output's
    new value goes after it; ties keep the rule's order. Row states are stored last."""
    n_elem = 1 + len(rule.states)
    outs = rule.outputs[:n_elem]
    # outputs with a new value (an output that copies an array's old value, such as DCASGD's
    # previous weight, is that read: others reading it read the old value too)
    ids = {id(o): i for i, o in enumerate(outs) if o.op != "read"}
    stored = {i for i, o in enumerate(outs) if o is not rule.reads[rule.arrays[i]]}
    before: dict[int, set[int]] = {i: set() for i in range(n_elem)}
    for b, out in enumerate(outs):
        stop = (lambda n, b=b: (id(n) in ids and ids[id(n)] != b) or n.op in REDUCTIONS)
        for n in walk(out, stop):
            if id(n) in ids and ids[id(n)] != b and n is not out:
                before[b].add(ids[id(n)])  # uses the new value of that output
            if n.op == "read" and n.args[0] in rule.arrays[:n_elem]:
                a = rule.arrays.index(n.args[0])
                if a != b and a in stored:
                    before[a].add(b)  # b reads the old value: it goes first
    order: list[int] = []
    while len(order) < n_elem:
        ready = [i for i in range(n_elem) if i not in order and before[i] <= set(order)]
        if not ready:
            return []
        order.append(ready[0])
    return order


def _check_order(rule: UpdateRule, where: str) -> None:
    if not store_order(rule):
        raise refuse("the new values read each other's old values in a cycle (a swap): one "
                      "pass with no temporaries cannot store them", where)


def evaluate(node: Node, values: dict[str, float]) -> float:
    """``node`` evaluated in float64 at the leaf values ``values`` (by array name, ``"grad"``,
    hyper-parameter name): the zero check of an elementwise op. Row reductions have no value."""
    import numpy as np

    with np.errstate(all="ignore"):
        return float(_evaluate(node, values, np))


def _evaluate(node: Node, values: dict[str, float], np: Any) -> Any:
    op, a = node.op, node.args
    if op in ("read", "hyper"):
        return np.float64(values[a[0]])
    if op == "grad":
        return np.float64(values["grad"])
    if op == "const":
        return np.float64(a[0])
    if op == "one":
        return np.float64(1)
    if op in REDUCTIONS:
        raise refuse(f"f.{op} in an elementwise op (one element, no row)", node.where)
    v = [_evaluate(n, values, np) for n in a]
    table = {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
        "neg": np.negative, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
        "le": np.less_equal, "eq": np.equal, "ne": np.not_equal, "sqrt": np.sqrt,
        "abs": np.abs, "exp": np.exp, "log": np.log, "max": np.maximum, "min": np.minimum,
        "sign": np.sign, "cast": np.float64,
        "clip": lambda x, b: x if np.isnan(x) else min(max(x, -b), b),
        "where": lambda c, x, y: x if c else y,
    }
    return table[op](*v)
