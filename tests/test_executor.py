"""Executors (``bind`` / ``simple_bind``) and the symbolic test utilities: forward values and
gradients against numpy oracles written by hand, MXNet's gradient storage types, grad_req,
parameters, reshape."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue, NotSupported
from sparsegen.test_utils import (check_numeric_gradient, check_symbolic_backward,
                                  check_symbolic_forward, simple_forward)

FEATURES, FACTORS = 20, 4  # as tests/fixtures/record_symbols.py
DATA = pathlib.Path(__file__).resolve().parent / "data" / "symbols"


def factorization_machine() -> mx.sym.Symbol:
    """example/sparse/factorization_machine's network without its loss head."""
    x = mx.symbol.Variable("data", stype="csr")
    v = mx.symbol.Variable("v", shape=(FEATURES, FACTORS), stype="row_sparse")
    w = mx.symbol.Variable("w", shape=(FEATURES, 1), stype="row_sparse")
    w0 = mx.symbol.Variable("w0", shape=(1,))
    w1 = mx.symbol.broadcast_add(mx.symbol.dot(x, w), w0)
    bd_sum = mx.sym.dot(x.square(), mx.symbol._internal._square_sum(data=v, axis=1, keepdims=True))
    w2_squared = 0.5 * mx.symbol.square(data=mx.symbol.dot(x, v))
    w_all = mx.symbol.Concat(w1, w2_squared, dim=1)
    return w_all.sum(axis=1, keepdims=True) + -0.5 * bd_sum


def mxnet_factorization_machine() -> mx.sym.Symbol:
    """The factorization machine from the file MXNet 1.9.1 wrote, without its loss head."""
    loaded = mx.sym.load(str(DATA / "factorization_machine-symbol.json"))
    body = loaded.get_children()[0]
    assert body.list_arguments() == ["data", "w", "w0", "v"]
    return body


@given(batch=st.integers(1, 8), density=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
       seed=st.integers(0, 2**31), from_mxnet=st.booleans())
def test_factorization_machine_forward_backward(batch, density, seed, from_mxnet):
    rng = np.random.default_rng(seed)
    x = sp.random(batch, FEATURES, density=density, format="csr", random_state=seed,
                  dtype=np.float32)
    v = rng.normal(size=(FEATURES, FACTORS)).astype(np.float32)
    w = rng.normal(size=(FEATURES, 1)).astype(np.float32)
    w0 = rng.normal(size=(1,)).astype(np.float32)
    g = rng.normal(size=(batch, 1)).astype(np.float32)
    net = mxnet_factorization_machine() if from_mxnet else factorization_machine()
    executor = net.simple_bind(mx.cpu(), data=(batch, FEATURES), stype_dict={"data": "csr"})
    executor.copy_params_from({"v": mx.nd.array(v).tostype("row_sparse"),
                               "w": mx.nd.array(w).tostype("row_sparse"), "w0": mx.nd.array(w0)})
    out = executor.forward(is_train=True, data=mx.nd.sparse.csr_matrix(x))[0]
    d = x.toarray().astype(np.float64)
    expected = d @ w + w0 + 0.5 * ((d @ v) ** 2).sum(1, keepdims=True) \
        - 0.5 * (d ** 2) @ (v ** 2).sum(1, keepdims=True)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-4, atol=1e-4)
    executor.backward(mx.nd.array(g))
    grads = executor.grad_dict
    assert (grads["v"].stype, grads["w"].stype, grads["w0"].stype) == \
        ("row_sparse", "row_sparse", "default")
    dv = d.T @ (g * (d @ v)) - ((d ** 2).T @ g) * v
    np.testing.assert_allclose(grads["v"].asnumpy(), dv, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(grads["w"].asnumpy(), d.T @ g, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads["w0"].asnumpy(), g.sum(keepdims=True)[0], rtol=1e-4)
    touched = np.flatnonzero(d.any(axis=0))
    assert set(grads["w"].indices.asnumpy()) <= set(touched)


def test_embedding_mlp_gradients_and_sparse_grad():
    rng = np.random.default_rng(3)
    ids = np.array([[0, 3], [3, 5], [1, 1]], np.float32)
    emb_w = rng.normal(size=(6, 2)).astype(np.float32)
    fc_w = rng.normal(size=(4, 4)).astype(np.float32)
    fc_b = rng.normal(size=(4,)).astype(np.float32)
    with mx.name.NameManager():
        emb = mx.sym.Embedding(mx.sym.var("ids"), input_dim=6, output_dim=2, sparse_grad=True)
        net = mx.sym.Activation(mx.sym.FullyConnected(emb, num_hidden=4), act_type="tanh")
    executor = net.simple_bind(mx.cpu(), ids=(3, 2), grad_req={"embedding0_weight": "write",
                                                               "fullyconnected0_weight": "write",
                                                               "fullyconnected0_bias": "add"})
    assert executor.grad_dict["embedding0_weight"].stype == "row_sparse"
    assert "ids" not in executor.grad_dict
    executor.copy_params_from({"embedding0_weight": mx.nd.array(emb_w),
                               "fullyconnected0_weight": mx.nd.array(fc_w),
                               "fullyconnected0_bias": mx.nd.array(fc_b)})
    head = rng.normal(size=(3, 4)).astype(np.float32)
    flat = emb_w[ids.astype(int)].reshape(3, 4)
    pre = flat @ fc_w.T + fc_b
    for _ in range(2):  # the bias gradient adds up, the others are written
        out = executor.forward(is_train=True, ids=mx.nd.array(ids))[0]
        executor.backward([mx.nd.array(head)])
    np.testing.assert_allclose(out.asnumpy(), np.tanh(pre), rtol=1e-5, atol=1e-6)
    dpre = head * (1 - np.tanh(pre) ** 2)
    grads = executor.grad_dict
    np.testing.assert_allclose(grads["fullyconnected0_bias"].asnumpy(), 2 * dpre.sum(0), rtol=1e-4)
    np.testing.assert_allclose(grads["fullyconnected0_weight"].asnumpy(), dpre.T @ flat, rtol=1e-4)
    demb = np.zeros_like(emb_w)
    np.add.at(demb, ids.astype(int).ravel(), (dpre @ fc_w).reshape(6, 2))
    np.testing.assert_allclose(grads["embedding0_weight"].asnumpy(), demb, rtol=1e-4, atol=1e-6)
    assert sorted(grads["embedding0_weight"].indices.asnumpy()) == [0, 1, 3, 5]


def test_bind_lists_dicts_and_errors():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.elemwise_mul(a, b) + 1
    x, y = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, -4.0])
    gx = mx.nd.zeros((2,))
    executor = s.bind(mx.cpu(), [x, y], args_grad={"a": gx})
    assert executor.arg_arrays[0] is x and executor.grad_arrays == [gx, None]
    assert list(executor.grad_dict) == ["a"] and executor.aux_dict == {} and executor.aux_arrays == []
    executor.forward(is_train=True)
    assert list(executor.output_dict) == s.list_outputs()
    assert executor.outputs[0].asnumpy().tolist() == [4.0, -7.0]
    executor.backward(mx.nd.array([1.0, 10.0]))
    assert gx.asnumpy().tolist() == [3.0, -40.0]
    with pytest.raises(InvalidValue, match="lacks"):
        s.bind(mx.cpu(), {"a": x})
    with pytest.warns(UserWarning, match=r"\['c'\], not arguments .*ignored"):
        extra = s.bind(mx.cpu(), {"a": x, "b": y, "c": 9})  # as MXNet: ignored
    assert extra.forward()[0].asnumpy().tolist() == [4.0, -7.0]
    with pytest.raises(InvalidValue, match="not arguments"):
        s.bind(mx.cpu(), [x, y], args_grad={"a": gx, "c": gx})
    with pytest.raises(InvalidValue, match="grad_req"):
        s.bind(mx.cpu(), [x, y], [gx, gx], grad_req="sometimes")
    with pytest.raises(InvalidValue, match="not an argument"):
        executor.forward(c=x)
    with pytest.raises(InvalidValue, match="do not determine"):
        s.simple_bind(mx.cpu())
    with pytest.raises(NotSupported, match="nosuchop"):
        mx.sym.load_json(mx.sym.square(a).tojson().replace('"square"', '"nosuchop"')).eval(
            a=x)


def test_eval_simple_forward_reshape_and_shared_exec():
    with mx.name.NameManager():
        net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    executor = net.simple_bind(mx.cpu(), data=(2, 4))
    weight = np.arange(12, dtype=np.float32).reshape(3, 4)
    executor.arg_dict["fc_weight"][:] = weight
    data = np.ones((5, 4), np.float32)
    bigger = executor.reshape(data=(5, 4))
    assert bigger.arg_dict["fc_weight"] is executor.arg_dict["fc_weight"]
    assert bigger.arg_dict["data"].shape == (5, 4)
    np.testing.assert_allclose(bigger.forward(data=mx.nd.array(data))[0].asnumpy(),
                               data @ weight.T)
    shared = net.simple_bind(mx.cpu(), data=(7, 4), shared_exec=executor)
    assert shared.arg_dict["fc_weight"] is executor.arg_dict["fc_weight"]
    assert shared.arg_dict["data"] is not executor.arg_dict["data"]
    result = simple_forward(net, data=data, fc_weight=weight, fc_bias=np.ones(3, np.float32))
    np.testing.assert_allclose(result, data @ weight.T + 1)
    evaluated = net.eval(data=mx.nd.array(data), fc_weight=mx.nd.array(weight),
                         fc_bias=mx.nd.zeros((3,)))
    np.testing.assert_allclose(evaluated[0].asnumpy(), data @ weight.T)
    with pytest.raises(InvalidValue, match="allow_extra_params"):
        executor.copy_params_from({"other": mx.nd.zeros((1,))})
    executor.copy_params_from({"other": mx.nd.zeros((1,))}, allow_extra_params=True)


def test_dropout_follows_is_train():
    x = mx.sym.var("x")
    net = mx.sym.Dropout(x, p=0.5)
    ones = mx.nd.ones((200,))
    executor = net.bind(mx.cpu(), [ones], args_grad=[mx.nd.zeros((200,))])
    assert (executor.forward(is_train=False)[0].asnumpy() == 1).all()
    dropped = executor.forward(is_train=True)[0].asnumpy()
    assert set(np.unique(dropped)) <= {0.0, 2.0} and (dropped == 0).any()


@given(rows=st.integers(1, 6), cols=st.integers(1, 6), density=st.sampled_from([0.0, 0.3, 1.0]),
       req=st.sampled_from(["write", "add", "null"]), seed=st.integers(0, 2**31))
def test_check_symbolic_dot_csr(rows, cols, density, req, seed):
    rng = np.random.default_rng(seed)
    x = sp.random(rows, cols, density=density, format="csr", random_state=seed, dtype=np.float32)
    w = rng.normal(size=(cols, 3)).astype(np.float32)
    g = rng.normal(size=(rows, 3)).astype(np.float32)
    net = mx.sym.sparse.dot(mx.sym.var("x", stype="csr"), mx.sym.var("w"))
    location = {"x": mx.nd.sparse.csr_matrix(x), "w": w}
    outputs = check_symbolic_forward(net, location, [x.toarray() @ w], rtol=1e-5, atol=1e-5)
    assert outputs[0].stype == "default"
    grads = check_symbolic_backward(net, location, [g], {"w": x.toarray().T @ g}, rtol=1e-4,
                                    atol=1e-5, grad_req=req, grad_stypes={"w": "row_sparse"})
    assert grads["w"].stype == "row_sparse"


def test_check_symbolic_helpers_fail_on_wrong_values():
    net = mx.sym.square(mx.sym.var("x"))
    with pytest.raises(AssertionError):
        check_symbolic_forward(net, [np.array([1.0, 2.0])], [np.array([1.0, 5.0])])
    with pytest.raises(AssertionError):
        check_symbolic_backward(net, [np.array([1.0, 2.0])], [np.ones(2)], [np.array([2.0, 3.0])])
    with pytest.raises(InvalidValue, match="arguments"):
        check_symbolic_forward(net, {"y": np.ones(2)}, [np.ones(2)])


def test_check_numeric_gradient_of_symbols():
    rng = np.random.default_rng(1)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    net = mx.sym.sum(mx.sym.broadcast_mul(mx.sym.sigmoid(a), b) * 2, axis=1)
    check_numeric_gradient(net, [rng.normal(size=(3, 4)), rng.normal(size=(1, 4))],
                           numeric_eps=1e-3, rtol=1e-2, atol=1e-3)
    check_numeric_gradient(net, {"a": rng.normal(size=(2, 2)), "b": rng.normal(size=(2, 2))})
    with pytest.raises(InvalidValue, match="location"):
        check_numeric_gradient(net, [np.ones(2)])


def test_linear_regression_output_head():
    data = np.array([[1.0], [2.0], [4.0]], np.float32)
    label = np.array([0.5, 2.0, 1.0], np.float32)
    net = mx.sym.LinearRegressionOutput(mx.sym.var("d"), mx.sym.var("l"))
    executor = net.simple_bind(mx.cpu(), d=(3, 1))
    executor.forward(is_train=True, d=mx.nd.array(data), l=mx.nd.array(label))
    executor.backward()
    np.testing.assert_allclose(executor.grad_dict["d"].asnumpy(),
                               (data - label[:, None]) / 1, rtol=1e-6)


def test_softmax_output_sparse_linear_classifier():
    """example/sparse/linear_classification's model with a softmax head: forward is the
    softmax, backward (no head gradient) ``softmax - onehot(label)`` into a row_sparse weight."""
    rng = np.random.default_rng(5)
    x = sp.random(4, FEATURES, density=0.2, format="csr", random_state=5, dtype=np.float32)
    w = rng.normal(size=(FEATURES, 2)).astype(np.float32)
    label = np.array([0, 1, 1, 0], np.float32)
    with mx.name.NameManager():
        weight = mx.sym.Variable("weight", shape=(FEATURES, 2), stype="row_sparse")
        pred = mx.sym.broadcast_add(mx.sym.sparse.dot(mx.sym.Variable("data", stype="csr"),
                                                      weight), mx.sym.Variable("bias", shape=(2,)))
        net = mx.sym.SoftmaxOutput(pred, mx.sym.Variable("softmax_label"), name="out")
    executor = net.simple_bind(mx.cpu(), data=(4, FEATURES), stype_dict={"data": "csr"})
    executor.copy_params_from({"weight": mx.nd.array(w).tostype("row_sparse")})
    out = executor.forward(is_train=True, data=mx.nd.sparse.csr_matrix(x),
                           softmax_label=mx.nd.array(label))[0]
    logits = x.toarray() @ w
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(out.asnumpy(), p, rtol=1e-5, atol=1e-6)
    executor.backward()
    dlogits = p - np.eye(2)[label.astype(int)]
    assert executor.grad_dict["weight"].stype == "row_sparse"
    np.testing.assert_allclose(executor.grad_dict["weight"].asnumpy(), x.toarray().T @ dlogits,
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(executor.grad_dict["bias"].asnumpy(), dlogits.sum(0), rtol=1e-4,
                               atol=1e-6)


def test_contrib_sparse_embedding_and_repeated_backward():
    ids = np.array([4, 0, 4], np.float32)
    weight = np.arange(10, dtype=np.float32).reshape(5, 2)
    net = mx.sym.contrib.SparseEmbedding(data=mx.sym.var("data"), weight=mx.sym.var("w"),
                                         input_dim=5, output_dim=2, name="embed")
    assert net.tojson().count('"_contrib_SparseEmbedding"') == 1
    executor = net.simple_bind(mx.cpu(), grad_req={"data": "null", "w": "write"}, data=(3,))
    assert executor.outputs[0].shape == (3, 2)  # allocated at bind, as MXNet's
    executor.arg_dict["data"][:] = ids
    executor.arg_dict["w"][:] = weight
    np.testing.assert_array_equal(executor.forward(is_train=True)[0].asnumpy(), weight[[4, 0, 4]])
    head = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    expected = np.zeros((5, 2), np.float32)
    np.add.at(expected, [4, 0, 4], head)
    for _ in range(2):  # a second backward after one forward gives the same gradient
        executor.backward([mx.nd.array(head)])
        assert executor.grad_dict["w"].stype == "row_sparse"
        np.testing.assert_array_equal(executor.grad_dict["w"].asnumpy(), expected)
    loaded = mx.sym.load_json(net.tojson())
    np.testing.assert_array_equal(loaded.eval(data=mx.nd.array(ids), w=mx.nd.array(weight))[0]
                                  .asnumpy(), weight[[4, 0, 4]])


def test_generated_ops_and_positional_parameters():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    x = np.array([[1.4, -2.6, 0.2], [3.7, 0.0, -1.2]], np.float32)  # no .5: MXNet rounds those down
    y = np.array([[1.0, -3.0, 0.5], [4.0, 0.1, -2.0]], np.float32)
    reshaped = mx.sym.reshape(a, (3, 2), name="r")
    assert reshaped.attr("shape") == "(3, 2)" and reshaped.infer_shape(a=(2, 3))[1] == [(3, 2)]
    cases = [(mx.sym.rint(a), np.rint(x)), (mx.sym.sparse.trunc(a), np.trunc(x)),
             (mx.sym.where(a > 0, a, b), np.where(x > 0, x, y)), (reshaped, x.reshape(3, 2)),
             (mx.sym._internal._maximum(a, b), np.maximum(x, y)),
             (mx.sym._internal._hypot(a, b), np.hypot(x, y))]
    for symbol, expected in cases:
        names = symbol.list_arguments()
        arrays = {"a": mx.nd.array(x), "b": mx.nd.array(y)}
        out = symbol.eval(**{n: arrays[n] for n in names})[0]
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)
    with pytest.raises(AttributeError, match="no op 'nosuchop'"):
        mx.sym.nosuchop
    with pytest.raises(InvalidValue, match="positional"):
        mx.sym.square(a, 1)


def test_simple_bind_type_dict_and_variable_dtype():
    net = mx.sym.dot(mx.sym.var("x"), mx.sym.var("w", dtype="float64"))
    executor = net.simple_bind(mx.cpu(), type_dict={"x": "float64"}, x=(2, 3), w=(3, 1))
    assert [np.dtype(a.dtype).name for a in executor.arg_arrays] == ["float64", "float64"]
    assert [np.dtype(g.dtype).name for g in executor.grad_arrays] == ["float64", "float64"]
    assert np.dtype(executor.outputs[0].dtype).name == "float64"


def test_check_consistency_across_dtypes():
    from sparsegen.test_utils import check_consistency

    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    entries = [{"ctx": mx.cpu(), "data": (4, 5), "type_dict": {"data": dtype}}
               for dtype in ("float64", "float32")]
    truth = check_consistency(net, entries)
    assert truth["fc_output"].dtype == np.float64 and truth["fc_weight"].shape == (3, 5)
    data = np.random.default_rng(2).normal(size=(4, 5))
    weight = np.random.default_rng(3).normal(size=(3, 5))
    truth = check_consistency(net, entries, arg_params={"data": data, "fc_weight": weight,
                                                        "fc_bias": np.zeros(3)})
    np.testing.assert_allclose(truth["fc_output"], data @ weight.T, rtol=1e-12)
    with pytest.raises(AssertionError):  # float32 rounding is more than nothing
        check_consistency(net, entries, rtol=0, atol=0)
    with pytest.raises(AssertionError):
        check_consistency(net, entries, ground_truth={"fc_output": np.zeros((4, 3))})
    with pytest.raises(InvalidValue, match="two entries"):
        check_consistency(net, entries[:1])


def test_backward_after_an_inference_forward_gives_the_gradients():
    # MXNet's test_bind does forward() (is_train=False) then backward(): the gradients of
    # the inference-mode graph (Dropout passes everything through)
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    out = mx.sym.Dropout(a * b, p=0.5) + a
    x, y = np.array([[1.0, -2.0]]), np.array([[3.0, 0.5]])
    grads = {"a": mx.nd.zeros((1, 2)), "b": mx.nd.zeros((1, 2))}
    executor = out.bind(mx.cpu(), {"a": mx.nd.array(x), "b": mx.nd.array(y)}, args_grad=grads)
    np.testing.assert_allclose(executor.forward()[0].asnumpy(), x * y + x)
    executor.backward(mx.nd.array([[2.0, 10.0]]))
    np.testing.assert_allclose(grads["a"].asnumpy(), [[2.0, 10.0]] * (y + 1))
    np.testing.assert_allclose(grads["b"].asnumpy(), [[2.0, 10.0]] * x)
