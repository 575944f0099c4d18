"""Output (loss) ops of ``mx.nd``, MXNet 1.9.1 semantics: SoftmaxOutput, the regression
outputs, MakeLoss, BlockGrad / stop_gradient.

Their forward values are existing ops (softmax, sigmoid, a copy); each is recorded as one node
whose gradient rule (``autograd/gradients/output.py``) is MXNet's special backward: it ignores
the head gradient (``SoftmaxOutput(out_grad=True)`` aside) and gives the labels none. Sparse
data falls back to dense with the storage-fallback warning, as MXNet's; BlockGrad keeps the
storage type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import tape
from ..errors import InvalidValue
from ..params import flag, real
from .dispatch import densified, warn_fallback
from .elemwise import sigmoid
from .indexing import array_arg, choice_arg
from .ndarray import NDArray
from .nn import softmax

NORMALIZATIONS = ("null", "batch", "valid")
"""MXNet's ``normalization`` values of SoftmaxOutput and MakeLoss."""


def dense_inputs(op: str, *arrays: NDArray) -> list[NDArray]:
    """``arrays`` in dense storage, with one fallback warning when one of them is sparse."""
    stypes = tuple(a.stype for a in arrays)
    if any(s != "default" for s in stypes):
        warn_fallback(op, stypes)
    return [densified(a) for a in arrays]


def recorded(op: str, inputs: tuple[NDArray, ...], forward: Callable[[], Any],
             params: dict[str, Any]) -> Any:
    """``forward()`` (an array, or a list of arrays: the node's outputs) run without
    recording, recorded as one node of ``op`` on ``inputs``."""
    was_recording = tape.set_recording(False)
    try:
        result = forward()
    finally:
        tape.set_recording(was_recording)
    tape.record(op, inputs, result, params)
    return result


def _label(label: Any, op: str, want: tuple[int, ...], *more: tuple[int, ...]) -> NDArray:
    """``label`` checked to have one of the shapes ``want`` / ``more``."""
    label = array_arg(label, "label", op)
    if label.shape not in (want, *more):
        raise InvalidValue(f"{op}: label has shape {label.shape}, the data needs "
                           f"{' or '.join(map(str, (want, *more)))}")
    return label


def SoftmaxOutput(data: NDArray, label: NDArray, grad_scale: float = 1.0,  # noqa: N802
                  ignore_label: float = -1.0, multi_output: bool = False,
                  use_ignore: bool = False, preserve_shape: bool = False,
                  normalization: str = "null", out_grad: bool = False,
                  smooth_alpha: float = 0.0) -> NDArray:
    """Softmax of ``data`` (over axis 1 with ``multi_output``, the last axis with
    ``preserve_shape``, else over each flattened sample), as ``mxnet.nd.SoftmaxOutput``; its
    gradient is ``(softmax - onehot(label)) * grad_scale / normalization``, labels equal to
    ``ignore_label`` giving zero rows when ``use_ignore``; a label of the data's shape holds
    probabilities, and the gradient is ``(softmax - label) * grad_scale``, as MXNet's."""
    op = "SoftmaxOutput"
    data = array_arg(data, "data", op)
    params = {
        "grad_scale": real(grad_scale, f"{op}: grad_scale"),
        "ignore_label": real(ignore_label, f"{op}: ignore_label"),
        "multi_output": flag(multi_output, f"{op}: multi_output"),
        "use_ignore": flag(use_ignore, f"{op}: use_ignore"),
        "preserve_shape": flag(preserve_shape, f"{op}: preserve_shape"),
        "normalization": choice_arg(normalization, "normalization", NORMALIZATIONS, op),
        "out_grad": flag(out_grad, f"{op}: out_grad"),
        "smooth_alpha": real(smooth_alpha, f"{op}: smooth_alpha", low=0.0, high=1.0),
    }
    if data.ndim < 2 or (params["multi_output"] and data.ndim < 3):
        raise InvalidValue(f"{op}: data of shape {data.shape} needs at least "
                           f"{3 if params['multi_output'] else 2} dimensions")
    if params["multi_output"]:
        label = _label(label, op, (data.shape[0], *data.shape[2:]))
    elif params["preserve_shape"]:  # (a label of the data's shape: probabilities, as MXNet's)
        label = _label(label, op, data.shape[:-1], data.shape)
    elif data.ndim == 2:
        label = _label(label, op, data.shape[:1], data.shape)
    else:
        raise InvalidValue(f"{op}: data of shape {data.shape} (more than 2 dimensions) needs "
                           "multi_output=True or preserve_shape=True in sparsegen")
    (dense,) = dense_inputs(op, data)
    axis = 1 if params["multi_output"] else -1
    return recorded(op, (data, label), lambda: softmax(dense, axis=axis), params)


def _regression(op: str, data: NDArray, label: NDArray, grad_scale: float,
                forward: Callable[[NDArray], NDArray]) -> NDArray:
    """A regression output: ``forward(data)``, label of the data's shape (or its size)."""
    data, label = array_arg(data, "data", op), array_arg(label, "label", op)
    if label.size != data.size or (label.shape != data.shape and label.ndim != 1):
        raise InvalidValue(f"{op}: label has shape {label.shape}, the data needs {data.shape}")
    grad_scale = real(grad_scale, f"{op}: grad_scale")
    dense = dense_inputs(op, data, label)[0]
    return recorded(op, (data, label), lambda: forward(dense), {"grad_scale": grad_scale})


def LinearRegressionOutput(data: NDArray, label: NDArray,  # noqa: N802
                           grad_scale: float = 1.0) -> NDArray:
    """``data`` itself, as ``mxnet.nd.LinearRegressionOutput``; gradient ``(out - label) *
    grad_scale / num_output`` (num_output: the elements of one sample)."""
    return _regression("LinearRegressionOutput", data, label, grad_scale, lambda x: x.copy())


def LogisticRegressionOutput(data: NDArray, label: NDArray,  # noqa: N802
                             grad_scale: float = 1.0) -> NDArray:
    """``sigmoid(data)``, as ``mxnet.nd.LogisticRegressionOutput``; gradient ``(out - label)
    * grad_scale / num_output``."""
    return _regression("LogisticRegressionOutput", data, label, grad_scale, sigmoid)


def MAERegressionOutput(data: NDArray, label: NDArray,  # noqa: N802
                        grad_scale: float = 1.0) -> NDArray:
    """``data`` itself, as ``mxnet.nd.MAERegressionOutput``; gradient ``sign(out - label) *
    grad_scale / num_output``."""
    return _regression("MAERegressionOutput", data, label, grad_scale, lambda x: x.copy())


def MakeLoss(data: NDArray, grad_scale: float = 1.0, valid_thresh: float = 0.0,  # noqa: N802
             normalization: str = "null") -> NDArray:
    """``data`` itself as a loss, as ``mxnet.nd.MakeLoss``: its gradient is ``grad_scale``
    everywhere (the head gradient ignored), divided by the batch size (``'batch'``) or by the
    count of elements above ``valid_thresh`` (``'valid'``)."""
    op = "MakeLoss"
    data = array_arg(data, "data", op)
    params = {"grad_scale": real(grad_scale, f"{op}: grad_scale"),
              "valid_thresh": real(valid_thresh, f"{op}: valid_thresh"),
              "normalization": choice_arg(normalization, "normalization", NORMALIZATIONS, op)}
    (dense,) = dense_inputs(op, data)
    return recorded(op, (data,), dense.copy, params)


def BlockGrad(data: NDArray) -> NDArray:  # noqa: N802
    """A copy of ``data`` (any storage type) through which no gradient flows, as
    ``mxnet.nd.BlockGrad``."""
    data = array_arg(data, "data", "BlockGrad")
    return recorded("BlockGrad", (data,), data.copy, {})


def make_loss(data: NDArray) -> NDArray:
    """``data`` itself (its storage type kept) as a loss, as ``mxnet.nd.make_loss``: its
    gradient is 1 everywhere, the head gradient ignored (``MakeLoss`` with its defaults)."""
    data = array_arg(data, "data", "make_loss")
    return recorded("make_loss", (data,), data.copy, {})


__all__ = ["BlockGrad", "LinearRegressionOutput", "LogisticRegressionOutput",
           "MAERegressionOutput", "MakeLoss", "SoftmaxOutput", "make_loss"]
