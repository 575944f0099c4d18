"""``mx.nd.contrib``'s signal ops, MXNet 1.9.1 semantics: ``fft``, ``ifft``, ``count_sketch``
(GPU-only in MXNet, CPU and GPU here) and ``hawkesll``, on the generated kernels ``signal``,
``count_sketch`` and ``hawkes`` (``ops/signal.py``); gradients in ``autograd/gradients/signal.py``.

Complex values are interleaved (real, imaginary) along the last axis, as MXNet's: ``fft`` of
``(..., d)`` real rows gives ``(..., 2d)``, ``ifft`` of ``(..., 2d)`` gives the ``(..., d)`` real
parts of the unnormalised inverse transform (MXNet's cuFFT calls divide by nothing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import tape
from ..errors import InvalidIndex, InvalidType, InvalidValue
from ..formats import INDEX_DTYPE
from ..params import integer
from . import reduce
from .dispatch import check_out, deliver, densified, invoke
from .indexing import array_arg
from .ndarray import NDArray

SIGNAL_DTYPES = ("float32", "float64")
"""The element dtypes of fft, ifft, count_sketch and hawkesll (MXNet's float16 is refused)."""


def _floats(data: Any, name: str, op: str) -> NDArray:
    """``data`` checked to be a dense-able NDArray of a float dtype the kernels take."""
    data = array_arg(data, name, op)
    if np.dtype(data.dtype).name not in SIGNAL_DTYPES:
        raise InvalidType(f"{op}: {name} must have dtype float32 or float64, got "
                          f"{np.dtype(data.dtype).name}")
    return densified(data)


def _rows(data: Any, op: str) -> NDArray:
    """``data`` checked for a transform along its last axis (at least one dimension)."""
    data = _floats(data, "data", op)
    if data.ndim == 0:
        raise InvalidValue(f"{op}: data must have at least 1 dimension, got shape ()")
    return data


def fft(data: NDArray, compute_size: int = 128, out: NDArray | None = None) -> NDArray:
    """The discrete Fourier transform of each row of ``data``'s last axis: shape ``(..., d)`` to
    ``(..., 2d)``, real and imaginary parts interleaved, as ``mxnet.nd.contrib.fft``
    (``compute_size``, MXNet's sub-batch size for cuFFT, is checked and changes nothing)."""
    op = "fft"
    data = _rows(data, op)
    integer(compute_size, f"{op}: compute_size", low=1)
    check_out(op, out, (*data.shape[:-1], 2 * data.shape[-1]), data.dtype, data.context)
    return invoke("_contrib_fft", (data,), out=out)


def ifft(data: NDArray, compute_size: int = 128, out: NDArray | None = None) -> NDArray:
    """The real part of the unnormalised inverse transform of each interleaved complex row of
    ``data``'s last axis: shape ``(..., 2d)`` to ``(..., d)``, as ``mxnet.nd.contrib.ifft``
    (``ifft(fft(x)) == d * x``; ``compute_size`` is checked and changes nothing)."""
    op = "ifft"
    data = _rows(data, op)
    integer(compute_size, f"{op}: compute_size", low=1)
    if data.shape[-1] % 2:
        raise InvalidValue(f"{op}: data's last axis holds (real, imaginary) pairs, so its length "
                           f"must be even, got shape {data.shape}")
    check_out(op, out, (*data.shape[:-1], data.shape[-1] // 2), data.dtype, data.context)
    return invoke("_contrib_ifft", (data,), out=out)


def _checked_range(ids: NDArray, name: str, high: int, op: str) -> None:
    """Raise ``InvalidIndex`` unless every value of the integer array ``ids`` is in
    ``[0, high)``."""
    if ids.size:
        low, top = reduce.min(ids).asscalar(), reduce.max(ids).asscalar()
        if low < 0 or top >= high:
            raise InvalidIndex(f"{op}: {name} holds {low if low < 0 else top}, outside "
                               f"[0, {high})")


def _vector(value: Any, name: str, n: int, dtype: Any, op: str) -> NDArray:
    """``value`` (``(n,)`` or ``(1, n)``, as MXNet's hash tables) as a dense ``(n,)`` array."""
    value = densified(array_arg(value, name, op))
    if value.size != n or value.ndim not in (1, 2) or value.shape[-1] != n:
        raise InvalidValue(f"{op}: {name} must have shape ({n},) or (1, {n}) (data's last "
                           f"axis), got {value.shape}")
    return value.reshape((n,)).astype(dtype, copy=False)


def count_sketch(data: NDArray, h: NDArray, s: NDArray, out_dim: int,
                 processing_batch_size: int = 32, out: NDArray | None = None) -> NDArray:
    """The count sketch of each row of ``data``'s last axis: ``out[..., h[j]] += s[j] *
    data[..., j]``, shape ``(..., out_dim)``, as ``mxnet.nd.contrib.count_sketch``; ``h`` holds
    integral bucket ids in ``[0, out_dim)`` and ``s`` signs (any values), each ``(n,)`` or
    ``(1, n)``; ``processing_batch_size`` (MXNet's rows per launch) is checked and changes
    nothing. The gradient of ``data`` is ``grad[..., h[j]] * s[j]``; ``h`` and ``s`` get none."""
    op = "count_sketch"
    data = _rows(data, op)
    out_dim = integer(out_dim, f"{op}: out_dim", low=1)
    integer(processing_batch_size, f"{op}: processing_batch_size", low=1)
    n = data.shape[-1]
    buckets = _vector(h, "h", n, np.dtype(array_arg(h, "h", op).dtype), op)
    ids = buckets.astype(INDEX_DTYPE)
    if np.dtype(buckets.dtype).kind == "f" and ids.size:
        if reduce.max(abs(ids.astype(buckets.dtype) - buckets)).asscalar() != 0:
            raise InvalidValue(f"{op}: h must hold integral bucket ids, got non-integral "
                               "values")
    _checked_range(ids, "h", out_dim, op)
    signs = _vector(s, "s", n, data.dtype, op)
    check_out(op, out, (*data.shape[:-1], out_dim), data.dtype, data.context)
    return _sketch(data, ids, signs, out_dim, out)


def _sketch(data: NDArray, ids: NDArray, signs: NDArray, out_dim: int,
            out: NDArray | None = None) -> NDArray:
    """``count_sketch`` of checked operands: ``ids`` int64 in ``[0, out_dim)``, ``signs`` of
    ``data``'s dtype (the adjoint of ``_count_sketch_grad`` too)."""
    return invoke("_contrib_count_sketch", (data, ids, signs), out=out, out_dim=out_dim)


def _count_sketch_grad(grad: NDArray, h: NDArray, s: NDArray) -> NDArray:
    """The gradient of ``count_sketch``'s data: ``grad[..., h[j]] * s[j]`` (``h`` int64 ids,
    checked by ``count_sketch``)."""
    return invoke("_count_sketch_grad", (densified(grad), h, s))


_HAWKES_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _hawkes_shapes(arrays: dict[str, NDArray], op: str) -> tuple[int, int, int]:
    """``(N, K, T)`` after checking every input's shape against them, as MXNet does."""
    n, t = arrays["lags"].shape if arrays["lags"].ndim == 2 else (-1, -1)
    k = arrays["lda"].shape[-1] if arrays["lda"].ndim == 2 else -1
    wanted = {"lda": (n, k), "alpha": (k,), "beta": (k,), "state": (n, k), "lags": (n, t),
              "marks": (n, t), "valid_length": (n,), "max_time": (n,)}
    for name, shape in wanted.items():
        if arrays[name].shape != shape or n < 0 or k < 0:
            raise InvalidValue(f"{op}: {name} must have shape "
                               f"{shape if n >= 0 and k >= 0 else '(N, K) / (N, T)'} (lda (N, K), "
                               f"lags (N, T)), got {arrays[name].shape}")
    return n, k, t


def hawkesll(lda: NDArray, alpha: NDArray, beta: NDArray, state: NDArray, lags: NDArray,
             marks: NDArray, valid_length: NDArray, max_time: NDArray,
             out: Any = None) -> list[NDArray]:
    """[log-likelihood ``(N,)``, states at ``max_time`` ``(N, K)``] of ``N`` sequences of marked
    Hawkes processes (intensity of mark ``k``: ``lda[i, k] + alpha[k] beta[k] sum
    e^{-beta[k] (t - t_j)}`` over its earlier events), as ``mxnet.nd.contrib.hawkesll``: ``lags``
    ``(N, T)`` the times between events, ``marks`` ``(N, T)`` integer marks in ``[0, K)``,
    ``valid_length`` ``(N,)`` the events of each row (at most ``T``), ``max_time`` ``(N,)`` the
    end of each observation, ``state`` ``(N, K)`` the starting states. Differentiable in
    ``lda``, ``alpha``, ``beta`` and ``state``; ``out``: a list of two arrays to write."""
    op = "hawkesll"
    given = dict(zip(_HAWKES_INPUTS, (lda, alpha, beta, state, lags, marks, valid_length,
                                      max_time)))
    arrays = {name: densified(array_arg(v, name, op)) for name, v in given.items()}
    n, k, t = _hawkes_shapes(arrays, op)
    dtype = np.dtype(_floats(arrays["lda"], "lda", op).dtype)
    for name in _HAWKES_INPUTS:
        if name != "marks" and np.dtype(arrays[name].dtype) != dtype:
            raise InvalidType(f"{op}: {name} has dtype {np.dtype(arrays[name].dtype).name}, lda "
                              f"{dtype.name}; they must match")
    if np.dtype(arrays["marks"].dtype).kind not in "iu":
        raise InvalidType(f"{op}: marks must hold integers (MXNet: int32), got dtype "
                          f"{np.dtype(arrays['marks'].dtype).name}")
    arrays["marks"] = arrays["marks"].astype(INDEX_DTYPE, copy=False)
    _checked_range(arrays["marks"], "marks", k, op)
    if n and reduce.max(arrays["valid_length"]).asscalar() > t:
        raise InvalidValue(f"{op}: valid_length holds "
                           f"{reduce.max(arrays['valid_length']).asscalar()}, more events than "
                           f"lags' {t} columns")
    outs = [None, None] if out is None else list(out)
    if len(outs) != 2:
        raise InvalidValue(f"{op}: out must be a list of two arrays, got {len(outs)}")
    for o, shape in zip(outs, ((n,), (n, k))):
        check_out(op, o, shape, dtype, arrays["lda"].context)
    inputs = tuple(arrays.values())
    results = invoke("_contrib_hawkesll", inputs)
    both = [deliver(op, r, "default", arrays["lda"].context, inputs, o)
            for r, o in zip(results, outs)]
    tape.record("_contrib_hawkesll", inputs, both, {})
    return both


def _hawkesll_grad(inputs: tuple[NDArray, ...], g_out: NDArray,
                   g_state: NDArray) -> list[NDArray]:
    """The gradients of hawkesll's ``lda`` ``(N, K)``, ``alpha`` and ``beta`` per sample
    ``(N, K)``, and ``state`` ``(N, K)``, by the head gradients of its two outputs."""
    ctx = inputs[0].context
    buffers = invoke("_hawkesll_grad", (*inputs, densified(g_out), densified(g_state)))
    return [NDArray(b, ctx) for b in buffers]


__all__ = ["count_sketch", "fft", "hawkesll", "ifft"]
