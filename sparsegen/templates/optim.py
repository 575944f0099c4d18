"""Optimizer updates (update rules: the built-in rules of update_rules/builtin.py and registered
user rules, written in the language of update_rules/language.py), in place.

One generic builder makes every rule's functions from its traced graph (states, row states,
hyper-parameters, functions, outputs): adding an optimizer = one rule. Each rule has up to three
functions over a weight of ``n`` rows of ``d`` elements (AdaGrad has no ``std``: with a
row_sparse gradient MXNet's AdaGrad is always lazy; the families MXNet has no row_sparse kernel
for have ``dense`` only):

- ``lazy``: only the rows in ``grad_indices``, parallel over gradient rows (they are unique,
  so no two tasks write one row). Each gradient row says which weight and state rows it
  updates (``ahead``: they sit at random ids), so a schedule can prefetch those of later rows.
- ``std``: every weight row, the gradient rows merged in by one sorted walk (a row without a
  gradient row updates with ``g = 0``, so weight decay and momentum reach it), parallel over
  spans of ``MERGE_SPAN`` weight rows that each find their first gradient row by binary search.
- ``dense``: every row, with a dense gradient.

Each element reads its gradient once and writes the weight and its states in the same pass: no
temporaries (the stores in ``store_order``; an output another output uses is read back as
stored). A rule with row reductions runs a plain loop over the row first, accumulating them (in
``formats.ACCUMULATOR``), and stores its row states after the columns. Hyperparameters are
``float32`` kernel parameters (MXNet's operator parameters are C floats), so one binary serves
every value and every shape. Arithmetic runs in float32 (float64 for float64 weights); float16
values are widened, updated, and rounded once when stored. A clip bound of ``+inf`` disables
clipping (``NaN`` gradients then pass through, as in MXNet).
"""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace
from typing import Any, Callable, NamedTuple

import tvm
from tvm.script import tirx as T
from tvm.script.ir_builder import IRBuilder

from . import element_bytes
from .columns import ahead, cols, position
from ..formats import ACCUMULATOR
from ..update_rules.language import Node, UpdateRule, store_order
from ..update_rules.table import UPDATE_RULES

MERGE_SPAN = 64
"""Weight rows per task of the ``std`` functions (each task starts with one binary search)."""


def _compute_type(dtype: str) -> str:
    return "float64" if dtype == "float64" else "float32"


def _clip(x: Any, bound: Any) -> Any:
    """MXNet's ``clip::Map``: values beyond ``±bound`` become the bound; NaN passes."""
    return T.Select(x > bound, bound, T.Select(x < -bound, -bound, x))


def _sign(x: Any, ct: str) -> Any:
    """MXNet's ``sign::Map``: 1, -1, or 0."""
    one = tvm.tirx.const(1, ct)
    return T.Select(x > 0, one, T.Select(x < 0, -one, tvm.tirx.const(0, ct)))


class _Emit:
    """A rule's graph (update_rules/language.py) as TIR at element ``(r, j)`` of one row.

    ``new`` maps an output node to the expression that reads it back: a load once its array is
    stored, or the value rounded to the dtype where it is not stored yet (row states, and the
    reduction pass, which stores nothing).
    """

    def __init__(self, rule: UpdateRule, arrays: dict[str, Any], hyper: Any, dtype: str,
                 r: Any, j: Any, g: Any, acc: Any = None, width: Any = None) -> None:
        self.rule, self.arrays, self.hyper, self.dtype = rule, arrays, hyper, dtype
        self.ct = _compute_type(dtype)
        self.r, self.j, self.g, self.acc, self.width = r, j, g, acc, width
        self.new: dict[int, Callable[[], Any]] = {}
        self.slot = {id(n): i for i, n in enumerate(rule.reductions)}

    def load(self, name: str) -> Any:
        """The element (or row value) of array ``name`` as stored now."""
        buf = self.arrays[name]
        index = [self.r] if name in self.rule.row_states else [self.r, self.j]
        return T.Cast(self.ct, tvm.tirx.BufferLoad(buf, index))

    def rounded(self, node: Node) -> Callable[[], Any]:
        """Read-back of an output that is not stored: its value rounded as a store rounds."""
        return lambda: T.Cast(self.ct, T.Cast(self.dtype, self.value(node, node)))

    def value(self, node: Node, top: Node | None = None) -> Any:
        """The TIR expression of ``node`` (an output other than ``top`` is read back)."""
        if id(node) in self.new and node is not top:
            return self.new[id(node)]()
        ct, op, a = self.ct, node.op, node.args
        if op == "read":
            return self.load(a[0])
        if op == "grad":
            return self.g
        if op == "hyper":
            return getattr(self.hyper, a[0])
        if op == "const":
            return tvm.tirx.const(a[0], ct)
        if op == "one":
            return T.Cast(ct, 1)
        if op in _REDUCED:
            acc = tvm.tirx.BufferLoad(self.acc, [self.slot[id(node)]])
            return _REDUCED[op](acc, T.Cast(ACCUMULATOR[self.dtype], self.width), ct)
        return _OPS[op](ct, *[self.value(n, top) for n in a])


_OPS: dict[str, Callable[..., Any]] = {
    "add": lambda ct, a, b: a + b, "sub": lambda ct, a, b: a - b,
    "mul": lambda ct, a, b: a * b, "div": lambda ct, a, b: a / b, "neg": lambda ct, a: -a,
    "gt": lambda ct, a, b: a > b, "ge": lambda ct, a, b: a >= b,
    "lt": lambda ct, a, b: a < b, "le": lambda ct, a, b: a <= b,
    "eq": lambda ct, a, b: tvm.tirx.EQ(a, b), "ne": lambda ct, a, b: tvm.tirx.NE(a, b),
    "clip": lambda ct, a, b: _clip(a, b), "sign": lambda ct, a: _sign(a, ct),
    "sqrt": lambda ct, a: T.sqrt(a), "abs": lambda ct, a: T.abs(a),
    "exp": lambda ct, a: T.exp(a), "log": lambda ct, a: T.log(a),
    "max": lambda ct, a, b: T.max(a, b), "min": lambda ct, a, b: T.min(a, b),
    "cast": lambda ct, a: T.Cast(ct, a), "where": lambda ct, c, a, b: T.Select(c, a, b),
}
"""The TIR of each operation of update_rules/language.py (in the compute type ``ct``)."""

_REDUCED: dict[str, Callable[[Any, Any, str], Any]] = {
    "row_sum": lambda acc, width, ct: T.Cast(ct, acc),
    "row_mean": lambda acc, width, ct: T.Cast(ct, acc / width),
    "row_norm": lambda acc, width, ct: T.Cast(ct, T.sqrt(acc)),
}
"""A finished row reduction from its accumulator (``width``: the row's, in the accumulator's
type)."""


def _store_columns(rule: UpdateRule, emit: _Emit) -> None:
    """The element outputs of ``rule`` stored at ``(r, j)``, in ``store_order``; row states are
    read back rounded (they are stored after the columns)."""
    for node in rule.outputs[1 + len(rule.states):]:
        emit.new[id(node)] = emit.rounded(node)
    for i in store_order(rule):
        name, node = rule.arrays[i], rule.outputs[i]
        if node is rule.reads[name]:
            continue  # returned unchanged: nothing to store
        T.buffer_store(emit.arrays[name], T.Cast(emit.dtype, emit.value(node, node)),
                       [emit.r, emit.j])
        emit.new[id(node)] = partial(emit.load, name)


def _accumulate(rule: UpdateRule, emit: _Emit) -> None:
    """The reduction pass at column ``j``: every reduction's term added to its accumulator
    (outputs read back rounded: nothing is stored in this pass)."""
    for node in rule.outputs:
        emit.new[id(node)] = emit.rounded(node)
    for slot, node in enumerate(rule.reductions):
        term = emit.value(node.args[0])
        if node.op == "row_norm":
            term = term * term
        total = tvm.tirx.BufferLoad(emit.acc, [slot]) + T.Cast(ACCUMULATOR[emit.dtype], term)
        T.buffer_store(emit.acc, total, [slot])


def _store_rows(rule: UpdateRule, emit: _Emit) -> None:
    """The row states of ``rule`` stored at row ``r``, after its columns."""
    for name, node in zip(rule.row_states, rule.outputs[1 + len(rule.states):]):
        if node is not rule.reads[name]:
            T.buffer_store(emit.arrays[name], T.Cast(emit.dtype, emit.value(node, node)),
                           [emit.r])


def _column_loops(rule: UpdateRule, dtype: str) -> tuple[Any, Any]:
    """``grad_cols`` and ``zero_cols``: the rule over the columns of one row (with a reduction
    pass first and the row states stored after, where it has them).

    ``arrays`` are the weight, state and row-state buffers, ``hyper`` the hyper-parameters by
    name; column loops are those of templates/columns.py. The reduction pass is a plain loop (a
    reduction, not independent columns): the CUDA schedule of such a rule runs one thread per
    row (registry: ``_ROW_ALONE``).
    """
    ct = _compute_type(dtype)
    at = ACCUMULATOR[dtype]
    zero = tvm.tirx.const(0, ct)
    slots = max(1, len(rule.reductions))

    def emit(arrays: Any, hyper: Any, r: Any, j: Any, g: Any, acc: Any, width: Any) -> _Emit:
        return _Emit(rule, dict(zip(rule.arrays, arrays)), hyper, dtype, r, j, g, acc, width)

    def step(arrays, hyper, r, j, g, acc=None, width=None) -> None:
        # Python functions, not macros: the stores go to the IRBuilder directly
        # (T.buffer_store, as the parser emits ``array[r, j] = value``)
        _store_columns(rule, emit(arrays, hyper, r, j, g, acc, width))

    def reduce_step(arrays, hyper, r, j, g, acc, width) -> None:
        _accumulate(rule, emit(arrays, hyper, r, j, g, acc, width))

    def rows_step(arrays, hyper, r, acc, width) -> None:
        _store_rows(rule, emit(arrays, hyper, r, None, None, acc, width))

    def start(acc) -> None:
        for slot in range(slots):
            T.buffer_store(acc, tvm.tirx.const(0, at), [slot])

    @T.macro
    def grad_step(arrays, hyper, row, gbuf, grow, j):
        step(arrays, hyper, row, j, T.Cast(ct, gbuf[grow, j]))

    @T.macro
    def zero_step(arrays, hyper, row, j):
        step(arrays, hyper, row, j, zero)

    @T.macro
    def grad_cols(arrays, hyper, row, gbuf, grow, width):
        cols.each(width, grad_step, arrays, hyper, row, gbuf, grow)

    @T.macro
    def zero_cols(arrays, hyper, row, width):
        cols.each(width, zero_step, arrays, hyper, row)

    @T.macro
    def grad_step2(arrays, hyper, row, gbuf, grow, acc, width, j):
        step(arrays, hyper, row, j, T.Cast(ct, gbuf[grow, j]), acc, width)

    @T.macro
    def zero_step2(arrays, hyper, row, acc, width, j):
        step(arrays, hyper, row, j, zero, acc, width)

    @T.macro
    def grad_rows2(arrays, hyper, row, gbuf, grow, width):
        acc = T.alloc_buffer((slots,), at, scope="local")
        start(acc)
        for j in T.serial(width):
            reduce_step(arrays, hyper, row, j, T.Cast(ct, gbuf[grow, j]), acc, width)
        cols.each(width, grad_step2, arrays, hyper, row, gbuf, grow, acc, width)
        rows_step(arrays, hyper, row, acc, width)

    @T.macro
    def zero_rows2(arrays, hyper, row, width):
        acc = T.alloc_buffer((slots,), at, scope="local")
        start(acc)
        for j in T.serial(width):
            reduce_step(arrays, hyper, row, j, zero, acc, width)
        cols.each(width, zero_step2, arrays, hyper, row, acc, width)
        rows_step(arrays, hyper, row, acc, width)

    if rule.two_pass:
        return grad_rows2, zero_rows2
    return grad_cols, zero_cols


def _region(array: Any, row: Any, width: Any) -> Any:
    """Row ``row`` of a weight or state buffer, or the one value of a row state."""
    return array[row, 0:width] if len(array.shape) == 2 else array[row : row + 1]


def _span(array: Any, first: Any, width: Any) -> Any:
    """The ``MERGE_SPAN`` rows from ``first`` of a buffer (weight, state or row state)."""
    if len(array.shape) == 2:
        return array[first : first + MERGE_SPAN, 0:width]
    return array[first : first + MERGE_SPAN]


def _elements(arrays: tuple[Any, ...]) -> list[Any]:
    """The (n, d) buffers among ``arrays`` (not the row states)."""
    return [a for a in arrays if len(a.shape) == 2]


class _Parameters(NamedTuple):
    """The buffers and hyper-parameters one function declared."""

    arrays: tuple[Any, ...]  # the weight and its states
    grads: tuple[Any, ...]  # the gradient (data and indices, or dense)
    hyper: SimpleNamespace  # widened to the compute type


def _parameters(rule: UpdateRule, dtype: str, n: Any, d: Any, k: Any = None) -> _Parameters:
    """Declare the function's parameters in the kernel's argument order: the weight, the
    gradient (row_sparse with ``k`` rows, or dense), the states, the row states, the
    hyper-parameters.

    Called in the body of a ``T.prim_func`` without Python parameters: ``T.arg`` adds each, as
    the parser does for a parameter it reads from the ``def``.
    """

    def buffer(name: str, buffer_name: str, shape: tuple[Any, ...], of: str) -> Any:
        declared = T.match_buffer(T.arg(name, T.handle()), shape, of, align=element_bytes(of))
        IRBuilder.name(buffer_name, declared)
        return declared

    weight = buffer("weight", "W", (n, d), dtype)
    if k is None:
        grads = (buffer("grad", "G", (n, d), dtype),)
    else:
        grads = (buffer("grad_data", "G", (k, d), dtype),
                 buffer("grad_indices", "I", (k,), "int64"))
    # the state buffers are named by the initial of their parameter, in capitals (the whole
    # name where the initial is taken: rmspropalex's g_acc next to the gradient G)
    taken = {"W", "G", "I"}
    states = []
    for s in (*rule.states, *rule.row_states):
        name = s[0].upper() if s[0].upper() not in taken else s.upper()
        taken.add(name)
        states.append(buffer(s, name, (n, d) if s in rule.states else (n,), dtype))
    ct = _compute_type(dtype)
    hyper = {h: T.Cast(ct, T.arg(h, T.float32())) for h in rule.hyper}
    return _Parameters((weight, *states), grads, SimpleNamespace(**hyper))


def _lazy(rule: UpdateRule, dtype: str, grad_cols: Any) -> tvm.tirx.PrimFunc:
    """The rows in ``grad_indices``, each a gather entry whose weight, state and gradient rows
    are ``ahead``."""
    at = position()

    @T.macro
    def lazy_rows(arrays, hyper, gbuf, ibuf, kk, width):
        for i in T.serial(kk):
            with T.sblock("rows"):
                vi = T.axis.spatial(kk, i)
                T.reads(gbuf[vi, 0:width], ibuf[0:kk],
                        *[_region(a, ibuf[vi], width) for a in arrays])
                T.writes(*[_region(a, ibuf[vi], width) for a in arrays])
                cols.gather(ahead(at, kk, [(a, ibuf[at], True) for a in _elements(arrays)]
                                  + [(gbuf, at, False)]),
                            vi, grad_cols, arrays, hyper, ibuf[vi], gbuf, vi, width)

    @T.prim_func(s_tir=True)
    def lazy():
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        p = T.meta_var(_parameters(rule, dtype, n, d, k))
        lazy_rows(p.arrays, p.hyper, p.grads[0], p.grads[1], k, d)

    return lazy


def _std(rule: UpdateRule, dtype: str, grad_cols: Any, zero_cols: Any) -> tvm.tirx.PrimFunc:
    """Every weight row, the gradient rows merged in by one sorted walk."""
    span = MERGE_SPAN

    @T.macro
    def merged_rows(arrays, hyper, gbuf, ibuf, kk, nn, width):
        for c in T.serial((nn + span - 1) // span):
            with T.sblock("rows"):
                vc = T.axis.spatial((nn + span - 1) // span, c)
                T.reads(gbuf[0:kk, 0:width], ibuf[0:kk], *[_span(a, vc * span, width) for a in arrays])
                T.writes(*[_span(a, vc * span, width) for a in arrays])
                # at[0]: the first gradient row at or after this span's first row, then the
                # cursor of the walk; at[1]: binary-search bound, then "this row has a gradient"
                at = T.alloc_buffer((2,), "int64", scope="local")
                at[0] = T.int64(0)
                at[1] = kk
                while at[0] < at[1]:
                    if ibuf[(at[0] + at[1]) // 2] < vc * span:
                        at[0] = (at[0] + at[1]) // 2 + 1
                    else:
                        at[1] = (at[0] + at[1]) // 2
                for q in T.serial(T.min(T.int64(span), nn - vc * span)):
                    at[1] = T.int64(0)
                    if at[0] < kk:
                        if ibuf[at[0]] == vc * span + q:
                            at[1] = T.int64(1)
                    if at[1] == T.int64(1):
                        grad_cols(arrays, hyper, vc * span + q, gbuf, at[0], width)
                        at[0] = at[0] + T.int64(1)
                    else:
                        zero_cols(arrays, hyper, vc * span + q, width)

    @T.prim_func(s_tir=True)
    def std():
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        p = T.meta_var(_parameters(rule, dtype, n, d, k))
        merged_rows(p.arrays, p.hyper, p.grads[0], p.grads[1], k, n, d)

    return std


def _dense(rule: UpdateRule, dtype: str, grad_cols: Any) -> tvm.tirx.PrimFunc:
    """Every row, with a dense gradient."""

    @T.macro
    def dense_rows(arrays, hyper, gbuf, nn, width):
        for i in T.serial(nn):
            with T.sblock("rows"):
                vi = T.axis.spatial(nn, i)
                T.reads(gbuf[vi, 0:width], *[_region(a, vi, width) for a in arrays])
                T.writes(*[_region(a, vi, width) for a in arrays])
                grad_cols(arrays, hyper, vi, gbuf, vi, width)

    @T.prim_func(s_tir=True)
    def dense():
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        p = T.meta_var(_parameters(rule, dtype, n, d))
        dense_rows(p.arrays, p.hyper, p.grads[0], n, d)

    return dense


def build(rule: UpdateRule, dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """The functions of ``rule`` for ``dtype`` weights."""
    grad_cols, zero_cols = _column_loops(rule, dtype)
    functions = {
        "lazy": lambda: _lazy(rule, dtype, grad_cols),
        "std": lambda: _std(rule, dtype, grad_cols, zero_cols),
        "dense": lambda: _dense(rule, dtype, grad_cols),
    }
    return {name: functions[name]() for name in rule.functions}


def __getattr__(name: str) -> Callable[[str], dict[str, tvm.tirx.PrimFunc]]:
    """The template of update rule ``name``'s kernel (``registry.add_update_rule`` names it
    ``templates.optim:<name>``): a function of the dtype, building the rule registered under
    that name (``update_rules/table.py``) when it runs; its docstring is the rule's."""
    rule = UPDATE_RULES.get(name)
    if rule is None:
        raise AttributeError(f"module {__name__!r} has no template {name!r}")

    def template(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
        return build(UPDATE_RULES[name], dtype)

    template.__name__ = template.__qualname__ = name
    template.__doc__ = rule.update.__doc__ or rule.doc
    return template
