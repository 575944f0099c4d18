"""mx.optimizer.RuleOptimizer: an optimizer whose update is an update rule works where every
optimizer does (register, create, get_updater, gluon.Trainer, the kvstore); Lion and AdamW
against numpy oracles; a failed update changes nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sparsegen as mx
import sparsegen.updates as U
from sparsegen.errors import SparsegenError


def _lion(w, m, g, lr, b1, b2, wd):
    step = np.sign(b1 * m + (1 - b1) * g)
    return w - lr * (step + wd * w), b2 * m + (1 - b2) * g


def test_lion_by_name_lazy_on_row_sparse() -> None:
    """create('lion') + get_updater: a row_sparse gradient updates only its rows (numpy)."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((6, 4)).astype(np.float32)
    opt = mx.optimizer.create("lion", learning_rate=0.1, wd=0.01, beta1=0.8, beta2=0.95)
    assert isinstance(opt, mx.optimizer.Lion)
    updater = mx.optimizer.get_updater(opt)
    weight = mx.nd.array(w0).tostype("row_sparse")
    w, m = w0.astype(np.float64), np.zeros((6, 4))
    for rows in ([1, 4], [0, 4, 5]):
        g = rng.standard_normal((len(rows), 4)).astype(np.float32)
        grad = mx.nd.sparse.row_sparse_array((g, rows), shape=(6, 4))
        updater(0, grad, weight)
        w[rows], m[rows] = _lion(w[rows], m[rows], g, 0.1, 0.8, 0.95, 0.01)
        np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-6, atol=1e-6)


def test_adamw_bias_correction_dense() -> None:
    """AdamW: bias correction per index folded into lr, decoupled decay (numpy)."""
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((3, 5)).astype(np.float32)
    opt = mx.optimizer.AdamW(learning_rate=0.01, wd=0.1, eta=0.5)
    weight, state = mx.nd.array(w0), None
    state = opt.create_state(0, weight)
    w, m, v = w0.astype(np.float64), np.zeros((3, 5)), np.zeros((3, 5))
    for t in (1, 2, 3):
        g = rng.standard_normal((3, 5)).astype(np.float32)
        opt.update(0, weight, mx.nd.array(g), state)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        lr_t = 0.01 * math.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        w = w - 0.5 * (lr_t * m / (np.sqrt(v) + 1e-8) + 0.1 * w)
        np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-5, atol=1e-6)


def test_user_rule_optimizer_everywhere() -> None:
    """A user's rule as a registered optimizer: create by name, gluon.Trainer, the kvstore."""
    rule = U.register(U.define_update(
        "test_heavy_ball", lambda x, h, g, f: (x.weight + h.beta * x.vel - h.lr * g,
                                               h.beta * x.vel - h.lr * g),
        states=("vel",), hyper=("lr", "beta")))

    @mx.optimizer.register
    class HeavyBall(mx.optimizer.RuleOptimizer):
        """Heavy ball as a user rule."""

        def __init__(self, beta: float = 0.5, **kwargs):
            super().__init__(rule=rule, hyper={"beta": beta}, **kwargs)

    opt = mx.optimizer.create("heavyball", learning_rate=0.1, beta=0.5)
    assert isinstance(opt, HeavyBall)
    net = mx.gluon.nn.Dense(1, in_units=2, use_bias=False)
    net.initialize(mx.init.One())
    trainer = mx.gluon.Trainer(net.collect_params(), "heavyball", {"learning_rate": 0.1})
    w, vel = np.ones((1, 2)), np.zeros((1, 2))
    for _ in range(2):
        with mx.autograd.record():
            loss = net(mx.nd.ones((4, 2))).sum()
        loss.backward()
        trainer.step(4)  # rescale_grad 1/4 is not a hyper-parameter of this rule: grad = 4
        g = np.full((1, 2), 4.0)
        w, vel = w + 0.5 * vel - 0.1 * g, 0.5 * vel - 0.1 * g
        np.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-6, atol=1e-6)
    kv = mx.kv.create("local")
    kv.init("k", mx.nd.ones((2, 3)))
    kv.set_optimizer(mx.optimizer.create("heavyball", learning_rate=0.2, beta=0.5))
    kv.push("k", [mx.nd.ones((2, 3)), mx.nd.ones((2, 3))])  # summed: grad 2
    out = mx.nd.zeros((2, 3))
    kv.pull("k", out=out)
    np.testing.assert_allclose(out.asnumpy(), 1 - 0.2 * 2, rtol=1e-6)


def test_failed_update_changes_nothing() -> None:
    opt = mx.optimizer.create("lion", learning_rate=0.1)
    weight = mx.nd.ones((3, 2))
    state = opt.create_state(0, weight)
    with pytest.raises(SparsegenError, match="shape"):
        opt.update(0, weight, mx.nd.ones((2, 2)), state)
    np.testing.assert_array_equal(weight.asnumpy(), 1)
    np.testing.assert_array_equal(state.asnumpy(), 0)
    assert opt._index_update_count.get(0) is None


def test_row_state_rule_as_an_optimizer() -> None:
    """RowWiseAdagrad (one history value per row, a dense (n,) state) through get_updater on a
    row_sparse weight and gradient: only the gradient's rows change (numpy)."""
    opt = mx.optimizer.RuleOptimizer(rule="rowwise_adagrad", learning_rate=0.1,
                                     hyper={"epsilon": 1e-6})
    updater = mx.optimizer.get_updater(opt)
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    weight = mx.nd.array(w0).tostype("row_sparse")
    w, history = w0.astype(np.float64), np.zeros(5)
    for rows in ([0, 3], [3, 4]):
        g = rng.standard_normal((2, 3)).astype(np.float32)
        updater(0, mx.nd.sparse.row_sparse_array((g, rows), shape=(5, 3)), weight)
        history[rows] += (g.astype(np.float64) ** 2).mean(axis=1)
        w[rows] -= 0.1 * g / (np.sqrt(history[rows])[:, None] + 1e-6)
        np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(updater.states[0].asnumpy(), history, rtol=1e-5)
    with pytest.raises(SparsegenError, match="row state has shape"):
        opt.update(1, mx.nd.ones((5, 3)), mx.nd.ones((5, 3)), mx.nd.zeros((3,)))


def test_rule_optimizer_refusals() -> None:
    with pytest.raises(SparsegenError, match="not a settable"):
        mx.optimizer.RuleOptimizer(rule="lion", hyper={"gamma": 1.0})
    with pytest.raises(SparsegenError, match="not set"):
        opt = mx.optimizer.RuleOptimizer(rule="lion")
        opt.update(0, mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), opt.create_state(0, mx.nd.ones((2, 2))))
