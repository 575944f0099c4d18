"""mx.nd.L2Normalization (modes instance, channel, spatial), its gradient and its symbol,
against a numpy oracle, values MXNet 1.9.1 printed (asked of /work/mxvenv), and finite
differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue
from sparsegen.test_utils import check_numeric_gradient

AXES = {"instance": lambda nd: tuple(range(1, nd)), "channel": lambda nd: (1,),
        "spatial": lambda nd: tuple(range(2, nd))}


def oracle(x: np.ndarray, mode: str, eps: float = 1e-10) -> np.ndarray:
    """``x / sqrt(sum(x**2) + eps)`` over the mode's axes, in float64."""
    x = x.astype(np.float64)
    axes = AXES[mode](x.ndim)
    return x / np.sqrt(np.sum(x * x, axis=axes, keepdims=True) + eps)


def test_values_mxnet_printed():
    x = mx.nd.array(np.arange(24).reshape(2, 3, 4) - 5)
    printed = {"instance": [-0.41380295, -0.33104235, -0.24828176, -0.16552117],
               "channel": [-0.8451542, -0.70710677, -0.50709254, -0.30151135],
               "spatial": [-0.68041384, -0.5443311, -0.40824828, -0.27216554]}
    for mode, row in printed.items():
        np.testing.assert_allclose(mx.nd.L2Normalization(x, mode=mode).asnumpy()[0, 0], row,
                                   rtol=1e-6)
    np.testing.assert_array_equal(mx.nd.L2Normalization(mx.nd.zeros((2, 3))).asnumpy(), 0)
    np.testing.assert_array_equal(mx.nd.L2Normalization(mx.nd.ones((3,))).asnumpy(), 1)


@settings(deadline=None, max_examples=15)
@given(st.sampled_from(sorted(AXES)), st.integers(3, 4), st.data())
def test_against_numpy(mode, ndim, data):
    shape = data.draw(hnp.array_shapes(min_dims=ndim, max_dims=ndim, max_side=4))
    x = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-10, 10, width=32)))
    eps = data.draw(st.sampled_from([1e-10, 1e-3, 0.5]))
    got = mx.nd.L2Normalization(mx.nd.array(x), eps=eps, mode=mode).asnumpy()
    np.testing.assert_allclose(got, oracle(x, mode, eps), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", sorted(AXES))
def test_gradient_matches_finite_differences(mode):
    x = np.random.RandomState(0).uniform(0.5, 2.0, (2, 3, 2)).astype(np.float64)
    check_numeric_gradient(lambda a: mx.nd.L2Normalization(a, mode=mode), [x],
                           numeric_eps=1e-4, rtol=1e-3, atol=1e-4, dtype=np.float64)


def test_gradient_hand_computed():
    # d/dx of sum(w * x / |x|) = (w - (w.y) y) / |x|, y = x / |x|, per instance
    x, w = np.array([[3.0, 4.0]]), np.array([[1.0, 2.0]])
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.L2Normalization(a)
    y.backward(mx.nd.array(w))
    unit = x / 5.0
    np.testing.assert_allclose(a.grad.asnumpy(), (w - (w * unit).sum() * unit) / 5.0, rtol=1e-6)


def test_symbol_and_out():
    s = mx.sym.L2Normalization(mx.sym.var("x"), mode="channel")
    assert len(s.list_outputs()) == 1 and s.infer_shape(x=(2, 3))[1] == [(2, 3)]
    x = np.random.RandomState(1).randn(2, 3).astype(np.float32)
    out = s.eval(ctx=mx.cpu(), x=mx.nd.array(x))[0].asnumpy()
    np.testing.assert_allclose(out, oracle(x, "channel"), rtol=1e-5)
    assert mx.nd.op.L2Normalization is mx.nd.L2Normalization
    target = mx.nd.zeros((2, 3))
    assert mx.nd.L2Normalization(mx.nd.array(x), out=target) is target
    np.testing.assert_allclose(target.asnumpy(), oracle(x, "instance"), rtol=1e-5)


def test_bad_input_names_the_argument():
    with pytest.raises(InvalidValue, match="mode"):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode="pixel")
    with pytest.raises(InvalidValue, match="spatial"):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), mode="spatial")
    with pytest.raises(mx.MXNetError, match="eps"):
        mx.nd.L2Normalization(mx.nd.ones((2, 3)), eps=-1.0)
    with pytest.raises(InvalidType, match="data"):
        mx.nd.L2Normalization(np.ones((2, 3)))
