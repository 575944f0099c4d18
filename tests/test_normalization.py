"""LayerNorm, InstanceNorm and GroupNorm (``mx.nd``, ``mx.sym`` and the Gluon layers) against
numpy: the forward pass, and the gradients against central differences of numpy's formula in
float64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import autograd, gluon


def _norm(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    std = np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    return (x - mean) / std, mean, std


def layer_norm(x, gamma, beta, axis=-1, eps=1e-5):
    y = _norm(x, (axis % x.ndim,), eps)[0]
    shape = [1] * x.ndim
    shape[axis] = -1
    return y * gamma.reshape(shape) + beta.reshape(shape)


def instance_norm(x, gamma, beta, eps=1e-3):
    y = _norm(x, tuple(range(2, x.ndim)), eps)[0]
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return y * gamma.reshape(shape) + beta.reshape(shape)


def group_norm(x, gamma, beta, num_groups=1, eps=1e-5):
    g = x.reshape(x.shape[0], num_groups, -1)
    y = _norm(g, (2,), eps)[0] * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)
    return y.reshape(x.shape)


CASES = {
    "LayerNorm": (lambda x, g, b, p: layer_norm(x, g, b, **p), lambda x, p: x.shape[p["axis"]],
                  [{"axis": -1}, {"axis": 1}]),
    "InstanceNorm": (lambda x, g, b, p: instance_norm(x, g, b, **p), lambda x, p: x.shape[1],
                     [{"eps": 1e-3}]),
    "GroupNorm": (lambda x, g, b, p: group_norm(x, g, b, **p), lambda x, p: p["num_groups"],
                  [{"num_groups": 1}, {"num_groups": 2}]),
}


def _arrays(op, params, shape, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    size = CASES[op][1](x, params)
    return x, rng.standard_normal(size).astype(dtype), rng.standard_normal(size).astype(dtype)


@settings(max_examples=20, deadline=None)
@given(op=st.sampled_from(sorted(CASES)), batch=st.integers(1, 3), channels=st.sampled_from([2, 4]),
       rest=st.lists(st.integers(1, 3), min_size=1, max_size=2), data=st.data())
def test_forward_against_numpy(op, batch, channels, rest, data):
    params = data.draw(st.sampled_from(CASES[op][2]))
    x, gamma, beta = _arrays(op, params, (batch, channels, *rest), data.draw(st.integers(0, 99)),
                             np.float32)
    got = getattr(mx.nd, op)(mx.nd.array(x), mx.nd.array(gamma), mx.nd.array(beta), **params)
    np.testing.assert_allclose(got.asnumpy(), CASES[op][0](x, gamma, beta, params), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("op, params", [(op, p) for op in sorted(CASES) for p in CASES[op][2]])
def test_gradients_against_central_differences(op, params):
    x, gamma, beta = _arrays(op, params, (2, 4, 3), seed=1)
    head = np.random.default_rng(2).standard_normal(x.shape)
    arrays = [mx.nd.array(v, dtype="float64") for v in (x, gamma, beta)]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = getattr(mx.nd, op)(*arrays, **params)
    out.backward(mx.nd.array(head, dtype="float64"))
    values = [x, gamma, beta]
    for k, array in enumerate(arrays):
        numeric = np.zeros_like(values[k])
        for i in np.ndindex(values[k].shape):
            plus, minus = [v.copy() for v in values], [v.copy() for v in values]
            plus[k][i] += 1e-6
            minus[k][i] -= 1e-6
            numeric[i] = ((CASES[op][0](*plus, params) - CASES[op][0](*minus, params))
                          * head).sum() / 2e-6
        np.testing.assert_allclose(array.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-6)


def test_symbols_infer_parameter_shapes_as_mxnet():
    d = mx.sym.var("d")
    assert mx.sym.GroupNorm(d, num_groups=2).infer_shape(d=(2, 10, 3, 3))[0][1:] == [(2,), (2,)]
    assert mx.sym.LayerNorm(d, axis=1).infer_shape(d=(2, 10, 3))[0][1:] == [(10,), (10,)]
    assert mx.sym.InstanceNorm(d).infer_shape(d=(2, 10, 3))[0][1:] == [(10,), (10,)]
    outs = mx.sym.LayerNorm(d, output_mean_var=True).infer_shape(d=(2, 10, 3))[1]
    assert outs == [(2, 10, 3), (2, 10, 1), (2, 10, 1)]


@pytest.mark.parametrize("layer, oracle", [
    (lambda: gluon.nn.LayerNorm(), lambda x: layer_norm(x, np.ones(4), np.zeros(4))),
    (lambda: gluon.nn.InstanceNorm(), lambda x: instance_norm(x, np.ones(3), np.zeros(3), 1e-5)),
    (lambda: gluon.nn.InstanceNorm(axis=2),
     lambda x: np.swapaxes(instance_norm(np.swapaxes(x, 1, 2), np.ones(4), np.zeros(4), 1e-5),
                           1, 2)),
    (lambda: gluon.nn.GroupNorm(num_groups=3), lambda x: group_norm(x, np.ones(3), np.zeros(3), 3)),
])
def test_gluon_layers_find_their_sizes_at_the_first_call(layer, oracle):
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    block = layer()
    block.initialize()
    np.testing.assert_allclose(block(mx.nd.array(x)).asnumpy(), oracle(x), rtol=1e-4, atol=1e-5)
    assert block.gamma.shape == block.beta.shape and block.gamma.shape[0] > 0


def test_bad_inputs_are_refused_naming_them():
    with pytest.raises(mx.MXNetError, match=r"gamma must have shape \(11,\)"):
        layer = gluon.nn.LayerNorm(in_channels=10)
        layer.initialize()
        layer(mx.nd.ones((2, 11)))
    with pytest.raises(mx.MXNetError, match="must split into num_groups=3 equal groups"):
        mx.nd.GroupNorm(mx.nd.ones((2, 4, 2)), mx.nd.ones(3), mx.nd.ones(3), num_groups=3)
    with pytest.raises(mx.MXNetError, match="at least 3 dimensions"):
        mx.nd.InstanceNorm(mx.nd.ones((2, 4)), mx.nd.ones(4), mx.nd.ones(4))
