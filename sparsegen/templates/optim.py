"""Optimizer updates (MXNet 1.9.1's optimizer operators, templates/optim_families.py), in place.

One generic builder makes every family of templates/optim_families.py from its row (states,
hyper-parameters, functions, element update): adding an optimizer = one row in that table + its
element update + its template's name at the end of this module.
Each family has up to three functions over a weight of ``n`` rows of ``d`` elements
(AdaGrad has no ``std``: with a row_sparse gradient MXNet's AdaGrad is always lazy; the
families MXNet has no row_sparse kernel for have ``dense`` only):

- ``lazy``: only the rows in ``grad_indices``, parallel over gradient rows (they are unique,
  so no two tasks write one row). Each gradient row says which weight and state rows it
  updates (``ahead``: they sit at random ids), so a schedule can prefetch those of later rows.
- ``std``: every weight row, the gradient rows merged in by one sorted walk (a row without a
  gradient row updates with ``g = 0``, so weight decay and momentum reach it), parallel over
  spans of ``MERGE_SPAN`` weight rows that each find their first gradient row by binary search.
- ``dense``: every row, with a dense gradient.

Each element reads its gradient once and writes the weight and its states in the same pass: no
temporaries. Hyperparameters are ``float32`` kernel parameters (MXNet's operator parameters are
C floats), so one binary serves every value and every shape. Arithmetic runs in float32 (float64
for float64 weights); float16 values are widened, updated, and rounded once when stored.
A clip bound of ``+inf`` disables clipping (``NaN`` gradients then pass through, as in MXNet).
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
from .optim_families import FAMILIES, OptimFamily

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


class _Functions(NamedTuple):
    """The ``f`` of an element update (templates/optim_families.py)."""

    one: Any
    clip: Callable[[Any, Any], Any]
    sign: Callable[[Any], Any]
    sqrt: Callable[[Any], Any]
    abs: Callable[[Any], Any]
    max: Callable[[Any, Any], Any]
    cast: Callable[[Any], Any]


class _Element:
    """The ``x`` of an element update: element ``(r, j)`` of the weight and states by name."""

    def __init__(self, arrays: dict[str, Any], r: Any, j: Any, dtype: str, ct: str) -> None:
        object.__setattr__(self, "_at", (arrays, r, j, dtype, ct))

    def __getattr__(self, name: str) -> Any:
        arrays, r, j, _, ct = self._at
        return T.Cast(ct, arrays[name][r, j])

    def __setattr__(self, name: str, value: Any) -> None:
        arrays, r, j, dtype, _ = self._at
        T.buffer_store(arrays[name], T.Cast(dtype, value), [r, j])


def _column_loops(family: OptimFamily, dtype: str) -> tuple[Any, Any]:
    """``grad_cols`` and ``zero_cols``: the element update over the columns of one row.

    ``arrays`` are the weight and state buffers, ``hyper`` the hyper-parameters by name; column
    loops are those of templates/columns.py.
    """
    ct = _compute_type(dtype)
    zero = tvm.tirx.const(0, ct)
    names = ("weight", *family.states)
    functions = _Functions(T.Cast(ct, 1), _clip, partial(_sign, ct=ct), T.sqrt, T.abs,
                           T.max, partial(T.Cast, ct))

    def step(arrays: tuple[Any, ...], hyper: Any, r: Any, j: Any, g: Any) -> None:
        # a Python function, not a macro: the update's stores go to the IRBuilder directly
        # (T.buffer_store, as the parser emits ``array[r, j] = value``)
        family.update(_Element(dict(zip(names, arrays)), r, j, dtype, ct), hyper, g, functions)

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

    return grad_cols, zero_cols


class _Parameters(NamedTuple):
    """The buffers and hyper-parameters one function declared."""

    arrays: tuple[Any, ...]  # the weight and its states
    grads: tuple[Any, ...]  # the gradient (data and indices, or dense)
    hyper: SimpleNamespace  # widened to the compute type


def _parameters(family: OptimFamily, dtype: str, n: Any, d: Any, k: Any = None) -> _Parameters:
    """Declare the function's parameters in the kernel's argument order: the weight, the
    gradient (row_sparse with ``k`` rows, or dense), the states, the hyper-parameters.

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
    for s in family.states:
        name = s[0].upper() if s[0].upper() not in taken else s.upper()
        taken.add(name)
        states.append(buffer(s, name, (n, d), dtype))
    ct = _compute_type(dtype)
    hyper = {h: T.Cast(ct, T.arg(h, T.float32())) for h in family.hyper}
    return _Parameters((weight, *states), grads, SimpleNamespace(**hyper))


def _lazy(family: OptimFamily, dtype: str, grad_cols: Any) -> tvm.tirx.PrimFunc:
    """The rows in ``grad_indices``, each a gather entry whose weight, state and gradient rows
    are ``ahead``."""
    at = position()

    @T.macro
    def lazy_rows(arrays, hyper, gbuf, ibuf, kk, width):
        for i in T.serial(kk):
            with T.sblock("rows"):
                vi = T.axis.spatial(kk, i)
                T.reads(gbuf[vi, 0:width], ibuf[0:kk],
                        *[a[ibuf[vi], 0:width] for a in arrays])
                T.writes(*[a[ibuf[vi], 0:width] for a in arrays])
                cols.gather(ahead(at, kk, [(a, ibuf[at], True) for a in arrays] + [(gbuf, at, False)]),
                            vi, grad_cols, arrays, hyper, ibuf[vi], gbuf, vi, width)

    @T.prim_func(s_tir=True)
    def lazy():
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        p = T.meta_var(_parameters(family, dtype, n, d, k))
        lazy_rows(p.arrays, p.hyper, p.grads[0], p.grads[1], k, d)

    return lazy


def _std(family: OptimFamily, dtype: str, grad_cols: Any, zero_cols: Any) -> tvm.tirx.PrimFunc:
    """Every weight row, the gradient rows merged in by one sorted walk."""
    span = MERGE_SPAN

    @T.macro
    def merged_rows(arrays, hyper, gbuf, ibuf, kk, nn, width):
        for c in T.serial((nn + span - 1) // span):
            with T.sblock("rows"):
                vc = T.axis.spatial((nn + span - 1) // span, c)
                T.reads(gbuf[0:kk, 0:width], ibuf[0:kk],
                        *[a[vc * span : vc * span + span, 0:width] for a in arrays])
                T.writes(*[a[vc * span : vc * span + span, 0:width] for a in arrays])
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
        p = T.meta_var(_parameters(family, dtype, n, d, k))
        merged_rows(p.arrays, p.hyper, p.grads[0], p.grads[1], k, n, d)

    return std


def _dense(family: OptimFamily, dtype: str, grad_cols: Any) -> tvm.tirx.PrimFunc:
    """Every row, with a dense gradient."""

    @T.macro
    def dense_rows(arrays, hyper, gbuf, nn, width):
        for i in T.serial(nn):
            with T.sblock("rows"):
                vi = T.axis.spatial(nn, i)
                T.reads(gbuf[vi, 0:width], *[a[vi, 0:width] for a in arrays])
                T.writes(*[a[vi, 0:width] for a in arrays])
                grad_cols(arrays, hyper, vi, gbuf, vi, width)

    @T.prim_func(s_tir=True)
    def dense():
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        p = T.meta_var(_parameters(family, dtype, n, d))
        dense_rows(p.arrays, p.hyper, p.grads[0], n, d)

    return dense


def build(family: OptimFamily, dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """The functions of ``family`` (a row of templates/optim_families.py) for ``dtype`` weights."""
    grad_cols, zero_cols = _column_loops(family, dtype)
    functions = {
        "lazy": lambda: _lazy(family, dtype, grad_cols),
        "std": lambda: _std(family, dtype, grad_cols, zero_cols),
        "dense": lambda: _dense(family, dtype, grad_cols),
    }
    return {name: functions[name]() for name in family.functions}


def _template(name: str) -> Callable[..., dict[str, tvm.tirx.PrimFunc]]:
    """The template of family ``name``: its docstring is that of the element update."""
    family = FAMILIES[name]

    def template(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
        return build(family, dtype)

    template.__name__ = template.__qualname__ = name
    template.__doc__ = family.update.__doc__
    return template


sgd = _template("sgd")
sgd_mom = _template("sgd_mom")
adam = _template("adam")
adagrad = _template("adagrad")
ftrl = _template("ftrl")
rmsprop = _template("rmsprop")
rmspropalex = _template("rmspropalex")
signsgd = _template("signsgd")
signum = _template("signum")
nag_mom = _template("nag_mom")
adadelta = _template("adadelta")
adamax = _template("adamax")
nadam = _template("nadam")
lamb = _template("lamb")
