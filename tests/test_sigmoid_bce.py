"""The fused sigmoid binary cross entropy (``nd._internal._sigmoid_bce`` and its gradient kernel)
against numpy formulas written here and values recorded from MXNet 1.9.1, over shapes, dtypes
and extreme logits (0, -0, +-30, +-1e4, inf, nan); Gluon's SigmoidBinaryCrossEntropyLoss runs it
for dense logits and labels of one dtype and the composed ops otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sparsegen as mx
from sparsegen import autograd
from sparsegen.gluon import loss as gloss
from sparsegen.ndarray import dispatch

nd = mx.nd
EXTREME = np.array([0.0, -0.0, 1e-8, -1e-8, 0.5, -2.0, 30.0, -30.0, 1e4, -1e4, np.inf, -np.inf,
                    np.nan])
TOLERANCE = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}


def bce(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``max(x, 0) - x z + log1p(exp(-|x|))`` in float64."""
    x, z = x.astype(np.float64), z.astype(np.float64)
    with np.errstate(all="ignore"):
        return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def bce_grad(g: np.ndarray, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``g ([x > 0] - z - sigmoid(-|x|) sign(x))``: the composed loss's derivative (``-g z`` at
    0, nan for nan), in float64."""
    g, x, z = (a.astype(np.float64) for a in (g, x, z))
    with np.errstate(all="ignore"):
        return g * ((x > 0) - z - np.sign(x) / (1 + np.exp(np.abs(x))))


def close(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol, equal_nan=True)


def test_extreme_logits_against_numpy():
    x = np.repeat(EXTREME, 3)
    z = np.tile([0.0, 1.0, 0.3], EXTREME.size)
    g = np.tile([1.0, -2.0, 0.5], EXTREME.size)
    for dtype in ("float16", "float32", "float64"):
        xs, zs, gs = (nd.array(a, dtype=dtype) for a in (x, z, g))
        cast = [a.astype(dtype) for a in (x, z, g)]
        close(nd._internal._sigmoid_bce(xs, zs).asnumpy(), bce(cast[0], cast[1]), dtype)
        close(nd._internal._sigmoid_bce_grad(gs, xs, zs).asnumpy(), bce_grad(cast[2], cast[0],
                                                                             cast[1]), dtype)


def test_nan_and_infinite_logits():
    x = nd.array([np.nan, np.inf, -np.inf, np.inf])
    z = nd.array([1.0, 1.0, 0.0, 0.0])
    loss = nd._internal._sigmoid_bce(x, z).asnumpy()
    assert np.isnan(loss).all()  # inf - inf and inf * 0 in the formula, as MXNet's composed ops
    grad = nd._internal._sigmoid_bce_grad(nd.ones((4,)), x, z).asnumpy()
    assert np.isnan(grad[0]) and grad[1] == 0 and grad[2] == 0 and grad[3] == 1


@settings(max_examples=25, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=80),
       dtype=st.sampled_from(["float16", "float32", "float64"]), seed=st.integers(0, 2**31 - 1))
def test_shapes_and_dtypes_against_numpy(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 8).astype(dtype)
    z = rng.uniform(size=shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    loss = nd._internal._sigmoid_bce(nd.array(x, dtype=dtype), nd.array(z, dtype=dtype))
    assert loss.shape == shape and loss.dtype == np.dtype(dtype)
    close(loss.asnumpy(), bce(x, z), dtype)
    grad = nd._internal._sigmoid_bce_grad(nd.array(g, dtype=dtype), nd.array(x, dtype=dtype),
                                          nd.array(z, dtype=dtype))
    close(grad.asnumpy(), bce_grad(g, x, z), dtype)


def _fixture(values) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in values], np.float64)


def test_values_and_gradients_recorded_from_mxnet():
    """MXNet 1.9.1's SigmoidBCELoss of extreme logits under a head gradient, and the gradients
    of logits and labels (tests/fixtures/record_sigmoid_bce.py)."""
    record = json.loads((Path(__file__).parent / "fixtures" / "sigmoid_bce.json").read_text())
    pred, label = nd.array(_fixture(record["x"])), nd.array(_fixture(record["z"]))
    pred.attach_grad()
    label.attach_grad()
    with autograd.record():
        loss = gloss.SigmoidBCELoss()(pred, label)
    loss.backward(nd.array(record["head"]))
    for got, want in ((loss.asnumpy(), _fixture([record["loss"]])[0]),
                      (pred.grad.asnumpy(), _fixture(record["grad_x"])),
                      (label.grad.asnumpy(), _fixture(record["grad_z"]))):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True)


def test_loss_gradients_through_autograd(rng):
    x = (rng.standard_normal((64, 3)) * 4).astype(np.float32)
    z = rng.uniform(size=(64, 3)).astype(np.float32)
    pred, label = nd.array(x), nd.array(z)
    pred.attach_grad()
    label.attach_grad()
    with autograd.record():
        loss = gloss.SigmoidBCELoss(weight=0.5)(pred, label)
    head = rng.standard_normal(64).astype(np.float32)
    loss.backward(nd.array(head))
    np.testing.assert_allclose(loss.asnumpy(), 0.5 * bce(x, z).mean(axis=1), rtol=1e-5)
    spread = 0.5 * head[:, None] / 3
    np.testing.assert_allclose(pred.grad.asnumpy(), bce_grad(np.broadcast_to(spread, x.shape),
                                                             x, z), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(label.grad.asnumpy(), -spread * x, rtol=1e-5, atol=1e-7)


def _ops_run(monkeypatch, *arrays) -> list[str]:
    """The ops SigmoidBCELoss invokes on ``arrays`` (logits, labels)."""
    seen: list[str] = []
    invoke = dispatch.invoke

    def spy(op, *args, **kwargs):
        seen.append(op)
        return invoke(op, *args, **kwargs)

    for module in (dispatch, mx.ndarray.nn, mx.ndarray.elemwise):
        if getattr(module, "invoke", None) is invoke:
            monkeypatch.setattr(module, "invoke", spy)
    gloss.SigmoidBCELoss()(*arrays)
    return seen


def test_the_loss_runs_the_fused_op_only_where_it_serves(monkeypatch):
    x = np.array([[0.5], [-1.0]], np.float32)
    assert "_sigmoid_bce" in _ops_run(monkeypatch, nd.array(x), nd.array([1.0, 0.0]))
    # labels of another dtype take the composed ops, whose dtype rule refuses them, as before
    with pytest.raises(mx.MXNetError, match="must have one dtype"):
        _ops_run(monkeypatch, nd.array(x), nd.array([1.0, 0.0], dtype="float64"))


@pytest.mark.parametrize("call, message", [
    (lambda: nd._internal._sigmoid_bce(nd.ones((2, 3)), nd.ones((3, 2))),
     "_sigmoid_bce: label has shape (3, 2) and dtype float32, data (2, 3) and float32"),
    (lambda: nd._internal._sigmoid_bce(nd.ones((2,)), nd.ones((2,), dtype="float64")),
     "label has shape (2,) and dtype float64, data (2,) and float32"),
    (lambda: nd._internal._sigmoid_bce(nd.ones((2,), dtype="int32"), nd.ones((2,), dtype="int32")),
     "_sigmoid_bce takes floating point data"),
    (lambda: nd._internal._sigmoid_bce_grad(nd.ones((2,)), nd.ones((2,)), nd.ones((3,))),
     "_sigmoid_bce_grad: label has shape (3,)"),
    (lambda: nd._internal._sigmoid_bce(nd.ones((2,)), nd.ones((2,)), out=nd.ones((3,))),
     "out has shape (3,)"),
])
def test_bad_operands_are_refused(call, message):
    with pytest.raises(mx.MXNetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_out_is_written():
    out = nd.zeros((3,))
    result = nd._internal._sigmoid_bce(nd.array([0.0, 1.0, -1.0]), nd.array([0.0, 1.0, 0.0]),
                                       out=out)
    assert result is out
    np.testing.assert_allclose(out.asnumpy(), bce(np.array([0.0, 1.0, -1.0]),
                                                  np.array([0.0, 1.0, 0.0])), rtol=1e-6)
