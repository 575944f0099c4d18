"""Output (loss) ops of mx.nd: forward values and MXNet's special backward passes, against
values recorded from MXNet 1.9.1 (tests/fixtures/record_output_kvstore.py) and numpy oracles."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue, StorageFallbackWarning

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" /
                      "output_kvstore.json").read_text())


def _run(op: str, data: np.ndarray, label: np.ndarray | None, head: float = 3.0, **kwargs):
    """(forward values, data gradient) of ``mx.nd.<op>`` under a head gradient ``head``."""
    x = mx.nd.array(data)
    x.attach_grad()
    args = (x,) if label is None else (x, mx.nd.array(label))
    with mx.autograd.record():
        y = getattr(mx.nd, op)(*args, **kwargs)
    y.backward(mx.nd.ones(y.shape) * head)
    return y.asnumpy(), x.grad.asnumpy()


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("case", FIXTURE["cases"],
                         ids=[f"{c['op']}-{c['kwargs']}" for c in FIXTURE["cases"]])
def test_matches_mxnet(case):
    label = None if case["label"] is None else np.array(case["label"], np.float32)
    out, grad = _run(case["op"], np.array(case["data"], np.float32), label, **case["kwargs"])
    np.testing.assert_allclose(out, case["out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, case["grad"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_sparse_data_storage_types_match_mxnet(stype):
    x2 = np.array(FIXTURE["cases"][0]["data"], np.float32)
    x = mx.nd.array(x2).tostype(stype)
    label = mx.nd.array(FIXTURE["cases"][0]["label"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = {"SoftmaxOutput": mx.nd.SoftmaxOutput(x, label),
                   "LinearRegressionOutput": mx.nd.LinearRegressionOutput(x, mx.nd.array(x2)),
                   "MakeLoss": mx.nd.MakeLoss(x), "BlockGrad": mx.nd.BlockGrad(x)}
    assert {op: r.stype for op, r in results.items()} == FIXTURE["stypes"][stype]
    assert any(issubclass(w.category, StorageFallbackWarning) for w in caught)
    np.testing.assert_allclose(results["SoftmaxOutput"].asnumpy(), _softmax(x2, 1), rtol=1e-5)
    np.testing.assert_array_equal(results["BlockGrad"].asnumpy(), x2)


def test_sparse_data_gradient_is_dense_softmax_minus_onehot():
    x2 = np.array([[1.0, 0.0, -2.0], [0.0, 0.0, 0.0]], np.float32)
    x = mx.nd.array(x2).tostype("csr")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SoftmaxOutput(x, mx.nd.array([2, 0]))
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), _softmax(x2, 1) - np.eye(3)[[2, 0]], rtol=1e-5,
                               atol=1e-7)


@given(n=st.integers(1, 7), k=st.integers(1, 6), seed=st.integers(0, 2**31),
       normalization=st.sampled_from(("null", "batch", "valid")),
       use_ignore=st.booleans(), grad_scale=st.sampled_from((1.0, 0.5, 3.0)),
       alpha=st.sampled_from((0.0, 0.1)), dtype=st.sampled_from(("float32", "float64")))
def test_softmax_output_gradient_oracle(n, k, seed, normalization, use_ignore, grad_scale,
                                        alpha, dtype):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(dtype)
    label = rng.integers(-1, k + 1, n).astype(dtype)  # -1: ignored (or no target), k: off range
    out, grad = _run("SoftmaxOutput", x, label, normalization=normalization,
                     use_ignore=use_ignore, grad_scale=grad_scale, smooth_alpha=alpha)
    p = _softmax(x.astype(np.float64), 1)
    target = np.full((n, k), alpha / (k - 1) if k > 1 else 0.0)
    for row, lab in enumerate(label.astype(int)):
        if 0 <= lab < k:
            target[row, lab] = 1 - alpha
    keep = (label != -1) if use_ignore else np.ones(n, bool)
    divisor = {"null": 1, "batch": n, "valid": max((label != -1).sum(), 1)}  # MXNet counts
    # the labels other than ignore_label for "valid", use_ignore or not
    want = (p - target) * keep[:, None] * grad_scale / divisor[normalization]
    np.testing.assert_allclose(out, p, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grad, want, rtol=1e-4, atol=1e-6)


@given(shape=st.sampled_from(((3, 1), (2, 4), (2, 3, 2), (1, 5))), seed=st.integers(0, 2**31),
       grad_scale=st.sampled_from((1.0, 2.5)),
       op=st.sampled_from(("LinearRegressionOutput", "LogisticRegressionOutput",
                           "MAERegressionOutput")))
def test_regression_outputs_oracle(shape, seed, grad_scale, op):
    rng = np.random.default_rng(seed)
    x, label = rng.standard_normal(shape), rng.standard_normal(shape)
    x[0].flat[0] = -0.0
    out, grad = _run(op, x, label, head=7.0, grad_scale=grad_scale)
    y = 1 / (1 + np.exp(-x)) if op.startswith("Logistic") else x
    d = np.sign(y - label) if op.startswith("MAE") else y - label
    np.testing.assert_allclose(out, y, rtol=1e-5)
    np.testing.assert_allclose(grad, d * grad_scale * shape[0] / x.size, rtol=1e-5, atol=1e-7)


def test_labels_get_no_gradient_and_block_grad_stops_one_path():
    x, label = mx.nd.array([[1.0, 2.0], [0.5, -1.0]]), mx.nd.array([1, 0])
    x.attach_grad()
    label.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SoftmaxOutput(x, label)
    y.backward()
    np.testing.assert_array_equal(label.grad.asnumpy(), [0, 0])
    with mx.autograd.record():
        z = mx.nd.stop_gradient(x) * 4 + mx.nd.BlockGrad(x * x) + x
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones((2, 2)))


def test_out_grad_multiplies_the_head_gradient():
    x = np.array([[0.3, -1.0, 2.0]], np.float32)
    _, grad = _run("SoftmaxOutput", x, np.array([1], np.float32), head=2.0, out_grad=True)
    np.testing.assert_allclose(grad, 2 * (_softmax(x, 1) - [[0, 1, 0]]), rtol=1e-5)


def test_nan_and_empty_batch():
    _, grad = _run("MakeLoss", np.array([[np.nan, 1.0]]), None)
    np.testing.assert_array_equal(grad, [[1.0, 1.0]])  # the head gradient (3) is ignored
    out, grad = _run("LinearRegressionOutput", np.zeros((0, 3)), np.zeros((0, 3)))
    assert out.shape == grad.shape == (0, 3)


@pytest.mark.parametrize("call, match", [
    (lambda: mx.nd.SoftmaxOutput(mx.nd.ones((2, 3)), mx.nd.ones((3,))), "label has shape"),
    (lambda: mx.nd.SoftmaxOutput(mx.nd.ones((2, 3)), mx.nd.ones((2,)), normalization="mean"),
     "normalization"),
    (lambda: mx.nd.SoftmaxOutput(mx.nd.ones((2, 3, 4)), mx.nd.ones((2,))), "multi_output"),
    (lambda: mx.nd.SoftmaxOutput(mx.nd.ones((3,)), mx.nd.ones((3,))), "dimensions"),
    (lambda: mx.nd.SoftmaxOutput(mx.nd.ones((2, 3)), mx.nd.ones((2,)), smooth_alpha=2.0),
     "smooth_alpha"),
    (lambda: mx.nd.LinearRegressionOutput(mx.nd.ones((2, 3)), mx.nd.ones((2, 2))),
     "label has shape"),
    (lambda: mx.nd.MakeLoss(mx.nd.ones((2,)), grad_scale="x"), "grad_scale"),
    (lambda: mx.nd.BlockGrad([1, 2]), "data"),
])
def test_bad_input(call, match):
    with pytest.raises(mx.MXNetError, match=match):
        call()


def test_names():
    assert mx.nd.Softmax is mx.nd.SoftmaxOutput and mx.nd.stop_gradient is mx.nd.BlockGrad


def test_invalid_value_class():
    with pytest.raises(InvalidValue):
        mx.nd.MakeLoss(mx.nd.ones((2,)), normalization="all")


@pytest.mark.parametrize("normalization", ["null", "batch", "valid"])
@pytest.mark.parametrize("preserve_shape", [False, True])
def test_softmax_output_probability_labels(normalization, preserve_shape):
    """A label of the data's shape holds probabilities: the gradient is ``(softmax - label) *
    grad_scale`` whatever the normalization (MXNet 1.9.1, checked by hand in its session)."""
    rng = np.random.RandomState(7)
    shape = (2, 3, 4) if preserve_shape else (4, 6)
    x = rng.randn(*shape).astype(np.float32)
    label = np.exp(rng.randn(*shape)).astype(np.float32)
    label /= label.sum(axis=-1, keepdims=True)
    data = mx.nd.array(x)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.SoftmaxOutput(data, mx.nd.array(label), grad_scale=2.0,
                                  normalization=normalization, preserve_shape=preserve_shape)
    out.backward()
    soft = np.exp(x - x.max(axis=-1, keepdims=True))
    soft /= soft.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(out.asnumpy(), soft, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(data.grad.asnumpy(), (soft - label) * 2.0, rtol=1e-4, atol=1e-6)


@given(st.sampled_from(["default", "row_sparse", "csr"]), st.integers(1, 5), st.integers(1, 4),
       st.floats(-3, 3))
def test_make_loss_keeps_the_storage_and_its_gradient_is_one(stype, rows, cols, head):
    # MXNet 1.9.1's make_loss: the data itself (csr stays csr), gradient 1 everywhere whatever
    # the head gradient; through another op the chain rule applies (2 for x * 2)
    values = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) % 3
    x = mx.nd.array(values).tostype(stype)
    x.attach_grad(stype=stype)
    with mx.autograd.record():
        y = mx.nd.make_loss(x)
    assert y.stype == stype
    np.testing.assert_array_equal(y.asnumpy(), values)
    y.backward(mx.nd.full((rows, cols), head))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones((rows, cols), np.float32))
    d = mx.nd.array(values)
    d.attach_grad()
    with mx.autograd.record():
        z = mx.nd.make_loss(d * 2)
    z.backward(mx.nd.full((rows, cols), head))
    np.testing.assert_array_equal(d.grad.asnumpy(), np.full((rows, cols), 2, np.float32))


def test_make_loss_symbol_writes_mxnets_op_and_trains():
    a = mx.sym.var("a")
    loss = mx.sym.make_loss(mx.sym.square(a))
    assert [n["op"] for n in json.loads(loss.tojson())["nodes"]] == ["null", "square", "make_loss"]
    executor = loss.simple_bind(mx.cpu(), a=(2, 3))
    executor.forward(is_train=True, a=mx.nd.full((2, 3), 3.0))
    executor.backward()
    np.testing.assert_array_equal(executor.grad_dict["a"].asnumpy(), np.full((2, 3), 6.0))
    with pytest.raises(mx.MXNetError, match="data"):
        mx.nd.make_loss([1.0, 2.0])
