"""``mx.nd.contrib.interleaved_matmul_*`` (MXNet 1.9.1's fused attention products) against a
numpy einsum of the same per-head layout, their gradients by finite differences, symbols and
refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue

C = mx.nd.contrib


def _heads(x: np.ndarray, heads: int, parts: int) -> np.ndarray:
    """(seq, batch, heads*parts*d) -> (parts, batch*heads, seq, d)."""
    seq, batch, width = x.shape
    split = x.reshape(seq, batch, heads, parts, width // (heads * parts))
    return split.transpose(3, 1, 2, 0, 4).reshape(parts, batch * heads, seq, -1)


def _merge(x: np.ndarray, heads: int) -> np.ndarray:
    rows, seq, width = x.shape
    return x.reshape(rows // heads, heads, seq, width).transpose(2, 0, 1, 3).reshape(
        seq, rows // heads, heads * width)


@settings(max_examples=10, deadline=None)
@given(seq=st.integers(1, 4), seq_q=st.integers(1, 3), batch=st.integers(1, 3),
       heads=st.integers(1, 3), dim=st.integers(1, 4))
def test_against_numpy(seq: int, seq_q: int, batch: int, heads: int, dim: int) -> None:
    rng = np.random.default_rng(seq * 1000 + seq_q * 100 + batch * 10 + heads + dim)
    qkv = rng.standard_normal((seq, batch, heads * 3 * dim))
    q = rng.standard_normal((seq_q, batch, heads * dim))
    kv = rng.standard_normal((seq, batch, heads * 2 * dim))
    att = rng.standard_normal((batch * heads, seq, seq))
    att2 = rng.standard_normal((batch * heads, seq_q, seq))
    sq, sk, sv = _heads(qkv, heads, 3)
    (eq,), (ek, ev) = _heads(q, heads, 1), _heads(kv, heads, 2)
    cases = [
        (C.interleaved_matmul_selfatt_qk(mx.nd.array(qkv), heads=heads),
         np.einsum("bqd,bkd->bqk", sq / np.sqrt(dim), sk)),
        (C.interleaved_matmul_selfatt_valatt(mx.nd.array(qkv), mx.nd.array(att), heads=heads),
         _merge(att @ sv, heads)),
        (C.interleaved_matmul_encdec_qk(mx.nd.array(q), mx.nd.array(kv), heads=heads),
         np.einsum("bqd,bkd->bqk", eq / np.sqrt(dim), ek)),
        (C.interleaved_matmul_encdec_valatt(mx.nd.array(kv), mx.nd.array(att2), heads=heads),
         _merge(att2 @ ev, heads)),
    ]
    for got, want in cases:
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-4)


def test_gradient_by_finite_differences() -> None:
    rng = np.random.default_rng(0)
    qkv = rng.standard_normal((3, 2, 2 * 3 * 2))

    def loss(values: np.ndarray) -> float:
        out = C.interleaved_matmul_selfatt_qk(mx.nd.array(values, dtype="float64"), heads=2)
        return float((out.asnumpy() ** 2).sum())

    x = mx.nd.array(qkv, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        (C.interleaved_matmul_selfatt_qk(x, heads=2) ** 2).sum().backward()
    numeric = np.zeros_like(qkv)
    for index in np.ndindex(qkv.shape):
        step = np.zeros_like(qkv)
        step[index] = 1e-6
        numeric[index] = (loss(qkv + step) - loss(qkv - step)) / 2e-6
    np.testing.assert_allclose(x.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-6)


def test_symbol_and_refusals() -> None:
    sym = mx.sym.contrib.interleaved_matmul_selfatt_qk(mx.sym.var("qkv"), heads=2)
    got = sym.eval(qkv=mx.nd.ones((3, 1, 12)))[0]
    np.testing.assert_allclose(got.asnumpy(), np.full((2, 3, 3), 2 / np.sqrt(2)), rtol=1e-6)
    with pytest.raises(InvalidValue, match=r"2 heads x 3 x head_dim\), got \(3, 1, 10\)"):
        C.interleaved_matmul_selfatt_qk(mx.nd.ones((3, 1, 10)), heads=2)
    with pytest.raises(mx.MXNetError, match="heads must be at least 1"):
        C.interleaved_matmul_encdec_qk(mx.nd.ones((3, 1, 4)), mx.nd.ones((3, 1, 8)), heads=0)
