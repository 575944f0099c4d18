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

from ..errors import InvalidType, InvalidValue, SparsegenError
from ..formats import check_dtype
from ..params import flag, integer, real
from .dispatch import check_out, invoke
from .indexing import array_arg, axis_arg, choice_arg
from .ndarray import NDArray

ACT_TYPES = ("relu", "sigmoid", "softrelu", "softsign", "tanh")
"""MXNet's Activation act_type values."""


def _float_data(data: NDArray, op: str) -> None:
    if np.dtype(data.dtype).kind != "f":
        raise InvalidType(f"{op} takes floating point data (as MXNet), got "
                          f"{np.dtype(data.dtype).name}")


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
    no_bias, flatten = flag(no_bias, "FullyConnected: no_bias"), flag(flatten, "flatten")
    if no_bias != (bias is None):
        raise SparsegenError(f"FullyConnected: no_bias={no_bias} takes "
                             f"{'no bias' if no_bias else 'a bias'}, got "
                             f"{'one' if bias is not None else 'none'}")
    if bias is not None:
        bias = array_arg(bias, "bias", "FullyConnected")
        if bias.shape == (num_hidden, 1):  # MXNet takes a column too
            bias = bias.reshape((num_hidden,))
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

__all__ = ["Activation", "Cast", "Embedding", "FullyConnected", "cast", "log_softmax", "softmax"]
