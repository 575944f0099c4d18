"""mx.operator (CustomOp, CustomOpProp, register) inside mx.sym graphs: forward and backward
against numpy oracles written by hand, shape inference, JSON, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue


class ScaledSquare(mx.operator.CustomOp):
    """out = k * x², with a gradient ``k * 2x * out_grad`` for x and none for ``aux_in``."""

    def __init__(self, k: float) -> None:
        self.k = k

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * self.k)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * in_data[0] * (2 * self.k))
        self.assign(in_grad[1], "null", in_data[1])


@mx.operator.register("test_scaled_square")
class ScaledSquareProp(mx.operator.CustomOpProp):
    def __init__(self, k: str) -> None:
        super().__init__(need_top_grad=True)
        self.k = float(k)  # MXNet passes the keywords as strings

    def list_arguments(self):
        return ["data", "aux_in"]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return ScaledSquare(self.k)


class RowSum(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.sum(in_data[0], axis=1))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], mx.nd.broadcast_to(
            out_grad[0].reshape((-1, 1)), shape=in_data[0].shape))


@mx.operator.register("test_row_sum")
class RowSumProp(mx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return in_shape, [(in_shape[0][0],)], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return RowSum()


def test_custom_op_in_a_graph_forward_backward():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    w = rng.normal(size=(2, 4)).astype(np.float32)
    with mx.name.NameManager():
        data = mx.sym.var("data")
        square = mx.sym.Custom(data, op_type="test_scaled_square", k=3)
        net = mx.sym.FullyConnected(square, num_hidden=2, no_bias=True, name="fc")
    assert net.list_arguments() == ["data", "custom0_aux_in", "fc_weight"]
    node = json.loads(net.tojson())["nodes"][2]
    assert (node["op"], node["attrs"]) == ("Custom", {"op_type": "test_scaled_square", "k": "3"})
    assert net.infer_shape(data=(3, 4)) == (None, None, None)  # the op's rule leaves aux_in
    arg_shapes, out_shapes, _ = net.infer_shape(data=(3, 4), custom0_aux_in=(3, 4))
    assert arg_shapes == [(3, 4), (3, 4), (2, 4)] and out_shapes == [(3, 2)]
    executor = net.simple_bind(mx.cpu(), data=(3, 4), custom0_aux_in=(3, 4))
    executor.copy_params_from({"data": mx.nd.array(x), "fc_weight": mx.nd.array(w)})
    head = rng.normal(size=(3, 2)).astype(np.float32)
    out = executor.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), (3 * x * x) @ w.T, rtol=1e-5)
    executor.backward([mx.nd.array(head)])
    np.testing.assert_allclose(executor.grad_dict["data"].asnumpy(), (head @ w) * 6 * x,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(executor.grad_dict["fc_weight"].asnumpy(), head.T @ (3 * x * x),
                               rtol=1e-5)
    assert not executor.grad_dict["custom0_aux_in"].asnumpy().any()
    loaded = mx.sym.load_json(net.tojson())
    again = loaded.eval(data=mx.nd.array(x), custom0_aux_in=mx.nd.zeros((3, 4)),
                        fc_weight=mx.nd.array(w))[0]
    np.testing.assert_allclose(again.asnumpy(), out.asnumpy())


def test_custom_op_own_infer_shape_and_numeric_gradient():
    from sparsegen.test_utils import check_numeric_gradient, check_symbolic_forward

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    net = mx.sym.Custom(mx.sym.var("x"), op_type="test_row_sum")
    assert net.infer_shape(x=(2, 3))[1] == [(2,)]
    check_symbolic_forward(net, [x], [x.sum(1)])
    check_numeric_gradient(net, [np.random.default_rng(1).normal(size=(2, 3))])


def test_custom_op_errors_and_assign():
    with pytest.raises(InvalidValue, match="not registered"):
        mx.sym.Custom(mx.sym.var("x"), op_type="test_nothing_registered")
    with pytest.raises(InvalidType, match="CustomOpProp subclass"):
        mx.operator.register("test_bad")(int)
    with pytest.raises(InvalidValue, match="not its arguments"):
        mx.sym.Custom(mx.sym.var("x"), op_type="test_row_sum", label=mx.sym.var("y"))
    dst = mx.nd.array([1.0, 2.0])
    op = mx.operator.CustomOp()
    op.assign(dst, "add", mx.nd.array([10.0, 10.0]))
    op.assign(dst, "null", mx.nd.array([0.0, 0.0]))
    assert dst.asnumpy().tolist() == [11.0, 12.0]
    op.assign(dst, "write", mx.nd.array([5.0, 6.0]))
    assert dst.asnumpy().tolist() == [5.0, 6.0]
    with pytest.raises(InvalidValue, match="req"):
        op.assign(dst, "sometimes", dst)
