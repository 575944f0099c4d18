"""mx.operator: Python operators through mx.nd.Custom, forward and the user's backward under
autograd, against numpy oracles (MXNet's linear-classification example operator, written
afresh)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue


class _WeightedSoftmaxCE(mx.operator.CustomOp):
    def __init__(self, weight: float) -> None:
        self.weight = weight

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.softmax(in_data[0]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label, pred = in_data[1], out_data[0]
        scale = ((1 + label * self.weight) / self.weight).reshape((pred.shape[0], 1))
        self.assign(in_grad[0], req[0], scale * (pred - mx.nd.one_hot(label, pred.shape[1])))


@mx.operator.register("test_weighted_softmax_ce")
class _WeightedSoftmaxCEProp(mx.operator.CustomOpProp):
    def __init__(self, positive_cls_weight: str) -> None:
        super().__init__(True)
        assert isinstance(positive_cls_weight, str)  # MXNet passes kwargs as strings
        self.weight = float(positive_cls_weight)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shapes):
        return in_shapes, (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _WeightedSoftmaxCE(self.weight)


class _ScaleSum(mx.operator.CustomOp):
    """Two outputs: 2x and the row sums; one auxiliary state counting training calls."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)
        self.assign(out_data[1], req[1], mx.nd.sum(in_data[0], axis=1))
        if is_train:
            self.assign(aux[0], "add", mx.nd.ones((1,)))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        g = out_grad[0] * 2 + mx.nd.broadcast_to(out_grad[1].reshape((-1, 1)),
                                                 shape=in_data[0].shape)
        self.assign(in_grad[0], req[0], g)


@mx.operator.register("test_scale_sum")
class _ScaleSumProp(mx.operator.CustomOpProp):
    def list_outputs(self):
        return ["scaled", "sums"]

    def list_auxiliary_states(self):
        return ["calls"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0][:1]], [(1,)]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _ScaleSum()


@given(n=st.integers(1, 6), k=st.integers(2, 5), seed=st.integers(0, 2**31),
       weight=st.sampled_from((0.5, 1.0, 3.0)))
def test_weighted_softmax_ce_forward_and_user_backward(n, k, seed, weight):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(np.float32)
    label = rng.integers(0, k, n).astype(np.float32)
    data = mx.nd.array(x)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Custom(data, mx.nd.array(label), op_type="test_weighted_softmax_ce",
                           positive_cls_weight=weight)
    out.backward()
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(out.asnumpy(), p, rtol=1e-5, atol=1e-7)
    want = ((1 + label * weight) / weight)[:, None] * (p - np.eye(k)[label.astype(int)])
    np.testing.assert_allclose(data.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_two_outputs_aux_state_and_chained_gradient():
    x = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], np.float32)
    data, calls = mx.nd.array(x), mx.nd.zeros((1,))
    data.attach_grad()
    with mx.autograd.record():
        scaled, sums = mx.nd.Custom(data, calls, op_type="test_scale_sum")
        loss = (scaled * scaled).sum() + (sums * 3).sum()
    loss.backward()
    np.testing.assert_array_equal(scaled.asnumpy(), 2 * x)
    np.testing.assert_array_equal(sums.asnumpy(), x.sum(1))
    np.testing.assert_allclose(data.grad.asnumpy(), 2 * (2 * 2 * x) + 3, rtol=1e-6)
    assert calls.asnumpy().tolist() == [1.0]  # record() trains: is_train was True
    mx.nd.Custom(data, calls, op_type="test_scale_sum")
    assert calls.asnumpy().tolist() == [1.0]


def test_assign_reqs():
    op, dst = mx.operator.CustomOp(), mx.nd.ones((2,))
    op.assign(dst, "null", mx.nd.array([5.0, 5.0]))
    op.assign(dst, "add", mx.nd.array([1.0, 2.0]))
    assert dst.asnumpy().tolist() == [2.0, 3.0]
    op.assign(dst, "inplace", mx.nd.array([-1.0, 0.0]))
    assert dst.asnumpy().tolist() == [-1.0, 0.0]
    with pytest.raises(InvalidValue, match="req"):
        op.assign(dst, "overwrite", dst)


def test_default_prop_and_errors():
    prop = mx.operator.CustomOpProp()
    assert prop.infer_shape([(2, 3)]) == ([(2, 3)], ((2, 3),), ())
    assert prop.infer_type([np.float32]) == ([np.float32], [np.float32], [])
    assert (prop.list_arguments(), prop.list_outputs()) == (["data"], ["output"])
    with pytest.raises(InvalidValue, match="not registered"):
        mx.nd.Custom(mx.nd.ones((1,)), op_type="no_such_op")
    with pytest.raises(InvalidValue, match="takes 2 arguments"):
        mx.nd.Custom(mx.nd.ones((1,)), op_type="test_weighted_softmax_ce",
                     positive_cls_weight=1)
    with pytest.raises(InvalidType, match="'label' must be an NDArray"):
        mx.nd.Custom(mx.nd.ones((1, 2)), [0], op_type="test_weighted_softmax_ce",
                     positive_cls_weight=1)
    with pytest.raises(InvalidType, match="CustomOpProp"):
        mx.operator.register("bad")(int)
    with pytest.raises(NotImplementedError, match="forward"):
        mx.operator.CustomOp().forward(False, [], [], [], [])
