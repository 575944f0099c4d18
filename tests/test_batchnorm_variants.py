"""BatchNorm's variants: mx.nd.BatchNorm_v1, contrib.BatchNormWithReLU, contrib.SyncBatchNorm
(values, gradients, moving statistics, symbols with auxiliary states) and the Gluon layers
nn.BatchNormReLU and contrib.nn.SyncBatchNorm, against a numpy oracle and values MXNet 1.9.1
printed (asked of /work/mxvenv: BatchNorm_v1 and SyncBatchNorm through an executor)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4, 1) - 5
GAMMA, BETA = np.array([1, 2, 3], np.float32), np.array([0, 1, 0], np.float32)


def oracle(x, gamma, beta, eps=1e-3):
    """Training-mode batch norm over axis 1 in float64: (output, mean, biased variance)."""
    x = x.astype(np.float64)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    shape = [1] * x.ndim
    shape[1] = -1
    out = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return out * gamma.reshape(shape) + beta.reshape(shape), mean, var


def arrays():
    return [mx.nd.array(a) for a in (X, GAMMA, BETA, np.zeros(3, np.float32),
                                     np.ones(3, np.float32))]


@pytest.mark.parametrize("op", ["v1", "sync"])
def test_executor_values_mxnet_printed(op):
    # MXNet 1.9.1: training forward's mean / var outputs, the moving statistics after the
    # backward pass, and an inference forward with them
    make = {"v1": lambda: mx.sym.BatchNorm_v1(mx.sym.var("x"), name="bn", fix_gamma=False,
                                                output_mean_var=True),
            "sync": lambda: mx.sym.contrib.SyncBatchNorm(mx.sym.var("x"), name="bn", key="k",
                                                         fix_gamma=False,
                                                         output_mean_var=True)}[op]
    s = make()
    assert s.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert s.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert s.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    x, g, b, mm, mv = arrays()
    e = s.bind(mx.cpu(), {"x": x, "bn_gamma": g, "bn_beta": b},
               args_grad={"x": mx.nd.zeros_like(x), "bn_gamma": mx.nd.zeros(3),
                          "bn_beta": mx.nd.zeros(3)},
               aux_states={"bn_moving_mean": mm, "bn_moving_var": mv})
    outs = e.forward(is_train=True)
    np.testing.assert_allclose(outs[1].asnumpy(), [2.5, 6.5, 10.5], rtol=1e-6)
    if op == "v1":  # the legacy op's third output is the variance
        np.testing.assert_allclose(outs[2].asnumpy(), [37.25] * 3, rtol=1e-5)
    e.backward([mx.nd.ones_like(x), mx.nd.zeros(3), mx.nd.zeros(3)])
    np.testing.assert_allclose(mm.asnumpy(), [0.25, 0.65, 1.05], rtol=1e-5)
    np.testing.assert_allclose(mv.asnumpy(), [4.625] * 3, rtol=1e-5)
    row = e.forward(is_train=False)[0].asnumpy()[0, 0, :, 0]
    np.testing.assert_allclose(row, [-2.4409363, -1.9759961, -1.5110558, -1.0461156], rtol=1e-5)


@settings(deadline=None, max_examples=8)
@given(st.sampled_from(["v1", "relu", "sync"]), st.integers(1, 3), st.integers(2, 4),
       st.integers(0, 2**31 - 1))
def test_ops_against_numpy_in_training(op, n, c, seed):
    rng = np.random.RandomState(seed)
    x = rng.randn(n + 1, c, 3).astype(np.float32)
    gamma, beta = rng.uniform(0.5, 2, c).astype(np.float32), rng.randn(c).astype(np.float32)
    want, mean, var = oracle(x, gamma, beta)
    a = [mx.nd.array(v) for v in (x, gamma, beta, np.zeros(c, np.float32),
                                  np.ones(c, np.float32))]
    with mx.autograd.record():
        if op == "v1":
            out, m, v = mx.nd.BatchNorm_v1(*a, fix_gamma=False, output_mean_var=True)
            np.testing.assert_allclose(v.asnumpy(), var, rtol=1e-3, atol=1e-4)
        elif op == "relu":
            out, m, _ = mx.nd.contrib.BatchNormWithReLU(*a, fix_gamma=False,
                                                        output_mean_var=True)
            want = np.maximum(want, 0)
        else:
            out, m, _ = mx.nd.contrib.SyncBatchNorm(*a, fix_gamma=False, output_mean_var=True,
                                                    ndev=2, key="k")
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(m.asnumpy(), mean, rtol=1e-5, atol=1e-5)


def test_batchnorm_with_relu_gradient_is_masked():
    x, g, b, mm, mv = arrays()
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.BatchNormWithReLU(x, g, b, mm, mv, fix_gamma=False)
    y.backward(mx.nd.ones_like(y))
    x2, g2, b2, mm2, mv2 = arrays()
    x2.attach_grad()
    with mx.autograd.record():
        z = mx.nd.BatchNorm(x2, g2, b2, mm2, mv2, fix_gamma=False)
    z.backward(mx.nd.array((z.asnumpy() > 0).astype(np.float32)))
    np.testing.assert_allclose(x.grad.asnumpy(), x2.grad.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mm.asnumpy(), mm2.asnumpy(), rtol=1e-6)


def test_bad_arguments():
    x, g, b, mm, mv = arrays()
    with pytest.raises(mx.MXNetError, match="ndev"):
        mx.nd.contrib.SyncBatchNorm(x, g, b, mm, mv, ndev=0)
    with pytest.raises(InvalidType, match="key"):
        mx.nd.contrib.SyncBatchNorm(x, g, b, mm, mv, key=3)
    with pytest.raises(mx.MXNetError, match="gamma"):
        mx.nd.BatchNorm_v1(x, mx.nd.ones(2), b, mm, mv)


def test_gluon_layers():
    relu = mx.gluon.nn.BatchNormReLU(in_channels=3)
    assert repr(relu) == ("BatchNormReLU(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, "
                          "use_global_stats=False, in_channels=3)")
    sync = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=3)
    assert repr(sync) == (f"SyncBatchNorm(eps=1e-05, momentum=0.9, fix_gamma=False, "
                          f"use_global_stats=False, ndev=1, key={sync.prefix!r}, "
                          f"in_channels=3)")
    x = np.random.RandomState(3).randn(4, 3, 2).astype(np.float32)
    for layer, relu_after in ((mx.gluon.nn.BatchNormReLU(), True),
                              (mx.gluon.contrib.nn.SyncBatchNorm(num_devices=2), False)):
        layer.initialize()
        with mx.autograd.record():
            y = layer(mx.nd.array(x))
        y.backward()
        want = oracle(x, np.ones(3, np.float32), np.zeros(3, np.float32), eps=1e-5)[0]
        np.testing.assert_allclose(y.asnumpy(), np.maximum(want, 0) if relu_after else want,
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(layer.running_mean.data().asnumpy(),
                                   0.1 * x.mean(axis=(0, 2)), rtol=1e-4, atol=1e-6)
    with pytest.raises(mx.MXNetError, match="num_devices"):
        mx.gluon.contrib.nn.SyncBatchNorm(num_devices=0)
