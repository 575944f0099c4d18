"""``gluon.Block``, ``HybridBlock`` and ``SymbolBlock``: layers that own parameters and child
blocks, named as MXNet 1.9.1 names them (``dense0_``, ``sequential0_dense0_weight``).

``hybridize()`` is accepted and changes nothing: a ``HybridBlock`` runs
``hybrid_forward(mx.nd, x, **params)`` imperatively, op by op on the generated kernels, unless
an op hook is registered (``register_op_hook``: it then runs as its graph, ``op_hook.py``);
called on symbols it builds its graph (``export``), and ``SymbolBlock`` runs a graph as a block
(see docs/gluon.md).
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict
from typing import Any

from .. import name as _name
from .. import ndarray, tape
from ..errors import InvalidArgument, InvalidType, InvalidValue
from ..ndarray.ndarray import _STORAGE_TYPE_STR_TO_ID
from . import cached_graph, op_hook
from .parameter import DeferredInitializationError, Parameter, ParameterDict, check_names
from .utils import HookHandle


class _BlockScope:
    """The naming scope of a block's ``name_scope()``: children created inside are named
    ``<block prefix><hint><count>_``."""

    _current = threading.local()

    def __init__(self, block: Block) -> None:
        self._block = block
        self._counter: dict[str, int] = {}
        self._old_scope: _BlockScope | None = None
        self._name_scope: _name.Prefix | None = None

    @staticmethod
    def create(prefix: str | None, params: ParameterDict | None,
               hint: str) -> tuple[str, ParameterDict]:
        """The prefix and parameter dict of a new block (MXNet's rule)."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.NameManager.current().get(None, hint) + "_"
            shared = ParameterDict(prefix) if params is None else ParameterDict(params.prefix,
                                                                                params)
            return prefix, shared
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self) -> _BlockScope:
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _indent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    return "\n".join([lines[0]] + [" " * spaces + line for line in lines[1:]])


class Block:
    """The base class of layers and models, as ``mxnet.gluon.Block``: parameters and child
    blocks assigned as attributes are registered; ``forward`` computes the output."""

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None) -> None:
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children: OrderedDict[str, Block] = OrderedDict()
        self._reg_params: dict[str, Parameter] = {}
        self._active = False
        self._forward_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._forward_hooks: OrderedDict[int, Any] = OrderedDict()
        self._op_hook: tuple[Any, bool] | None = None  # register_op_hook's (callback, all)
        self._hooked_call: Any = None  # (graph, its GraphCall with the hook): op_hook.py
        self._cached_graph: Any = None  # (inputs, graph) once hybridized: cached_graph.py
        self._hybrid_flags: dict[str, Any] = {}  # hybridize's keywords (inline_limit, ...)

    def __repr__(self) -> str:
        body = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                         for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{type(self).__name__}(\n{body}\n)"

    def __setattr__(self, name: str, value: Any) -> None:
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise InvalidType(f"Changing attribute type for {name} from {type(existing)} to "
                              f"{type(value)} is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise InvalidValue(f"Overriding Parameter attribute {name} is not allowed. If "
                                   "you want to share parameters between blocks, please set "
                                   "'params' at Block construction instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _alias(self) -> str:
        return type(self).__name__.lower()

    @property
    def prefix(self) -> str:
        """The prefix of this block's names (``dense0_``)."""
        return self._prefix

    @property
    def name(self) -> str:
        """The prefix without its final ``_``."""
        return self._name

    def name_scope(self) -> _BlockScope:
        """A ``with`` scope that names the children and parameters created inside after this
        block."""
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own parameters (not its children's)."""
        return self._params

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """The parameters of this block and all its children; ``select`` (a regular
        expression) keeps the names it matches."""
        self._warn_unregistered()
        found = ParameterDict(self._params.prefix)
        found.update(self._params.select(select or None))
        for child in self._children.values():
            found.update(child.collect_params(select=select))
        return found

    def _warn_unregistered(self) -> None:
        """Warn, as MXNet does, of an attribute that is a list, tuple or dict holding blocks
        that are not children: their parameters are not collected."""
        children = {id(child) for child in self._children.values()}

        def holds_unregistered(value: Any) -> bool:
            if isinstance(value, (list, tuple)):
                return any(holds_unregistered(v) for v in value)
            if isinstance(value, dict):
                return any(holds_unregistered(v) for v in value.values())
            return isinstance(value, Block) and id(value) not in children

        for key, value in vars(self).items():
            if key != "_children" and not key.startswith("__") and holds_unregistered(value):
                warnings.warn(f'"{key}" is an unregistered container with Blocks: the blocks in '
                              "a list, tuple or dict are not registered, nor their parameters "
                              "collected; register them with register_child() or use "
                              "nn.Sequential / nn.HybridSequential", stacklevel=3)

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        """The attribute-registered parameters by structural name (``0.weight``, ``a.bias``)."""
        if prefix:
            prefix += "."
        found = {prefix + key: value for key, value in self._reg_params.items()}
        for key, child in self._children.items():
            found.update(child._collect_params_with_prefix(prefix + key))
        return found

    def register_child(self, block: Block, name: str | None = None) -> None:
        """Register ``block`` as a child (named ``name``, by default its position)."""
        self._children[str(len(self._children)) if name is None else name] = block

    def apply(self, fn: Any) -> Block:
        """Call ``fn`` on every child (recursively), then on this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init: Any = "uniform", ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        """Initialize all parameters (``collect_params().initialize``): each parameter's own
        initializer first, else ``init`` (default ``mx.init.Uniform()``)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Hybridize every child (a plain Block itself keeps running imperatively)."""
        self._active = active
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype: Any) -> None:
        """Cast every parameter of this block and its children to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save the parameters by structural name (``0.weight``) in MXNet's ``.params`` format
        (``mx.nd.save``); ``deduplicate`` saves a shared parameter once."""
        arrays, seen = {}, set()
        for key, param in self._collect_params_with_prefix().items():
            if deduplicate and id(param) in seen:
                continue
            seen.add(id(param))
            arrays[key] = param._reduce()
        ndarray.save(filename, arrays)

    def load_parameters(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False,
                        dtype_source: str = "current") -> None:
        """Load a file of ``save_parameters`` (or of ``collect_params().save``, full names)."""
        loaded = ndarray.load(filename)
        if not isinstance(loaded, dict):
            raise InvalidValue(f"{filename} holds arrays without names: not a .params file")
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in key for key in loaded):
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        aliases: dict[int, set[str]] = {}
        for key, param in params.items():
            aliases.setdefault(id(param), set()).add(key)
        present = {key: None for key in params if aliases[id(params[key])] & set(loaded)}
        check_names(params, {**loaded, **present}, filename, allow_missing, ignore_extra)
        for key, value in loaded.items():
            if key in params:
                params[key]._load_init(value, ctx, cast_dtype=cast_dtype,
                                       dtype_source=dtype_source)

    def __call__(self, *args: Any) -> Any:
        """``forward(*args)``, after the pre-hooks (``hook(block, args)``) and before the hooks
        (``hook(block, args, output)``)."""
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        output = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, output)
        return output

    def register_forward_pre_hook(self, hook: Any) -> HookHandle:
        """Call ``hook(block, inputs)`` before each forward pass; ``detach()`` the handle to
        stop, as MXNet's."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook: Any) -> HookHandle:
        """Call ``hook(block, inputs, output)`` after each forward pass; ``detach()`` the
        handle to stop, as MXNet's."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Install ``callback(node_name, op_name, array)`` on the hybridized blocks below this
        one (``HybridBlock.register_op_hook``), as MXNet's."""
        op_hook.check_callback(callback)
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def forward(self, *args: Any) -> Any:
        """The output of this block for ``args``; subclasses define it."""
        raise NotImplementedError


class HybridBlock(Block):
    """A block whose computation is ``hybrid_forward(F, x, *args, **params)`` with ``F =
    mx.nd`` and its parameters' data as keywords, as ``mxnet.gluon.HybridBlock`` (run
    imperatively; ``hybridize`` changes nothing)."""

    def __call__(self, *args: Any) -> Any:
        if args and isinstance(args[0], ndarray.NDArray):
            self._export_inputs = len(args)  # what ``export`` names data / data0, data1, ...
            cached = (cached_graph.cached_call(self, args) if self._active
                      and tape.is_recording() and self._op_hook is None
                      and all(isinstance(a, ndarray.NDArray) for a in args) else None)
            if cached is not None:  # autograd.get_symbol writes it as MXNet's cached op
                return tape.front_end(cached, super().__call__, args, {})
        return super().__call__(*args)

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True) -> None:
        """Write the block's graph to ``path-symbol.json`` and its parameters to
        ``path-EPOCH.params`` (``arg:`` / ``aux:`` names), for ``SymbolBlock.imports``,
        ``mx.mod.Module`` or MXNet: one input is named ``data``, more ``data0``, ``data1``, ...
        It needs one forward pass on arrays first (for the number of inputs)."""
        from .. import symbol

        count = getattr(self, "_export_inputs", None)
        if count is None:
            raise InvalidValue(f"{type(self).__name__}.export: run forward with this block at "
                               "least once before calling export (it names the inputs)")
        names = ["data"] if count == 1 else [f"data{i}" for i in range(count)]
        graph = self(*[symbol.var(name) for name in names])
        if isinstance(graph, (list, tuple)):
            graph = symbol.Group(list(graph))
        arg_names, aux_names = set(graph.list_arguments()), set(graph.list_auxiliary_states())
        arrays = {}
        for name, param in self.collect_params().items():
            if name in arg_names or name in aux_names:
                arrays[f"{'arg' if name in arg_names else 'aux'}:{name}"] = param._reduce()
            else:
                warnings.warn(f'Parameter "{name}" is not found in the graph. ', stacklevel=2)
        graph.save(f"{path}-symbol.json", remove_amp_cast=remove_amp_cast)
        ndarray.save(f"{path}-{epoch:04d}.params", arrays)

    def forward(self, x: Any, *args: Any) -> Any:
        """``hybrid_forward(mx.nd, x, *args, **params)``, first finishing deferred
        initialization from the input shapes (``infer_shape``); on Symbols,
        ``hybrid_forward(mx.sym, x, *args, **params)`` with the parameters' variables (the
        block's graph, for ``mx.mod.Module`` or ``bind``)."""
        from ..symbol import Symbol

        leaves = _leaves([x, *args])
        arrays = [leaf for leaf in leaves if isinstance(leaf, ndarray.NDArray)]
        if arrays and any(isinstance(leaf, Symbol) for leaf in leaves):
            raise InvalidValue("In HybridBlock, we do not support mixed NDArrays and Symbols "
                               "types for the input. Please check the type of the args.")
        if not arrays:
            if not any(isinstance(leaf, Symbol) for leaf in leaves):
                raise InvalidValue("In HybridBlock, there must be one NDArray or one Symbol in "
                                   "the input. Please check the type of the args.")
            from .. import symbol

            variables = {k: v.var() for k, v in self._reg_params.items()}
            with self.name_scope():
                return self.hybrid_forward(symbol, x, *args, **variables)
        if self._active:
            self._check_hybridized([x, *args], leaves)
            if self._op_hook is not None:
                return op_hook.hooked_call(self, (x, *args))
        ctx = arrays[0].context
        params = self._data_of(self._reg_params, ctx, (x, *args))
        return self.hybrid_forward(ndarray, x, *args, **params)

    def _data_of(self, params: dict[str, Parameter], ctx: Any, inputs: tuple[Any, ...]
                 ) -> dict[str, Any]:
        """Each of ``params``' data on ``ctx`` (same keys), first finishing deferred
        initialization from the shapes of ``inputs`` (``infer_shape``) when a shape is
        unknown."""
        try:
            return {k: v.data(ctx) for k, v in params.items()}
        except DeferredInitializationError:
            self.infer_shape(*inputs)
            for param in params.values():
                param._finish_deferred_init()
            return {k: v.data(ctx) for k, v in params.items()}

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """As ``Block.hybridize``; the next call fixes the structure of the inputs (which are
        None, how lists nest) that later calls must keep, as MXNet's cached graph does."""
        self._in_format: Any = None
        self._cached_graph, self._hybrid_flags = None, dict(kwargs)
        super().hybridize(active, **kwargs)

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Call ``callback(node_name, op_name, array)`` (names as bytes) with the output of
        every op (with ``monitor_all`` its inputs too) when this block runs hybridized (as
        its graph: ``gluon/op_hook.py``); its children take the hook too, as MXNet's."""
        op_hook.check_callback(callback)
        self._op_hook, self._hooked_call = (callback, bool(monitor_all)), None
        for child in self._children.values():
            child._op_hook, child._hooked_call = self._op_hook, None

    def _check_hybridized(self, inputs: list[Any], leaves: list[Any]) -> None:
        """Refuse what MXNet's hybridized blocks refuse: inputs other than (nested lists of)
        NDArrays and None, arrays on several contexts, a structure other than the first
        call's."""
        for leaf in leaves:
            if leaf is not None and not isinstance(leaf, ndarray.NDArray):
                raise InvalidValue(f"{type(self).__name__}: a hybridized HybridBlock takes "
                                   f"(nested lists of) NDArrays and None, got {leaf!r}")
        contexts = {leaf.context for leaf in leaves if leaf is not None}
        if len(contexts) > 1:
            raise InvalidValue(f"{type(self).__name__}: a hybridized HybridBlock takes inputs "
                               f"on one context, got {sorted(map(str, contexts))}")
        found = _structure(inputs)
        while found and found[-1] is None:  # a trailing None is a default argument
            found = found[:-1]
        if getattr(self, "_in_format", None) is None:
            self._in_format = found
        elif found != self._in_format:
            raise InvalidValue(f"{type(self).__name__}: the argument structure of the inputs "
                               f"{found} does not match the first call's {self._in_format} "
                               "(None marks a missing input); hybridize() again to change it")

    def infer_shape(self, *args: Any) -> None:
        """Set the unknown dimensions of the parameters from the input shapes; layers with
        deferred shapes define it."""
        raise DeferredInitializationError(
            f"{type(self).__name__} {self.name}: the shapes of its parameters are not known and "
            "it cannot infer them from its inputs; give every parameter a complete shape")

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
        """The computation, with ``F = mx.nd``; subclasses define it."""
        raise NotImplementedError



def _leaves(inputs: Any) -> list[Any]:
    """The items of nested lists and tuples of inputs, in order."""
    if isinstance(inputs, (list, tuple)):
        return [leaf for item in inputs for leaf in _leaves(item)]
    return [inputs]


def _structure(inputs: Any) -> Any:
    """Nested inputs as their structure: a tuple per list, None for None, 1 for an array."""
    if isinstance(inputs, (list, tuple)):
        return tuple(_structure(item) for item in inputs)
    return None if inputs is None else 1


class SymbolBlock(HybridBlock):
    """A block running a symbol graph: ``outputs`` computed from the variables ``inputs``,
    every other argument and auxiliary state of the graph a parameter (from ``params`` when it
    holds the name), as ``mxnet.gluon.SymbolBlock``."""

    @staticmethod
    def imports(symbol_file: str, input_names: Any, param_file: str | None = None,
                ctx: Any = None, allow_missing: bool = False,
                ignore_extra: bool = False) -> "SymbolBlock":
        """A SymbolBlock of the graph in ``symbol_file`` (``export``'s or
        ``Module.save_checkpoint``'s) with ``input_names`` as its inputs, its parameters loaded
        from ``param_file`` (in the file's dtypes)."""
        from .. import symbol

        names = [input_names] if isinstance(input_names, str) else list(input_names)
        block = SymbolBlock(symbol.load(symbol_file), [symbol.var(name) for name in names])
        if param_file is not None:
            block.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                        cast_dtype=True, dtype_source="saved")
        return block

    def __init__(self, outputs: Any, inputs: Any, params: ParameterDict | None = None) -> None:
        from .. import symbol

        super().__init__(prefix="", params=None)
        self._params = ParameterDict("", params)
        inputs = [inputs] if isinstance(inputs, symbol.Symbol) else list(inputs)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for given in inputs:
            if not isinstance(given, symbol.Symbol) or len(given.get_internals()) != 1:
                raise InvalidArgument(f"SymbolBlock: inputs must be variables, got {given}")
        graph = outputs[0] if len(outputs) == 1 else symbol.Group(outputs)
        for node in graph.get_internals():
            if node.attr("__storage_type__") == str(_STORAGE_TYPE_STR_TO_ID["row_sparse"]):
                raise InvalidArgument(f"SymbolBlock: parameter {node.name!r} is row_sparse; "
                                   "SymbolBlock takes dense parameters only (as MXNet's)")
        self._input_names = [given.name for given in inputs]
        for name in graph.list_arguments():
            if name not in self._input_names:
                self._params.get(name, allow_deferred_init=True)
        for name in graph.list_auxiliary_states():
            if name not in self._input_names:
                self._params.get(name, grad_req="null", allow_deferred_init=True)
        self._graph, self._outputs = graph, len(outputs)
        self._call = graph.graph_call()
        common = os.path.commonprefix(list(self._params.keys()))
        self._reg_params = {key[len(common):]: value for key, value in self._params.items()}

    def __repr__(self) -> str:
        return (f"SymbolBlock(\n{self._graph} : {len(self._input_names)} -> "
                f"{len(self._graph.list_outputs())}\n)")

    def forward(self, x: Any, *args: Any) -> Any:
        """The graph's outputs on the arrays ``x, *args`` (recorded under
        ``autograd.record``), or the graph composed on the symbols ``x, *args``."""
        from ..symbol import Symbol

        given = [x, *args]
        if len(given) != len(self._input_names):
            raise InvalidValue(f"SymbolBlock: {len(given)} inputs for the input names "
                               f"{self._input_names}")
        if isinstance(x, Symbol):
            return self._graph(**dict(zip(self._input_names, given)))
        ctx = x.context
        params = self._data_of(dict(self._params.items()), ctx, tuple(given))
        outputs = self._call({**dict(zip(self._input_names, given)), **params}, ctx)
        return outputs[0] if self._outputs == 1 else outputs

    def infer_shape(self, *args: Any) -> None:
        """The parameters' shapes from the inputs' shapes, by the graph's shape inference."""
        shapes = {name: array.shape for name, array in zip(self._input_names, args)}
        arg_shapes, _, aux_shapes = self._graph.infer_shape(**shapes)
        found = {**dict(zip(self._graph.list_arguments(), arg_shapes)),
                 **dict(zip(self._graph.list_auxiliary_states(), aux_shapes))}
        for name, param in self._params.items():
            param.shape = found[name]
