"""mx.sym ops of several outputs (split / SliceChannel, topk(ret_typ='both'), sort, BatchNorm's
mean and var, custom ops of several outputs) and auxiliary states: output names, indexing,
get_internals, JSON, inference per output, executors with several outputs and their backward,
aux states through bind / simple_bind / copy_params_from / reshape.

Oracles: names and JSON recorded by hand from MXNet 1.9.1 (the session's probe prints, quoted
below; the whole multi-output graph of tests/data/symbols is checked in test_symbol.py),
numpy for values and gradients.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidIndex, InvalidValue

# MXNet 1.9.1: mx.sym.BatchNorm(mx.sym.Variable('data'), name='bn').tojson()
MXNET_BN_JSON = {
    "nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "bn_gamma", "inputs": []},
        {"op": "null", "name": "bn_beta", "inputs": []},
        {"op": "null", "name": "bn_moving_mean", "attrs": {"__init__": "[\"zero\", {}]"},
         "inputs": []},
        {"op": "null", "name": "bn_moving_var", "attrs": {"__init__": "[\"one\", {}]"},
         "inputs": []},
        {"op": "BatchNorm", "name": "bn",
         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]}],
    "arg_nodes": [0, 1, 2, 3, 4], "node_row_ptr": [0, 1, 2, 3, 4, 5, 8], "heads": [[5, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]}}
# MXNet 1.9.1: mx.sym.Group([s[0], s[2]]) of s = mx.sym.split(data, num_outputs=3, axis=1)
MXNET_SPLIT_GROUP_JSON = {
    "nodes": [{"op": "null", "name": "data", "inputs": []},
              {"op": "SliceChannel", "name": "split0",
               "attrs": {"axis": "1", "num_outputs": "3"}, "inputs": [[0, 0, 0]]}],
    "arg_nodes": [0], "node_row_ptr": [0, 1, 4], "heads": [[1, 0, 0], [1, 2, 0]],
    "attrs": {"mxnet_version": ["int", 10901]}}


def fresh(build):
    """``build()`` under fresh name counters (auto names as MXNet's in a new process)."""
    with mx.name.NameManager():
        return build()


def test_output_names_as_mxnet():
    data = mx.sym.Variable("data")
    split = fresh(lambda: mx.sym.split(data, num_outputs=3, axis=1))
    assert split.list_outputs() == ["split0_output0", "split0_output1", "split0_output2"]
    assert len(split) == 3 and split.name == "split0"
    assert fresh(lambda: mx.sym.split(data, num_outputs=1)).list_outputs() == ["split0_output0"]
    assert fresh(lambda: mx.sym.SliceChannel(data, num_outputs=2)).list_outputs() == [
        "slicechannel0_output0", "slicechannel0_output1"]
    topk = {r: fresh(lambda r=r: mx.sym.topk(data, ret_typ=r)).list_outputs()
            for r in ("indices", "mask", "value", "both")}
    assert topk == {"indices": ["topk0_output"], "mask": ["topk0_output"],
                    "value": ["topk0_output0"], "both": ["topk0_output0", "topk0_output1"]}
    assert fresh(lambda: mx.sym.sort(data)).list_outputs() == ["sort0_output0"]
    assert fresh(lambda: mx.sym.argsort(data)).list_outputs() == ["argsort0_output"]
    assert fresh(lambda: mx.sym.Dropout(data)).list_outputs() == ["dropout0_output"]
    bn = mx.sym.BatchNorm(data, name="bn")
    assert bn.list_outputs() == ["bn_output"] and len(bn) == 1
    stats = mx.sym.BatchNorm(data, output_mean_var=True, name="bn2")
    assert stats.list_outputs() == ["bn2_output", "bn2_mean", "bn2_var"] and len(stats) == 3


def test_indexing_iteration_group_internals():
    data = mx.sym.Variable("data")
    split = fresh(lambda: mx.sym.split(data, num_outputs=3, axis=1))
    assert split[1].list_outputs() == ["split0_output1"] and split[-1].name == "split0"
    assert split["split0_output2"].list_outputs() == ["split0_output2"]
    assert [s.list_outputs() for s in split] == [[f"split0_output{i}"] for i in range(3)]
    with pytest.raises(InvalidValue, match="no output named 'split0_output3'"):
        split["split0_output3"]
    with pytest.raises(InvalidIndex, match="out of range"):
        split[3]
    group = mx.sym.Group([split[0], split[2]])
    assert group.list_outputs() == ["split0_output0", "split0_output2"] and group.name == "split0"
    assert json.loads(group.tojson()) == MXNET_SPLIT_GROUP_JSON
    assert split.get_internals().list_outputs() == [
        "data", "split0_output0", "split0_output1", "split0_output2"]
    assert split.get_children().list_outputs() == ["data"]
    with pytest.raises(InvalidValue, match="3 outputs"):
        mx.sym.relu(split)
    # MXNet 1.9.1: (BatchNorm(data, name='bn') + 1).get_internals().list_outputs()
    plus = mx.sym.BatchNorm(data, name="bn") + 1
    assert fresh(lambda: plus).get_internals().list_outputs()[-2] == "bn_output"
    assert plus.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]


def test_auxiliary_states_listing_and_json():
    data = mx.sym.Variable("data")
    bn = mx.sym.BatchNorm(data, name="bn")
    assert bn.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.list_inputs() == ["data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    assert json.loads(bn.tojson()) == MXNET_BN_JSON
    loaded = mx.sym.load_json(json.dumps(MXNET_BN_JSON))
    assert loaded.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert json.loads(loaded.tojson()) == MXNET_BN_JSON
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    assert mx.sym.Group([fc, bn]).list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.attr_dict()["bn_moving_var"]["__init__"] == '["one", {}]'


@given(rows=st.integers(0, 4), parts=st.integers(1, 4), size=st.integers(1, 3),
       axis=st.sampled_from([0, 1, -1]), squeeze=st.booleans())
def test_split_infer_shape_matches_numpy(rows, parts, size, axis, squeeze):
    shape = (rows * parts or parts, parts * size, 2)
    a = axis % 3
    if shape[a] % parts or (squeeze and shape[a] // parts != 1):
        return
    split = mx.sym.split(mx.sym.Variable("data"), num_outputs=parts, axis=axis,
                         squeeze_axis=squeeze)
    expected = [p.shape for p in np.split(np.zeros(shape), parts, axis=a)]
    if squeeze:
        expected = [s[:a] + s[a + 1:] for s in expected]
    assert split.infer_shape(data=shape) == ([shape], expected, [])


def test_infer_shape_type_storage_per_output():
    data = mx.sym.Variable("data")
    top = mx.sym.topk(data, k=2, ret_typ="both", axis=1)
    assert top.infer_shape(data=(3, 5)) == ([(3, 5)], [(3, 2), (3, 2)], [])
    _, types, _ = top.infer_type(data="float64")
    assert types == [np.float64, np.float32]  # indices in topk's dtype (float32), as MXNet
    assert mx.sym.topk(data, ret_typ="mask").infer_shape(data=(3, 5))[1] == [(3, 5)]
    assert mx.sym.topk(data, k=0, ret_typ="value").infer_shape(data=(3, 5))[1] == [(3, 5)]
    bn = mx.sym.BatchNorm(data, output_mean_var=True, axis=-1, name="bn")
    assert bn.infer_shape(data=(4, 3, 2)) == ([(4, 3, 2), (2,), (2,)],
                                              [(4, 3, 2), (2,), (2,)], [(2,), (2,)])
    assert mx.sym.BatchNorm(data, name="b").infer_shape(data=(4, 3, 2)) == (
        [(4, 3, 2), (3,), (3,)], [(4, 3, 2)], [(3,), (3,)])
    assert bn.infer_type(data="float32") == ([np.float32] * 3, [np.float32] * 3,
                                             [np.float32] * 2)
    assert bn.infer_storage_type(data="default") == (["default"] * 3, ["default"] * 3,
                                                     ["default"] * 2)
    assert bn.infer_shape() == (None, None, None)
    assert bn.infer_shape_partial()[2] == [(), ()]
    assert mx.sym.BatchNorm(data, name="c").infer_shape(c_moving_mean=(3,))[0] is None


def test_split_executor_backward_per_output():
    x = np.arange(24, dtype=np.float32).reshape(2, 6, 2)
    split = mx.sym.split(mx.sym.Variable("data"), num_outputs=3, axis=1)
    ex = split.simple_bind(mx.cpu(), data=x.shape)
    outs = ex.forward(is_train=True, data=mx.nd.array(x))
    for out, want in zip(outs, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(out.asnumpy(), want)
    assert list(ex.output_dict) == split.list_outputs()
    heads = [np.random.RandomState(k).randn(2, 2, 2).astype(np.float32) for k in range(3)]
    ex.backward([mx.nd.array(h) for h in heads])
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), np.concatenate(heads, axis=1))
    # one output bound: the others get zero head gradients, as MXNet's
    one = split[1].simple_bind(mx.cpu(), data=x.shape)
    one.forward(is_train=True, data=mx.nd.array(x))
    one.backward(mx.nd.array(heads[1]))
    expected = np.zeros_like(x)
    expected[:, 2:4] = heads[1]
    np.testing.assert_array_equal(one.grad_dict["data"].asnumpy(), expected)


def test_topk_both_executor_and_gradient():
    x = np.array([[1, 4, 2, 3], [9, 8, 7, 6]], dtype=np.float32)
    top = mx.sym.topk(mx.sym.Variable("data"), k=2, ret_typ="both")
    ex = top.simple_bind(mx.cpu(), data=x.shape)
    values, ids = ex.forward(is_train=True, data=mx.nd.array(x))
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(values.asnumpy(), np.take_along_axis(x, order, 1))
    np.testing.assert_array_equal(ids.asnumpy(), order.astype(np.float32))
    head = np.array([[1, 2], [3, 4]], dtype=np.float32)
    ex.backward([mx.nd.array(head), mx.nd.ones((2, 2))])  # indices pass no gradient
    expected = np.zeros_like(x)
    np.put_along_axis(expected, order, head, 1)
    np.testing.assert_array_equal(ex.grad_dict["data"].asnumpy(), expected)


def test_group_with_batchnorm_mean_output():
    x = np.random.RandomState(0).randn(4, 6).astype(np.float32)
    parts = mx.sym.split(mx.sym.Variable("data"), num_outputs=2, axis=1)
    stats = mx.sym.BatchNorm(parts[1], output_mean_var=True, name="bn")
    group = mx.sym.Group([parts[0] * 2, stats[1]])
    assert group.list_outputs()[1] == "bn_mean"
    ex = group.simple_bind(mx.cpu(), data=x.shape)
    assert [o.shape for o in ex.outputs] == [(4, 3), (3,)]
    doubled, mean = ex.forward(is_train=True, data=mx.nd.array(x))
    np.testing.assert_allclose(mean.asnumpy(), x[:, 3:].mean(axis=0), rtol=1e-5, atol=1e-6)
    ex.backward([mx.nd.ones((4, 3)), mx.nd.ones((3,))])  # the mean passes no gradient (MXNet)
    expected = np.zeros_like(x)
    expected[:, :3] = 2
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), expected, atol=1e-6)


def test_bind_aux_states_lists_dicts_and_errors():
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), fix_gamma=False, name="bn")
    x = mx.nd.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    args = {"data": x, "bn_gamma": mx.nd.ones((2,)), "bn_beta": mx.nd.zeros((2,))}
    mean, var = mx.nd.array([1.0, 2.0]), mx.nd.array([4.0, 9.0])
    ex = bn.bind(mx.cpu(), args, aux_states=[mean, var])
    assert ex.aux_arrays == [mean, var] and ex.aux_dict["bn_moving_var"] is var
    out = ex.forward(is_train=False)[0].asnumpy()  # inference: the moving statistics
    np.testing.assert_allclose(out, (x.asnumpy() - [1, 2]) / np.sqrt([4, 9] + np.float32(1e-3)),
                               rtol=1e-5)
    assert bn.bind(mx.cpu(), args, aux_states={"bn_moving_mean": mean,
                                               "bn_moving_var": var}).aux_arrays == [mean, var]
    with pytest.raises(InvalidValue, match="aux_states lacks"):
        bn.bind(mx.cpu(), args)
    with pytest.raises(InvalidValue, match="not auxiliary states"):
        bn.bind(mx.cpu(), args, aux_states={"bn_moving_mean": mean, "bn_moving_var": var,
                                            "other": var})
    with pytest.raises(InvalidValue, match="1 arrays for 2 auxiliary states"):
        bn.bind(mx.cpu(), args, aux_states=[mean])
    with pytest.raises(InvalidValue, match="not an auxiliary state"):
        ex.copy_params_from({}, {"bn_nothing": mean})
    ex.copy_params_from({"bn_gamma": mx.nd.array([2.0, 3.0])},
                        {"bn_moving_mean": mx.nd.array([0.0, 0.0])})
    assert mean.asnumpy().tolist() == [0.0, 0.0] and args["bn_gamma"].asnumpy().tolist() == [2, 3]


def test_simple_bind_allocates_and_shares_aux():
    bn = mx.sym.BatchNorm(mx.sym.Variable("data"), name="bn")
    ex = bn.simple_bind(mx.cpu(), data=(4, 3))
    assert list(ex.aux_dict) == ["bn_moving_mean", "bn_moving_var"]
    for array in ex.aux_arrays:  # zeros, as MXNet's simple_bind (Module initialises them)
        assert array.shape == (3,) and array.asnumpy().tolist() == [0.0, 0.0, 0.0]
    shared = bn.simple_bind(mx.cpu(), data=(4, 3), shared_exec=ex)
    assert shared.aux_arrays[0] is ex.aux_arrays[0]
    reshaped = ex.reshape(data=(8, 3))
    assert reshaped.aux_arrays[1] is ex.aux_arrays[1] and reshaped.outputs[0].shape == (8, 3)


class SumDiff(mx.operator.CustomOp):
    """outputs a + b and a - b; counts its forward calls in its auxiliary state."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] + in_data[1])
        self.assign(out_data[1], req[1], in_data[0] - in_data[1])
        aux[0][:] = aux[0] + 1

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] + out_grad[1])
        self.assign(in_grad[1], req[1], out_grad[0] - out_grad[1])


@mx.operator.register("test_sum_diff")
class SumDiffProp(mx.operator.CustomOpProp):
    """Two arguments, two outputs (sum, diff), one auxiliary state (count)."""

    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["sum", "diff"]

    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], [(1,)]

    def create_operator(self, ctx, shapes, dtypes):
        return SumDiff()


def test_custom_op_of_several_outputs_and_an_aux_state():
    a, b = np.array([[1.0, 2], [3, 4]], np.float32), np.array([[5.0, 1], [0, 2]], np.float32)
    ga, gs = np.ones((2, 2), np.float32), np.full((2, 2), 3.0, np.float32)
    x, y, count = mx.nd.array(a), mx.nd.array(b), mx.nd.zeros((1,))
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        total, diff = mx.nd.Custom(x, y, count, op_type="test_sum_diff")
    mx.autograd.backward([total, diff], [mx.nd.array(ga), mx.nd.array(gs)])
    np.testing.assert_array_equal(total.asnumpy(), a + b)
    np.testing.assert_array_equal(diff.asnumpy(), a - b)
    np.testing.assert_array_equal(x.grad.asnumpy(), ga + gs)
    np.testing.assert_array_equal(y.grad.asnumpy(), ga - gs)
    assert count.asnumpy().tolist() == [1.0]
    sym = mx.sym.Custom(mx.sym.Variable("a"), mx.sym.Variable("b"), op_type="test_sum_diff",
                        name="sd")
    assert sym.list_outputs() == ["sd_sum", "sd_diff"]
    assert sym.list_arguments() == ["a", "b"] and sym.list_auxiliary_states() == ["sd_count"]
    assert sym.infer_shape(a=(2, 2), b=(2, 2)) == ([(2, 2)] * 2, [(2, 2)] * 2, [(1,)])
    assert mx.sym.load_json(sym.tojson()).list_outputs() == ["sd_sum", "sd_diff"]
    ex = sym[1].simple_bind(mx.cpu(), a=(2, 2), b=(2, 2))  # only diff: sum gets zero grads
    (out,) = ex.forward(is_train=True, a=mx.nd.array(a), b=mx.nd.array(b))
    ex.backward(mx.nd.array(gs))
    np.testing.assert_array_equal(out.asnumpy(), a - b)
    np.testing.assert_array_equal(ex.grad_dict["a"].asnumpy(), gs)
    np.testing.assert_array_equal(ex.grad_dict["b"].asnumpy(), -gs)
    assert ex.aux_dict["sd_count"].asnumpy().tolist() == [1.0]
