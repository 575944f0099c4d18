"""``mx.nd.contrib``'s interleaved attention products (MXNet 1.9.1's fused transformer ops):
``interleaved_matmul_selfatt_qk``, ``_selfatt_valatt``, ``_encdec_qk``, ``_encdec_valatt``.

Projections arrive interleaved per head, ``(seq, batch, heads * parts * head_dim)`` with the
parts (query, key, value) of one head side by side. Each op is composed of strided views,
``transpose``, ``reshape`` and ``batch_dot`` (which run generated kernels); gradients come
from those ops."""

from __future__ import annotations

from ..errors import InvalidValue
from ..params import integer
from .batch import batch_dot
from .contrib_index import delivered
from .contrib_math import div_sqrt_dim
from .indexing import array_arg
from .ndarray import NDArray


def _part(data: NDArray, heads: int, parts: int, index: int, op: str, name: str) -> NDArray:
    """Part ``index`` of ``parts`` of each head of ``data`` (seq, batch, heads * parts * d),
    as ``(batch * heads, seq, d)``."""
    data = array_arg(data, name, op)
    if data.ndim != 3 or data.shape[2] % (heads * parts):
        raise InvalidValue(f"{op}: {name} must have shape (seq_length, batch_size, "
                           f"{heads} heads x {parts} x head_dim), got {data.shape}")
    seq, batch, width = data.shape
    split = data.reshape((seq, batch, heads, parts, width // (heads * parts)))
    picked = split[:, :, :, index, :]  # (seq, batch, heads, d)
    return picked.transpose((1, 2, 0, 3)).reshape((batch * heads, seq, -1))


def _merged(product: NDArray, heads: int) -> NDArray:
    """``(batch * heads, seq, d)`` back to ``(seq, batch, heads * d)``."""
    rows, seq, width = product.shape
    return product.reshape((rows // heads, heads, seq, width)).transpose(
        (2, 0, 1, 3)).reshape((seq, rows // heads, heads * width))


def _heads(heads: int, op: str) -> int:
    return integer(heads, f"{op}: heads", low=1)


def interleaved_matmul_selfatt_qk(queries_keys_values: NDArray, heads: int,
                                  out: NDArray | None = None) -> NDArray:
    """Each head's queries (scaled by ``1 / sqrt(head_dim)``) times its keys, from one
    interleaved projection: ``(batch * heads, seq, seq)``."""
    op = "interleaved_matmul_selfatt_qk"
    heads = _heads(heads, op)
    query = div_sqrt_dim(_part(queries_keys_values, heads, 3, 0, op, "queries_keys_values"))
    key = _part(queries_keys_values, heads, 3, 1, op, "queries_keys_values")
    return delivered(op, batch_dot(query, key, transpose_b=True), out)


def interleaved_matmul_selfatt_valatt(queries_keys_values: NDArray, attention: NDArray,
                                      heads: int, out: NDArray | None = None) -> NDArray:
    """The attention weights ``(batch * heads, seq, seq)`` times each head's values, heads
    merged: ``(seq, batch, heads * head_dim)``."""
    op = "interleaved_matmul_selfatt_valatt"
    heads = _heads(heads, op)
    value = _part(queries_keys_values, heads, 3, 2, op, "queries_keys_values")
    attention = array_arg(attention, "attention", op)
    return delivered(op, _merged(batch_dot(attention, value), heads), out)


def interleaved_matmul_encdec_qk(queries: NDArray, keys_values: NDArray, heads: int,
                                 out: NDArray | None = None) -> NDArray:
    """Each head's decoder queries (scaled by ``1 / sqrt(head_dim)``) times its encoder keys:
    ``(batch * heads, seq_q, seq_kv)``."""
    op = "interleaved_matmul_encdec_qk"
    heads = _heads(heads, op)
    query = div_sqrt_dim(_part(queries, heads, 1, 0, op, "queries"))
    key = _part(keys_values, heads, 2, 0, op, "keys_values")
    return delivered(op, batch_dot(query, key, transpose_b=True), out)


def interleaved_matmul_encdec_valatt(keys_values: NDArray, attention: NDArray, heads: int,
                                     out: NDArray | None = None) -> NDArray:
    """The attention weights ``(batch * heads, seq_q, seq_kv)`` times each head's encoder
    values, heads merged: ``(seq_q, batch, heads * head_dim)``."""
    op = "interleaved_matmul_encdec_valatt"
    heads = _heads(heads, op)
    value = _part(keys_values, heads, 2, 1, op, "keys_values")
    attention = array_arg(attention, "attention", op)
    return delivered(op, _merged(batch_dot(attention, value), heads), out)


__all__ = ["interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt",
           "interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt"]
