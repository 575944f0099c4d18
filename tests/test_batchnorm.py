"""BatchNorm: mx.nd.BatchNorm, its gradient and moving statistics, mx.sym.BatchNorm with its
auxiliary states, gluon.nn.BatchNorm, against MXNet 1.9.1's answers
(tests/fixtures/batchnorm.json, recorded by tests/fixtures/record_batchnorm.py), a numpy
oracle written here, and finite differences (check_numeric_gradient)."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue, NotSupported, StorageFallbackWarning
from sparsegen.test_utils import check_numeric_gradient

FIXTURE = json.loads((pathlib.Path(__file__).resolve().parent / "fixtures" /
                      "batchnorm.json").read_text())
CASES = FIXTURE["cases"]
TOL = {"rtol": 1e-4, "atol": 1e-5}


def case_id(case: dict) -> str:
    p = case["params"]
    return (f"{'x'.join(map(str, np.shape(case['inputs']['data'])))}-axis{p['axis']}"
            f"-fix{int(p['fix_gamma'])}-global{int(p['use_global_stats'])}")


def inputs(case: dict) -> dict[str, np.ndarray]:
    return {k: np.array(v, dtype=np.float32) for k, v in case["inputs"].items()}


def numpy_batch_norm(x, gamma, beta, mean, var, axis, eps, fix_gamma, training):
    """The oracle: (output, mean, inverse std, biased batch var) in float64."""
    x = x.astype(np.float64)
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis % x.ndim] = -1
    if training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    invstd = 1 / np.sqrt(np.asarray(var, np.float64) + eps)
    scale = invstd * (1.0 if fix_gamma else gamma)
    out = (x - np.reshape(mean, shape)) * scale.reshape(shape) + np.reshape(beta, shape)
    return out, np.asarray(mean, np.float64), invstd, var


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_imperative_matches_mxnet(case):
    p, v, want = case["params"], inputs(case), case["imperative"]
    x, gamma, beta = (mx.nd.array(v[k]) for k in ("data", "gamma", "beta"))
    mean, var = mx.nd.array(v["moving_mean"]), mx.nd.array(v["moving_var"])
    for a in (x, gamma, beta):
        a.attach_grad()
    with mx.autograd.record():
        out, batch_mean, invstd = mx.nd.BatchNorm(x, gamma, beta, mean, var,
                                                  output_mean_var=True, **p)
    # MXNet moves the statistics in the backward pass, not in the forward
    np.testing.assert_allclose(mean.asnumpy(), want["moving_after_forward"][0])
    out.backward(mx.nd.array(v["head"]))
    for got, key in ((out, "train_out"), (batch_mean, "train_mean"), (invstd, "train_invstd"),
                     (x.grad, "grad_data"), (gamma.grad, "grad_gamma"),
                     (beta.grad, "grad_beta"), (gamma, "gamma_after_1")):
        np.testing.assert_allclose(got.asnumpy(), want[key], **TOL, err_msg=key)
    np.testing.assert_allclose(mean.asnumpy(), want["moving_after_1"][0], **TOL)
    np.testing.assert_allclose(var.asnumpy(), want["moving_after_1"][1], **TOL)
    x2 = mx.nd.array(v["data2"])
    x2.attach_grad()
    with mx.autograd.record():
        out2 = mx.nd.BatchNorm(x2, gamma, beta, mean, var, **p)
    out2.backward()
    np.testing.assert_allclose(mean.asnumpy(), want["moving_after_2"][0], **TOL)
    np.testing.assert_allclose(var.asnumpy(), want["moving_after_2"][1], **TOL)
    infer = mx.nd.BatchNorm(mx.nd.array(v["data"]), gamma, beta, mean, var,
                            output_mean_var=True, **p)
    for got, key in zip(infer, ("infer_out", "infer_mean", "infer_invstd")):
        np.testing.assert_allclose(got.asnumpy(), want[key], **TOL, err_msg=key)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_symbolic_matches_mxnet(case):
    p, v, want = case["params"], inputs(case), case["symbolic"]
    net = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn", **p)
    ex = net.simple_bind(mx.cpu(), data=v["data"].shape)
    ex.copy_params_from({"bn_gamma": mx.nd.array(v["gamma"]), "bn_beta": mx.nd.array(v["beta"])},
                        {"bn_moving_mean": mx.nd.array(v["moving_mean"]),
                         "bn_moving_var": mx.nd.array(v["moving_var"])})
    out = ex.forward(is_train=True, data=mx.nd.array(v["data"]))[0]
    ex.backward(mx.nd.array(v["head"]))
    np.testing.assert_allclose(out.asnumpy(), want["out"], **TOL)
    for name, key in (("data", "grad_data"), ("bn_gamma", "grad_gamma"),
                      ("bn_beta", "grad_beta")):
        np.testing.assert_allclose(ex.grad_dict[name].asnumpy(), want[key], **TOL, err_msg=key)
    for name, values in want["aux"].items():
        np.testing.assert_allclose(ex.aux_dict[name].asnumpy(), values, **TOL, err_msg=name)
    np.testing.assert_allclose(ex.forward(is_train=False)[0].asnumpy(), want["infer_out"], **TOL)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gluon_matches_mxnet(case):
    v, want, axis = inputs(case), case["gluon"], case["params"]["axis"]
    layer = mx.gluon.nn.BatchNorm(axis=axis, momentum=0.9, epsilon=1e-5,
                                  gamma_initializer=mx.init.Constant(1.5),
                                  beta_initializer=mx.init.Constant(0.25))
    layer.initialize()
    x = mx.nd.array(v["data"])
    x.attach_grad()
    with mx.autograd.record():
        out = layer(x)
    out.backward(mx.nd.array(v["head"]))
    np.testing.assert_allclose(out.asnumpy(), want["out"], **TOL)
    np.testing.assert_allclose(x.grad.asnumpy(), want["grad_data"], **TOL)
    params = {k[len(layer.prefix):]: p for k, p in layer.collect_params().items()}
    assert {k: p.grad_req for k, p in params.items()} == want["grad_req"]
    for name, values in want["params"].items():
        np.testing.assert_allclose(params[name].data().asnumpy(), values, **TOL, err_msg=name)
    for name, values in want["grads"].items():
        np.testing.assert_allclose(params[name].grad().asnumpy(), values, **TOL, err_msg=name)
    np.testing.assert_allclose(layer(x).asnumpy(), want["infer_out"], **TOL)


@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4), seed=st.integers(0, 2**16),
       data=st.data(), fix_gamma=st.booleans(), global_stats=st.booleans(),
       eps=st.sampled_from([1e-5, 1e-3, 0.1]), momentum=st.sampled_from([0.0, 0.5, 0.9]))
def test_against_numpy(shape, seed, data, fix_gamma, global_stats, eps, momentum):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    rng = np.random.RandomState(seed)
    c = shape[axis]
    x = (rng.randn(*shape) * 3 + 1).astype(np.float32)
    g, b = rng.uniform(0.5, 2, c).astype(np.float32), rng.randn(c).astype(np.float32)
    mm, mv = rng.randn(c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32)
    head = rng.randn(*shape).astype(np.float32)
    arrays = [mx.nd.array(a) for a in (x, g, b, mm, mv)]
    for a in arrays[:3]:
        a.attach_grad()
    params = dict(eps=eps, momentum=momentum, fix_gamma=fix_gamma,
                  use_global_stats=global_stats, axis=axis)
    with mx.autograd.record():
        out, mean, invstd = mx.nd.BatchNorm(*arrays, output_mean_var=True, **params)
    out.backward(mx.nd.array(head))
    training = not global_stats
    want, want_mean, want_invstd, batch_var = numpy_batch_norm(x, g, b, mm, mv, axis, eps,
                                                               fix_gamma, training)
    tol = {"rtol": 1e-4, "atol": 1e-4}
    np.testing.assert_allclose(out.asnumpy(), want, **tol)
    np.testing.assert_allclose(mean.asnumpy(), want_mean, **tol)
    np.testing.assert_allclose(invstd.asnumpy(), want_invstd, **tol)
    # the gradient, derived by hand: through the batch statistics when training
    a = axis % len(shape)
    axes = tuple(i for i in range(len(shape)) if i != a)
    bshape = [1] * len(shape)
    bshape[a] = -1
    xhat = (x - want_mean.reshape(bshape)) * want_invstd.reshape(bshape)
    dy = head.astype(np.float64)
    dbeta, dgamma = dy.sum(axis=axes), (dy * xhat).sum(axis=axes)
    scale = (want_invstd * (1.0 if fix_gamma else g)).reshape(bshape)
    if training:
        m = x.size // c
        dx = scale * (dy - dbeta.reshape(bshape) / m - xhat * dgamma.reshape(bshape) / m)
        want_mm = mm * momentum + want_mean * (1 - momentum)
        want_mv = mv * momentum + batch_var * (1 - momentum)
    else:
        dx, want_mm, want_mv = scale * dy, mm, mv
    np.testing.assert_allclose(arrays[0].grad.asnumpy(), dx, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(arrays[1].grad.asnumpy(), 0 if fix_gamma else dgamma,
                               rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(arrays[2].grad.asnumpy(), dbeta, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(arrays[3].asnumpy(), want_mm, **tol)
    np.testing.assert_allclose(arrays[4].asnumpy(), want_mv, **tol)
    if fix_gamma:  # MXNet writes 1 into a gamma that takes a gradient
        assert arrays[1].asnumpy().tolist() == [1.0] * c


@pytest.mark.parametrize("global_stats", [False, True])
@pytest.mark.parametrize("axis", [1, -1])
def test_finite_differences(global_stats, axis):
    rng = np.random.RandomState(3)
    x = rng.normal(-0.1, 1.0, size=(4, 3, 2))
    c = x.shape[axis]
    location = [x, rng.uniform(0.5, 2, c), rng.randn(c)]
    aux = [mx.nd.array(rng.randn(c), dtype="float64"),
           mx.nd.array(rng.uniform(0.5, 1.5, c), dtype="float64")]

    def run(data, gamma, beta, mean, var):
        return mx.nd.BatchNorm(data, gamma, beta, mean, var, fix_gamma=False,
                               use_global_stats=global_stats, axis=axis)

    check_numeric_gradient(run, location, aux, numeric_eps=1e-2, rtol=0.05, atol=2e-2,
                           dtype=np.float64)
    net = mx.sym.BatchNorm(mx.sym.Variable("data"), fix_gamma=False,
                           use_global_stats=global_stats, axis=axis)
    check_numeric_gradient(net, location, aux, numeric_eps=1e-2, rtol=0.05, atol=2e-2,
                           dtype=np.float64)


def test_modes_decide_the_statistics():
    x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
    g, b = mx.nd.ones((2,)), mx.nd.zeros((2,))
    mm, mv = mx.nd.array([1.0, 1.0]), mx.nd.array([4.0, 4.0])
    moving = (x.asnumpy() - 1) / np.sqrt(4 + 1e-3)
    batch = (x.asnumpy() - [2, 4]) / np.sqrt(np.array([1.0, 4.0]) + 1e-3)
    np.testing.assert_allclose(mx.nd.BatchNorm(x, g, b, mm, mv).asnumpy(), moving, rtol=1e-5)
    with mx.autograd.train_mode():  # training without recording: batch statistics, no update
        np.testing.assert_allclose(mx.nd.BatchNorm(x, g, b, mm, mv).asnumpy(), batch, rtol=1e-5)
    x.attach_grad()
    with mx.autograd.record(train_mode=False):
        y = mx.nd.BatchNorm(x, g, b, mm, mv)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), moving, rtol=1e-5)
    assert mm.asnumpy().tolist() == [1.0, 1.0] and mv.asnumpy().tolist() == [4.0, 4.0]


def test_edge_cases_one_sample_and_nan():
    g, b = mx.nd.array([2.0, 3.0]), mx.nd.array([0.5, -0.5])
    mm, mv = mx.nd.zeros((2,)), mx.nd.ones((2,))
    one = mx.nd.array([[4.0, -1.0]])  # one sample: the centred data is 0, the output beta
    with mx.autograd.train_mode():
        out = mx.nd.BatchNorm(one, g, b, mm, mv, fix_gamma=False).asnumpy()
        assert out.tolist() == [[0.5, -0.5]]
        nan = mx.nd.array([[np.nan, 1.0], [2.0, 3.0]])
        out = mx.nd.BatchNorm(nan, g, b, mm, mv, fix_gamma=False).asnumpy()
    assert np.isnan(out[:, 0]).all() and np.isfinite(out[:, 1]).all()
    empty = mx.nd.zeros((3, 0))  # no channels: an empty output
    assert mx.nd.BatchNorm(empty, *[mx.nd.zeros((0,))] * 4).shape == (3, 0)


def test_sparse_input_falls_back_and_fix_gamma_refuses_it():
    x = np.array([[0.0, 2.0], [0.0, 0.0], [1.0, 0.0]], np.float32)
    args = [mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,)), mx.nd.ones((2,))]
    dense = mx.nd.BatchNorm(mx.nd.array(x), *args, fix_gamma=False).asnumpy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sparse = mx.nd.BatchNorm(mx.nd.array(x).tostype("row_sparse"), *args, fix_gamma=False)
    assert any(issubclass(w.category, StorageFallbackWarning) for w in caught)
    np.testing.assert_array_equal(sparse.asnumpy(), dense)
    with pytest.raises(NotSupported, match="fix_gamma=True is not supported for sparse"):
        mx.nd.BatchNorm(mx.nd.array(x).tostype("csr"), *args)


def test_bad_input_names_the_argument():
    x, c = mx.nd.ones((4, 3)), mx.nd.ones((3,))
    with pytest.raises(InvalidValue, match=r"gamma has shape \(2,\).*\(3,\)"):
        mx.nd.BatchNorm(x, mx.nd.ones((2,)), c, c, c)
    with pytest.raises(InvalidValue, match=r"moving_var has shape \(3, 1\)"):
        mx.nd.BatchNorm(x, c, c, c, mx.nd.ones((3, 1)))
    with pytest.raises(InvalidValue, match="axis 2 is out of range"):
        mx.nd.BatchNorm(x, c, c, c, c, axis=2)
    with pytest.raises(InvalidValue, match="at least 2 dimensions"):
        mx.nd.BatchNorm(c, c, c, c, c)
    with pytest.raises(InvalidType, match="beta must be an NDArray"):
        mx.nd.BatchNorm(x, c, np.ones(3), c, c)
    with pytest.raises(mx.MXNetError, match="BatchNorm: eps must be >= 0, got -1.0"):
        mx.nd.BatchNorm(x, c, c, c, c, eps=-1.0)
    with pytest.raises(NotSupported, match="min_calib_range"):
        mx.nd.BatchNorm(x, c, c, c, c, min_calib_range=0.0)
    mean = mx.nd.array([5.0, 5.0, 5.0])
    with pytest.raises(mx.MXNetError, match="BatchNorm: momentum"):
        mx.nd.BatchNorm(x, c, c, mean, c, momentum="fast")
    assert mean.asnumpy().tolist() == [5.0, 5.0, 5.0]  # a refused call changes nothing


def test_gluon_layer_deferred_channels_and_flags():
    layer = mx.gluon.nn.BatchNorm(center=False, scale=False, in_channels=0)
    assert repr(layer).startswith("BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=True")
    layer.initialize()
    x = mx.nd.array(np.random.RandomState(1).randn(5, 4, 3).astype(np.float32))
    with mx.autograd.record():
        out = layer(x)
    params = {k[len(layer.prefix):]: p for k, p in layer.collect_params().items()}
    assert {k: p.shape for k, p in params.items()} == {k: (4,) for k in params}
    assert {k: p.grad_req for k, p in params.items()} == {k: "null" for k in params}
    want, _, _, _ = numpy_batch_norm(x.asnumpy(), 1.0, 0.0, None, None, 1, 1e-5, True, True)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-5)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3, in_units=4), mx.gluon.nn.BatchNorm(in_channels=3))
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    batch = mx.nd.array(np.random.RandomState(2).randn(6, 4).astype(np.float32))
    with mx.autograd.record():
        hidden = net[0](batch)
        loss = net(batch).sum()
    loss.backward()
    trainer.step(6)
    running = net[1].running_mean.data().asnumpy()
    np.testing.assert_allclose(running, 0.1 * hidden.asnumpy().mean(axis=0), rtol=1e-4,
                               atol=1e-6)


def check_batchnorm_on_gpu(ctx) -> None:
    """BatchNorm's forward, backward and moving statistics on ``ctx`` against the numpy
    oracle (tests/test_gpu.py's per-mode test calls it)."""
    rng = np.random.RandomState(5)
    x, head = rng.randn(4, 3, 2).astype(np.float32), rng.randn(4, 3, 2).astype(np.float32)
    g, b = rng.uniform(0.5, 2, 3).astype(np.float32), rng.randn(3).astype(np.float32)
    arrays = [mx.nd.array(a, ctx=ctx) for a in (x, g, b, np.zeros(3), np.ones(3))]
    arrays[0].attach_grad()
    with mx.autograd.record():
        out = mx.nd.BatchNorm(*arrays, fix_gamma=False, momentum=0.5)
    out.backward(mx.nd.array(head, ctx=ctx))
    assert out.context == ctx and arrays[0].grad.context == ctx
    want, mean, _, var = numpy_batch_norm(x, g, b, None, None, 1, 1e-3, False, True)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(arrays[3].asnumpy(), 0.5 * mean, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(arrays[4].asnumpy(), 0.5 + 0.5 * var, rtol=1e-4, atol=1e-6)
    assert np.isfinite(arrays[0].grad.asnumpy()).all()


def test_batchnorm_on_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    check_batchnorm_on_gpu(mx.gpu(0))
