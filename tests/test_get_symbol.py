"""``mx.autograd.get_symbol``: the recorded computation of an array rebuilt as a Symbol (from the
``mx.nd`` calls the tape noted), bound on the leaf arrays and compared with numpy; node names,
ops and counts against MXNet 1.9.1's (literals below, recorded with MXNet 1.9.1's
``get_symbol``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, NotSupported


def _nodes(symbol):
    return json.loads(symbol.tojson())["nodes"]


def test_argument_counts_as_mxnet_test_get_symbol():
    x = mx.nd.ones((1,))
    x.attach_grad()
    with mx.autograd.record():
        y = x * x + 2 * x - 1
    assert len(mx.autograd.get_symbol(y).list_arguments()) == 1
    z = mx.nd.ones((1,))
    z.attach_grad()
    with mx.autograd.record():
        y = x * x + 2 * z - 1
    assert len(mx.autograd.get_symbol(y).list_arguments()) == 2


def test_operator_graph_names_and_attributes_as_mxnet():
    x, z = mx.nd.ones((1,)), mx.nd.ones((1,))
    x.attach_grad()
    z.attach_grad()
    with mx.autograd.record():
        y = x * x + 2 * z - 1
    nodes = _nodes(mx.autograd.get_symbol(y))
    # MXNet 1.9.1: var0, node_0 broadcast_mul, var1, node_1 _mul_scalar (scalar "2.0"),
    # node_2 broadcast_add, node_3 _minus_scalar (scalar "1.0"); sparsegen's array operators are
    # elemwise_* (same shapes) where MXNet writes broadcast_*
    assert [n["name"] for n in nodes] == ["var0", "node_0", "var1", "node_1", "node_2", "node_3"]
    assert [n["op"] for n in nodes] == ["null", "elemwise_mul", "null", "_mul_scalar",
                                        "elemwise_add", "_minus_scalar"]
    assert nodes[3]["attrs"] == {"scalar": "2.0"} and nodes[5]["attrs"] == {"scalar": "1.0"}
    assert mx.autograd.get_symbol(y).list_outputs() == ["node_3_output"]  # MXNet 1.9.1's


def test_dense_layers_node_count_and_attributes_as_mxnet():
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        for _ in range(3):
            net.add(mx.gluon.nn.Dense(10))
    net.initialize()
    data = mx.nd.zeros((1, 10))
    with mx.autograd.record():
        y = net(data)
    symbol = mx.autograd.get_symbol(y)
    nodes = _nodes(symbol)
    # MXNet 1.9.1 (test_inline's inlined graph, and the same net not hybridized): 10 nodes, the
    # data a "null" leaf, each weight and bias a "var", 3 FullyConnected with these attributes
    assert len(nodes) == 10
    ops = [n for n in nodes if n["op"] != "null"]
    assert [n["op"] for n in ops] == ["FullyConnected"] * 3
    assert all(n["attrs"] == {"flatten": "True", "no_bias": "False", "num_hidden": "10"}
               for n in ops)
    assert nodes[0]["name"].startswith("null")
    assert all(name.startswith("var") for name in symbol.list_arguments()[1:])
    params = [p.data() for p in net.collect_params().values()]  # weight, bias per layer
    args = dict(zip(symbol.list_arguments(),
                    [data, params[0], params[1], params[2], params[3], params[4], params[5]]))
    out = symbol.bind(mx.cpu(), args).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("inline_limit, count", [(3, 10), (0, 8), (None, 8)])
def test_hybridized_block_is_one_cached_op_unless_inlined(inline_limit, count):
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        for _ in range(3):
            net.add(mx.gluon.nn.Dense(10))
    net.initialize()
    net.hybridize(**({} if inline_limit is None else {"inline_limit": inline_limit}))
    data = mx.nd.array(np.linspace(-1, 1, 10, dtype=np.float32).reshape(1, 10))
    with mx.autograd.record():
        y = net(data)
    symbol = mx.autograd.get_symbol(y)
    nodes = _nodes(symbol)
    # MXNet 1.9.1's test_inline: 10 nodes inlined (3 FullyConnected, inline_limit=3), 8 as one
    # _CachedOp (inline_limit=0, and the default 2 < 3 ops) whose inputs are the data, then
    # each layer's weight and bias
    assert len(nodes) == count
    if count == 8:
        assert nodes[-1]["op"] == "_CachedOp" and len(nodes[-1]["inputs"]) == 7
    y.backward()  # the recorded graph is the ops' as before
    params = [p.data() for p in net.collect_params().values()]
    out = symbol.bind(mx.cpu(), dict(zip(symbol.list_arguments(), [data, *params]))).forward()
    w0, b0, w1, b1, w2, b2 = (p.asnumpy() for p in params)
    expected = ((data.asnumpy() @ w0.T + b0) @ w1.T + b1) @ w2.T + b2
    np.testing.assert_allclose(out[0].asnumpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[0].asnumpy(), y.asnumpy(), rtol=1e-6)


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(1, 5), cols=st.integers(1, 6), hidden=st.integers(1, 4),
       seed=st.integers(0, 2**16))
def test_rebuilt_graph_binds_and_computes_the_recorded_values(rows, cols, hidden, seed):
    rng = np.random.default_rng(seed)
    xv = rng.standard_normal((rows, cols)).astype(np.float32)
    wv = rng.standard_normal((hidden, cols)).astype(np.float32)
    bv = rng.standard_normal(hidden).astype(np.float32)
    x, w, b = mx.nd.array(xv), mx.nd.array(wv), mx.nd.array(bv)
    w.attach_grad()
    with mx.autograd.record():
        h = mx.nd.FullyConnected(x, w, b, num_hidden=hidden)
        a = mx.nd.Activation(h, act_type="tanh")
        s = mx.nd.softmax(a * 3 - 1, axis=1)
        y = mx.nd.sum(s * a, axis=1, keepdims=True)
    hv = np.tanh(xv @ wv.T + bv)
    e = np.exp(3 * hv - 1 - (3 * hv - 1).max(axis=1, keepdims=True))
    expected = ((e / e.sum(axis=1, keepdims=True)) * hv).sum(axis=1, keepdims=True)
    symbol = mx.autograd.get_symbol(y)
    names = symbol.list_arguments()
    assert len(names) == 3 and names[1].startswith("var")  # x and b have no gradient
    assert names[0].startswith("null") and names[2].startswith("null")
    out = symbol.bind(mx.cpu(), dict(zip(names, [x, w, b]))).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-7)


def test_one_output_of_a_multi_output_op():
    x = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    x.attach_grad()
    with mx.autograd.record():
        parts = mx.nd.split(x, num_outputs=2, axis=1)
        y = parts[1] * 2
    symbol = mx.autograd.get_symbol(y)
    assert symbol.list_arguments() == ["var0"]
    out = symbol.bind(mx.cpu(), {"var0": x}).forward()[0]
    np.testing.assert_array_equal(out.asnumpy(), np.arange(12).reshape(3, 4)[:, 2:] * 2)


def test_a_variable_alone_is_a_variable():
    x = mx.nd.ones((2,))
    x.attach_grad()
    assert mx.autograd.get_symbol(x).list_arguments() == ["var0"]


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(InvalidType, match="get_symbol: x must be an NDArray"):
        mx.autograd.get_symbol(np.ones(2))
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = x.reshape((3, 2))  # an NDArray method: no mx.nd call noted, no MXNet attributes
    with pytest.raises(NotSupported, match="recorded op reshape"):
        mx.autograd.get_symbol(y)


def test_a_composed_op_is_one_node_with_its_attributes():
    xv = np.array([[-2.0, -0.5, 0.0, 1.5]], dtype=np.float32)
    x = mx.nd.array(xv)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(x, act_type="elu", slope=0.5)  # recorded as several kernels
    nodes = _nodes(mx.autograd.get_symbol(y))
    assert [(n["op"], n.get("attrs")) for n in nodes] == [
        ("null", None), ("LeakyReLU", {"act_type": "elu", "slope": "0.5"})]
    out = mx.autograd.get_symbol(y).bind(mx.cpu(), {"var0": x}).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), np.where(xv > 0, xv, 0.5 * np.expm1(xv)),
                               rtol=1e-6)
