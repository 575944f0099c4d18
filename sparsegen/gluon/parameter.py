"""``gluon.Parameter`` / ``Constant`` / ``ParameterDict``: named arrays with gradient buffers
and (deferred) initialization, as MXNet 1.9.1's ``mxnet.gluon.parameter``.

A parameter holds one copy of its data per context; each copy is an autograd variable
(``attach_grad(grad_req, stype=grad_stype)``), so ``loss.backward()`` fills ``grad()`` in the
gradient's storage type. A row_sparse parameter (``stype='row_sparse'``) is read through
``row_sparse_data(row_id)``: its trainer keeps the whole weight and pulls the rows asked for.
"""

from __future__ import annotations

import re
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import autograd
from ..context import Context, cpu, current_context
from ..errors import InvalidArgument, InvalidType, InvalidValue, SparsegenError
from ..ops.rule import STYPES
from ..ndarray import NDArray, zeros
from ..ndarray.storage import assign

class ParameterError(SparsegenError, RuntimeError):
    """A parameter used in a way its state does not allow (not initialized, not on that
    context, its storage type, a second trainer); MXNet's RuntimeError."""


class DeferredInitializationError(SparsegenError):
    """A parameter's initialization waits for its shape (known at the first forward pass)."""


def _contexts(ctx: Any) -> list[Context]:
    """``ctx`` (a context, a list of them, or None: the current one) as a non-empty list."""
    listed = [current_context()] if ctx is None else [ctx] if isinstance(ctx, Context) else list(ctx)
    if not listed or not all(isinstance(c, Context) for c in listed):
        raise InvalidType(f"ctx must be a Context or a non-empty list of Contexts, got {ctx!r}")
    return listed


def _known(shape: tuple[int, ...] | None) -> bool:
    """Whether every dimension of ``shape`` is known (non-zero)."""
    return shape is not None and all(d > 0 for d in shape)


def _create(init: Any) -> Any:
    """An initializer from an ``Initializer``, its name or its ``dumps()`` (``mx.init.create``)."""
    from .. import initializer

    return initializer.create(init)


class Parameter:
    """A named array of a ``Block``, with its gradient, as ``mxnet.gluon.Parameter``.

    ``shape`` may hold 0 for dimensions found at the first forward pass (deferred
    initialization, with ``allow_deferred_init``). ``stype`` / ``grad_stype`` are the storage
    types of the data and of the gradient buffer.
    """

    def __init__(self, name: str, grad_req: str = "write", shape: Any = None,
                 dtype: Any = np.float32, lr_mult: float = 1.0, wd_mult: float = 1.0,
                 init: Any = None, allow_deferred_init: bool = False,
                 differentiable: bool = True, stype: str = "default",
                 grad_stype: str = "default") -> None:
        for label, value in (("stype", stype), ("grad_stype", grad_stype)):
            if value not in STYPES:
                raise InvalidArgument(f"{label} for Parameter '{name}' must be one of 'default', "
                                      f"'row_sparse', or 'csr', but got '{value}'")
        self.name = name
        self._var: Any = None  # the variable symbol, made by var()
        self._shape = (shape,) if isinstance(shape, int) else None if shape is None else tuple(shape)
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        self._allow_deferred_init = allow_deferred_init
        self._differentiable = differentiable
        self._stype, self._grad_stype = stype, grad_stype
        self._data: list[NDArray] | None = None
        self._ctx_list: list[Context] = []
        self._deferred_init: tuple[Any, ...] = ()
        self._trainer: Any = None
        self._grad_req = "null"
        self.grad_req = grad_req

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={np.dtype(self.dtype).name})"

    # -- attributes ------------------------------------------------------------------------
    @property
    def grad_req(self) -> str:
        """``'write'``, ``'add'`` or ``'null'`` (always ``'null'`` when not differentiable)."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in autograd.GRAD_REQS:
            raise InvalidValue(f"grad_req must be one of 'write', 'add', or 'null', but got "
                               f"'{req}'")
        req = req if self._differentiable else "null"
        if req == self._grad_req:
            return
        self._grad_req = req
        if self._data is not None:
            self._attach()

    @property
    def _grad(self) -> list[NDArray] | None:
        """The gradient buffers, one per context (None without data or with ``grad_req``
        ``'null'``): MXNet's attribute, which its tests read."""
        if self._data is None or self._grad_req == "null":
            return None
        return [array.grad for array in self._data]

    @property
    def dtype(self) -> Any:
        """The data type; setting it casts the data (``cast``)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype: Any) -> None:
        self.cast(dtype)

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The shape (0 marks a dimension not known yet)."""
        return self._shape

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        new_shape = tuple(new_shape)
        if self._shape is not None and (len(self._shape) != len(new_shape) or any(
                old not in (0, new) for old, new in zip(self._shape, new_shape))):
            raise InvalidValue(f"Parameter '{self.name}': expected shape {self._shape} is "
                               f"incompatible with given shape {new_shape}")
        self._shape = new_shape

    @property
    def stype(self) -> str:
        """The storage type of the data."""
        return self._stype

    @property
    def grad_stype(self) -> str:
        """The storage type of the gradient buffer."""
        return self._grad_stype

    # -- initialization --------------------------------------------------------------------
    def initialize(self, init: Any = None, ctx: Any = None, default_init: Any = "uniform",
                   force_reinit: bool = False) -> None:
        """Allocate and initialize the data on ``ctx`` with ``init`` (else the parameter's own
        ``init``, else ``default_init``: ``mx.init.Uniform()``, as MXNet); deferred until the
        shape is known when ``allow_deferred_init``."""
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = None
        ctx = _contexts(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        self._deferred_init = (init, ctx, default_init, None)
        if _known(self._shape):
            self._finish_deferred_init()
        elif not self._allow_deferred_init:
            raise InvalidValue(f"Cannot initialize Parameter '{self.name}' because it has "
                               f"invalid shape: {self._shape}.")

    def _finish_deferred_init(self) -> None:
        """Run the initialization ``initialize`` deferred, now that the shape is known."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        if not _known(self._shape):
            raise InvalidValue(f"Cannot initialize Parameter '{self.name}' because it has "
                               f"invalid shape: {self._shape}. Please specify in_units, "
                               "input_dim, etc. for the Block.")
        if data is None:
            from .. import initializer

            with autograd.pause():
                data = zeros(self._shape, ctx=cpu(), dtype=self._dtype, stype=self._stype)
                _create(default_init)(initializer.InitDesc(self.name, {"__init__": init}), data)
        self._deferred_init = ()
        self._init_impl(data, ctx)

    def _init_impl(self, data: NDArray, ctx_list: list[Context]) -> None:
        """One copy of ``data`` per context, each with its gradient buffer."""
        self._ctx_list = list(ctx_list)
        self._data = [data.copyto(c) for c in self._ctx_list]
        self._attach()

    def _attach(self) -> None:
        """Give each copy of the data a gradient buffer of ``grad_stype`` (or none)."""
        for array in self._data or []:
            if self._grad_req == "null":
                array._grad, array._grad_req, array._entry = None, "null", None
            else:
                array.attach_grad(self._grad_req, stype=self._grad_stype)
            array._fresh_grad = False

    def _load_init(self, data: NDArray, ctx: Any, cast_dtype: bool = False,
                   dtype_source: str = "current") -> None:
        """(Re)initialize from loaded ``data`` (shape checked, dtype checked or cast)."""
        if self._shape is not None:
            if len(self._shape) != len(data.shape) or any(
                    d not in (0, s) for d, s in zip(self._shape, data.shape)):
                raise InvalidValue(f"Failed loading Parameter '{self.name}' from saved params: "
                                   f"shape incompatible expected {self._shape} vs saved "
                                   f"{data.shape}")
        if (self._data is not None and ctx is not None
                and set(_contexts(ctx)) != set(self._ctx_list)):
            raise InvalidValue(f"Failed to load Parameter '{self.name}' on {ctx} because "
                               f"it was previous initialized on {self._ctx_list}.")
        self._shape = tuple(data.shape)
        if np.dtype(self._dtype) != data.dtype:
            if not cast_dtype:
                raise InvalidValue(f"Failed loading Parameter '{self.name}' from saved params: "
                                   f"dtype incompatible expected {np.dtype(self._dtype)} vs "
                                   f"saved {data.dtype}. Set cast_dtype=True to cast the dtype "
                                   "of saved params.")
            if dtype_source not in ("current", "saved"):
                raise InvalidValue(f"dtype_source must be 'current' or 'saved', got "
                                   f"{dtype_source!r}")
            if dtype_source == "current":
                data = data.astype(self._dtype)
            else:
                self.cast(data.dtype)  # the loaded copies take the saved dtype, as MXNet's
        if data.stype != self._stype:
            data = data.tostype(self._stype)
        if self._data is None:
            ctx = self._deferred_init[1] if self._deferred_init and ctx is None else ctx
            self._deferred_init = ()
            self._init_impl(data, _contexts(cpu() if ctx is None else ctx))
        else:
            self.set_data(data)

    # -- data and gradients ----------------------------------------------------------------
    def _check_and_get(self, arrays: list[NDArray] | None, ctx: Any) -> Any:
        """The copy of ``arrays`` on ``ctx`` (``list``: all of them)."""
        if arrays is None:
            if self._deferred_init:
                raise DeferredInitializationError(
                    f"Parameter '{self.name}' has not been initialized yet because "
                    "initialization was deferred. Actual initialization happens during the "
                    "first forward pass. Please pass one batch of data through the network "
                    "before accessing Parameters.")
            raise ParameterError(
                f"Parameter '{self.name}' has not been initialized. Note that you should "
                "initialize parameters and create Trainer with Block.collect_params() instead "
                "of Block.params because the later does not include Parameters of nested "
                "child Blocks")
        if ctx is list:
            return arrays
        if ctx is None:
            if len(arrays) == 1:
                return arrays[0]
            ctx = current_context()
        if ctx in self._ctx_list:
            return arrays[self._ctx_list.index(ctx)]
        raise ParameterError(f"Parameter '{self.name}' was not initialized on context "
                                 f"{ctx}. It was only initialized on {self._ctx_list}.")

    def _dense_only(self, what: str) -> None:
        if self._stype != "default":
            raise ParameterError(f"Cannot return a copy of Parameter '{self.name}' via "
                                     f"{what} because its storage type is {self._stype}. "
                                     "Please use row_sparse_data() instead.")

    def data(self, ctx: Context | None = None) -> NDArray:
        """The data on ``ctx`` (a dense parameter's; row_sparse ones use ``row_sparse_data``)."""
        self._dense_only("data()")
        return self._check_and_get(self._data, ctx)

    def list_data(self) -> list[NDArray]:
        """The data on every context, in ``list_ctx()`` order."""
        self._dense_only("list_data()")
        return self._check_and_get(self._data, list)

    def row_sparse_data(self, row_id: NDArray) -> NDArray:
        """The data on ``row_id``'s context holding at least the rows ``row_id`` names, pulled
        from the trainer's whole weight (a row_sparse parameter with a ``Trainer``)."""
        return self._row_sparse(self._check_and_get(self._data, row_id.context
                                                    if isinstance(row_id, NDArray) else None),
                                row_id)

    def list_row_sparse_data(self, row_id: NDArray) -> list[NDArray]:
        """``row_sparse_data`` on every context."""
        return self._row_sparse(self._check_and_get(self._data, list), row_id)

    def _row_sparse(self, out: Any, row_id: Any) -> Any:
        if self._stype != "row_sparse":
            raise ParameterError(f"Cannot return copies of Parameter '{self.name}' on all "
                                     "contexts via row_sparse_data() because its storage type "
                                     f"is {self._stype}. Please use data() instead.")
        if not isinstance(row_id, NDArray):
            raise InvalidType(f"row_id must have NDArray type, but {type(row_id)} is given")
        if self._trainer is None:
            raise ParameterError(f"Cannot get row_sparse data for Parameter '{self.name}' "
                                     "when no Trainer is created with it.")
        self._trainer._row_sparse_pull(self, out, row_id)
        return out

    def grad(self, ctx: Context | None = None) -> NDArray:
        """The gradient buffer on ``ctx``."""
        if self._data is not None and self._grad_req == "null":
            raise ParameterError(f"Cannot get gradient array for Parameter '{self.name}' "
                                     "because grad_req='null'")
        return self._check_and_get(self._data, ctx)._grad

    def list_grad(self) -> list[NDArray]:
        """The gradient buffers on every context."""
        if self._data is not None and self._grad_req == "null":
            raise ParameterError(f"Cannot get gradient array for Parameter '{self.name}' "
                                     "because grad_req='null'")
        return [a._grad for a in self._check_and_get(self._data, list)]

    def list_ctx(self) -> list[Context]:
        """The contexts the data is (or, deferred, will be) on."""
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise ParameterError(f"Parameter '{self.name}' has not been initialized")
        return list(self._ctx_list)

    def set_data(self, data: Any) -> None:
        """Set every copy of the data to ``data`` (kept in the parameter's storage type)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise ParameterError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        if self._trainer is not None:
            self._trainer._reset_kvstore_value(self, data)
        with autograd.pause():
            for array in self._data:
                assign(array, data if getattr(data, "stype", "default") == array.stype
                       else data.tostype(array.stype))

    def zero_grad(self) -> None:
        """Set every gradient buffer to zero (a sparse one to no stored rows)."""
        with autograd.pause():
            for array in self._data or []:
                if array._grad is not None:
                    assign(array._grad, zeros(array.shape, ctx=array.context, dtype=array.dtype,
                                              stype=array._grad.stype))

    def reset_ctx(self, ctx: Any) -> None:
        """Move the data (and new gradient buffers) to ``ctx``."""
        ctx = _contexts(ctx)
        if self._data is not None:
            self._init_impl(self._reduce(), ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise InvalidValue(f"Cannot reset context for Parameter '{self.name}' because it "
                               "has not been initialized.")

    def _reduce(self) -> NDArray:
        """The data on the CPU (the mean of the copies; a row_sparse weight whole, from its
        trainer when it has one)."""
        if self._stype != "default" and self._trainer is not None:
            return self._trainer._whole(self).copyto(cpu())
        copies = self._check_and_get(self._data, list)
        if len(copies) == 1:
            return copies[0].copyto(cpu())
        from ..ndarray import add_n

        return add_n(*(c.copyto(cpu()) for c in copies)) / len(copies)

    def cast(self, dtype: Any) -> None:
        """Cast data and gradient buffers to ``dtype``."""
        self._dtype = dtype
        if self._data is None:
            return
        with autograd.pause():
            self._data = [a.astype(dtype) for a in self._data]
        self._attach()

    def var(self) -> Any:
        """The variable symbol of this parameter (its name, shape, dtype, multipliers,
        initializer and storage type as attributes), made once, as MXNet's."""
        if self._var is None:
            from .. import symbol

            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var

    def _set_trainer(self, trainer: Any) -> None:
        if (self._stype != "default" and self._trainer is not None and trainer is not None
                and self._trainer is not trainer):
            raise ParameterError(f"Failed to set the trainer for Parameter '{self.name}' "
                                     "because it was already set. More than one trainers for a "
                                     f"{self._stype} Parameter is not supported.")
        self._trainer = trainer


class Constant(Parameter):
    """A parameter that is not trained (``grad_req='null'``), initialized to ``value``."""

    def __init__(self, name: str, value: Any) -> None:
        from ..ndarray import array

        self.value = value if isinstance(value, NDArray) else array(value)
        super().__init__(name, grad_req="null", shape=self.value.shape, dtype=self.value.dtype)

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={self.shape}, dtype={np.dtype(self.dtype).name})"

    def initialize(self, init: Any = None, ctx: Any = None, default_init: Any = None,
                   force_reinit: bool = False) -> None:
        """Put ``value`` on ``ctx`` (initializers do not apply to a constant)."""
        if self._data is None or force_reinit:
            self._init_impl(self.value.astype(self._dtype), _contexts(ctx))

    @property
    def grad_req(self) -> str:
        """Always ``'null'``."""
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            raise InvalidValue(f"Constant parameter '{self.name}' does not support grad_req "
                               f"other than 'null', got '{req}'")


class ParameterDict:
    """An ordered dict of parameters by full name, sharing a ``prefix``, as
    ``mxnet.gluon.ParameterDict``."""

    def __init__(self, prefix: str = "", shared: ParameterDict | None = None) -> None:
        self._prefix = prefix
        self._params: OrderedDict[str, Parameter] = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        body = "\n".join(f"  {p!r}" for p in self.values())
        return f"{self._prefix} (\n{body}\n)" if self._prefix else f"(\n{body}\n)"

    def __getitem__(self, key: str) -> Parameter:
        return self._params[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key: str) -> bool:
        return key in self._params

    def items(self) -> Any:
        """(name, parameter) pairs."""
        return self._params.items()

    def keys(self) -> Any:
        """The full names."""
        return self._params.keys()

    def values(self) -> Any:
        """The parameters."""
        return self._params.values()

    @property
    def prefix(self) -> str:
        """The prefix of every name this dict creates."""
        return self._prefix

    def _get_impl(self, name: str) -> Parameter | None:
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name: str, **kwargs: Any) -> Parameter:
        """The parameter ``prefix + name``, created with ``kwargs`` when missing; an existing
        one takes the ``kwargs`` it has unset (a 0 in its shape) and must match the rest."""
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            param = Parameter(full, **kwargs)
            self._params[full] = param
            return param
        for key, value in kwargs.items():
            if key == "shape" and value is not None:
                wanted = (value,) if isinstance(value, int) else tuple(value)
                have = param.shape
                if have is not None and len(have) == len(wanted) and all(
                        a == b or a <= 0 or b <= 0 for a, b in zip(have, wanted)):
                    # MXNet's merge: each dimension known on either side is kept
                    param._shape = tuple(b if a <= 0 else a for a, b in zip(have, wanted))
                else:
                    param.shape = wanted  # raises naming both shapes unless it fills unknowns
                continue
            existing = getattr(param, key, None)
            if key == "dtype" and value is not None and existing is not None:
                same = np.dtype(value) == np.dtype(existing)
            else:
                same = existing is None or value is None or existing == value
            if not same:
                raise InvalidValue(f"Cannot retrieve Parameter '{full}' because desired "
                                   f"attribute does not match with stored for attribute "
                                   f"'{key}': desired '{value}' vs stored '{existing}'.")
            if existing is None:
                setattr(param, key, value)
        return param

    def get_constant(self, name: str, value: Any = None) -> Constant:
        """The constant ``prefix + name`` (created from ``value`` when missing)."""
        full = self._prefix + name
        param = self._get_impl(full)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{full}'. Please specify value if you want "
                               "to create a new constant.")
            param = Constant(full, value)
            self._params[full] = param
        elif not isinstance(param, Constant):
            raise InvalidType(f"Parameter '{full}' already exists but it is not a constant.")
        return param

    def update(self, other: ParameterDict) -> None:
        """Add the parameters of ``other`` (a name held by another parameter raises)."""
        for key, value in other.items():
            if key in self._params and self._params[key] is not value:
                raise InvalidValue(f"Cannot update self with other because they have different "
                                   f"Parameters with the same name '{key}'")
        for key, value in other.items():
            self._params[key] = value

    def initialize(self, init: Any = "uniform", ctx: Any = None, verbose: bool = False,
                   force_reinit: bool = False) -> None:
        """Initialize every parameter: its own ``init`` first, else ``init``
        (default ``mx.init.Uniform()``)."""
        if verbose:
            init = _create(init)
            init.set_verbosity(verbose=verbose)
        for param in self.values():
            param.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        """``zero_grad`` of every parameter."""
        for param in self.values():
            param.zero_grad()

    def reset_ctx(self, ctx: Any) -> None:
        """``reset_ctx`` of every parameter."""
        for param in self.values():
            param.reset_ctx(ctx)

    def list_ctx(self) -> list[Context]:
        """The contexts of all parameters."""
        found: list[Context] = []
        for param in self.values():
            found.extend(c for c in param.list_ctx() if c not in found)
        return found

    def setattr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` (``grad_req``, ``lr_mult``, ...) of every parameter."""
        for param in self.values():
            setattr(param, name, value)

    def select(self, pattern: str | None) -> ParameterDict:
        """The parameters whose names match the regular expression ``pattern`` (all: None)."""
        chosen = ParameterDict(self._prefix)
        regex = None if pattern is None else re.compile(pattern)
        for key, value in self.items():
            if regex is None or regex.match(key):
                chosen._params[key] = value
        return chosen

    def save(self, filename: str, strip_prefix: str = "") -> None:
        """Save the data by full name (less ``strip_prefix``) with ``mx.nd.save``."""
        from ..ndarray import save

        arrays = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise InvalidValue(f"Prefix '{strip_prefix}' is to be striped before saving, "
                                   f"but Parameter's name '{param.name}' does not start with "
                                   f"'{strip_prefix}'.")
            arrays[param.name[len(strip_prefix):]] = param._reduce()
        save(filename, arrays)

    def load(self, filename: str, ctx: Any = None, allow_missing: bool = False,
             ignore_extra: bool = False, restore_prefix: str = "",
             cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load data saved by ``save`` (names get ``restore_prefix`` back)."""
        from ..ndarray import load

        loaded = load(filename)
        if not isinstance(loaded, dict):
            raise InvalidValue(f"{filename} holds arrays without names; ParameterDict.load "
                               "needs a file saved with names")
        names = {k[4:] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
        self.load_dict({restore_prefix + k: v for k, v in names.items()}, ctx, allow_missing,
                       ignore_extra, filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict: dict[str, NDArray], ctx: Any = None,
                  allow_missing: bool = False, ignore_extra: bool = False,
                  filename: str = "<dict>", cast_dtype: bool = False,
                  dtype_source: str = "current") -> None:
        """Load ``param_dict`` (full name -> array) into the parameters."""
        check_names(self.keys(), param_dict, filename, allow_missing, ignore_extra)
        for name, param in self.items():
            if name in param_dict:
                param._load_init(param_dict[name], ctx, cast_dtype, dtype_source)


def check_names(expected: Any, found: dict[str, Any], filename: str, allow_missing: bool,
                ignore_extra: bool) -> None:
    """Raise unless every ``expected`` name is in ``found`` (or ``allow_missing``) and every
    name of ``found`` is expected (or ``ignore_extra``)."""
    expected = list(expected)
    if not allow_missing:
        for name in expected:
            if name not in found:
                raise InvalidValue(f"Parameter '{name}' is missing in file '{filename}', which "
                                   f"contains parameters: {sorted(found)}. Set "
                                   "allow_missing=True to ignore missing parameters.")
    if not ignore_extra:
        for name in found:
            if name not in expected:
                raise InvalidValue(f"Parameter '{name}' loaded from file '{filename}' is not "
                                   f"present in this Block, which contains parameters "
                                   f"{expected}. Set ignore_extra=True to ignore.")


def __getattr__(name: str) -> Any:
    """``tensor_types``: ``(Symbol, NDArray)``, the types a parameter's data can be, as MXNet's
    (made on first use: ``mx.sym`` is imported only when asked for)."""
    if name == "tensor_types":
        from ..symbol import Symbol
        return (Symbol, NDArray)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
