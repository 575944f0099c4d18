"""Gluon's ``HybridBlock.register_op_hook``: a hybridized block reports each op's outputs (and
with ``monitor_all`` its inputs) as MXNet 1.9.1 names them (the literals are MXNet 1.9.1's, from
its test_gluon.py::test_op_hook_output_names and its executor monitor), with values checked
against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import sparsegen as mx
from sparsegen.errors import InvalidType


def _dense_relu():
    model = mx.gluon.nn.HybridSequential("dense_")
    with model.name_scope():
        model.add(mx.gluon.nn.Dense(2))
        model.add(mx.gluon.nn.Activation("relu"))
    model.initialize()
    return model


def _hooked(block, monitor_all):
    seen = []
    block.register_op_hook(lambda name, op, array: seen.append((name, op, array)), monitor_all)
    return seen


def test_names_ops_and_values_with_monitor_all():
    model = _dense_relu()
    model.hybridize()
    seen = _hooked(model, True)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 24
    out = model(mx.nd.array(x))
    # MXNet 1.9.1's names (bytes, as its C callback gives them)
    assert [name for name, _, _ in seen] == [
        b"dense_dense0_fwd_data", b"dense_dense0_fwd_weight", b"dense_dense0_fwd_bias",
        b"dense_dense0_fwd_output", b"dense_relu0_fwd_input0", b"dense_relu0_fwd_output"]
    assert [op for _, op, _ in seen] == [b"FullyConnected"] * 4 + [b"Activation"] * 2
    dense = model[0]
    w, b = dense.weight.data().asnumpy(), dense.bias.data().asnumpy()
    fc = x.reshape(2, 12) @ w.T + b
    np.testing.assert_allclose(seen[3][2].asnumpy(), fc, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seen[5][2].asnumpy(), np.maximum(fc, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), np.maximum(fc, 0), rtol=1e-5, atol=1e-6)


def test_outputs_only_and_after_hybridize_again():
    model = _dense_relu()
    model.hybridize()
    seen = _hooked(model, False)
    model(mx.nd.ones((2, 3, 4)))
    assert [name for name, _, _ in seen] == [b"dense_dense0_fwd_output",
                                             b"dense_relu0_fwd_output"]
    model.hybridize(static_alloc=True)  # MXNet's test checks both modes
    seen.clear()
    model(mx.nd.ones((2, 3, 4)))
    assert len(seen) == 2


def test_not_hybridized_reports_nothing_as_mxnet():
    model = _dense_relu()
    seen = _hooked(model, True)
    model(mx.nd.ones((2, 3)))
    assert seen == []


def test_executor_monitor_names_input0_as_mxnet():
    net = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc"),
                            act_type="relu", name="r")
    exe = net.simple_bind(mx.cpu(), x=(2, 3))
    names = []
    exe.set_monitor_callback(lambda name, array: names.append(name), monitor_all=True)
    exe.forward()
    # MXNet 1.9.1: fc_data, fc_weight, fc_bias, fc_output, r_input0, r_output (and the variables)
    assert names == ["fc_data", "fc_weight", "fc_bias", "fc_output", "r_input0", "r_output"]


def test_a_callback_that_is_not_callable_is_refused():
    with pytest.raises(InvalidType, match="register_op_hook: callback must be callable"):
        _dense_relu().register_op_hook("print")
