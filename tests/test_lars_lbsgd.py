"""LARS and LBSGD (mx.optimizer): steps against MXNet 1.9.1's (tests/fixtures/lars_lbsgd.json,
recorded by tests/fixtures/record_lars_lbsgd.py), against a numpy re-implementation of MXNet's
formulas for shapes and hyper-parameters hypothesis picks, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx

RECORD = json.loads((Path(__file__).parent / "fixtures" / "lars_lbsgd.json").read_text())


def _grad(values: list, case: dict) -> mx.nd.NDArray:
    g = mx.nd.array(np.array(values), dtype=case["dtype"])
    return g.tostype("row_sparse") if "rows" in case else g


@pytest.mark.parametrize("case", RECORD["cases"], ids=lambda c: c["name"])
def test_steps_match_mxnet(case):
    kwargs = dict(case["kwargs"])
    if "scheduler" in case:
        kwargs["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(**case["scheduler"])
    names = case["names"]
    opt = mx.optimizer.create(case["optimizer"], param_idx2name=dict(enumerate(names)),
                              **kwargs)
    updater = mx.optimizer.get_updater(opt)
    weights = [mx.nd.array(np.array(w), dtype=case["dtype"]) for w in case["initial"]]
    tol = 2e-3 if case["dtype"] == "float16" else 1e-5
    for step, (grads, expected) in enumerate(zip(case["grads"], case["after"])):
        updater(list(range(len(names))), [_grad(g, case) for g in grads], weights)
        for w, e in zip(weights, expected):
            np.testing.assert_allclose(w.asnumpy(), np.array(e), rtol=tol, atol=tol,
                                       err_msg=f"{case['name']} step {step}")


def lars_reference(w, grads, lr, momentum, wd, eta, eps, rescale):
    """MXNet's LARS (no schedule) in numpy float64."""
    w, mom = w.astype(np.float64), np.zeros_like(w, np.float64)
    for g in grads:
        wn, gn = np.linalg.norm(w), np.linalg.norm(g)
        rate = lr * eta * wn / (gn * rescale + wd * wn + eps) if wn > 0 and gn > 0 else lr
        mom = momentum * mom - rate * wd * w - rate * rescale * g
        w = w + mom
    return w


@settings(max_examples=12, deadline=None)
@given(shape=st.sampled_from([(3,), (2, 5), (4, 1, 3)]),
       momentum=st.sampled_from([0.0, 0.5, 0.9]), wd=st.sampled_from([0.0, 1e-2]),
       eta=st.sampled_from([1e-3, 0.1]), eps=st.sampled_from([0.0, 1e-2]),
       rescale=st.sampled_from([1.0, 0.25]), seed=st.integers(0, 2**16))
def test_lars_matches_its_formula(shape, momentum, wd, eta, eps, rescale, seed):
    rng = np.random.default_rng(seed)
    w0 = rng.uniform(-1, 1, shape).astype(np.float32)
    grads = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(3)]
    opt = mx.optimizer.LARS(learning_rate=0.1, momentum=momentum, wd=wd, eta=eta, eps=eps,
                            rescale_grad=rescale)
    w = mx.nd.array(w0)
    state = opt.create_state(0, w)
    for g in grads:
        opt.update(0, w, mx.nd.array(g), state)
    expected = lars_reference(w0, grads, 0.1, momentum, wd, eta, eps, rescale)
    np.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_lars_keeps_the_plain_rate_of_biases_and_zero_norms():
    opt = mx.optimizer.LARS(learning_rate=0.5, eta=0.01, param_idx2name={0: "x_bias"})
    w = mx.nd.array([1.0, 2.0])
    opt.update(0, w, mx.nd.array([1.0, 1.0]), None)
    np.testing.assert_allclose(w.asnumpy(), [0.5, 1.5])
    zero = mx.nd.zeros((2,))
    opt.update(1, zero, mx.nd.array([1.0, -1.0]), None)  # |w| = 0: the plain rate
    np.testing.assert_allclose(zero.asnumpy(), [-0.5, 0.5])
    assert opt.wd_mult == {"x_bias": 0.0}


def lbsgd_reference(w, grads, lr, momentum, wd, strategy, warmup, batch_scale, begin=0):
    """MXNet's LBSGD in numpy float64 (``warmup`` updates of warm-up)."""
    w, mom, total, count = w.astype(np.float64), np.zeros_like(w, np.float64), 0.0, begin
    for g in grads:
        count += 1
        total = total + g
        if count % batch_scale:
            continue
        mean, total = total / batch_scale, 0.0
        if strategy == "lars":
            w2, g2 = np.sum(w * w), np.sum(mean * mean)
            mult = min(max(math.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100)
        elif count >= warmup:
            mult = batch_scale
        elif warmup <= 1:
            mult = 1.0
        else:
            share = count / warmup
            mult = 1 + (batch_scale - 1) * {"linear": share, "power2": share**2,
                                            "sqrt": math.sqrt(share)}[strategy]
        mom = momentum * mom - lr * mult * wd * w - lr * mult * mean
        w = w + mom
    return w


@settings(max_examples=12, deadline=None)
@given(strategy=st.sampled_from(["linear", "power2", "sqrt", "lars"]),
       batch_scale=st.sampled_from([1, 2, 3]), momentum=st.sampled_from([0.0, 0.9]),
       wd=st.sampled_from([0.0, 0.05]), begin_epoch=st.sampled_from([0, 1]),
       seed=st.integers(0, 2**16))
def test_lbsgd_matches_its_formula(strategy, batch_scale, momentum, wd, begin_epoch, seed):
    rng = np.random.default_rng(seed)
    w0 = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    grads = [rng.uniform(-1, 1, (2, 3)).astype(np.float32) for _ in range(7)]
    opt = mx.optimizer.LBSGD(learning_rate=0.1, momentum=momentum, wd=wd,
                             warmup_strategy=strategy, warmup_epochs=2, updates_per_epoch=2,
                             batch_scale=batch_scale, begin_epoch=begin_epoch)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0)
    for g in grads:
        updater(0, mx.nd.array(g), w)
    expected = lbsgd_reference(w0, grads, 0.1, momentum, wd, strategy, 4, batch_scale,
                               begin=2 * begin_epoch)
    np.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_lbsgd_keeps_its_first_gradient_when_the_caller_reuses_the_array():
    opt = mx.optimizer.LBSGD(learning_rate=1.0, batch_scale=2, warmup_epochs=0)
    w, g = mx.nd.zeros((2,)), mx.nd.array([1.0, 2.0])
    opt.update(0, w, g, None)
    g[:] = mx.nd.array([3.0, 4.0])
    opt.update(0, w, g, None)
    np.testing.assert_allclose(w.asnumpy(), [-2.0 * 2, -3.0 * 2])  # mean (2, 3), lr * 2


def test_registered_and_mxnet_module_names():
    assert isinstance(mx.optimizer.create("lars"), mx.optimizer.LARS)
    assert isinstance(mx.optimizer.create("lbsgd"), mx.optimizer.LBSGD)
    assert mx.optimizer.optimizer.LARS is mx.optimizer.LARS
    x = mx.nd.array([-1.5, 2.0])
    np.testing.assert_array_equal(mx.optimizer.NDabs(x).asnumpy(), [1.5, 2.0])
    np.testing.assert_array_equal(mx.optimizer.contrib.square(x).asnumpy(), [2.25, 4.0])
    np.testing.assert_array_equal(mx.optimizer.contrib.sqrt(mx.nd.array([4.0])).asnumpy(), [2])
    assert mx.optimizer.contrib.mean(x).asscalar() == 0.25
    np.testing.assert_array_equal(mx.optimizer.contrib.clip(x, -1, 1).asnumpy(), [-1, 1])


@pytest.mark.parametrize("kwargs, word", [
    ({"warmup_strategy": "cosine"}, "warmup_strategy"),
    ({"batch_scale": 0}, "batch_scale"),
    ({"momentum": 1.5}, "momentum"),
    ({"updates_per_epoch": 2.5}, "updates_per_epoch"),
])
def test_lbsgd_bad_arguments(kwargs, word):
    with pytest.raises(mx.MXNetError, match=word):
        mx.optimizer.LBSGD(**kwargs)


@pytest.mark.parametrize("kwargs, word", [({"eta": -1.0}, "eta"), ({"eps": float("nan")}, "eps"),
                                          ({"momentum": -0.1}, "momentum")])
def test_lars_bad_arguments(kwargs, word):
    with pytest.raises(mx.MXNetError, match=word):
        mx.optimizer.LARS(**kwargs)


def test_lars_failed_update_changes_nothing():
    opt = mx.optimizer.LARS(learning_rate=0.1, momentum=0.9)
    w = mx.nd.array([1.0, 2.0])
    state = opt.create_state(0, w)
    with pytest.raises(mx.MXNetError):
        opt.update(0, w, mx.nd.array([1.0, 2.0, 3.0]), state)
    np.testing.assert_array_equal(w.asnumpy(), [1.0, 2.0])
    assert opt.num_update == 0 and opt.cur_lr is None
