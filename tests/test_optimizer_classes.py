"""Optimizer classes RMSProp, NAG, Signum, AdaDelta, Adamax, Nadam, LAMB: several steps against a numpy
reference of MXNet 1.9.1's documented equations (per-index counts, lr schedules, multipliers),
state storage types, row_sparse and csr gradients, float16 weights with multi_precision."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import StorageFallbackWarning
from test_gpu import gpu  # noqa: F401 - the fixture: emulated (host) and real CUDA GPUs
from test_optimizer_ops import F, _clip, _step

# -- the reference: one step of each class, float32 -------------------------------------------


def _class_step(name, kw, t, w, g, states, lr, wd, extra):
    """(weight, states) after step ``t`` (1-based) of optimizer ``name`` with options ``kw``."""
    p = {"lr": lr, "wd": wd, "rescale_grad": kw.get("rescale_grad", 1.0),
         "clip_gradient": kw.get("clip_gradient") or -1.0}
    rg, cg, one = F(p["rescale_grad"]), p["clip_gradient"], F(1)
    if name == "rmsprop":
        p.update(gamma1=kw.get("gamma1", 0.9), gamma2=kw.get("gamma2", 0.9),
                 epsilon=kw.get("epsilon", 1e-8), clip_weights=kw.get("clip_weights") or -1)
        return _step("rmspropalex_update" if kw.get("centered") else "rmsprop_update",
                     w, g, states, p)
    if name == "nag":
        p["momentum"] = kw.get("momentum", 0.0)
        return _step("nag_mom_update" if states else "sgd_update", w, g, states, p)
    if name == "signum":
        p.update(momentum=kw.get("momentum", 0.9), wd_lh=kw.get("wd_lh", 0.0))
        if not states:
            p["wd"] = wd + p.pop("wd_lh")
            return _step("signsgd_update", w, g, states, p)
        return _step("signum_update", w, g, states, p)
    if name == "adadelta":
        rho, eps = F(kw.get("rho", 0.9)), F(kw.get("epsilon", 1e-5))
        r = _clip(rg * g, cg)
        acc_g = rho * states[0] + (one - rho) * r * r
        delta = np.sqrt(states[1] + eps) / np.sqrt(acc_g + eps) * r
        acc_delta = rho * states[1] + (one - rho) * delta * delta
        return w - (delta + F(wd) * w), [acc_g, acc_delta]
    b1, b2 = kw.get("beta1", 0.9), kw.get("beta2", 0.999)
    r = _clip(rg * g + F(wd) * w, cg)
    mean = F(b1) * states[0] + (one - F(b1)) * r
    if name == "adamax":
        u = np.maximum(F(b2) * states[1], np.abs(r))
        return w - F(lr / (1 - b1**t)) * mean / u, [mean, u]
    if name == "lamb":
        b1, b2, eps = kw.get("beta1", 0.9), kw.get("beta2", 0.999), F(kw.get("epsilon", 1e-6))
        r = _clip(rg * g, cg)
        mean = F(b1) * states[0] + (one - F(b1)) * r
        var = F(b2) * states[1] + (one - F(b2)) * r * r
        step = mean / F(1 - b1**t) / (np.sqrt(var / F(1 - b2**t)) + eps) + F(wd) * w
        r1, r2 = np.linalg.norm(w), np.linalg.norm(step)
        r1 = min(max(r1, kw.get("lower_bound", 0)), kw.get("upper_bound", np.inf))
        ratio = r1 / r2 if r1 > 0 and r2 > 0 else 1.0
        return w - F(lr * ratio) * step, [mean, var]
    assert name == "nadam"
    decay, eps = kw.get("schedule_decay", 0.004), F(kw.get("epsilon", 1e-8))
    mom_t = b1 * (1 - 0.5 * 0.96 ** (t * decay))
    mom_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * decay))
    extra["m"] = extra.get("m", 1.0) * mom_t
    var = F(b2) * states[1] + (one - F(b2)) * r * r
    bar = (F(1 - mom_t) * r * F(1 / (1 - extra["m"]))
           + F(mom_next) * mean * F(1 / (1 - extra["m"] * mom_next)))
    return w - F(lr) * bar / (np.sqrt(var * F(1 / (1 - b2**t))) + eps), [mean, var]


CLASSES = [
    ("rmsprop", {"wd": 0.05, "clip_gradient": 0.5, "rescale_grad": 0.7}),
    ("rmsprop", {"centered": True, "clip_weights": 0.9, "gamma1": 0.8, "gamma2": 0.7}),
    ("nag", {"momentum": 0.9, "wd": 0.05, "clip_gradient": 0.4}),
    ("nag", {"wd": 0.05}),
    ("signum", {"wd": 0.05, "wd_lh": 0.01, "clip_gradient": 0.3, "learning_rate": 0.05}),
    ("signum", {"momentum": 0.0, "wd": 0.05, "wd_lh": 0.02}),
    ("adadelta", {"wd": 0.05, "rescale_grad": 0.5, "clip_gradient": 0.4, "epsilon": 1e-3}),
    ("adamax", {"wd": 0.05, "clip_gradient": 0.5, "learning_rate": 0.01}),
    ("nadam", {"wd": 0.05, "learning_rate": 0.01}),
    ("lamb", {"wd": 0.05, "clip_gradient": 0.5, "learning_rate": 0.05}),
    ("lamb", {"lower_bound": 0.5, "upper_bound": 1.0}),
]
STATE_STYPES = {"rmsprop": "weight", "nag": "default", "signum": "weight", "adadelta": "default",
                "adamax": "default", "nadam": "default", "lamb": "weight"}


def _states(state):
    return [] if state is None else list(state) if isinstance(state, tuple) else [state]


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(CLASSES), weight_stype=st.sampled_from(["default", "row_sparse"]),
       grad_stype=st.sampled_from(["default", "row_sparse", "csr"]),
       n=st.integers(1, 5), d=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_steps_match_the_reference(case, weight_stype, grad_stype, n, d, seed):
    name, kw = case
    rng = np.random.default_rng(seed)
    opt = mx.optimizer.create(name, **kw)
    opt.set_lr_mult({0: 0.5})
    w = rng.uniform(-1, 1, (n, d)).astype(F)
    weight = mx.nd.array(w).tostype(weight_stype)
    state = opt.create_state(0, weight)
    ref = [np.zeros((n, d), F) for _ in _states(state)]
    for s in _states(state):
        assert s.stype == (weight_stype if STATE_STYPES[name] == "weight" else "default")
    extra = {}
    for t in (1, 2, 3):
        g = rng.uniform(-1, 1, (n, d)).astype(F)
        g[rng.random(n) < 0.5] = 0
        with warnings.catch_warnings():  # MXNet has no row_sparse kernel for these: fallback
            warnings.simplefilter("ignore", StorageFallbackWarning)
            opt.update(0, weight, mx.nd.array(g).tostype(grad_stype), state)
        lr = 0.5 * kw.get("learning_rate", {"rmsprop": 0.001, "nadam": 0.001, "lamb": 0.001,
                                            "adamax": 0.002}.get(name, 0.01))
        stepped, ref = _class_step(name, kw, t, w, g, ref, lr, kw.get("wd", 0.0), extra)
        if name == "nag" and not ref and grad_stype == "row_sparse":  # sgd_update: lazy
            stepped = np.where(g.any(axis=1, keepdims=True), stepped, w)
        w = stepped
        np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-4, atol=1e-6)
        for s, want in zip(_states(state), ref):
            np.testing.assert_allclose(s.asnumpy(), want, rtol=1e-4, atol=1e-6)
    assert opt._index_update_count == {0: 3} and opt.num_update == 3
    assert weight.stype == weight_stype


@pytest.mark.parametrize("name, kw", [("sgd", {"momentum": 0.9}), ("nag", {"momentum": 0.9}),
                                      ("rmsprop", {"centered": True}), ("adadelta", {}),
                                      ("adam", {}), ("lamb", {})])
def test_multi_precision_keeps_a_float32_master_copy(name, kw):
    opt = mx.optimizer.create(name, multi_precision=True, learning_rate=0.1, **kw)
    w = np.array([[1.0, -0.5], [0.25, 2.0]], F)
    weight = mx.nd.array(w, dtype="float16")
    state = opt.create_state_multi_precision(0, weight)
    master, inner = (state[1], state[0]) if name in ("sgd", "nag") else state
    assert master.dtype == np.float32 and weight.dtype == np.float16
    reference = mx.optimizer.create(name, learning_rate=0.1, **kw)  # float32 all along
    w32 = mx.nd.array(w)
    s32 = reference.create_state(0, w32)
    for step in range(3):
        g = np.full((2, 2), 1e-3 * (step + 1), F)
        opt.update_multi_precision(0, weight, mx.nd.array(g, dtype="float16"), state)
        reference.update(0, w32, mx.nd.array(g.astype(np.float16).astype(F)), s32)
    np.testing.assert_allclose(master.asnumpy(), w32.asnumpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(weight.asnumpy(), w32.asnumpy().astype(np.float16))
    for a, b in zip(_states(inner), _states(s32)):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-7)


def test_float16_without_multi_precision_warns_and_updates_in_float16():
    opt = mx.optimizer.RMSProp(learning_rate=0.1)
    weight = mx.nd.ones((2, 2), dtype="float16")
    with pytest.warns(UserWarning, match="multi_precision=True"):
        state = opt.create_state_multi_precision(0, weight)
    opt.update_multi_precision(0, weight, mx.nd.ones((2, 2), dtype="float16"), state)
    assert state[0].dtype == np.float16
    expected = np.float16(1 - 0.1 * 1 / math.sqrt(0.1 + 1e-8))
    np.testing.assert_allclose(weight.asnumpy(), expected, rtol=1e-3)


def test_csr_weight_updates_through_a_dense_copy_as_mxnet(fresh_warnings):
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    weight = mx.nd.array([[1.0, 0.0], [0.0, 2.0]]).tostype("csr")
    state = opt.create_state(0, weight)
    assert state.stype == "csr"
    with pytest.warns(StorageFallbackWarning):
        opt.update(0, weight, mx.nd.ones((2, 2)), state)
    assert weight.stype == "csr" and state.stype == "csr"
    np.testing.assert_allclose(weight.asnumpy(), [[0.9, -0.1], [-0.1, 1.9]], rtol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), -0.1, rtol=1e-6)


def test_registry_create_register_and_updater():
    for name, klass in [("RMSProp", mx.optimizer.RMSProp), ("nag", mx.optimizer.NAG),
                        ("SIGNUM", mx.optimizer.Signum), ("adadelta", mx.optimizer.AdaDelta),
                        ("adamax", mx.optimizer.Adamax), ("nadam", mx.optimizer.Nadam),
                        ("LAMB", mx.optimizer.LAMB)]:
        assert type(mx.optimizer.create(name)) is klass
    with pytest.raises(ValueError, match="Cannot find optimizer"):
        mx.optimizer.create("no_such_optimizer")

    @mx.optimizer.register
    class HalfStep(mx.optimizer.SGD):
        """SGD at half the learning rate."""

        def _get_lr(self, index, num_update=None):
            return 0.5 * super()._get_lr(index, num_update)

    updater = mx.optimizer.get_updater(mx.optimizer.create("halfstep", learning_rate=1.0))
    weight = mx.nd.ones((2,))
    updater(0, mx.nd.ones((2,)), weight)
    np.testing.assert_allclose(weight.asnumpy(), 0.5)
    del mx.optimizer.Optimizer.opt_registry["halfstep"]


def test_wd_mult_defaults_by_parameter_name_and_lr_scheduler_wiring():
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=8.0)
    opt = mx.optimizer.Signum(momentum=0.0, learning_rate=1.0, lr_scheduler=sched, wd=0.1,
                              param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"})
    assert sched.base_lr == 1.0  # learning_rate given: it overrides the scheduler's
    assert opt._get_wd(0) == opt._get_wd(2) == pytest.approx(0.1) and opt._get_wd(1) == 0.0
    opt.set_wd_mult({"fc_bias": 2.0})
    assert opt._get_wd(1) == pytest.approx(0.2) and opt._get_wd(0) == pytest.approx(0.1)
    weight, w = mx.nd.zeros((1,)), 0.0
    lrs = []
    for _ in range(3):
        opt.update(0, weight, mx.nd.ones((1,)), None)
        lrs.append(opt.learning_rate)
        w = (1 - lrs[-1] * 0.1) * w - lrs[-1]  # signSGD with wd 0.1 (fc_weight)
    assert lrs == [1.0, 0.5, 0.25]  # num_update 1, 2, 3: the scheduler halves after each
    np.testing.assert_allclose(weight.asnumpy(), [w], rtol=1e-6)


def test_lamb_and_nadam_on_gpu_arrays(gpu):
    w = np.array([[3.0, 4.0], [0.0, 0.0]], F)
    g = np.array([[1.0, -2.0], [0.5, 0.0]], F)
    for name in ("lamb", "nadam"):
        opt, reference = mx.optimizer.create(name), mx.optimizer.create(name)
        weight, host = mx.nd.array(w, ctx=gpu), mx.nd.array(w)
        state, host_state = opt.create_state(0, weight), reference.create_state(0, host)
        opt.update(0, weight, mx.nd.array(g, ctx=gpu), state)
        reference.update(0, host, mx.nd.array(g), host_state)
        want, _ = _class_step(name, {}, 1, w, g, [np.zeros_like(w)] * 2, 0.001, 0.0, {})
        assert weight.context == gpu
        np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-5)
        np.testing.assert_allclose(weight.asnumpy(), host.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("kwargs", [{}, {"clip_gradient": 0.4, "wd": 0.05}])
def test_sgld_is_a_gradient_step_plus_seeded_noise(kwargs):
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((6, 4)).astype(np.float32)
    g0 = rng.standard_normal((6, 4)).astype(np.float32)
    lr = 0.01
    mx.random.seed(11)
    noise = mx.nd.random.normal(0, np.sqrt(lr), shape=w0.shape).asnumpy()
    opt = mx.optimizer.create("sgld", learning_rate=lr, rescale_grad=0.5, **kwargs)
    weight, grad = mx.nd.array(w0), mx.nd.array(g0)
    mx.random.seed(11)
    opt.update(0, weight, grad, opt.create_state(0, weight))
    g = g0 * 0.5
    if "clip_gradient" in kwargs:
        g = np.clip(g, -0.4, 0.4)
    want = w0 - lr / 2 * (g + kwargs.get("wd", 0.0) * w0) + noise
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(weight.asnumpy(), w0 - lr / 2 * (g + kwargs.get("wd", 0.0) * w0))
