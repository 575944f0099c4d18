"""Neural-network ops of ``mx.nd`` (MXNet 1.9.1 semantics): Embedding, FullyConnected,
Activation, softmax, log_softmax, and the dtype cast ``cast`` / ``Cast``.

Results are dense. FullyConnected has a csr kernel (csr data times the transposed weight, MXNet's
sparse FullyConnected); every other sparse input falls back to dense with the storage-fallback
warning, as MXNet's. Activation, softmax and FullyConnected take float dtypes only, as MXNet.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue, NotSupported, SparsegenError
from ..formats import check_dtype
from ..ops.conv import output_size
from ..params import flag, integer, items, real
from .dispatch import check_out, invoke
from .elemwise import UNARY_OPS
from .indexing import array_arg, axis_arg, choice_arg
from .ndarray import NDArray

ACT_TYPES = ("relu", "sigmoid", "softrelu", "softsign", "tanh")
"""MXNet's Activation act_type values."""


def _float_data(data: NDArray, op: str) -> None:
    if np.dtype(data.dtype).kind != "f":
        raise InvalidType(f"{op} takes floating point data (as MXNet), got "
                          f"{np.dtype(data.dtype).name}")


def _check_no_bias(op: str, no_bias: Any, bias: NDArray | None) -> None:
    """Raise unless ``bias`` is given exactly when ``no_bias`` is false (MXNet's input count)."""
    no_bias = flag(no_bias, f"{op}: no_bias")
    if no_bias != (bias is None):
        raise SparsegenError(f"{op}: no_bias={no_bias} takes {'no bias' if no_bias else 'a bias'}"
                             f", got {'one' if bias is not None else 'none'}")


def Embedding(data: NDArray, weight: NDArray, input_dim: int, output_dim: int,  # noqa: N802
              dtype: Any = "float32", sparse_grad: bool = False,
              out: NDArray | None = None) -> NDArray:
    """The rows of ``weight`` (``input_dim`` x ``output_dim``) at the ids ``data``, as
    ``mxnet.nd.Embedding``: shape ``data.shape + (output_dim,)``, in the weight's dtype; ids are
    truncated and clipped into ``[0, input_dim)`` as MXNet's. ``dtype`` and ``sparse_grad``
    concern the gradient (the forward values are the same)."""
    data, weight = array_arg(data, "data", "Embedding"), array_arg(weight, "weight", "Embedding")
    input_dim = integer(input_dim, "Embedding: input_dim", low=1)
    output_dim = integer(output_dim, "Embedding: output_dim", low=1)
    check_dtype(dtype, "Embedding: dtype")
    sparse_grad = flag(sparse_grad, "Embedding: sparse_grad")
    if weight.shape != (input_dim, output_dim):
        raise InvalidValue(f"Embedding: weight has shape {weight.shape}, input_dim and "
                           f"output_dim say {(input_dim, output_dim)}")
    check_out("Embedding", out, (*data.shape, output_dim), weight.dtype, weight.context)
    return invoke("Embedding", (data, weight), out=out, attrs={"sparse_grad": sparse_grad})


def FullyConnected(data: NDArray, weight: NDArray, bias: NDArray | None = None,  # noqa: N802
                   num_hidden: int | None = None, no_bias: bool = False, flatten: bool = True,
                   out: NDArray | None = None) -> NDArray:
    """``data · weightᵀ + bias``, as ``mxnet.nd.FullyConnected``: ``weight`` is (num_hidden,
    k); ``flatten`` reads ``data`` as (batch, k = everything else), else as (..., k). csr
    ``data`` runs the csr kernel; ``bias`` is given exactly when ``no_bias`` is false."""
    data = array_arg(data, "data", "FullyConnected")
    weight = array_arg(weight, "weight", "FullyConnected")
    if num_hidden is None:
        raise InvalidValue("FullyConnected: num_hidden is required")
    num_hidden = integer(num_hidden, "FullyConnected: num_hidden", low=1)
    flatten = flag(flatten, "flatten")
    _check_no_bias("FullyConnected", no_bias, bias)
    if bias is not None:
        bias = array_arg(bias, "bias", "FullyConnected")
        if bias.shape == (num_hidden, 1):  # MXNet takes a column too (of any storage)
            bias = (bias if bias.stype == "default" else bias.tostype("default")).reshape(
                (num_hidden,))
    inputs = (data, weight) if bias is None else (data, weight, bias)
    _float_data(data, "FullyConnected")
    for array in inputs[1:]:
        if array.dtype != data.dtype:
            raise InvalidType(f"FullyConnected: data, weight and bias must have one dtype, got "
                              f"{', '.join(np.dtype(a.dtype).name for a in inputs)}")
    rows = data.shape[:1] if flatten else data.shape[:-1]
    k = math.prod(data.shape[1:]) if flatten else (data.shape[-1] if data.ndim else 1)
    if weight.shape != (num_hidden, k) or (bias is not None and bias.shape != (num_hidden,)):
        raise InvalidValue(
            f"FullyConnected: data of shape {data.shape} (flatten={flatten}) and num_hidden="
            f"{num_hidden} need weight {(num_hidden, k)} and bias {(num_hidden,)}; got weight "
            f"{weight.shape}{'' if bias is None else f' and bias {bias.shape}'}")
    check_out("FullyConnected", out, (*rows, num_hidden), data.dtype, data.context)
    return invoke("FullyConnected", inputs, out=out, flatten=flatten)


def Activation(data: NDArray, act_type: str, out: NDArray | None = None) -> NDArray:  # noqa: N802
    """``act_type`` (relu, sigmoid, softrelu, softsign, tanh) of every element, as
    ``mxnet.nd.Activation``; the result is dense (sparse input falls back)."""
    data = array_arg(data, "data", "Activation")
    act_type = choice_arg(act_type, "act_type", ACT_TYPES, "Activation")
    _float_data(data, "Activation")
    check_out("Activation", out, data.shape, data.dtype, data.context)
    return invoke("Activation", (data,), out=out, act_type=act_type)


def _loss_operands(op: str, arrays: tuple[tuple[str, Any], ...]) -> tuple[NDArray, ...]:
    """The named operands of a fused loss op: NDArrays of one float dtype and one shape."""
    checked = tuple(array_arg(a, name, op) for name, a in arrays)
    first_name, first = arrays[0][0], checked[0]
    _float_data(first, op)
    for (name, _), array in zip(arrays[1:], checked[1:]):
        if array.shape != first.shape or array.dtype != first.dtype:
            raise InvalidValue(f"{op}: {name} has shape {array.shape} and dtype "
                               f"{np.dtype(array.dtype).name}, {first_name} {first.shape} and "
                               f"{np.dtype(first.dtype).name}: they must match")
    return checked


def _sigmoid_bce(data: NDArray, label: NDArray, out: NDArray | None = None) -> NDArray:
    """``max(x, 0) - x z + log1p(exp(-|x|))`` of logits ``data`` and labels ``label`` (one
    shape), elementwise: gluon's SigmoidBinaryCrossEntropyLoss as one op
    (``mx.nd._internal._sigmoid_bce``; not an MXNet op)."""
    data, label = _loss_operands("_sigmoid_bce", (("data", data), ("label", label)))
    check_out("_sigmoid_bce", out, data.shape, data.dtype, data.context)
    return invoke("_sigmoid_bce", (data, label), out=out)


def _sigmoid_bce_grad(grad: NDArray, data: NDArray, label: NDArray,
                      out: NDArray | None = None) -> NDArray:
    """``grad * (sigmoid(x) - z)`` (``-grad z`` at ``x = 0``, as the composed loss): the
    gradient of ``_sigmoid_bce`` in its logits."""
    grad, data, label = _loss_operands("_sigmoid_bce_grad", (("grad", grad), ("data", data),
                                                             ("label", label)))
    check_out("_sigmoid_bce_grad", out, data.shape, data.dtype, data.context)
    return invoke("_sigmoid_bce_grad", (grad, data, label), out=out)


def _softmax(op: str, data: NDArray, axis: Any, temperature: Any, dtype: Any,
             use_length: Any, length: Any, out: NDArray | None) -> NDArray:
    data = array_arg(data, "data", op)
    if flag(use_length, f"{op}: use_length") or length is not None:
        raise InvalidValue(f"{op}: use_length=True (a length per line) is not supported")
    _float_data(data, op)
    axis = axis_arg(axis, data.ndim, op)
    t = 1.0 if temperature is None else real(temperature, f"{op}: temperature", allow_inf=True)
    if dtype is not None:
        resolved = check_dtype(dtype, f"{op}: dtype")
        if resolved.kind != "f":
            raise InvalidType(f"{op}: dtype must be a float dtype, got {resolved.name}")
        data = cast(data, resolved)
    check_out(op, out, data.shape, data.dtype, data.context)
    return invoke("softmax", (data,), out=out, axis=axis, temperature=t, log=op == "log_softmax")


def softmax(data: NDArray, axis: int = -1, temperature: float | None = None,
            dtype: Any = None, use_length: bool = False, length: NDArray | None = None,
            out: NDArray | None = None) -> NDArray:
    """``exp(x / t) / sum(exp(x / t))`` along ``axis``, as ``mxnet.nd.softmax`` (``dtype``:
    the result's float dtype, computed in it). A line holding nan is nan throughout."""
    return _softmax("softmax", data, axis, temperature, dtype, use_length, length, out)


def log_softmax(data: NDArray, axis: int = -1, temperature: float | None = None,
                dtype: Any = None, use_length: bool = False, length: NDArray | None = None,
                out: NDArray | None = None) -> NDArray:
    """``x / t - log(sum(exp(x / t)))`` along ``axis``, as ``mxnet.nd.log_softmax``."""
    return _softmax("log_softmax", data, axis, temperature, dtype, use_length, length, out)


def softmin(data: NDArray, axis: int = -1, temperature: float | None = None,
            dtype: Any = None, use_length: bool = False, length: NDArray | None = None,
            out: NDArray | None = None) -> NDArray:
    """``exp(-x / t) / sum(exp(-x / t))`` along ``axis``, as ``mxnet.nd.softmin``: the softmax
    of ``-x`` (two recorded ops, so autograd differentiates it)."""
    data = array_arg(data, "data", "softmin")
    _float_data(data, "softmin")
    return _softmax("softmin", UNARY_OPS["negative"](data), axis, temperature, dtype,
                    use_length, length, out)


def cast(data: NDArray, dtype: Any, out: NDArray | None = None) -> NDArray:
    """``data`` with elements cast to ``dtype``, as ``mxnet.nd.cast`` / ``Cast``: the result is
    dense (sparse input falls back, as MXNet); floats to integers truncate toward zero, nan
    becomes 0, values past int64 saturate, then narrower integers wrap."""
    data = array_arg(data, "data", "cast")
    if dtype is None:
        raise InvalidValue("cast: dtype is required")
    resolved = check_dtype(dtype, "cast: dtype")
    check_out("cast", out, data.shape, resolved, data.context)
    return invoke("Cast", (data,), out=out, dtype=resolved)


Cast = cast

__all__ = ["Activation", "Cast", "Embedding", "FullyConnected", "cast", "log_softmax", "softmax",
           "softmin"]


# -- conv --
CONV_LAYOUTS = {3: "NCW", 4: "NCHW", 5: "NCDHW"}
"""The layout Convolution computes in, by data rank (MXNet's default layouts)."""
CUDNN_TUNE = ("fastest", "limited_workspace", "off")
"""MXNet's cudnn_tune values (accepted and ignored: there is no cuDNN here)."""
_CHANNELS_LAST = ("NHWC", "NDHWC")
_GEOMETRY_MAX = 2**31 - 1


def _geometry(value: Any, name: str, rank: int, low: int, default: int) -> tuple[int, ...]:
    """Convolution's ``name`` (stride, dilate, pad) as ``rank`` ints of at least ``low``."""
    if value is None:
        return (default,) * rank
    values = tuple(integer(v, f"Convolution: {name}", low=low) for v in items(value))
    if len(values) != rank:
        raise InvalidValue(f"Convolution: {name} {value!r} must have one value per kernel "
                           f"dimension ({rank}, as kernel)")
    if max(values, default=0) > _GEOMETRY_MAX:
        raise InvalidValue(f"Convolution: {name} {value!r} must be at most {_GEOMETRY_MAX}")
    return values


def _conv_layout(layout: Any, ndim: int) -> None:
    """Raise unless ``layout`` is None or the channels-first layout of ``ndim``-D data."""
    if layout is None or layout == CONV_LAYOUTS.get(ndim):
        return
    if layout in _CHANNELS_LAST:
        raise NotSupported(f"Convolution: layout {layout!r} is not supported (MXNet's CPU "
                           f"build cannot run it either); use channels-first data "
                           f"({', '.join(CONV_LAYOUTS.values())})")
    if layout in CONV_LAYOUTS.values():
        raise InvalidValue(f"Convolution: layout {layout!r} does not fit {ndim}-D data")
    raise InvalidValue(f"Convolution: layout must be None or one of "
                       f"{', '.join(map(repr, (*CONV_LAYOUTS.values(), *_CHANNELS_LAST)))}, "
                       f"got {layout!r}")


def _conv_window(data: NDArray, window: tuple[int, ...], stride: tuple[int, ...],
                 dilate: tuple[int, ...], pad: tuple[int, ...]) -> tuple[int, ...]:
    """The output's spatial shape; raise where the dilated window exceeds the padded input."""
    sizes = []
    for axis, (size, k, s, d, p) in enumerate(zip(data.shape[2:], window, stride, dilate, pad)):
        if d * (k - 1) + 1 > size + 2 * p:
            raise InvalidValue(
                f"Convolution: the dilated kernel ({d * (k - 1) + 1} = dilate {d} x (kernel "
                f"{k} - 1) + 1) exceeds spatial axis {axis} of the data ({size} + 2 x pad {p})")
        sizes.append(output_size(size, k, s, d, p))
    return tuple(sizes)


def _conv_operands(data: NDArray, weight: NDArray, bias: NDArray | None, window: tuple[int, ...],
                   num_filter: int, num_group: int) -> tuple[NDArray, ...]:
    """Check the operands' dtypes and shapes against the filter bank; the inputs in order."""
    inputs = (data, weight) if bias is None else (data, weight, bias)
    _float_data(data, "Convolution")
    if any(array.dtype != data.dtype for array in inputs):
        raise InvalidType(f"Convolution: data, weight and bias must have one dtype, got "
                          f"{', '.join(np.dtype(a.dtype).name for a in inputs)}")
    if data.ndim != len(window) + 2:
        raise InvalidValue(f"Convolution: a {len(window)}-D kernel takes {len(window) + 2}-D data"
                           f" (batch, channel, {len(window)} spatial axes), got shape {data.shape}")
    channels = data.shape[1]
    for count, what in ((channels, "input channels"), (num_filter, "num_filter")):
        if count % num_group:
            raise InvalidValue(f"Convolution: num_group={num_group} must divide the {what} "
                               f"({count})")
    want = (num_filter, channels // num_group, *window)
    if weight.shape != want or (bias is not None and bias.shape != (num_filter,)):
        raise InvalidValue(
            f"Convolution: data of shape {data.shape}, kernel {window}, num_filter={num_filter} "
            f"and num_group={num_group} need weight {want} and bias {(num_filter,)}; got weight "
            f"{weight.shape}{'' if bias is None else f' and bias {bias.shape}'}")
    return inputs


def Convolution(data: NDArray | None = None, weight: NDArray | None = None,  # noqa: N802
                bias: NDArray | None = None, kernel: Any = None, stride: Any = None,
                dilate: Any = None, pad: Any = None, num_filter: int | None = None,
                num_group: int = 1, workspace: int = 1024, no_bias: bool = False,
                cudnn_tune: str | None = None, cudnn_off: bool = False, layout: str | None = None,
                out: NDArray | None = None, name: str | None = None) -> NDArray:
    """The 1-D, 2-D or 3-D convolution of ``data`` (batch, channel, *spatial) by ``weight``
    (num_filter, channel / num_group, *kernel), plus ``bias``, as ``mxnet.nd.Convolution``
    (forward); dense result, sparse inputs fall back. ``workspace``, ``cudnn_tune`` and
    ``cudnn_off`` are checked and ignored."""
    data = array_arg(data, "data", "Convolution")
    weight = array_arg(weight, "weight", "Convolution")
    _check_no_bias("Convolution", no_bias, bias)
    if bias is not None:
        bias = array_arg(bias, "bias", "Convolution")
    if kernel is None or num_filter is None:
        raise InvalidValue(f"Convolution: {'kernel' if kernel is None else 'num_filter'} is "
                           "required")
    window = _geometry(kernel, "kernel", len(items(kernel)), 1, 1)
    if not 1 <= len(window) <= 3:
        raise (NotSupported if len(window) > 3 else InvalidValue)(
            f"Convolution: kernel {kernel!r} must have 1, 2 or 3 dimensions")
    stride = _geometry(stride, "stride", len(window), 1, 1)
    dilate = _geometry(dilate, "dilate", len(window), 1, 1)
    pad = _geometry(pad, "pad", len(window), 0, 0)
    num_filter = integer(num_filter, "Convolution: num_filter", low=1)
    num_group = integer(num_group, "Convolution: num_group", low=1)
    integer(workspace, "Convolution: workspace", low=0)
    if cudnn_tune is not None:
        choice_arg(cudnn_tune, "cudnn_tune", CUDNN_TUNE, "Convolution")
    flag(cudnn_off, "Convolution: cudnn_off")
    inputs = _conv_operands(data, weight, bias, window, num_filter, num_group)
    _conv_layout(layout, data.ndim)
    sizes = _conv_window(data, window, stride, dilate, pad)
    check_out("Convolution", out, (data.shape[0], num_filter, *sizes), data.dtype, data.context)
    return invoke("Convolution", inputs, out=out, stride=stride, dilate=dilate, pad=pad,
                  num_group=num_group)


__all__ += ["Convolution"]
