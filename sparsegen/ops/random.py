"""Random sampling on kernels ``random`` / ``random_multinomial``, and the generator state.

Each context has a generator: a 64-bit seed and a counter of calls. A call takes the next
counter value as its stream number, so its samples are the kernel's pure function of (seed,
stream, element position): the same seed and call sequence give the same numbers on every
run, thread count and device. ``seed`` (every context) restarts every generator at ``seed``.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from ..device import DeviceArray, contiguous, empty_like, place
from ..formats import INDEX_DTYPE, radix_passes
from .layout import as_rows, dtype_name, kernel
from .radix import pass_table, table_size
from .rule import Rules, StorageRule

DEFAULT_SEED = 0
"""The seed every generator starts from before ``mx.random.seed`` (MXNet, too, gives the same
numbers in every unseeded process)."""

_MASK32 = 0xFFFFFFFF
_LOCK = threading.Lock()
_GLOBAL = [DEFAULT_SEED]
_STREAMS: dict[tuple[str, int], list[int]] = {}  # (device type, id) -> [seed, next stream]


def seed(value: int, where: tuple[str, int] | None = None) -> None:
    """Restart the generator of context ``where`` (every context when ``None``) at ``value``."""
    with _LOCK:
        if where is None:
            _GLOBAL[0] = value
            _STREAMS.clear()
        else:
            _STREAMS[where] = [value, 0]


def next_stream(where: tuple[str, int]) -> tuple[int, int, int, int]:
    """The kernel's key and stream words ``(k0, k1, c2, c3)`` for the next call on ``where``."""
    with _LOCK:
        state = _STREAMS.setdefault(where, [_GLOBAL[0], 0])
        value, stream = state
        state[1] = stream + 1
    key = value % (1 << 64)
    return key & _MASK32, key >> 32, stream & _MASK32, ((stream >> 32) << 8) & _MASK32


def sample(dist: str, params: tuple[Any, ...], shape: tuple[int, ...], dtype: np.dtype,
           stream: tuple[int, int, int, int]) -> Any:
    """``shape`` samples of ``dist`` (``uniform``, ``normal``, ``gamma``, ``exponential``,
    ``poisson``) for each parameter of the flat buffers ``params`` (in ``dtype``, on the output's
    device): the result has shape ``params[0].shape + shape``."""
    first = params[0]
    out = empty_like(first, (*first.shape, *shape), dtype)
    flat = [p.reshape(-1) for p in params]
    rows = out.reshape(flat[0].shape[0], math.prod(shape))
    getattr(kernel("random", (dtype_name(dtype),), out, out.size), dist)(*flat, rows, *stream)
    return out


def sample_arrays(a: Any, b: Any = None, *, dist: str, shape: tuple[int, ...], dtype: np.dtype,
                  stream: tuple[int, int, int, int]) -> Any:
    """``sample`` for one or two parameters given as dense arrays (the ``_sample_*`` rules)."""
    return sample(dist, (a,) if b is None else (a, b), shape, dtype, stream)


def scalar_params(values: tuple[float, ...], dtype: np.dtype, device: Any) -> tuple[Any, ...]:
    """Scalar distribution parameters as one-element buffers in ``device``'s memory (``None``:
    the host)."""
    return tuple(place(np.array([v], dtype), device) for v in values)


def randint(low: int, high: int, shape: tuple[int, ...], dtype: np.dtype, device: Any,
            stream: tuple[int, int, int, int]) -> Any:
    """An integer buffer of ``shape`` in ``device``'s memory holding integers in
    ``[low, high)``, ``low < high`` (both within ``dtype``)."""
    out = (np.empty(shape, dtype) if device is None
           else DeviceArray.empty(shape, dtype, device))
    kernel("random", (dtype_name(out.dtype),), out, out.size).randint(
        out.reshape(-1), low, high, *stream)
    return out


def sort_bits(rows: int) -> int:
    """The random key bits of a shuffle of ``rows`` rows: whole bytes, at least
    ``2 log2(rows) + 16`` (ties, which keep their order, then come up once in 65,536
    shuffles), at most 56."""
    return min(56, -(-(2 * max(rows - 1, 1).bit_length() + 16) // 8) * 8)


def shuffle(data: Any, stream: tuple[int, int, int, int]) -> Any:
    """The rows (along axis 0) of dense ``data`` in a random order: random keys sorted by the
    radix passes, then a row gather."""
    n = data.shape[0]
    k = kernel("random", (dtype_name(data.dtype),), data, data.size)
    keys, src, keys_out, src_out = (empty_like(data, (n,), INDEX_DTYPE) for _ in range(4))
    bits = sort_bits(n)
    passes = radix_passes(bits)
    table = empty_like(data, (table_size(max(width for _, width in passes), n),), INDEX_DTYPE)
    k.keys(keys, src, bits, *stream)
    for shift, width in passes:
        k.sort_pass(keys, src, keys_out, src_out, pass_table(table, width, n), shift, width)
        keys, src, keys_out, src_out = keys_out, src_out, keys, src
    out = empty_like(data, data.shape, data.dtype)
    k.gather(as_rows(data), src, as_rows(out, written=True))
    return out


def multinomial(probs: Any, shape: tuple[int, ...], otype: np.dtype,
                stream: tuple[int, int, int, int]) -> tuple[Any, Any]:
    """``shape`` outcome ids (as ``otype``) from each row of probabilities along the last axis
    of ``probs``, and their log-probabilities (``probs``' dtype)."""
    lead, outcomes = probs.shape[:-1], probs.shape[-1]
    out = empty_like(probs, (*lead, *shape), otype)
    logp = empty_like(probs, (*lead, *shape), probs.dtype)
    rows, width = math.prod(lead), math.prod(shape)
    probs = contiguous(probs)
    kernel("random_multinomial", (dtype_name(probs.dtype), dtype_name(otype)), probs,
           out.size).sample(probs.reshape(rows, outcomes), out.reshape(rows, width),
                            logp.reshape(rows, width), *stream)
    return out, logp


def unique_zipfian(range_max: int, rows: int, width: int, device: Any,
                   stream: tuple[int, int, int, int]) -> tuple[Any, Any]:
    """``rows`` rows of ``width`` distinct log-uniform classes of ``[0, range_max)`` (int64)
    and the draws each row took (int64), in ``device``'s memory (None: the host)."""
    def empty(shape: tuple[int, ...], dtype: Any) -> Any:
        return (np.empty(shape, dtype) if device is None
                else DeviceArray.empty(shape, dtype, device))

    out, tries = empty((rows, width), INDEX_DTYPE), empty((rows,), INDEX_DTYPE)
    seen = empty((rows, range_max), np.uint8)  # scratch: the kernel clears it
    kernel("random_unique_zipfian", (), out, out.size).sample(
        out, tries, seen, math.log(range_max), *stream)
    return out, tries


STORAGE_RULES: Rules = {
    **{(f"_sample_{dist}", ("default",) * arity): StorageRule("default", sample_arrays)
       for dist, arity in (("uniform", 2), ("normal", 2), ("gamma", 2), ("exponential", 1),
                           ("poisson", 1), ("negative_binomial", 2),
                           ("generalized_negative_binomial", 2))},
    ("_shuffle", ("default",)): StorageRule("default", shuffle),
}
"""Samplers with NDArray parameters, and shuffle (sparse inputs fall back to dense, as MXNet)."""
