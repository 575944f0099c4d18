"""``mx.operator``: Python operators (``CustomOp`` with its ``CustomOpProp``, registered by
name) run by ``mx.nd.Custom(*inputs, op_type=name, **kwargs)``, as MXNet 1.9.1's.

A call is one ``autograd.Function``: the operator's ``forward`` fills output buffers shaped and
typed by the prop's ``infer_shape`` / ``infer_type``, and its ``backward`` fills one gradient
buffer per input, so recorded calls take part in ``backward()`` like any op. The operator's own
code runs front-end ops, hence generated kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import ndarray as nd
from .autograd import Function, is_training
from .errors import InvalidType, InvalidValue
from .ndarray import NDArray
from .operator_queries import (OperatorArguments, get_all_registered_operators,
                               get_operator_arguments)

REQS = ("null", "write", "inplace", "add")
"""How an operator writes a buffer (MXNet's ``req`` values)."""

_REGISTRY: dict[str, type] = {}


class CustomOp:
    """Base class of a Python operator: define ``forward`` and ``backward``, writing the given
    buffers with ``assign``."""

    def forward(self, is_train: bool, req: list[str], in_data: list[NDArray],
                out_data: list[NDArray], aux: list[NDArray]) -> None:
        """Write the outputs into ``out_data`` (as ``req`` says)."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def backward(self, req: list[str], out_grad: list[NDArray], in_data: list[NDArray],
                 out_data: list[NDArray], in_grad: list[NDArray], aux: list[NDArray]) -> None:
        """Write the inputs' gradients into ``in_grad`` (as ``req`` says)."""
        raise NotImplementedError(f"{type(self).__name__} must define backward")

    def assign(self, dst: NDArray, req: str, src: Any) -> None:
        """``dst[:] = src`` (``'write'``, ``'inplace'``), ``dst[:] += src`` (``'add'``), or
        nothing (``'null'``)."""
        if req not in REQS:
            raise InvalidValue(f"CustomOp.assign: req must be one of {REQS}, got {req!r}")
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src


class CustomOpProp:
    """Describes a Python operator: its arguments, outputs and auxiliary states, their shapes
    and dtypes, and the ``CustomOp`` that runs it (``create_operator``)."""

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape: list[tuple[int, ...]]) -> tuple[Any, ...]:
        """(argument shapes, output shapes, aux shapes): by default every output has the first
        input's shape."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type: list[Any]) -> tuple[Any, ...]:
        """(argument dtypes, output dtypes, aux dtypes): by default the first input's."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def list_outputs(self) -> list[str]:
        """The outputs' names."""
        return ["output"]

    def list_arguments(self) -> list[str]:
        """The arguments' names (the inputs before the auxiliary states)."""
        return ["data"]

    def list_auxiliary_states(self) -> list[str]:
        """The auxiliary states' names (inputs after the arguments, mutable by the op)."""
        return []

    def infer_storage_type(self, in_stype: list[str]) -> tuple[list[str], list[str], list[str]]:
        """(argument, output, auxiliary) storage types: default outputs."""
        return in_stype, ["default"] * len(self.list_outputs()), []

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int],
                                    out_data: list[int]) -> list[int]:
        """What ``backward`` reads: the output gradients (if ``need_top_grad_``), inputs and
        outputs."""
        return [*(out_grad if self.need_top_grad_ else []), *in_data, *out_data]

    def create_operator(self, ctx: Any, in_shapes: list[tuple[int, ...]],
                        in_dtypes: list[Any]) -> CustomOp:
        """The ``CustomOp`` that computes this operator."""
        return CustomOp()


def register(reg_name: str) -> Callable[[type], type]:
    """Register the decorated ``CustomOpProp`` subclass as operator ``reg_name``."""
    if not isinstance(reg_name, str) or not reg_name:
        raise InvalidType(f"operator.register: the name must be a non-empty string, got "
                          f"{reg_name!r}")

    def do_register(prop_cls: type) -> type:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise InvalidType(f"operator.register({reg_name!r}) decorates a CustomOpProp "
                              f"subclass, got {prop_cls!r}")
        _REGISTRY[reg_name] = prop_cls
        return prop_cls

    return do_register


def _three(result: Any, what: str, op_type: str, counts: tuple[int, int, int]) -> list[list]:
    """``infer_shape`` / ``infer_type``'s (arguments, outputs, aux) answer, checked."""
    parts = [list(p) for p in result]
    if len(parts) == 2:
        parts.append([])
    if len(parts) != 3 or tuple(map(len, parts)) != counts:
        raise InvalidValue(f"Custom {op_type!r}: {what} must return {counts[0]} argument, "
                           f"{counts[1]} output and {counts[2]} aux entries, got {result!r}")
    return parts


class _Custom(Function):
    """One call of a registered operator, recorded as one node."""

    def __init__(self, op: CustomOp, outputs: list[NDArray], aux: list[NDArray]) -> None:
        super().__init__()
        self.op, self.outputs, self.aux = op, outputs, aux
        self.in_data: list[NDArray] = []

    def forward(self, *inputs: NDArray) -> Any:
        self.in_data = list(inputs)
        self.op.forward(is_training(), ["write"] * len(self.outputs), self.in_data, self.outputs,
                        self.aux)
        return self.outputs[0] if len(self.outputs) == 1 else tuple(self.outputs)

    def backward(self, *output_grads: NDArray) -> tuple[NDArray, ...]:
        in_grad = [nd.zeros(a.shape, ctx=a.context, dtype=a.dtype) for a in self.in_data]
        self.op.backward(["write"] * len(in_grad), list(output_grads), self.in_data,
                         self.outputs, in_grad, self.aux)
        return tuple(in_grad)


def Custom(*inputs: NDArray, op_type: str | None = None, **kwargs: Any) -> Any:  # noqa: N802
    """Run the operator registered as ``op_type`` on ``inputs`` (its arguments, then its
    auxiliary states); ``kwargs`` reach the prop's constructor as strings, as in MXNet."""
    if op_type not in _REGISTRY:
        raise InvalidValue(f"Custom: op_type {op_type!r} is not registered (registered: "
                           f"{', '.join(sorted(_REGISTRY)) or 'none'}); use "
                           "@mx.operator.register(name)")
    prop = _REGISTRY[op_type](**{k: str(v) for k, v in kwargs.items()})
    names, aux_names = prop.list_arguments(), prop.list_auxiliary_states()
    if len(inputs) != len(names) + len(aux_names):
        raise InvalidValue(f"Custom {op_type!r}: takes {len(names)} arguments ({names}) and "
                           f"{len(aux_names)} auxiliary states, got {len(inputs)} inputs")
    for name, array in zip([*names, *aux_names], inputs):
        if not isinstance(array, NDArray):
            raise InvalidType(f"Custom {op_type!r}: input {name!r} must be an NDArray, got "
                              f"{type(array).__name__}")
    arguments, aux = list(inputs[:len(names)]), list(inputs[len(names):])
    counts = (len(names), len(prop.list_outputs()), len(aux_names))
    in_shapes = [a.shape for a in arguments]
    in_dtypes = [a.dtype for a in arguments]
    _, out_shapes, _ = _three(prop.infer_shape(in_shapes), "infer_shape", op_type, counts)
    _, out_dtypes, _ = _three(prop.infer_type(in_dtypes), "infer_type", op_type, counts)
    ctx = arguments[0].context if arguments else None
    op = prop.create_operator(ctx, in_shapes, in_dtypes)
    outputs = [nd.zeros(tuple(s), ctx=ctx, dtype=t) for s, t in zip(out_shapes, out_dtypes)]
    return _Custom(op, outputs, aux)(*arguments)


def prop(op_type: str, kwargs: dict[str, str]) -> CustomOpProp:
    """The properties of the registered op ``op_type``, made with its string ``kwargs`` (what
    ``mx.sym.Custom`` and its shape inference read)."""
    if op_type not in _REGISTRY:
        raise InvalidValue(f"Custom: op_type {op_type!r} is not registered (registered: "
                           f"{', '.join(sorted(_REGISTRY)) or 'none'}); use "
                           "@mx.operator.register(name)")
    return _REGISTRY[op_type](**kwargs)


def run(inputs: list[NDArray], attrs: dict[str, str], ctx: Any) -> Any:
    """The outputs of the custom op of a graph node (``attrs``: ``op_type`` and its string
    kwargs) on ``inputs``, recorded for ``mx.autograd`` as ``Custom``."""
    kwargs = dict(attrs)
    return Custom(*inputs, op_type=kwargs.pop("op_type"), **kwargs)


nd.Custom = Custom
nd.__all__.append("Custom")

__all__ = ["Custom", "CustomOp", "CustomOpProp", "OperatorArguments", "REQS",
           "get_all_registered_operators", "get_operator_arguments", "prop", "register", "run"]
