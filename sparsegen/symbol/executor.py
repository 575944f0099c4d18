"""``Executor``: a bound symbol run on the NDArray front end (the same generated kernels),
with gradients from ``mx.autograd``; ``Symbol.bind``, ``simple_bind`` and ``eval``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import autograd
from .. import ndarray as nd
from ..autograd import engine
from ..context import Context, current_context
from ..errors import InvalidType, InvalidValue
from ..tape import GRAD_REQS
from .graph import Node, entry_name, output_names, params, topological
from .infer import complete, dtypes, key, shape_left_to_consumers, shapes, stypes
from . import listing, optimize
from .ops import monitor_input_names, node_runner
from .optimize import eliminate_common_expr
from .symbol import Symbol


def _per_argument(values: Any, names: list[str], what: str, required: bool) -> list[Any]:
    """``values`` (a list in ``names`` order or a dict by name) as a list, None where absent
    (``names``: the arguments, or the auxiliary states for ``aux_states``)."""
    noun = "auxiliary states" if what == "aux_states" else "arguments"
    if values is None:
        values = {}
    if isinstance(values, dict):
        unknown = set(values) - set(names)
        if unknown and what == "args":  # MXNet ignores them (its tests pass scalars so)
            warnings.warn(f"bind: args names {sorted(unknown)}, not arguments of the symbol "
                          f"({names}): ignored", stacklevel=4)
        elif unknown:
            raise InvalidValue(f"bind: {what} names {sorted(unknown)}, not {noun} of the "
                               f"symbol ({names})")
        listed = [values.get(name) for name in names]
    else:
        listed = list(values)
        if len(listed) != len(names):
            raise InvalidValue(f"bind: {what} has {len(listed)} arrays for {len(names)} "
                               f"{noun} ({names})")
    if required:
        missing = [n for n, v in zip(names, listed) if v is None]
        if missing:
            raise InvalidValue(f"bind: {what} lacks {missing}")
    return listed


def grad_reqs(grad_req: Any, names: list[str]) -> list[str | None]:
    """MXNet's ``grad_req`` (one string, a list in ``names`` order, or a dict by name) as one
    entry per argument (None where a dict leaves it out)."""
    if isinstance(grad_req, str):
        return [grad_req] * len(names)
    return _per_argument(grad_req, names, "grad_req", False)


class Executor:
    """A symbol bound to arrays: ``forward`` runs it, ``backward`` writes the gradients into
    ``grad_arrays``, as ``mxnet.executor.Executor``."""

    def __init__(self, symbol: Symbol, ctx: Context | None, args: Any, args_grad: Any = None,
                 grad_req: Any = "write", aux_states: Any = None,
                 group2ctx: dict[str, Context] | None = None) -> None:
        self._symbol = symbol
        self._ctx = ctx or current_context()
        self._group2ctx = _checked_groups(group2ctx)
        names = symbol.list_arguments()
        self._arg_names = names  # the graph does not change: its names and order are kept
        self._aux_names = symbol.list_auxiliary_states()
        # the graph run: common expressions computed once (MXNet's default)
        self._graph = eliminate_common_expr(symbol) if optimize.enabled() else symbol
        self._heads = [key(entry) for entry in self._graph._outputs]
        nodes = topological(self._graph._outputs)
        self._placed = {id(n): placement(n, self._ctx, self._group2ctx)  # model parallelism
                        for n in nodes if self._group2ctx}
        self.arg_arrays = _per_argument(args, names, "args", True)
        self.grad_arrays = _per_argument(args_grad, names, "args_grad", False)
        reqs = grad_reqs(grad_req, names)
        self._grad_req = [("null" if g is None else r or "null")
                          for r, g in zip(reqs, self.grad_arrays)]
        for name, req in zip(names, self._grad_req):
            if req not in GRAD_REQS:
                raise InvalidValue(f"bind: grad_req of {name} must be one of {GRAD_REQS}, got "
                                   f"{req!r}")
        self.aux_arrays = _per_argument(aux_states, self._aux_names, "aux_states", True)
        self._plan = self._planned(nodes)
        self.outputs = self._allocated_outputs()
        self._recorded = False  # whether the last forward recorded a graph for backward
        self._monitor: tuple[Any, bool, bool] | None = None  # set_monitor_callback's

    def _planned(self, nodes: list[Any]) -> list[tuple[int, Any, Any, Any]]:
        """Per node in order: where its output goes, and a variable's name or an op's runner
        with where its inputs come from (looked up once: forward runs per batch); an op whose
        shape is left to its consumers (``shape_left_to_consumers``) makes the inferred one."""
        left = [n for n in nodes if not n.is_variable and shape_left_to_consumers(n)]
        found = shapes(self._graph._outputs, {name: array.shape for name, array in
                                              {**self.arg_dict, **self.aux_dict}.items()}) \
            if left else {}
        for node in left:
            if not complete(found.get((id(node), 0))):
                raise InvalidValue(f"bind: {node.op} {node.name} leaves its shape to its "
                                   f"consumers ({node.attrs.get('shape', '()')}), and they do "
                                   "not determine it")
        return [(id(n), n.name, None, None) if n.is_variable else
                (id(n), None, node_runner(n, found.get((id(n), 0))),
                 [key(entry) for entry in n.inputs]) for n in nodes]

    def _allocated_outputs(self) -> list[Any]:
        """Zero outputs of the inferred shapes and dtypes, as MXNet's executor has before the
        first forward (none when a shape stays unknown)."""
        inputs = {**self.arg_dict, **self.aux_dict}
        found_shapes = shapes(self._symbol._outputs, {n: a.shape for n, a in inputs.items()})
        found_dtypes = dtypes(self._symbol._outputs, {n: a.dtype for n, a in inputs.items()})
        heads = [key(entry) for entry in self._symbol._outputs]
        if any(found_shapes.get(head) is None for head in heads):
            return []
        return [nd.zeros(found_shapes[head], self._ctx, found_dtypes.get(head) or "float32")
                for head in heads]

    def debug_str(self) -> str:
        """The graph the executor runs as text, and the memory its arrays take, in the layout
        of MXNet's (``symbol/listing.py`` says what is counted)."""
        inputs = {**self.arg_dict, **self.aux_dict}
        return listing.debug_str(self._graph._outputs,
                                 {n: a.shape for n, a in inputs.items()},
                                 {n: a.dtype for n, a in inputs.items()},
                                 dict(zip(self._arg_names, self._grad_req)))

    def get_optimized_symbol(self) -> Symbol:
        """The graph the executor runs (after common-expression elimination, unless
        ``MXNET_ELIMINATE_COMMON_EXPR=0``)."""
        return self._graph

    @property
    def arg_dict(self) -> dict[str, Any]:
        """The argument arrays by name."""
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self) -> dict[str, Any]:
        """The gradient arrays by argument name (those with a gradient)."""
        return {name: grad for name, grad in zip(self._arg_names, self.grad_arrays)
                if grad is not None}

    @property
    def aux_dict(self) -> dict[str, Any]:
        """The auxiliary state arrays by name (BatchNorm's moving_mean and moving_var)."""
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self) -> dict[str, Any]:
        """The outputs by name."""
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def forward(self, is_train: bool = False, **kwargs: Any) -> list[Any]:
        """Copy ``kwargs`` into the arguments, run the graph (recorded for ``backward`` when
        ``is_train`` and some argument takes a gradient) and return ``outputs``. A ``backward``
        after ``forward(is_train=False)`` runs the graph again, recorded in inference mode."""
        arrays = self.arg_dict
        for name, value in kwargs.items():
            if name not in arrays:
                raise InvalidValue(f"forward: {name} is not an argument ({list(arrays)})")
            value.copyto(arrays[name]) if isinstance(value, nd.NDArray) else \
                arrays[name].__setitem__(slice(None), value)
        if is_train and any(r != "null" for r in self._grad_req):
            self._record(train_mode=True)
        else:
            self._recorded = False
            with autograd.pause(train_mode=bool(is_train)):
                self.outputs = self.compute()
        return self.outputs

    def _record(self, train_mode: bool) -> None:
        """Run the graph recorded for ``backward``, the arguments with a gradient marked."""
        variables = [(a, g, r) for a, g, r in zip(self.arg_arrays, self.grad_arrays,
                                                  self._grad_req) if r != "null"]
        autograd.mark_variables(*map(list, zip(*variables)))
        with autograd.record(train_mode=train_mode):
            self.outputs = self.compute()
        self._recorded = True

    def compute(self, arrays: dict[str, Any] | None = None) -> list[Any]:
        """The outputs on the bound arrays (or on ``arrays``, every argument and auxiliary
        state by name: a graph run on other arrays of the same shapes), in the current
        autograd scope (recorded when recording and an argument is a variable); ``forward``
        sets the scope."""
        values: dict[tuple[int, int], Any] = {}
        if arrays is None:
            arrays = {**self.arg_dict, **self.aux_dict}
        ctx = self._ctx
        for where, name, runner, inputs in self._plan:
            if runner is None:
                values[where, 0] = arrays[name]
                continue
            given = [values[k] for k in inputs]
            if self._placed:  # an op of a ctx_group runs on its group's context
                ctx = self._placed[where]
                given = [array.as_in_context(ctx) for array in given]
            if self._monitor is not None:
                self._given[where] = given  # backward reports their gradients
                if self._monitor[1]:
                    self._report(self._watched[where][0], given, where)
            result = runner(given, ctx)
            if isinstance(result, (list, tuple)):
                for index, array in enumerate(result):
                    values[where, index] = array
            else:
                values[where, 0] = result
            if self._monitor is not None:
                self._report(self._watched[where][1],
                             list(result) if isinstance(result, (list, tuple)) else [result],
                             where)
        return [values[head] for head in self._heads]

    def set_monitor_callback(self, callback: Any, monitor_all: bool = False) -> None:
        """Call ``callback(name, array)`` in ``forward`` with every op's outputs after it runs
        (named as ``list_outputs`` names them, ``fullyconnected0_output``) and, with
        ``monitor_all``, its inputs before (``fullyconnected0_data``, ``..._weight``): what
        ``mx.monitor.Monitor`` installs."""
        self._set_monitor(callback, monitor_all, False)

    def _set_monitor(self, callback: Any, monitor_all: bool, with_op: bool) -> None:
        """``set_monitor_callback``; ``with_op``: call ``callback(name, op, array)`` (Gluon's
        op hooks, ``HybridBlock.register_op_hook``)."""
        if not callable(callback):
            raise InvalidType(f"set_monitor_callback: callback must be callable, got "
                              f"{type(callback).__name__}")
        nodes = [n for n in topological(self._graph._outputs) if not n.is_variable]
        self._ops = {id(n): n.op for n in nodes}
        self._watched = {id(n): ([f"{n.name}_{name}" for name in monitor_input_names(n)],
                                 [entry_name((n, i)) for i in range(len(output_names(n)))],
                                 [f"{n.name}_backward_output"] if len(n.inputs) == 1 else
                                 [f"{n.name}_backward_output{i}" for i in range(len(n.inputs))])
                         for n in nodes}
        self._given: dict[int, list[Any]] = {}  # an op's inputs in the last forward, by node
        self._monitor = (callback, bool(monitor_all), with_op)

    def _report(self, names: list[str], arrays: list[Any], where: int) -> None:
        assert self._monitor is not None
        callback, _, with_op = self._monitor
        for name, array in zip(names, arrays):
            if with_op:  # MXNet's C strings, as its op hooks get them
                callback(name.encode(), self._ops[where].encode(), array)
            else:
                callback(name, array)

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Gradients of the outputs (weighted by ``out_grads``: one array per output, default
        ones) into ``grad_arrays`` (written or added, by ``grad_req``); nothing to do when every
        ``grad_req`` is ``'null'``. Outputs of an op that the symbol does not hold get zero
        head gradients, as MXNet's."""
        if not any(req != "null" for req in self._grad_req):
            return
        if not self._recorded:  # after forward(is_train=False), as MXNet allows: run it again
            self._record(train_mode=False)  # recorded, in inference mode, as that forward ran
        if isinstance(out_grads, nd.NDArray):
            out_grads = [out_grads]
        reached: dict[tuple[int, int], Any] = {}
        if self._monitor is not None:
            reached = {(id(a._entry[0]), a._entry[1]): None for given in self._given.values()
                       for a in given if a._entry is not None}
        with engine.watch(reached):
            autograd.backward(self.outputs, head_grads=out_grads, retain_graph=True,
                              train_mode=is_train)  # MXNet's executor may run backward again
        if self._monitor is not None:
            self._report_backward(reached)

    def _report_backward(self, reached: dict[tuple[int, int], Any]) -> None:
        """The monitor's backward report, MXNet's: per op from the last to the first, the
        gradient of each of its inputs (``fc_backward_output0``, ...); zeros for an input that
        takes no gradient (a label, or data without ``inputs_need_grad``)."""
        for where, _, runner, _ in reversed(self._plan):
            if runner is None or where not in self._given:  # (installed after that forward)
                continue
            grads = []
            for array in self._given[where]:
                grad = (reached.get((id(array._entry[0]), array._entry[1]))
                        if array._entry is not None else array.grad)
                grads.append(grad if grad is not None else nd.zeros_like(array))
            self._report(self._watched[where][2], grads, where)

    def copy_params_from(self, arg_params: dict[str, Any], aux_params: dict[str, Any] | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy ``arg_params`` into the arguments and ``aux_params`` into the auxiliary states
        of the same names."""
        for params, arrays, what in ((arg_params, self.arg_dict, "an argument"),
                                     (aux_params or {}, self.aux_dict, "an auxiliary state")):
            for name, value in params.items():
                if name in arrays:
                    value.copyto(arrays[name])
                elif not allow_extra_params:
                    raise InvalidValue(f"copy_params_from: {name} is not {what} of the symbol "
                                       "(allow_extra_params=True skips it)")

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False,
                **kwargs: Any) -> "Executor":
        """A new executor for the argument shapes ``kwargs``; arguments and auxiliary states
        whose shape does not change share their arrays with this one."""
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        if arg_shapes is None:
            raise InvalidValue(f"reshape: shapes {kwargs} do not determine every argument")
        args, grads = [], []
        for shape, array, grad in zip(arg_shapes, self.arg_arrays, self.grad_arrays):
            same = array.shape == shape
            args.append(array if same else
                        nd.zeros(shape, array.context, array.dtype, array.stype))
            grads.append(grad if same or grad is None else
                         nd.zeros(shape, grad.context, grad.dtype, grad.stype))
        aux = [array if array.shape == shape else
               nd.zeros(shape, array.context, array.dtype, array.stype)
               for shape, array in zip(aux_shapes, self.aux_arrays)]
        return Executor(self._symbol, self._ctx, args, grads, self._grad_req, aux,
                        self._group2ctx)


class GraphCall:
    """A symbol run on arrays given per call (``mx.nd.CachedOp``, ``gluon.SymbolBlock``): its
    executor is bound once, at the first call on a context, and runs each call's arrays."""

    def __init__(self, symbol: Symbol) -> None:
        self.symbol = symbol
        self._executor: Executor | None = None
        self._hook: tuple[Any, bool] | None = None

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Call ``callback(node_name, op_name, array)`` (names as bytes) with each op's outputs
        in every call, and with ``monitor_all`` its inputs too: Gluon's op hooks."""
        self._hook = (callback, bool(monitor_all))
        if self._executor is not None:
            self._executor._set_monitor(callback, bool(monitor_all), True)

    def __call__(self, arrays: dict[str, Any], ctx: Context) -> list[Any]:
        """The outputs on ``arrays`` (every argument and auxiliary state by name), recorded
        when the autograd scope records."""
        if self._executor is None or self._executor._ctx != ctx:
            self._executor = Executor(
                self.symbol, ctx, {n: arrays[n] for n in self.symbol.list_arguments()},
                grad_req="null",
                aux_states={n: arrays[n] for n in self.symbol.list_auxiliary_states()})
            if self._hook is not None:
                self._executor._set_monitor(*self._hook, True)
        return self._executor.compute(arrays)


def _checked_groups(group2ctx: Any) -> dict[str, Context]:
    """``group2ctx`` (``{ctx_group: Context}``, or None) checked."""
    if group2ctx is None:
        return {}
    if not isinstance(group2ctx, dict) or not all(
            isinstance(k, str) and isinstance(v, Context) for k, v in group2ctx.items()):
        raise InvalidType(f"bind: group2ctx must map ctx_group names to Contexts, got "
                          f"{group2ctx!r}")
    return dict(group2ctx)


def placement(node: Node, ctx: Context, group2ctx: dict[str, Context]) -> Context:
    """The context of ``node``: its ``ctx_group``'s in ``group2ctx``, else ``ctx``."""
    group = node.attrs.get("ctx_group", node.attrs.get("__ctx_group__"))
    return group2ctx.get(group, ctx) if group is not None else ctx


def _grad_stype(symbol: Symbol, found_stypes: dict[tuple[int, int], str]) -> dict[str, str]:
    """MXNet's gradient storage type of each argument: row_sparse when every use of it is an
    ``Embedding(sparse_grad=True)`` weight, the ``w`` of ``dot(csr, w)`` or a row_sparse
    ``_square_sum`` input, else default."""
    uses: dict[str, list[bool]] = {}
    for node in topological(symbol._outputs):
        for position, (child, _) in enumerate(node.inputs):
            if not child.is_variable:
                continue
            p = params(node)
            sparse = (position == 1 and (
                (node.op == "Embedding" and bool(p.get("sparse_grad")))
                or node.op == "_contrib_SparseEmbedding"
                or (node.op == "dot" and found_stypes[key(node.inputs[0])] == "csr"
                    and not p.get("transpose_a") and not p.get("transpose_b")))) or (
                node.op == "_square_sum" and found_stypes[id(child), 0] == "row_sparse")
            uses.setdefault(child.name, []).append(sparse)
    return {name: "row_sparse" if all(flags) else "default" for name, flags in uses.items()}


def bind(self: Symbol, ctx: Context | None, args: Any, args_grad: Any = None,
         grad_req: Any = "write", aux_states: Any = None, group2ctx: Any = None,
         shared_exec: Executor | None = None) -> Executor:
    """An executor of the symbol on the arrays ``args`` (gradients into ``args_grad``) and
    the auxiliary states ``aux_states`` (a list in ``list_auxiliary_states`` order or a dict;
    needed when the symbol has some)."""
    return Executor(self, ctx, args, args_grad, grad_req, aux_states, group2ctx)


def simple_bind(self: Symbol, ctx: Context | None, grad_req: Any = "write",
                type_dict: dict[str, Any] | None = None,
                stype_dict: dict[str, str] | None = None, group2ctx: Any = None,
                shared_arg_names: list[str] | None = None, shared_exec: Executor | None = None,
                shared_buffer: Any = None, **kwargs: Any) -> Executor:
    """An executor whose argument, gradient and auxiliary-state arrays (zeros, as MXNet's)
    are allocated from the shapes ``kwargs``, ``type_dict`` and ``stype_dict`` by inference;
    an array of ``shared_exec`` of the same name, shape, dtype and storage is shared."""
    ctx = ctx or current_context()
    groups = _checked_groups(group2ctx)
    names = self.list_arguments()
    found_shapes = shapes(self._outputs, kwargs)
    found_dtypes = dtypes(self._outputs, type_dict or {})
    found_stypes = stypes(self._outputs, stype_dict or {})
    variables = {n.name: n for n in topological(self._outputs) if n.is_variable}
    missing = [name for name in self.list_inputs()
               if found_shapes.get((id(variables[name]), 0)) is None]
    if missing:
        raise InvalidValue(f"simple_bind: the shapes given ({kwargs}) do not determine the "
                           f"shapes of {missing}")
    grad_stypes = _grad_stype(self, found_stypes)
    reqs = dict(zip(names, grad_reqs(grad_req, names)))
    shared = {} if shared_exec is None else shared_exec.arg_dict
    shared_grads = {} if shared_exec is None else shared_exec.grad_dict
    args, grads = [], []
    for name in names:
        node = variables[name]
        shape, dtype = found_shapes[id(node), 0], found_dtypes.get((id(node), 0)) or "float32"
        stype = found_stypes[id(node), 0]
        old = shared.get(name)
        if old is not None and (old.shape, np.dtype(old.dtype), old.stype) == (
                shape, np.dtype(dtype), stype):
            args.append(old)
            grads.append(shared_grads.get(name))
            continue
        where = placement(node, ctx, groups)
        args.append(nd.zeros(shape, where, dtype, stype))
        grads.append(None if reqs[name] in (None, "null") else
                     nd.zeros(shape, where, dtype, grad_stypes.get(name, "default")))
    shared_aux = {} if shared_exec is None else shared_exec.aux_dict
    aux = []
    for name in self.list_auxiliary_states():
        node = variables[name]
        shape, dtype = found_shapes[id(node), 0], found_dtypes.get((id(node), 0)) or "float32"
        old = shared_aux.get(name)
        aux.append(old if old is not None and (old.shape, np.dtype(old.dtype)) == (
            shape, np.dtype(dtype)) else nd.zeros(shape, placement(node, ctx, groups), dtype))
    return Executor(self, ctx, args, grads, reqs, aux, groups)


def eval(self: Symbol, ctx: Context | None = None, **kwargs: Any) -> list[Any]:  # noqa: A001
    """The outputs of the symbol on the arrays ``kwargs`` (by argument name)."""
    return bind(self, ctx, kwargs, grad_req="null").forward()


def graph_call(self: Symbol) -> GraphCall:
    """The symbol as a function of arrays given per call (``mx.nd.CachedOp``'s)."""
    return GraphCall(self)


Symbol.bind = bind  # type: ignore[attr-defined]
Symbol.graph_call = graph_call  # type: ignore[attr-defined]
Symbol.simple_bind = simple_bind  # type: ignore[attr-defined]
Symbol.eval = eval  # type: ignore[attr-defined]
