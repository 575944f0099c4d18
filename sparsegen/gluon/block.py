"""``gluon.Block`` and ``HybridBlock``: layers that own parameters and child blocks, named as
MXNet 1.9.1 names them (``dense0_``, ``sequential0_dense0_weight``).

``hybridize()`` is accepted and changes nothing: sparsegen has no symbolic graphs yet (issue
15), so a ``HybridBlock`` always runs ``hybrid_forward(mx.nd, x, **params)`` imperatively,
op by op on the generated kernels (see docs/gluon.md).
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from typing import Any

from .. import name as _name
from .. import ndarray
from ..errors import InvalidType, InvalidValue
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
        """Accepted for MXNet code; blocks keep running imperatively (no graphs before issue
        15)."""
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

    def forward(self, *args: Any) -> Any:
        """The output of this block for ``args``; subclasses define it."""
        raise NotImplementedError


class HybridBlock(Block):
    """A block whose computation is ``hybrid_forward(F, x, *args, **params)`` with ``F =
    mx.nd`` and its parameters' data as keywords, as ``mxnet.gluon.HybridBlock`` (run
    imperatively; ``hybridize`` changes nothing)."""

    def forward(self, x: Any, *args: Any) -> Any:
        """``hybrid_forward(mx.nd, x, *args, **params)``, first finishing deferred
        initialization from the input shapes (``infer_shape``); on Symbols,
        ``hybrid_forward(mx.sym, x, *args, **params)`` with the parameters' variables (the
        block's graph, for ``mx.mod.Module`` or ``bind``)."""
        from ..symbol import Symbol

        if isinstance(x, Symbol):
            from .. import symbol

            variables = {k: v.var() for k, v in self._reg_params.items()}
            with self.name_scope():
                return self.hybrid_forward(symbol, x, *args, **variables)
        ctx = getattr(x, "context", None)
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            self.infer_shape(x, *args)
            for param in self._reg_params.values():
                param._finish_deferred_init()
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        return self.hybrid_forward(ndarray, x, *args, **params)

    def infer_shape(self, *args: Any) -> None:
        """Set the unknown dimensions of the parameters from the input shapes; layers with
        deferred shapes define it."""
        raise DeferredInitializationError(
            f"{type(self).__name__} {self.name}: the shapes of its parameters are not known and "
            "it cannot infer them from its inputs; give every parameter a complete shape")

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N803
        """The computation, with ``F = mx.nd``; subclasses define it."""
        raise NotImplementedError

