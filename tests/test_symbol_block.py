"""``gluon.SymbolBlock`` and ``HybridBlock.export``: a network MXNet 1.9.1 exported, imported
and run (tests/fixtures/record_symbol_block.py), graphs against numpy, export round trips and
refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue

from fixtures.record_symbol_block import FIXTURE, PREFIX

RECORDED = json.loads(FIXTURE.read_text())


def test_imports_mxnet_export() -> None:
    block = mx.gluon.SymbolBlock.imports(f"{PREFIX}-symbol.json", ["data"],
                                         f"{PREFIX}-0003.params")
    x = mx.nd.array(RECORDED["input"])
    np.testing.assert_allclose(block(x).asnumpy(), RECORDED["output"], rtol=1e-5, atol=1e-6)
    with mx.autograd.record():
        block(x).sum().backward()
    params = block.collect_params()
    assert sorted(name for name, p in params.items() if p.grad_req != "null") == \
        sorted(RECORDED["grads"])
    for name, grad in RECORDED["grads"].items():
        np.testing.assert_allclose(params[name].grad().asnumpy(), grad, rtol=1e-4, atol=1e-5,
                                   err_msg=name)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 3))
def test_graph_block_against_numpy(batch: int, features: int, hidden: int) -> None:
    rng = np.random.default_rng(batch * 100 + features * 10 + hidden)
    data = mx.sym.var("data")
    block = mx.gluon.SymbolBlock(mx.sym.FullyConnected(data, num_hidden=hidden, name="fc"),
                                 data)
    block.initialize()
    weight, bias = rng.standard_normal((hidden, features)), rng.standard_normal(hidden)
    block.collect_params()["fc_weight"].set_data(mx.nd.array(weight))
    block.collect_params()["fc_bias"].set_data(mx.nd.array(bias))
    x = rng.standard_normal((batch, features))
    with mx.autograd.record():
        out = block(mx.nd.array(x))
    out.backward(mx.nd.ones(out.shape))
    np.testing.assert_allclose(out.asnumpy(), x @ weight.T + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(block.collect_params()["fc_weight"].grad().asnumpy(),
                               np.ones((batch, hidden)).T @ x, rtol=1e-5, atol=1e-5)


def test_export_round_trip(tmp_path) -> None:
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(4, activation="relu"), mx.gluon.nn.Dense(2))
    net.initialize(mx.init.Xavier())
    with pytest.raises(InvalidValue, match="run forward"):
        net.export(str(tmp_path / "net"))
    x = mx.nd.array(np.random.default_rng(0).random((3, 5)))
    expected = net(x).asnumpy()
    net.export(str(tmp_path / "net"), epoch=7)
    saved = mx.nd.load(str(tmp_path / "net-0007.params"))
    assert sorted(saved) == sorted(f"arg:{name}" for name in net.collect_params())
    loaded = mx.gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), "data",
                                          str(tmp_path / "net-0007.params"))
    np.testing.assert_allclose(loaded(x).asnumpy(), expected, rtol=1e-6)
    module = mx.mod.Module(mx.sym.load(str(tmp_path / "net-symbol.json")), label_names=None)
    module.bind([("data", x.shape)], for_training=False)
    module.set_params({k[4:]: v for k, v in saved.items()}, {})
    module.forward(mx.io.DataBatch([x]))
    np.testing.assert_allclose(module.get_outputs()[0].asnumpy(), expected, rtol=1e-6)
    composed = loaded(mx.sym.var("z"))
    assert composed.list_arguments()[0] == "z"


def test_symbol_block_refusals() -> None:
    data, weight = mx.sym.var("data"), mx.sym.var("w", stype="row_sparse")
    with pytest.raises(InvalidValue, match="'w' is row_sparse"):
        mx.gluon.SymbolBlock(mx.sym.dot(data, weight), data)
    with pytest.raises(InvalidValue, match="inputs must be variables"):
        mx.gluon.SymbolBlock(mx.sym.relu(data), mx.sym.relu(data))
    block = mx.gluon.SymbolBlock(mx.sym.relu(data), data)
    with pytest.raises(InvalidValue, match=r"2 inputs for the input names \['data'\]"):
        block(mx.nd.ones((2,)), mx.nd.ones((2,)))
