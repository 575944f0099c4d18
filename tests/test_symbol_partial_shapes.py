"""Partial shape inference of symbols, as MXNet 1.9.1's: in its legacy shape semantics (the
default) a 0 is an unknown dimension and ``()`` an unknown shape, under ``set_np_shape(True)``
-1 and None; shapes known in part flow forward and back through the ops. Oracles: shapes worked
out by hand, and MXNet 1.9.1's answers where they are written as literals (asked of MXNet
1.9.1 on this machine, noted beside each)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue

dims = st.integers(1, 40)


@given(batch=dims, features=dims, hidden=dims)
def test_batch_flows_back_through_fully_connected(batch, features, hidden):
    a = mx.sym.Variable("a", shape=(0, features))
    c = mx.sym.Variable("c", shape=(batch, 0))
    d = mx.sym.FullyConnected(data=a, num_hidden=hidden, name="fc") + c
    args, outs, _ = d.infer_shape()
    assert dict(zip(d.list_arguments(), args)) == {
        "a": (batch, features), "fc_weight": (hidden, features), "fc_bias": (hidden,),
        "c": (batch, hidden)}
    assert outs == [(batch, hidden)]


@given(batch=dims, channels=dims, size=st.integers(3, 30), stride=st.integers(1, 3))
def test_convolution_partial_and_backward(batch, channels, size, stride):
    data = mx.sym.Variable("x", shape=(0, channels, 0, 0))
    conv = mx.sym.Convolution(data=data, num_filter=5, kernel=(3, 3), pad=(1, 1),
                              stride=(stride, stride), name="conv")
    args, outs, _ = conv.infer_shape_partial()
    assert args == [(0, channels, 0, 0), (5, channels, 3, 3), (5,)] and outs == [(0, 5, 0, 0)]
    out = (size + 2 - 3) // stride + 1
    target = mx.sym.Variable("t", shape=(batch, 5, out, out))
    args, outs, _ = (conv + target).infer_shape_partial()
    # the batch always comes back from the output; the spatial axes only with stride 1
    assert args[0] == ((batch, channels, size, size) if stride == 1 else (batch, channels, 0, 0))


def test_mxnet_partial_answers():
    # each expected value is MXNet 1.9.1's answer to the same call
    a = mx.sym.var("a", shape=(0, 10))
    assert mx.sym.sum(a, axis=1).infer_shape_partial() == ([(0, 10)], [(0,)], [])
    assert mx.sym.sum(a, axis=1, keepdims=True).infer_shape_partial()[1] == [(0, 1)]
    assert mx.sym.expand_dims(a, axis=0).infer_shape_partial()[1] == [(1, 0, 10)]
    assert mx.sym.relu(a).infer_shape_partial()[1] == [(0, 10)]
    assert mx.sym.reshape(a, shape=(-1, 5)).infer_shape_partial()[1] == [(0, 5)]
    b = mx.sym.var("b", shape=(1, 10))
    assert mx.sym.broadcast_add(a, b).infer_shape_partial()[1] == [(0, 10)]
    x = mx.sym.var("x")
    conv = mx.sym.Convolution(x, num_filter=4, kernel=(3, 3), stride=(2, 2))
    assert conv.infer_shape_partial(x=(0, 3, 9, 0)) == (
        [(0, 3, 9, 0), (4, 3, 3, 3), (4,)], [(0, 4, 4, 0)], [])
    dot = mx.sym.dot(x, mx.sym.var("y"), transpose_b=True)
    assert dot.infer_shape_partial(x=(0, 3), y=(5, 3)) == ([(0, 3), (5, 3)], [(0, 5)], [])
    z = mx.sym.batch_dot(x, mx.sym.var("y"))
    assert z.infer_shape_partial(x=(0, 3, 4), y=(0, 4, 5))[1] == [(0, 3, 5)]
    assert z.infer_shape_partial(x=(0, 3, 4), y=(0, 0, 5))[1] == [()]  # contracted unknown
    cond = mx.sym.var("cond")
    where = mx.sym.where(cond, x, mx.sym.var("y"))  # the condition must be fully known
    assert where.infer_shape_partial(cond=(0, 2), x=(0, 2), y=(0, 2))[1] == [()]


def test_numpy_shape_semantics():
    # MXNet 1.9.1 under np_shape(True): -1 unknown, None an unknown shape, 0 a zero size
    z = mx.sym.var("z")
    with mx.np_shape(True):
        assert mx.sym.sum(z, axis=1).infer_shape_partial(z=(-1, 10)) == (
            [(-1, 10)], [(-1,)], [])
        assert mx.sym.relu(z).infer_shape_partial(z=(0, 10)) == ([(0, 10)], [(0, 10)], [])
        assert mx.sym.relu(z).infer_shape_partial() == ([None], [None], [])
        w = mx.sym.var("w", shape=(-1, 3))
        assert (w + mx.sym.var("v", shape=(2, 3))).infer_shape()[0] == [(2, 3), (2, 3)]
        graph = json.loads(w.tojson())
        assert graph["attrs"]["is_np_shape"] == ["int", 1]
        assert graph["nodes"][0]["attrs"]["__shape__"] == "(-1, 3)"
    assert "is_np_shape" not in json.loads(w.tojson())["attrs"]
    with pytest.raises(InvalidValue, match=">= 0"):
        mx.sym.var("w", shape=(-1, 3))  # -1 is no size in the legacy semantics


def test_legacy_graph_read_with_numpy_shapes(tmp_path):
    weight = mx.sym.var("weight", shape=(128, 0))
    net = mx.sym.FullyConnected(mx.sym.var("data"), weight, num_hidden=128)
    path = tmp_path / "net.json"
    net.save(str(path))  # legacy: no is_np_shape attribute
    for semantics in (False, True):
        with mx.np_shape(semantics):
            args, outs, _ = mx.sym.load(str(path)).infer_shape(data=(10, 784))
        assert args == [(10, 784), (128, 784), (128,)] and outs == [(10, 128)]


def test_split_and_concat_fill_each_other():
    a = mx.sym.Variable("a", shape=(0, 10))
    parts = mx.sym.SliceChannel(data=a, num_outputs=10, axis=1, squeeze_axis=True)
    args, _, _ = (parts[1] + mx.sym.Variable("c", shape=(5,))).infer_shape()
    assert args[0] == (5, 10)
    a = mx.sym.Variable("a", shape=(0, 15, 0))
    parts = mx.sym.SliceChannel(data=a, num_outputs=3, squeeze_axis=False)
    args, _, _ = (parts[1] + mx.sym.Variable("c", shape=(3, 5, 2))).infer_shape()
    assert args[0] == (3, 15, 2)
    p, q = mx.sym.var("p", shape=(0, 3)), mx.sym.var("q")
    cat = mx.sym.Concat(p, q, dim=1) + mx.sym.var("r", shape=(4, 7))
    args, outs, _ = cat.infer_shape()  # q's width is what the output leaves
    assert args == [(4, 3), (4, 4), (4, 7)] and outs == [(4, 7)]


def test_disagreeing_shapes_name_the_variable():
    e = mx.sym.elemwise_add(mx.sym.var("m", shape=(3, 0)), mx.sym.var("n", shape=(4, 2)))
    with pytest.raises(InvalidValue, match=r"\(3, 0\).*\(4, 2\)"):
        e.infer_shape()
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc")
    with pytest.raises(InvalidValue, match="fc_weight has shape"):
        fc.infer_shape(x=(3, 4), fc_weight=(2, 5))
    out = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2) + mx.sym.var("t", shape=(3, 5))
    with pytest.raises(InvalidValue, match=r"one shape .*\(3, 2\), \(3, 5\)"):
        out.infer_shape(x=(3, 4))


@given(rows=dims, cols=dims)
def test_sampler_shape_left_to_its_consumer(rows, cols):
    x = mx.sym.Variable("X")
    y = mx.sym.random.normal(loc=10.0, scale=0.5, shape=()) + x  # () is unknown: from X
    assert y.infer_shape(X=(rows, cols))[1] == [(rows, cols)]
    run = y.bind(mx.cpu(), {"X": mx.nd.zeros((rows, cols))})
    out = run.forward()[0].asnumpy()
    assert out.shape == (rows, cols) and np.all(np.isfinite(out))
    with pytest.raises(InvalidValue, match="leaves its shape to its consumers"):
        mx.sym.random.normal(shape=(0, 3)).bind(mx.cpu(), {})
    with mx.np_shape(True):  # () is a 0-d array there
        assert mx.sym.random.normal(shape=()).infer_shape()[1] == [()]
