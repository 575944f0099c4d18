"""``SequentialModule``, ``PythonModule`` and ``PythonLossModule`` against MXNet 1.9.1's
recorded runs (tests/fixtures/record_module_chain.py), and their refusals."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import sparsegen as mx
from sparsegen.errors import InvalidValue, NotReady, NotSupported

from fixtures.record_module_chain import CASES, FIXTURE, run_case

RECORDED = json.loads(pathlib.Path(FIXTURE).read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_chain_trains_as_mxnet(name: str) -> None:
    got, want = run_case(mx, name), RECORDED[name]
    for key, value in want["params"].items():
        np.testing.assert_allclose(got["params"][key], value, rtol=1e-4, atol=1e-5, err_msg=key)
    np.testing.assert_allclose(got["predict"], want["predict"], rtol=1e-4, atol=1e-5)
    assert got["score"] == pytest.approx(want["score"])
    assert got["output_shapes"] == want["output_shapes"]


def _fc(name: str, hidden: int, data: str = "data") -> mx.mod.Module:
    return mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable(data), num_hidden=hidden,
                                               name=name), data_names=[data], label_names=None)


def test_sequential_names_shapes_and_input_grads() -> None:
    chain = mx.mod.SequentialModule().add(_fc("a", 4)).add(_fc("b", 2, "h"), auto_wiring=True)
    assert chain.data_names == ["data"] and chain.output_names == ["b_output"]
    chain.bind([("data", (3, 5))], inputs_need_grad=True)
    assert chain.label_shapes is None
    assert [tuple(s) for _, s in chain.output_shapes] == [(3, 2)]
    chain.init_params(initializer=mx.init.One())
    chain.forward(mx.io.DataBatch([mx.nd.ones((3, 5))]), is_train=True)
    np.testing.assert_allclose(chain.get_outputs()[0].asnumpy(), np.full((3, 2), 4 * 5.0))  # biases start at 0
    chain.backward([mx.nd.ones((3, 2))])
    # d(sum of outputs)/d(data) = column sums of W_b @ W_a = 2 * 4 ones.
    np.testing.assert_allclose(chain.get_input_grads()[0].asnumpy(), np.full((3, 5), 8.0))


def test_sequential_refusals() -> None:
    with pytest.raises(InvalidValue, match="take_label"):
        mx.mod.SequentialModule().add(_fc("a", 2), take_label=True)
    with pytest.raises(InvalidValue, match="empty"):
        mx.mod.SequentialModule().bind([("data", (2, 3))])
    chain = mx.mod.SequentialModule().add(_fc("a", 2))
    with pytest.raises(NotReady, match="SequentialModule.forward.*bind"):
        chain.forward(mx.io.DataBatch([mx.nd.ones((2, 3))]))
    twice = mx.mod.SequentialModule().add(_fc("a", 3)).add(_fc("a", 3), auto_wiring=True)
    twice.bind([("data", (2, 3))])
    with pytest.raises(InvalidValue, match="duplicated parameter name 'a_weight'"):
        twice.init_params()
    wiring = mx.mod.SequentialModule().add(_fc("a", 2))
    wiring.add(mx.mod.Module(mx.sym.Variable("x") + mx.sym.Variable("y"),
                             data_names=["x", "y"], label_names=None), auto_wiring=True)
    with pytest.raises(InvalidValue, match=r"layer 1 takes 2 data inputs \['x', 'y'\]"):
        wiring.bind([("data", (2, 3))])


def test_python_module_refusals() -> None:
    with pytest.raises(InvalidValue, match="one data name and one label name"):
        mx.mod.PythonLossModule(data_names=("a", "b"))
    with pytest.raises(TypeError, match="grad_func must be callable"):
        mx.mod.PythonLossModule(grad_func=3)
    loss = mx.mod.PythonLossModule()
    with pytest.raises(InvalidValue, match=r"data_shapes name \['x'\].*\['data'\]"):
        loss.bind([("x", (2, 3))], [("softmax_label", (2,))])
    loss.bind([("data", (2, 3))], [("softmax_label", (2,))])
    loss.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    with pytest.raises(NotSupported, match="grad_func"):
        loss.backward()
    with pytest.raises(InvalidValue, match="no out_grads"):
        loss.backward(mx.nd.ones((2, 3)))
    with pytest.raises(NotSupported, match="_compute_output_shapes"):
        mx.mod.PythonModule(["data"], None, ["out"]).bind([("data", (2, 3))])
