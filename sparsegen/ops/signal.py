"""MXNet's contrib ``fft`` / ``ifft``, ``count_sketch`` and ``hawkesll`` on their generated kernels
(``signal``, ``count_sketch``, ``hawkes``). Operands arrive validated by the front end (shapes
agreeing, one float dtype, hash buckets and marks in range)."""

from __future__ import annotations

import math
from typing import Any

from ..device import contiguous, empty_like
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule


def _rows(x: Any) -> Any:
    """``x`` as C-contiguous rows of its last axis (at least one row when it has elements)."""
    return contiguous(x).reshape(math.prod(x.shape[:-1]), x.shape[-1])


def _transform(x: Any, d: int, forward: bool) -> Any:
    """The discrete Fourier transform of each length-``d`` row of ``x`` (real rows forward to
    interleaved complex ``(..., 2d)``; complex rows ``(..., 2d)`` inverse to their real parts)."""
    rows = math.prod(x.shape[:-1])
    out = empty_like(x, (*x.shape[:-1], 2 * d if forward else d), x.dtype)
    if out.size == 0:
        return out
    run = kernel("signal", (dtype_name(x.dtype),), x, rows * d * max(1, d.bit_length()))
    tw = empty_like(x, (d, 2), x.dtype)
    run.twiddles(tw)
    flat, result = _rows(x), out.reshape(rows, out.shape[-1])
    if d & (d - 1) == 0:  # a power of two: radix 2
        logd = d.bit_length() - 1
        if forward:
            run.fft_radix2(flat, tw, logd, result)
        else:
            run.ifft_radix2(flat, tw, logd, empty_like(x, (rows, 2 * d), x.dtype), result)
    else:
        (run.fft_direct if forward else run.ifft_direct)(flat, tw, result)
    return out


def fft(x: Any) -> Any:
    """The DFT of each real row of the last axis: ``(..., d)`` -> ``(..., 2d)`` interleaved."""
    return _transform(x, x.shape[-1], True)


def ifft(x: Any) -> Any:
    """The real part of the unnormalised inverse DFT of each interleaved complex row:
    ``(..., 2d)`` -> ``(..., d)``."""
    return _transform(x, x.shape[-1] // 2, False)


def count_sketch(x: Any, h: Any, s: Any, out_dim: int) -> Any:
    """``out[..., h[j]] += s[j] * x[..., j]``: ``x`` of shape ``(..., n)``, ``h`` int64 ``(n,)`` in
    ``[0, out_dim)``, ``s`` ``(n,)`` in ``x``'s dtype."""
    out = empty_like(x, (*x.shape[:-1], out_dim), x.dtype)
    if out.size:
        run = kernel("count_sketch", (dtype_name(x.dtype),), x, x.size + out.size)
        run.forward(_rows(x), h, s, out.reshape(-1, out_dim))
    return out


def count_sketch_grad(g: Any, h: Any, s: Any) -> Any:
    """The gradient of ``count_sketch``'s input: ``g[..., h[j]] * s[j]``."""
    n = h.shape[0]
    out = empty_like(g, (*g.shape[:-1], n), g.dtype)
    if out.size:
        run = kernel("count_sketch", (dtype_name(g.dtype),), g, g.size + out.size)
        run.backward(_rows(g), h, s, out.reshape(-1, n))
    return out


def hawkesll(lda: Any, alpha: Any, beta: Any, state: Any, lags: Any, marks: Any,
             valid_length: Any, max_time: Any) -> tuple[Any, Any]:
    """(log-likelihood ``(N,)``, states at ``max_time`` ``(N, K)``) of each sample; ``marks``
    int64 in ``[0, K)``."""
    n, k = lda.shape
    out = empty_like(lda, (n,), lda.dtype)
    out_state = empty_like(lda, (n, k), lda.dtype)
    if n:
        run = kernel("hawkes", (dtype_name(lda.dtype),), lda, n * (k + lags.shape[1]))
        run.forward(contiguous(lda), alpha, beta, contiguous(state), contiguous(lags),
                    contiguous(marks), valid_length, max_time,
                    empty_like(lda, (n, k), lda.dtype), out, out_state)
    return out, out_state


def hawkesll_grad(lda: Any, alpha: Any, beta: Any, state: Any, lags: Any, marks: Any,
                  valid_length: Any, max_time: Any, g_out: Any,
                  g_state: Any) -> tuple[Any, Any, Any, Any]:
    """The gradients of ``lda`` ``(N, K)``, of ``alpha`` and ``beta`` per sample ``(N, K)`` (the
    caller sums them over samples) and of ``state`` ``(N, K)``, by head gradients ``g_out``
    ``(N,)`` and ``g_state`` ``(N, K)``."""
    n, k = lda.shape
    grads = [empty_like(lda, (n, k), lda.dtype) for _ in range(4)]
    if n:
        scratch = [empty_like(lda, (n, k), lda.dtype) for _ in range(4)]
        run = kernel("hawkes", (dtype_name(lda.dtype),), lda, n * (k + lags.shape[1]))
        run.backward(contiguous(lda), alpha, beta, contiguous(state), contiguous(lags),
                     contiguous(marks), valid_length, max_time, g_out, contiguous(g_state),
                     *scratch, *grads)
    return tuple(grads)


_D1, _D3, _D8 = ("default",), ("default",) * 3, ("default",) * 8
STORAGE_RULES: Rules = {
    ("_contrib_fft", _D1): StorageRule("default", fft),
    ("_contrib_ifft", _D1): StorageRule("default", ifft),
    ("_contrib_count_sketch", _D3): StorageRule("default", count_sketch),
    ("_count_sketch_grad", _D3): StorageRule("default", count_sketch_grad),
    ("_contrib_hawkesll", _D8): StorageRule(None, hawkesll),
    ("_hawkesll_grad", ("default",) * 10): StorageRule(None, hawkesll_grad),
}
"""Dense only, as MXNet 1.9.1 (sparse inputs fall back to dense); ``_contrib_hawkesll`` and its
gradient return their buffers (the front end wraps and records them)."""
