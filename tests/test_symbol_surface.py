"""``mx.sym``'s surface MXNet code leans on: fluent methods for every op that is both an NDArray
method and an ``mx.sym`` op, creation ops (``zeros``, ``ones``, ``full``, ``arange``),
``reshape_like``, LeakyReLU's ``prelu`` slopes created as MXNet creates them, Gluon blocks and
losses called on Symbols (``Parameter.var``) and trained by ``mx.mod.Module``. numpy computes
the values."""

from __future__ import annotations

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import gluon


def _eval(symbol, **arrays):
    return symbol.eval(**{k: mx.nd.array(v) for k, v in arrays.items()})


@pytest.mark.parametrize("method, kwargs, oracle", [
    ("flatten", {}, lambda x: x.reshape(x.shape[0], -1)),
    ("flip", {"axis": 1}, lambda x: x[:, ::-1]),
    ("tile", {"reps": (1, 2)}, lambda x: np.tile(x, (1, 2))),
    ("clip", {"a_min": -0.5, "a_max": 0.5}, lambda x: np.clip(x, -0.5, 0.5)),
    ("swapaxes", {"dim1": 0, "dim2": 2}, lambda x: np.swapaxes(x, 0, 2)),
    ("reshape_like", {"rhs": mx.sym.ones((6, 4))}, lambda x: x.reshape(6, 4)),
])
def test_fluent_methods_are_the_ops(method, kwargs, oracle):
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    out = getattr(mx.sym.var("x"), method)(**kwargs)
    np.testing.assert_allclose(_eval(out, x=x)[0].asnumpy(), oracle(x), rtol=1e-6)
    assert out.infer_shape(x=x.shape)[1] == [oracle(x).shape]


def test_a_name_that_is_no_op_is_an_attribute_error():
    with pytest.raises(AttributeError, match="'Symbol' object has no attribute 'size'"):
        mx.sym.var("x").size  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'asnumpy'"):
        mx.sym.var("x").asnumpy  # an NDArray method that is no op


def test_creation_ops():
    np.testing.assert_array_equal(mx.sym.ones((2, 3)).eval()[0].asnumpy(), np.ones((2, 3)))
    full = mx.sym.full((2,), 7, dtype="int32")
    assert full.infer_shape()[1] == [(2,)] and full.infer_type()[1] == [np.int32]
    np.testing.assert_array_equal(full.eval()[0].asnumpy(), [7, 7])
    np.testing.assert_array_equal(mx.sym.arange(1, 7, 2).eval()[0].asnumpy(), [1, 3, 5])
    total = mx.sym.var("x") + mx.sym.zeros((3,))
    np.testing.assert_array_equal(_eval(total, x=np.arange(3.0))[0].asnumpy(), np.arange(3.0))


def test_prelu_creates_gamma_with_its_init_and_shape():
    data = mx.sym.Variable("data")
    prelu = mx.sym.LeakyReLU(data=data, act_type="prelu", name="act")
    assert prelu.list_arguments() == ["data", "act_gamma"]
    assert prelu.attr_dict()["act_gamma"]["__init__"] == '["Constant", {"value": 0.25}]'
    assert prelu.infer_shape(data=(4, 5, 2))[0] == [(4, 5, 2), (5,)]
    assert mx.sym.LeakyReLU(data=data, act_type="leaky").list_arguments() == ["data"]
    mod = mx.mod.Module(prelu, label_names=None)
    mod.bind(data_shapes=[("data", (4, 5))])
    mod.init_params()
    np.testing.assert_array_equal(mod.get_params()[0]["act_gamma"].asnumpy(), np.full(5, 0.25))
    x = np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.where(x > 0, x, 0.25 * x))


def test_parameter_var_and_blocks_on_symbols():
    weight = gluon.Parameter("weight", shape=(3, 4), lr_mult=2.0, init="zeros",
                             stype="row_sparse")
    var = weight.var()
    assert var is weight.var() and var.name == "weight"
    assert var.attr("__shape__") == "(3, 4)" and var.attr("__lr_mult__") == "2.0"
    assert var.attr("__storage_type__") == "1" and var.attr("__init__") == "zeros"
    dense = gluon.nn.Dense(2, in_units=4, prefix="fc_")
    out = dense(mx.sym.var("data"))
    assert out.list_arguments() == ["data", "fc_weight", "fc_bias"]
    x, w, b = (np.arange(n, dtype=np.float32).reshape(s) / 10
               for n, s in ((12, (3, 4)), (8, (2, 4)), (2, (2,))))
    got = _eval(out, data=x, fc_weight=w, fc_bias=b)[0].asnumpy()
    np.testing.assert_allclose(got, x @ w.T + b, rtol=1e-6)


@pytest.mark.parametrize("loss, oracle", [
    (gluon.loss.L2Loss(), lambda p, y: 0.5 * ((p - y) ** 2).mean(axis=1)),
    (gluon.loss.L1Loss(), lambda p, y: np.abs(p - y).mean(axis=1)),
    (gluon.loss.SigmoidBCELoss(),
     lambda p, y: (np.maximum(p, 0) - p * y + np.log1p(np.exp(-np.abs(p)))).mean(axis=1)),
    (gluon.loss.SoftmaxCELoss(sparse_label=False),
     lambda p, y: -(y * (p - np.log(np.exp(p).sum(axis=1, keepdims=True)))).sum(axis=1)),
])
def test_losses_on_symbols_match_numpy(loss, oracle):
    rng = np.random.default_rng(3)
    pred, label = rng.standard_normal((4, 3)), rng.random((4, 3))
    out = loss(mx.sym.var("pred"), mx.sym.var("label"))
    got = _eval(out, pred=pred, label=label.reshape(12))  # reshape_like puts it back
    np.testing.assert_allclose(got[0].asnumpy(), oracle(pred, label), rtol=1e-5)


def test_a_gluon_loss_trains_in_a_module():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32)).reshape(40, 1)
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=1, name="fc")
    loss = mx.sym.make_loss(gluon.loss.L2Loss()(net, mx.sym.var("label")))
    mod = mx.mod.Module(loss, data_names=("data",), label_names=("label",))
    it = mx.io.NDArrayIter(x, y, batch_size=10, label_name="label")
    mod.fit(it, num_epoch=40, optimizer="sgd", optimizer_params={"learning_rate": 0.1},
            initializer=mx.init.Zero(), eval_metric=mx.metric.Loss())
    np.testing.assert_allclose(mod.get_params()[0]["fc_weight"].asnumpy(),
                               [[1.0, -2.0, 0.5]], atol=1e-2)


def test_random_namespace_samplers_and_array_ops():
    """Every ``mx.nd.random`` sampler as a symbol (the executor's context wins over a ``ctx``
    given); multinomial of an array input with its int32 ids (and log-probabilities with
    get_prob); shuffle a permutation. Distribution checks live in the random tests: here
    shapes, dtypes, supports and the seed."""
    low = mx.sym.random.uniform(low=-1.5, high=3.0, shape=(50, 4), dtype="float16",
                                ctx=mx.cpu(1)) + mx.sym.var("x")
    assert low.infer_shape(x=(50, 4))[1] == [(50, 4)]
    mx.random.seed(7)
    first = low.eval(x=mx.nd.zeros((50, 4), dtype="float16"))[0]
    mx.random.seed(7)
    again = low.eval(x=mx.nd.zeros((50, 4), dtype="float16"))[0]
    assert first.dtype == np.float16 and first.context == mx.cpu(0)
    values = first.asnumpy()
    assert values.min() >= -1.5 and values.max() < 3.0 and (values == again.asnumpy()).all()
    counts = mx.sym.random.poisson(lam=3.0, shape=(200,)).eval()[0].asnumpy()
    assert (counts >= 0).all() and (counts == np.round(counts)).all()
    probs = mx.sym.var("p")
    ids, logp = mx.sym.random.multinomial(data=probs, shape=6, get_prob=True).eval(
        p=mx.nd.array([[0.0, 1.0], [1.0, 0.0]]))
    assert ids.dtype == np.int32 and ids.shape == (2, 6)
    np.testing.assert_array_equal(ids.asnumpy(), [[1] * 6, [0] * 6])
    np.testing.assert_allclose(logp.asnumpy(), np.zeros((2, 6)), atol=1e-6)
    types = mx.sym.random.multinomial(data=probs, shape=6).infer_type(p="float32")[1]
    assert types == [np.int32]
    shuffled = mx.sym.random.shuffle(mx.sym.var("d")).eval(d=mx.nd.arange(10))[0].asnumpy()
    assert sorted(shuffled) == list(range(10))


def test_argmax_channel_shape_size_arrays_and_split_v2_against_numpy():
    x = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32)
    a = mx.nd.array(x)
    np.testing.assert_array_equal(mx.nd.argmax_channel(a).asnumpy(), x.argmax(axis=1))
    assert a.shape_array().dtype == np.int64
    np.testing.assert_array_equal(a.shape_array().asnumpy(), [2, 3, 4])
    np.testing.assert_array_equal(mx.nd.size_array(a).asnumpy(), [24])
    for sections in (2, (1, 3), (0, 2), (4,)):
        got = mx.nd.split_v2(a, sections, axis=2)
        want = np.split(x, sections if isinstance(sections, int) else list(sections), axis=2)
        got = got if isinstance(got, list) else [got]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w)
    assert mx.nd.split_v2(a, (1,), axis=0, squeeze_axis=True)[1].shape == (3, 4)
    with pytest.raises(ValueError, match="equal division"):
        mx.nd.split_v2(a, 3, axis=2)
    with pytest.raises(ValueError, match="must increase"):
        mx.nd.split_v2(a, (3, 1), axis=2)
    parts = mx.sym.var("x").split_v2((1, 3), axis=2)
    assert [name.rsplit("_", 1)[1] for name in parts.list_outputs()] == [
        "output0", "output1", "output2"]
    assert parts.infer_shape(x=x.shape)[1] == [(2, 3, 1), (2, 3, 2), (2, 3, 1)]
    assert mx.sym.var("x").shape_array().infer_type(x="float32")[1] == [np.int64]


def test_infer_type_partial_leaves_the_unknown_as_none():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(mx.sym.Cast(data, dtype="float32"), num_hidden=4, name="fc")
    net = mx.sym.SoftmaxOutput(fc, name="softmax")
    assert net.infer_type(data=np.float16)[0] == [np.float16] + [np.float32] * 3
    assert net.infer_type_partial() == ([None, np.float32, np.float32, np.float32],
                                        [np.float32], [])
    assert net.infer_type() == (None, None, None)


def test_an_ops_lr_and_wd_multipliers_reach_its_created_parameters():
    """``lr_mult`` / ``wd_mult`` given to an op are MXNet's ``__lr_mult__`` / ``__wd_mult__``
    attributes of its node and of the variables it creates; Module's optimizer reads them."""
    bias = mx.sym.Variable("fc1_bias", lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(mx.sym.Variable("data"), bias=bias, name="fc1", num_hidden=3,
                                lr_mult=0)
    fc2 = mx.sym.FullyConnected(fc1, name="fc2", num_hidden=2, wd_mult=0.5)
    attrs = fc2.attr_dict()
    assert attrs["fc1_weight"]["__lr_mult__"] == "0" and attrs["fc1_weight"]["lr_mult"] == "0"
    assert attrs["fc2_bias"]["__wd_mult__"] == "0.5"
    mod = mx.mod.Module(fc2, label_names=None)
    mod.bind(data_shapes=[("data", (4, 5))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    assert mod._optimizer.lr_mult == {"fc1_bias": 1.0, "fc1_weight": 0.0}
    assert mod._optimizer.wd_mult == {"fc2_bias": 0.5, "fc2_weight": 0.5, "fc1_bias": 0.0}
    before = mod.get_params()[0]["fc1_weight"].asnumpy()
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 5))]), is_train=True)
    mod.backward(mod.get_outputs())
    mod.update()
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), before)


@pytest.mark.parametrize("make, shape", [
    (lambda x: mx.sym.broadcast_like(x, mx.sym.ones((2, 5)), lhs_axes=(0,), rhs_axes=(1,)),
     (5, 9)),
    (lambda x: mx.sym.broadcast_to(x, shape=(3, 9)), (3, 9)),
    (lambda x: mx.sym.broadcast_axis(x, axis=0, size=4), (4, 9)),
    (lambda x: mx.sym.broadcast_add(x, mx.sym.ones((6, 1))), (6, 9)),
])
def test_broadcast_ops_infer_their_own_shapes(make, shape):
    # numpy's broadcasting is the oracle only for the binary ops; the others are numpy's too
    x = np.arange(9, dtype=np.float32).reshape(1, 9)
    out = make(mx.sym.var("x"))
    assert out.infer_shape(x=(1, 9))[1] == [shape]
    exe = out.simple_bind(mx.cpu(), x=(1, 9))
    got = exe.forward(x=mx.nd.array(x))[0].asnumpy()
    want = np.broadcast_to(x, shape) if shape[0] != 6 else x + np.ones((6, 1))
    np.testing.assert_array_equal(got, want)


def test_a_consumers_shape_passes_back_through_same_shape_ops():
    # FullyConnected names its weight's shape (11, 100); the identity and the relu before it
    # keep shapes, so the variables behind them get it (MXNet's test_backward_infer)
    w, shift, data = mx.sym.var("w"), mx.sym.var("shift", shape=(1,)), mx.sym.var("data")
    tied = mx.sym._internal._identity_with_attr_like_rhs(mx.sym.broadcast_add(w, shift), w)
    net = mx.sym.FullyConnected(data=data, weight=mx.sym.relu(tied), num_hidden=11,
                                no_bias=True)
    args, outs, _ = net.infer_shape(data=(7, 100))
    assert dict(zip(net.list_arguments(), args)) == {"data": (7, 100), "w": (11, 100),
                                                     "shift": (1,)}
    assert outs == [(7, 11)]
    rng = np.random.default_rng(0)
    x, wv = (rng.standard_normal(s).astype(np.float32) for s in ((7, 100), (11, 100)))
    exe = net.simple_bind(mx.cpu(), data=(7, 100))
    got = exe.forward(data=mx.nd.array(x), w=mx.nd.array(wv), shift=mx.nd.array([0.25]))[0]
    np.testing.assert_allclose(got.asnumpy(), x @ np.maximum(wv + 0.25, 0).T, rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(mx.MXNetError, match="needs"):  # a consumer contradicting a producer
        mx.sym.FullyConnected(data=data, weight=mx.sym.relu(mx.sym.var("v", shape=(3, 4))),
                              num_hidden=11, no_bias=True).infer_shape(data=(7, 100))
    with pytest.raises(ValueError, match=r"lhs has shape \(2,\), rhs \(3,\)"):
        mx.nd._internal._identity_with_attr_like_rhs(mx.nd.ones((2,)), mx.nd.ones((3,)))
