"""What a HybridBlock accepts as MXNet 1.9.1's (mixed or missing inputs; after ``hybridize``,
scalars, several contexts, a changed input structure), ``Parameter._grad`` and
``mx.nd.CachedOp`` (a symbol called on arrays) against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import gluon
from sparsegen.errors import InvalidValue


class Add(gluon.HybridBlock):
    def hybrid_forward(self, F, a, b=None):  # noqa: N803
        return a if b is None else (b if a is None else a + b)


def test_inputs_before_and_after_hybridize() -> None:
    block = Add()
    np.testing.assert_allclose(block(mx.nd.ones((3,)), 1).asnumpy(), [2, 2, 2])  # a scalar
    with pytest.raises(InvalidValue, match="there must be one NDArray or one Symbol"):
        block(None, None)
    with pytest.raises(InvalidValue, match="mixed NDArrays and Symbols"):
        block(mx.nd.ones((3,)), mx.sym.var("a"))
    block.hybridize()
    with pytest.raises(InvalidValue, match=r"takes \(nested lists of\) NDArrays and None, got 1"):
        block(mx.nd.ones((3,)), 1)
    block.hybridize()
    with pytest.raises(InvalidValue, match="on one context"):
        block(mx.nd.ones((3,), ctx=mx.cpu(1)), mx.nd.ones((3,), ctx=mx.cpu(2)))
    block.hybridize()
    np.testing.assert_allclose(block(None, mx.nd.ones((2,))).asnumpy(), [1, 1])
    with pytest.raises(InvalidValue, match=r"structure of the inputs \(1, 1\) does not match"):
        block(mx.nd.ones((2,)), mx.nd.ones((2,)))
    block.hybridize()
    block(mx.nd.ones((2,)), None)
    np.testing.assert_allclose(block(mx.nd.ones((2,))).asnumpy(), [1, 1])  # a default None


def test_parameter_grad_follows_grad_req() -> None:
    dense = gluon.nn.Dense(2, in_units=3)
    dense.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert [g.shape for g in dense.weight._grad] == [(2, 3), (2, 3)]
    dense.collect_params().setattr("grad_req", "null")
    assert dense.weight._grad is None


@settings(max_examples=8, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3))
def test_cached_op_against_numpy(batch: int, features: int, hidden: int) -> None:
    rng = np.random.default_rng(batch * 16 + features * 4 + hidden)
    op = mx.nd.CachedOp(mx.sym.FullyConnected(num_hidden=hidden, name="fc") + 2)
    x, w, b = (rng.standard_normal(s) for s in ((batch, features), (hidden, features),
                                                 (hidden,)))
    want = x @ w.T + b + 2
    data, weight, bias = (mx.nd.array(a) for a in (x, w, b))
    np.testing.assert_allclose(op(data, weight, bias).asnumpy(), want, rtol=1e-5, atol=1e-5)
    out = mx.nd.zeros((batch, hidden))
    op(data, weight, bias, out=out)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-5)
    weight.attach_grad()
    with mx.autograd.record():
        result = op(data, weight, bias) * 3
    result.backward()
    np.testing.assert_allclose(weight.grad.asnumpy(), 3 * np.ones((batch, hidden)).T @ x,
                               rtol=1e-5, atol=1e-5)


def test_cached_op_refusals() -> None:
    op = mx.nd.CachedOp(mx.sym.relu(mx.sym.var("x")))
    assert op._inputs == ["x"]
    with pytest.raises(InvalidValue, match=r"2 inputs given, the symbol takes 1: \['x'\]"):
        op(mx.nd.ones((2,)), mx.nd.ones((2,)))
    with pytest.raises(TypeError, match="input 'x' must be an NDArray"):
        op([1, 2])
    with pytest.raises(TypeError, match="sym must be a Symbol"):
        mx.nd.CachedOp("relu")
