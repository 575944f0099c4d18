"""``mx.operator``: operators written in Python (``CustomOp``, ``CustomOpProp``,
``register``), run inside a symbolic graph by ``mx.sym.Custom(..., op_type=name)``, as MXNet
1.9.1's. The op's forward and backward write into arrays the executor allocates; the backward
pass reaches it through ``mx.autograd`` (one recorded node, ``autograd.Function``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import ndarray as nd
from .autograd import Function, is_training
from .context import Context
from .errors import InvalidValue, NotSupported

_PROPS: dict[str, type["CustomOpProp"]] = {}
"""The registered ``CustomOpProp`` classes by ``op_type``."""


class CustomOp:
    """Base class of a Python operator: define ``forward`` and ``backward``, write results
    with ``assign``."""

    def forward(self, is_train: bool, req: list[str], in_data: list[Any], out_data: list[Any],
                aux: list[Any]) -> None:
        """Write the outputs into ``out_data`` (``self.assign``)."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def backward(self, req: list[str], out_grad: list[Any], in_data: list[Any],
                 out_data: list[Any], in_grad: list[Any], aux: list[Any]) -> None:
        """Write the inputs' gradients into ``in_grad`` (``self.assign``)."""
        raise NotImplementedError(f"{type(self).__name__} must define backward")

    def assign(self, dst: Any, req: str, src: Any) -> None:
        """Write ``src`` into ``dst`` as ``req`` says: ``'write'`` / ``'inplace'``, ``'add'``,
        or nothing (``'null'``)."""
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        elif req != "null":
            raise InvalidValue(f"CustomOp.assign: req must be null, write, inplace or add, got "
                               f"{req!r}")


class CustomOpProp:
    """Base class of a Python operator's properties: its arguments, outputs, shapes and dtypes,
    and ``create_operator``. The constructor receives the op's keyword arguments as strings."""

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad

    def list_arguments(self) -> list[str]:
        """The names of the inputs."""
        return ["data"]

    def list_outputs(self) -> list[str]:
        """The names of the outputs."""
        return ["output"]

    def list_auxiliary_states(self) -> list[str]:
        """The names of the auxiliary states (none here)."""
        return []

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """(input, output, auxiliary) shapes: by default every output has the first input's."""
        return in_shape, [in_shape[0]] * len(self.list_outputs()), []

    def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """(input, output, auxiliary) dtypes: by default the first input's."""
        return in_type, [in_type[0]] * len(self.list_outputs()), []

    def infer_storage_type(self, in_stype: list[str]) -> tuple[list[str], list[str], list[str]]:
        """(input, output, auxiliary) storage types: default."""
        return in_stype, ["default"] * len(self.list_outputs()), []

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int],
                                    out_data: list[int]) -> list[int]:
        """What backward reads (everything here)."""
        return [*out_grad, *in_data, *out_data] if self.need_top_grad_ else [*in_data, *out_data]

    def create_operator(self, ctx: Context, in_shapes: list[Any], in_dtypes: list[Any]) -> CustomOp:
        """The ``CustomOp`` computing the op."""
        raise NotImplementedError(f"{type(self).__name__} must define create_operator")


def register(reg_name: str) -> Callable[[type[CustomOpProp]], type[CustomOpProp]]:
    """Class decorator: register a ``CustomOpProp`` subclass as ``op_type=reg_name``."""
    def do_register(prop_cls: type[CustomOpProp]) -> type[CustomOpProp]:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise InvalidValue(f"operator.register({reg_name!r}): decorate a CustomOpProp "
                               f"subclass, got {prop_cls!r}")
        _PROPS[reg_name] = prop_cls
        return prop_cls

    return do_register


def prop(op_type: str, kwargs: dict[str, str]) -> CustomOpProp:
    """The properties of the registered op ``op_type``, made with its string ``kwargs``."""
    if op_type not in _PROPS:
        raise InvalidValue(f"Custom: op_type {op_type!r} is not registered (mx.operator.register)"
                           f"; registered: {sorted(_PROPS)}")
    made = _PROPS[op_type](**kwargs)
    if len(made.list_outputs()) != 1 or made.list_auxiliary_states():
        raise NotSupported(f"Custom {op_type}: sparsegen runs custom ops of one output and no "
                           "auxiliary states")
    return made


class _Run(Function):
    """One call of a custom op, recorded as one node whose backward is the op's."""

    def __init__(self, op: CustomOp, shape: tuple[int, ...], dtype: Any) -> None:
        super().__init__()
        self._op, self._shape, self._dtype = op, shape, dtype

    def forward(self, *inputs: Any) -> Any:
        out = nd.zeros(self._shape, inputs[0].context, self._dtype)
        self._op.forward(is_training(), ["write"], list(inputs), [out], [])
        self.save_for_backward(*inputs, out)
        return out

    def backward(self, *out_grads: Any) -> Any:
        *inputs, out = self.saved_tensors
        in_grads = [nd.zeros(x.shape, x.context, x.dtype) for x in inputs]
        self._op.backward(["write"] * len(inputs), list(out_grads), inputs, [out], in_grads, [])
        return tuple(in_grads)


def run(inputs: list[Any], attrs: dict[str, str], ctx: Context) -> Any:
    """The output of the custom op of ``attrs`` (``op_type`` and its string kwargs) on
    ``inputs``, recorded for ``mx.autograd`` when recording."""
    kwargs = dict(attrs)
    made = prop(kwargs.pop("op_type"), kwargs)
    shapes = [x.shape for x in inputs]
    dtypes = [x.dtype for x in inputs]
    _, out_shapes, _ = made.infer_shape(shapes)
    _, out_dtypes, _ = made.infer_type(dtypes)
    return _Run(made.create_operator(ctx, shapes, dtypes), tuple(out_shapes[0]),
                out_dtypes[0])(*inputs)


__all__ = ["CustomOp", "CustomOpProp", "register"]
