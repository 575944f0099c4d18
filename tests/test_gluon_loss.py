"""gluon.loss: every loss against numpy formulas written here (weight, sample_weight,
batch_axis, sparse_label, from_logits, from_sigmoid, pos_weight, label_format), their gradients
against ``check_numeric_gradient`` and, for the cross entropies and L2, against analytic numpy
gradients and numpy central differences of the numpy formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import autograd
from sparsegen.gluon import loss as gloss
from sparsegen.test_utils import assert_almost_equal, check_numeric_gradient

nd = mx.nd
RTOL, ATOL = 1e-4, 1e-5


# -- numpy oracles --------------------------------------------------------------------------------
def per_sample(loss: np.ndarray, batch_axis: int = 0, reduce=np.mean) -> np.ndarray:
    """``loss`` reduced over every axis but ``batch_axis``."""
    others = tuple(k for k in range(loss.ndim) if k != batch_axis)
    return reduce(loss, axis=others) if others else loss


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def bce(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The stable binary cross entropy of logits ``x`` and labels ``z``."""
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def huber(d: np.ndarray, rho: float) -> np.ndarray:
    d = np.abs(d)
    return np.where(d > rho, d - rho / 2, d * d / (2 * rho))


def f32(a) -> np.ndarray:
    return np.asarray(a, np.float32)


def run(loss, *arrays) -> np.ndarray:
    """The loss of numpy ``arrays`` (as float32 NDArrays; positional, as Gluon blocks take)."""
    return loss(*(None if a is None else nd.array(f32(a)) for a in arrays)).asnumpy()


def away_from(values: np.ndarray, rng, gap: float = 0.1) -> np.ndarray:
    """``values`` moved by at least ``gap`` (a random sign): no kink within ``gap``."""
    return values + rng.choice([-1.0, 1.0], values.shape) * rng.uniform(gap, 1.0, values.shape)


# -- values ---------------------------------------------------------------------------------------
def test_l1_l2_with_weight_and_sample_weight():
    rng = np.random.default_rng(0)
    pred, label = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 6))
    sw = rng.uniform(size=(4, 1, 1))
    diff = label.reshape(pred.shape) - pred
    assert_almost_equal(run(gloss.L1Loss(), pred, label), per_sample(np.abs(diff)), RTOL, ATOL)
    assert_almost_equal(run(gloss.L1Loss(weight=3.0), pred, label, sw),
                        per_sample(np.abs(diff) * sw * 3), RTOL, ATOL)
    assert_almost_equal(run(gloss.L2Loss(), pred, label), per_sample(diff ** 2 / 2), RTOL, ATOL)
    assert_almost_equal(run(gloss.L2Loss(weight=0.5), pred, label, sw),
                        per_sample(diff ** 2 / 4 * sw), RTOL, ATOL)


def test_batch_axis_one():
    rng = np.random.default_rng(1)
    pred, label = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    out = run(gloss.L2Loss(batch_axis=1), pred, label)
    assert out.shape == (5,)
    assert_almost_equal(out, per_sample((label - pred) ** 2 / 2, 1), RTOL, ATOL)
    labels = rng.integers(0, 3, (5,))
    out = run(gloss.SoftmaxCrossEntropyLoss(axis=0, batch_axis=1), pred, labels)
    assert_almost_equal(out, -log_softmax(pred, 0)[labels, np.arange(5)], RTOL, ATOL)


@settings(max_examples=15)
@given(batch=st.integers(1, 6), classes=st.integers(1, 5), seed=st.integers(0, 2 ** 16))
def test_softmax_cross_entropy_sparse_labels(batch, classes, seed):
    rng = np.random.default_rng(seed)
    pred = rng.standard_normal((batch, classes)) * 3
    label = rng.integers(0, classes, batch)
    expected = -log_softmax(pred, 1)[np.arange(batch), label]
    assert_almost_equal(run(gloss.SoftmaxCrossEntropyLoss(), pred, label), expected, RTOL, ATOL)
    assert_almost_equal(run(gloss.SoftmaxCELoss(from_logits=True), log_softmax(pred, 1), label),
                        expected, RTOL, ATOL)
    sw = rng.uniform(size=(batch, 1))
    assert_almost_equal(run(gloss.SoftmaxCrossEntropyLoss(weight=2.0), pred, label,
                            sw), expected * sw[:, 0] * 2, RTOL, ATOL)


def test_softmax_cross_entropy_dense_labels_and_axis():
    rng = np.random.default_rng(2)
    pred = rng.standard_normal((2, 4, 3))
    label = rng.dirichlet(np.ones(4), (2, 3)).transpose(0, 2, 1)  # distributions along axis 1
    expected = per_sample(-(log_softmax(pred, 1) * label).sum(axis=1, keepdims=True))
    out = run(gloss.SoftmaxCrossEntropyLoss(axis=1, sparse_label=False), pred, label)
    assert_almost_equal(out, expected, RTOL, ATOL)
    ids = rng.integers(0, 4, (2, 3))
    picked = np.take_along_axis(log_softmax(pred, 1), ids[:, None, :], 1)
    assert_almost_equal(run(gloss.SoftmaxCrossEntropyLoss(axis=1), pred, ids),
                        per_sample(-picked), RTOL, ATOL)


def test_sigmoid_binary_cross_entropy():
    rng = np.random.default_rng(3)
    x, z = rng.standard_normal((5, 3)) * 4, rng.integers(0, 2, (5, 3)).astype(float)
    x[0, 0], x[1, 1] = 30.0, -30.0  # the stable formula: no overflow
    z_prob = rng.uniform(size=(5, 3))
    assert_almost_equal(run(gloss.SigmoidBinaryCrossEntropyLoss(), x, z),
                        per_sample(bce(x, z)), RTOL, ATOL)
    assert_almost_equal(run(gloss.SigmoidBCELoss(weight=0.5), x, z_prob),
                        per_sample(bce(x, z_prob) * 0.5), RTOL, ATOL)
    p = sigmoid(x[1:, :].clip(-3, 3))
    expected = -(z[1:] * np.log(p + 1e-12) + (1 - z[1:]) * np.log(1 - p + 1e-12))
    assert_almost_equal(run(gloss.SigmoidBCELoss(from_sigmoid=True), p, z[1:]),
                        per_sample(expected), 1e-3, 1e-4)


def test_sigmoid_binary_cross_entropy_pos_weight():
    rng = np.random.default_rng(4)
    x, z = rng.standard_normal((4, 3)) * 3, rng.uniform(size=(4, 3))
    pw = rng.uniform(0.5, 3, (1, 3))
    expected = -(pw * z * np.log(sigmoid(x)) + (1 - z) * np.log(1 - sigmoid(x)))
    assert_almost_equal(run(gloss.SigmoidBCELoss(), x, z, None, pw),
                        per_sample(expected), 1e-3, 1e-4)
    p = sigmoid(x)
    expected = -(pw * z * np.log(p + 1e-12) + (1 - z) * np.log(1 - p + 1e-12))
    assert_almost_equal(run(gloss.SigmoidBCELoss(from_sigmoid=True), p, z, None, pw),
                        per_sample(expected), 1e-3, 1e-4)


def test_logistic_hinge_squared_hinge():
    rng = np.random.default_rng(5)
    pred, signed = rng.standard_normal((6, 2)) * 2, rng.choice([-1.0, 1.0], (6, 2))
    assert_almost_equal(run(gloss.LogisticLoss(), pred, signed),
                        per_sample(softplus(-pred * signed)), RTOL, ATOL)
    assert_almost_equal(run(gloss.LogisticLoss(label_format="binary"), pred, (signed + 1) / 2),
                        per_sample(softplus(-pred * signed)), RTOL, ATOL)
    assert_almost_equal(run(gloss.HingeLoss(), pred, signed),
                        per_sample(np.maximum(0, 1 - pred * signed)), RTOL, ATOL)
    assert_almost_equal(run(gloss.HingeLoss(margin=2, weight=3.0), pred, signed),
                        per_sample(np.maximum(0, 2 - pred * signed) * 3), RTOL, ATOL)
    assert_almost_equal(run(gloss.SquaredHingeLoss(margin=0.5), pred, signed),
                        per_sample(np.maximum(0, 0.5 - pred * signed) ** 2), RTOL, ATOL)


def test_kl_divergence_and_huber():
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((3, 4))
    label = rng.dirichlet(np.ones(4), 3)
    expected = per_sample(label * (np.log(label + 1e-12) - log_softmax(logits, 1)),
                          reduce=np.sum)
    assert_almost_equal(run(gloss.KLDivLoss(from_logits=False), logits, label), expected,
                        RTOL, ATOL)
    assert_almost_equal(run(gloss.KLDivLoss(), log_softmax(logits, 1), label), expected,
                        RTOL, ATOL)
    pred, target = rng.standard_normal((3, 4)) * 2, rng.standard_normal((3, 4))
    assert_almost_equal(run(gloss.HuberLoss(rho=0.7), pred, target),
                        per_sample(huber(target - pred, 0.7)), RTOL, ATOL)


def test_one_dimensional_prediction_and_out_of_range_class_ids():
    assert_almost_equal(run(gloss.L1Loss(), [1, 2, 3], [0, 0, 5]), np.array([1.0, 2.0, 2.0]),
                        RTOL, ATOL)
    # class ids outside [0, classes) are clipped, as MXNet's pick(mode='clip')
    pred = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]])
    assert_almost_equal(run(gloss.SoftmaxCELoss(), pred, [7, -2]),
                        -log_softmax(pred, 1)[[0, 1], [2, 0]], RTOL, ATOL)


def test_bad_arguments():
    with pytest.raises(ValueError, match="label_format"):
        gloss.LogisticLoss(label_format="ternary")
    with pytest.raises(TypeError, match="weight"):
        gloss.L1Loss(weight="heavy")
    with pytest.raises(TypeError, match="batch_axis"):
        gloss.L1Loss(batch_axis=0.5)
    with pytest.raises(ValueError, match="same number of elements"):
        gloss.L2Loss()(nd.ones((2, 3)), nd.ones((2, 2)))
    with pytest.raises(mx.MXNetError):
        gloss.LogisticLoss(label_format="ternary")
    assert repr(gloss.L2Loss()) == "L2Loss(batch_axis=0, w=1.0)"


# -- gradients ------------------------------------------------------------------------------------
def _recorded(loss, pred: np.ndarray, *rest: np.ndarray) -> tuple[np.ndarray, ...]:
    """``pred.grad`` after the backward of ``sum(loss(pred, *rest))``."""
    x = nd.array(f32(pred))
    x.attach_grad()
    with autograd.record():
        out = loss(x, *(nd.array(f32(a)) for a in rest))
    out.backward()
    return x.grad.asnumpy()


def numpy_differences(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """The gradient of ``sum(f(x))`` by central differences, in float64."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (f(up).sum() - f(down).sum()) / (2 * h)
    return grad


@settings(max_examples=10)
@given(batch=st.integers(1, 5), classes=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_cross_entropy_gradients_against_numpy(batch, classes, seed):
    rng = np.random.default_rng(seed)
    pred, label = rng.standard_normal((batch, classes)), rng.integers(0, classes, batch)
    sw = rng.uniform(size=(batch, 1))
    grad = _recorded(gloss.SoftmaxCrossEntropyLoss(), pred, label, sw)
    softmax = np.exp(log_softmax(pred, 1))
    assert_almost_equal(grad, (softmax - np.eye(classes)[label]) * sw, RTOL, ATOL)
    z = rng.uniform(size=(batch, classes))
    grad = _recorded(gloss.SigmoidBCELoss(), pred, z)
    assert_almost_equal(grad, (sigmoid(pred) - z) / classes, RTOL, ATOL)


def test_l2_gradient_numpy_differences_and_check_numeric_gradient_agree():
    rng = np.random.default_rng(7)
    pred, label = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    numeric = numpy_differences(lambda p: per_sample((label - p) ** 2 / 2), pred)
    assert_almost_equal(_recorded(gloss.L2Loss(), pred, label), numeric, RTOL, ATOL)
    check_numeric_gradient(lambda p, y: gloss.L2Loss()(p, y), [pred, label])


def _case(name: str, rng) -> tuple[gloss.Loss, np.ndarray, np.ndarray]:
    """A loss, a prediction at least 0.1 from every kink and a label."""
    shape = (3, 4)
    normal, signed = rng.standard_normal(shape), rng.choice([-1.0, 1.0], shape)
    distribution = rng.dirichlet(np.ones(4), 3)
    return {
        "l1": lambda: (gloss.L1Loss(weight=2.0), away_from(normal, rng), normal),
        "softmax_dense": lambda: (gloss.SoftmaxCELoss(sparse_label=False), normal, distribution),
        "sigmoid": lambda: (gloss.SigmoidBCELoss(), normal * 3, rng.uniform(size=shape)),
        "from_sigmoid": lambda: (gloss.SigmoidBCELoss(from_sigmoid=True),
                                 rng.uniform(0.2, 0.8, shape), rng.uniform(size=shape)),
        "logistic": lambda: (gloss.LogisticLoss(), normal * 2, signed),
        "hinge": lambda: (gloss.HingeLoss(), away_from(np.ones(shape), rng) * signed, signed),
        "squared_hinge": lambda: (gloss.SquaredHingeLoss(),
                                  away_from(np.ones(shape), rng) * signed, signed),
        "kl": lambda: (gloss.KLDivLoss(from_logits=False), normal, distribution),
        "huber": lambda: (gloss.HuberLoss(rho=0.5),
                          normal + rng.choice([-1, 1], shape) * rng.choice([0.2, 0.8], shape),
                          normal),
    }[name]()


@pytest.mark.parametrize("name", ["l1", "softmax_dense", "sigmoid", "from_sigmoid", "logistic",
                                  "hinge", "squared_hinge", "kl", "huber"])
def test_loss_gradients_against_central_differences(name):
    loss, pred, label = _case(name, np.random.default_rng(8))
    sw = np.random.default_rng(9).uniform(0.5, 1.5, (3, 1))
    check_numeric_gradient(lambda p, y, w: loss(p, y, w), [pred, label, sw], grad_nodes=[0, 2])


def test_sparse_label_gradient_and_pos_weight_gradient():
    rng = np.random.default_rng(10)
    pred = rng.standard_normal((4, 3))
    label = nd.array(rng.integers(0, 3, 4))
    check_numeric_gradient(lambda p: gloss.SoftmaxCELoss(weight=0.5)(p, label), [pred])
    z, pw = rng.uniform(size=(4, 3)), nd.array(rng.uniform(0.5, 2, (1, 3)))
    check_numeric_gradient(lambda p, y: gloss.SigmoidBCELoss()(p, y, None, pw), [pred, z],
                           grad_nodes=[0])


def test_softmax_cross_entropy_on_an_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    rng = np.random.default_rng(11)
    pred, label = rng.standard_normal((3, 4)), rng.integers(0, 4, 3)
    x = nd.array(f32(pred), ctx=mx.gpu(0))
    x.attach_grad()
    with autograd.record():
        out = gloss.SoftmaxCrossEntropyLoss()(x, nd.array(f32(label), ctx=mx.gpu(0)))
    out.backward()
    assert out.context == mx.gpu(0) and x.grad.context == mx.gpu(0)
    assert_almost_equal(out, -log_softmax(pred, 1)[np.arange(3), label], RTOL, ATOL)
    assert_almost_equal(x.grad, np.exp(log_softmax(pred, 1)) - np.eye(4)[label], RTOL, ATOL)


def test_triplet_poisson_cosine_and_sdml_losses_against_numpy():
    rng = np.random.default_rng(4)
    pred, pos, neg = (rng.standard_normal((5, 3)).astype(np.float32) for _ in range(3))
    got = gloss.TripletLoss(margin=0.5)(mx.nd.array(pred), mx.nd.array(pos),
                                             mx.nd.array(neg)).asnumpy()
    want = np.maximum(((pos - pred) ** 2).sum(1) - ((neg - pred) ** 2).sum(1) + 0.5, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    target = rng.poisson(2.0, (5, 3)).astype(np.float32)
    got = gloss.PoissonNLLLoss()(mx.nd.array(pred), mx.nd.array(target)).asnumpy()
    np.testing.assert_allclose(got, np.mean(np.exp(pred) - target * pred), rtol=1e-5)
    rate = np.exp(pred)
    full = gloss.PoissonNLLLoss(from_logits=False, compute_full=True)
    got = full(mx.nd.array(rate), mx.nd.array(target)).asnumpy()
    stirling = np.where(target > 1, target * np.log(np.maximum(target, 1e-30)) - target
                        + 0.5 * np.log(2 * np.pi * np.maximum(target, 1e-30)), 0)
    want = np.mean(rate - target * np.log(rate + 1e-8) + stirling)
    np.testing.assert_allclose(got, want, rtol=1e-5)

    label = np.array([1, -1, 1, -1, -1], np.float32)
    got = gloss.CosineEmbeddingLoss(margin=0.1)(
        mx.nd.array(pred), mx.nd.array(pos), mx.nd.array(label)).asnumpy()
    cos = (pred * pos).sum(1) / (np.linalg.norm(pred, axis=1) * np.linalg.norm(pos, axis=1))
    want = np.where(label == 1, 1 - cos, np.maximum(cos - 0.1, 0)).reshape(-1, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    smoothing = 0.3
    got = gloss.SDMLLoss(smoothing)(mx.nd.array(pred), mx.nd.array(pos)).asnumpy()
    distances = ((pred[:, None, :] - pos[None, :, :]) ** 2).sum(2)
    logp = -distances - np.log(np.exp(-distances).sum(1, keepdims=True))
    labels = np.where(np.eye(5) > 0, 1 - smoothing, smoothing / 4)
    want = (labels * (np.log(labels + 1e-12) - logp)).sum(1)  # KLDivLoss sums, as MXNet
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
