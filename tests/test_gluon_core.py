"""gluon Parameter / Block / nn layers: forward values against numpy, MXNet 1.9.1's names, and
save_parameters / load_parameters (a file written by MXNet too)."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import autograd, gluon
from sparsegen.errors import SparsegenError
from gluon_init import seeded

DATA = os.path.join(os.path.dirname(__file__), "data")


# -- naming (recorded from MXNet 1.9.1) --------------------------------------------------------
class Model(gluon.Block):
    """A block with two Dense children and its own parameter, as the naming test in MXNet."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.a = gluon.nn.Dense(2, in_units=3)
            self.b = gluon.nn.Dense(1)
            self.w = self.params.get("w", shape=(2,))

    def forward(self, x):
        return self.b(self.a(x))


def test_names_as_mxnet():
    # Recorded with /work/mxvenv/bin/python: the same classes, printing
    # list(net.collect_params().keys()) and list(net._collect_params_with_prefix().keys()).
    with mx.name.NameManager():
        net = gluon.nn.Sequential()
        with net.name_scope():
            net.add(gluon.nn.Dense(3, in_units=2), gluon.nn.Dense(4))
        assert list(net.collect_params()) == [
            "sequential0_dense0_weight", "sequential0_dense0_bias",
            "sequential0_dense1_weight", "sequential0_dense1_bias"]
        assert list(net._collect_params_with_prefix()) == ["0.weight", "0.bias", "1.weight",
                                                           "1.bias"]
        m = Model()
        assert m.prefix == "model0_"
        assert list(m.collect_params()) == ["model0_w", "model0_dense0_weight",
                                            "model0_dense0_bias", "model0_dense1_weight",
                                            "model0_dense1_bias"]
        assert list(m._collect_params_with_prefix()) == ["w", "a.weight", "a.bias", "b.weight",
                                                         "b.bias"]
        assert list(m.collect_params(".*weight")) == ["model0_dense0_weight",
                                                      "model0_dense1_weight"]
        assert list(Model(prefix="my_").collect_params())[:2] == ["my_w", "my_dense0_weight"]
        e = gluon.nn.Embedding(5, 2, sparse_grad=True)
        assert (e.weight.name, e.weight.grad_stype) == ("embedding0_weight", "row_sparse")
        s = gluon.contrib.nn.SparseEmbedding(5, 2)
        assert (s.weight.name, s.weight.stype) == ("sparseembedding0_weight", "row_sparse")
        d = gluon.nn.Dense(3)
        assert (d.prefix, d.weight.shape, d.bias.init) == ("dense0_", (3, 0), "zeros")
        assert repr(gluon.nn.Dense(3, activation="relu", in_units=4)) == \
            "Dense(4 -> 3, Activation(relu))"
        assert repr(s) == "SparseEmbedding(5 -> 2, float32)"
        assert repr(gluon.nn.Dropout(0.3)) == "Dropout(p = 0.3, axes=())"


# -- forward values ------------------------------------------------------------------------------
@pytest.mark.parametrize("activation", [None, "relu", "tanh"])
def test_dense_forward(activation):
    layer = gluon.nn.Dense(3, activation=activation, in_units=4)
    values = seeded(layer.collect_params())
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    w, b = values[layer.weight.name], values[layer.bias.name]
    expect = x @ w.T + b
    expect = {None: expect, "relu": np.maximum(expect, 0), "tanh": np.tanh(expect)}[activation]
    np.testing.assert_allclose(layer(mx.nd.array(x)).asnumpy(), expect, rtol=1e-5, atol=1e-6)


def test_dense_csr_input_and_no_bias_flatten():
    layer = gluon.nn.Dense(2, use_bias=False, in_units=6)
    values = seeded(layer.collect_params())
    dense = np.zeros((3, 6), np.float32)
    dense[0, 1], dense[2, 5] = 2.0, -1.5
    out = layer(mx.nd.array(dense).tostype("csr"))
    np.testing.assert_allclose(out.asnumpy(), dense @ values[layer.weight.name].T, rtol=1e-6)
    flat = gluon.nn.Dense(2, in_units=6)
    v = seeded(flat.collect_params())
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_allclose(flat(mx.nd.array(x)).asnumpy(),
                               x.reshape(2, 6) @ v[flat.weight.name].T + v[flat.bias.name],
                               rtol=1e-5)


def test_embedding_sequential_flatten_lambda():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Embedding(6, 3), gluon.nn.Flatten(), gluon.nn.Dense(2, in_units=6),
                gluon.nn.HybridLambda("relu"))
    assert len(net) == 4 and isinstance(net[1], gluon.nn.Flatten) and len(net[:2]) == 2
    values = seeded(net.collect_params())
    names = list(net.collect_params())
    ids = np.array([[0, 5], [3, 3]])
    emb = values[names[0]][ids].reshape(2, 6)
    expect = np.maximum(emb @ values[names[1]].T + values[names[2]], 0)
    np.testing.assert_allclose(net(mx.nd.array(ids)).asnumpy(), expect, rtol=1e-5, atol=1e-6)
    assert gluon.nn.Lambda("exp")(mx.nd.array([0.0])).asscalar() == 1.0


def test_dropout_training_and_identity():
    x = mx.nd.ones((200, 50))
    assert (gluon.nn.Dropout(0.4)(x).asnumpy() == 1).all()  # not training: identity
    x.attach_grad()
    with autograd.record():
        y = gluon.nn.Dropout(0.4)(x)
    y.backward()
    out, grad = y.asnumpy(), x.grad.asnumpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.6)}
    assert abs((out == 0).mean() - 0.4) < 0.03
    np.testing.assert_array_equal(grad, out)  # g * mask with g = 1, x = 1
    with autograd.train_mode():
        shared = mx.nd.Dropout(mx.nd.ones((40, 6)), p=0.5, axes=(1,)).asnumpy()
        assert (shared == shared[:, :1]).all()
        assert (mx.nd.Dropout(mx.nd.ones((2, 2)), p=1.0).asnumpy() == 0).all()
    with pytest.raises(SparsegenError, match="p must be"):
        mx.nd.Dropout(x, p=1.5)


def test_dense_deferred_shape_and_errors():
    layer = gluon.nn.Dense(2)
    with pytest.raises(gluon.DeferredInitializationError):
        layer.initialize()
        layer.weight.data()
    with pytest.raises(SparsegenError, match="incompatible"):
        layer.weight.shape = (3, 4)
    with pytest.raises(ValueError, match="stype"):
        gluon.Parameter("p", stype="dense")
    rsp = gluon.Parameter("r", shape=(3, 2), stype="row_sparse")
    rsp._init_impl(mx.nd.zeros((3, 2), stype="row_sparse"), [mx.cpu()])
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        rsp.data()
    with pytest.raises(RuntimeError, match="no Trainer"):
        rsp.row_sparse_data(mx.nd.array([0]))


def test_real_initializers():
    init = mx.init

    layer = gluon.nn.Dense(3, weight_initializer=init.Constant(2.0), bias_initializer="ones")
    layer.initialize()
    out = layer(mx.nd.ones((2, 4)))  # deferred: in_units found here
    np.testing.assert_allclose(out.asnumpy(), np.full((2, 3), 9.0))
    default = gluon.nn.Dense(50, in_units=40)
    default.initialize()  # MXNet's default: Uniform(0.07) weights, zero bias
    w = default.weight.data().asnumpy()
    assert np.abs(w).max() <= 0.07 and np.abs(w).max() > 0.05
    assert (default.bias.data().asnumpy() == 0).all()
    emb = gluon.nn.Embedding(4, 2)
    emb.initialize(init.One())
    assert (emb.weight.data().asnumpy() == 1).all()


# -- grad buffers, save / load ---------------------------------------------------------------
def test_grad_stype_zero_grad_and_cast():
    emb = gluon.nn.Embedding(10, 3, sparse_grad=True)
    seeded(emb.collect_params())
    with autograd.record():
        loss = emb(mx.nd.array([1, 7, 1])).sum()
    loss.backward()
    grad = emb.weight.grad()
    assert grad.stype == "row_sparse"
    assert sorted(grad.indices.asnumpy().tolist()) == [1, 7]
    np.testing.assert_array_equal(grad.asnumpy()[1], [2, 2, 2])
    emb.collect_params().zero_grad()
    assert (emb.weight.grad().asnumpy() == 0).all()
    emb.cast("float64")
    assert emb.weight.data().dtype == np.float64 and emb.weight.grad().dtype == np.float64


def test_save_load_round_trip(tmp_path):
    def build():
        net = gluon.nn.Sequential()
        with net.name_scope():
            net.add(gluon.nn.Dense(3, in_units=4), gluon.nn.Dense(2, in_units=3))
        return net

    net, other = build(), build()
    values = seeded(net.collect_params(), seed=3)
    seeded(other.collect_params(), seed=4)
    path = str(tmp_path / "net.params")
    net.save_parameters(path)
    assert sorted(mx.nd.load(path)) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    other.load_parameters(path)
    for (name, p), q in zip(net.collect_params().items(), other.collect_params().values()):
        np.testing.assert_array_equal(q.data().asnumpy(), values[name])
    mx.nd.save(path, {"0.weight": mx.nd.zeros((3, 4))})
    with pytest.raises(ValueError, match="missing"):
        other.load_parameters(path)
    other.load_parameters(path, allow_missing=True)
    assert (other[0].weight.data().asnumpy() == 0).all()
    mx.nd.save(path, {**{k: v._reduce() for k, v in net._collect_params_with_prefix().items()},
                      "2.weight": mx.nd.zeros((1,))})
    with pytest.raises(ValueError, match="not present"):
        other.load_parameters(path)
    other.load_parameters(path, ignore_extra=True)
    mx.nd.save(path, {"0.weight": mx.nd.zeros((3, 4), dtype="float64")})
    with pytest.raises(ValueError, match="cast_dtype"):
        other.load_parameters(path, allow_missing=True)
    other.load_parameters(path, allow_missing=True, cast_dtype=True)
    assert other[0].weight.data().dtype == np.float32
    net.collect_params().save(path, strip_prefix=net.prefix)  # full names, MXNet's older format
    assert sorted(mx.nd.load(path)) == ["dense0_bias", "dense0_weight", "dense1_bias",
                                        "dense1_weight"]
    other.load_parameters(path)
    np.testing.assert_array_equal(other[1].bias.data().asnumpy(), values[net[1].bias.name])
    with pytest.warns(UserWarning, match="already initialized"):
        other[0].weight.initialize()


def test_load_mxnet_params_file():
    # tests/data/mxnet_gluon.params comes from tests/data/record_gluon_params.py (MXNet 1.9.1).
    net = gluon.nn.Sequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(3, in_units=4), gluon.nn.Dense(2, in_units=3))
    net.load_parameters(os.path.join(DATA, "mxnet_gluon.params"))
    params = net._collect_params_with_prefix()
    for index, name in enumerate(sorted(params)):
        shape = params[name].shape
        expect = np.arange(np.prod(shape)).reshape(shape) * 0.5 - index
        np.testing.assert_array_equal(params[name].data().asnumpy(), expect)
    x = np.ones((1, 4), np.float32)
    w0, b0 = params["0.weight"].data().asnumpy(), params["0.bias"].data().asnumpy()
    w1, b1 = params["1.weight"].data().asnumpy(), params["1.bias"].data().asnumpy()
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), (x @ w0.T + b0) @ w1.T + b1)


def test_parameter_dict_get_update_setattr():
    params = gluon.ParameterDict("net_")
    p = params.get("w", shape=(2, 0), allow_deferred_init=True)
    assert params.get("w", shape=(2, 5)) is p and p.shape == (2, 5)
    with pytest.raises(ValueError, match="does not match"):
        params.get("w", lr_mult=3.0)
    other = gluon.ParameterDict("x_")
    other.get("b", shape=(1,))
    params.update(other)
    assert list(params) == ["net_w", "x_b"]
    params.setattr("grad_req", "null")
    assert all(q.grad_req == "null" for q in params.values())
    const = params.get_constant("c", [1.0, 2.0])
    const.initialize()
    np.testing.assert_array_equal(const.data().asnumpy(), [1.0, 2.0])


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(0, 5), in_units=st.integers(1, 6), units=st.integers(1, 4),
       density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 2**16))
def test_dense_values_over_shapes_and_csr_densities(batch, in_units, units, density, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, in_units)).astype(np.float32)
    x *= rng.random(x.shape) < density
    layer = gluon.nn.Dense(units, in_units=in_units)
    values = seeded(layer.collect_params(), seed=seed)
    expect = x @ values[layer.weight.name].T + values[layer.bias.name]
    for data in (mx.nd.array(x), mx.nd.array(x).tostype("csr")):
        np.testing.assert_allclose(layer(data).asnumpy(), expect, rtol=1e-5, atol=1e-5)


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       p=st.sampled_from([0.0, 0.25, 0.5, 0.9]), data=st.data())
def test_dropout_mask_shape_and_scale(shape, p, data):
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    x = np.full(shape, -2.0, np.float32)
    with autograd.train_mode():
        out = mx.nd.Dropout(mx.nd.array(x), p=p, axes=tuple(axes)).asnumpy()
    assert out.shape == tuple(shape)
    assert set(np.unique(out)) <= {0.0, np.float32(-2.0 / (1 - p))}
    for axis in axes:  # one mask value along each shared axis
        assert (out == np.take(out, [0], axis=axis)).all()
    if p == 0:
        np.testing.assert_array_equal(out, x)


def test_bad_storage_types_fail_as_mxnet_asserts():
    for kwargs in ({"stype": "invalid"}, {"grad_stype": "invalid"}):
        with pytest.raises(AssertionError, match="must be one of 'default', 'row_sparse'"):
            gluon.Parameter("weight", shape=(2, 2), **kwargs)
        with pytest.raises(ValueError):
            gluon.Parameter("weight", shape=(2, 2), **kwargs)


def test_shared_parameters_merge_known_dimensions():
    """A block built on another's parameters fills the dimensions either side knows."""
    first = gluon.nn.Dense(5, prefix="a_")  # in_units unknown: (5, 0)
    second = gluon.nn.Dense(5, in_units=4, prefix="b_", params=first.collect_params())
    assert first.weight is second.weight and first.weight.shape == (5, 4)
    third = gluon.nn.Dense(5, prefix="c_", params=first.collect_params())  # (5, 0) asked
    assert third.weight.shape == (5, 4)
    with pytest.raises(SparsegenError, match=r"expected shape \(5, 4\) is incompatible with "
                                             r"given shape \(5, 3\)"):
        gluon.nn.Dense(5, in_units=3, prefix="d_", params=first.collect_params())


def test_load_with_the_saved_dtype_casts_initialized_copies(tmp_path):
    saved = gluon.ParameterDict("")
    saved.get("w0", shape=(2, 2), dtype="float32")
    saved.get("w1", shape=(2, 2), dtype="int8")
    saved.initialize(mx.init.One())
    path = str(tmp_path / "p.params")
    saved.save(path)
    params = gluon.ParameterDict("")
    params.get("w0", shape=(2, 2), dtype="float16")
    params.get("w1", shape=(2, 2), dtype="float64")
    params.load(path, cast_dtype=True, dtype_source="current")
    assert [params[k].data().dtype for k in ("w0", "w1")] == [np.float16, np.float64]
    params.load(path, cast_dtype=True, dtype_source="saved")
    assert [params[k].data().dtype for k in ("w0", "w1")] == [np.float32, np.int8]
    assert params["w1"].dtype == np.int8
    np.testing.assert_array_equal(params["w1"].data().asnumpy(), np.ones((2, 2)))


def test_blocks_in_a_plain_container_warn_at_collect_params():
    class Listed(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.layers = [gluon.nn.Dense(2), {"x": gluon.nn.Dense(3)}]
                self.plain = {"a": "4", "b": 123}

    with pytest.warns(UserWarning, match='"layers" is an unregistered container with Blocks'):
        params = Listed().collect_params()
    assert len(params) == 0


def test_layers_on_symbols_name_their_nodes_as_mxnet():
    dense = gluon.nn.Dense(8, activation="tanh", in_units=3, flatten=False, prefix="test_")
    out = dense(mx.sym.Variable("data"))
    assert out.list_outputs() == ["test_tanh_fwd_output"]
    assert out.infer_shape(data=(2, 5, 3))[1] == [(2, 5, 8)]
    np.testing.assert_array_equal(mx.nd.relu(mx.nd.array([-1.0, 2.0]), name="x", attr={}).asnumpy(),
                                  [0.0, 2.0])  # nd functions ignore a node's name and attr


@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
def test_clip_global_norm_against_numpy(stype, recwarn):
    rng = np.random.default_rng(5)
    values = [rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5) for _ in range(2)]
    arrays = [mx.nd.array(v).tostype(stype) for v in values]
    total = np.sqrt(sum((v ** 2).sum() for v in values))
    norm = gluon.utils.clip_global_norm(arrays, 1.0)
    assert norm == pytest.approx(total, rel=1e-5)
    for array, value in zip(arrays, values):
        np.testing.assert_allclose(array.asnumpy(), value / (total + 1e-8), rtol=1e-5)
    assert not [w for w in recwarn if issubclass(w.category, mx.StorageFallbackWarning)]


@pytest.mark.parametrize("layer, oracle", [
    (lambda: gluon.nn.LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    (lambda: gluon.nn.PReLU(), lambda x: np.where(x > 0, x, 0.25 * x)),
    (lambda: gluon.nn.PReLU(mx.init.Constant(0.5), in_channels=4),
     lambda x: np.where(x > 0, x, 0.5 * x)),
    (lambda: gluon.nn.ELU(0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    (lambda: gluon.nn.SELU(), lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))),
    (lambda: gluon.nn.GELU(), lambda x: 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2)))),
    (lambda: gluon.nn.Swish(2.0), lambda x: x / (1 + np.exp(-2.0 * x))),
])
def test_activation_layers_against_numpy(layer, oracle):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    block = layer()
    block.initialize()
    np.testing.assert_allclose(block(mx.nd.array(x)).asnumpy(), oracle(x), rtol=1e-5,
                               atol=1e-6)
    symbol = block(mx.sym.var("x"))  # the same graph on symbols
    arrays = {"x": mx.nd.array(x), **{p.name: p.data() for p in block.collect_params().values()}}
    np.testing.assert_allclose(symbol.eval(**arrays)[0].asnumpy(), oracle(x), rtol=1e-5,
                               atol=1e-6)


def test_prelu_learns_its_slopes_and_leaky_relu_refuses_a_negative_slope():
    prelu = gluon.nn.PReLU(in_channels=2)
    prelu.initialize()
    x = mx.nd.array([[-1.0, -2.0], [3.0, -4.0]])
    with autograd.record():
        out = prelu(x)
    out.backward()
    np.testing.assert_allclose(prelu.alpha.grad().asnumpy(), [-1.0, -6.0])  # sum of x < 0
    with pytest.raises(AssertionError, match="alpha must be no less than 0"):
        gluon.nn.LeakyReLU(-0.1)


def test_concurrent_branches_are_concatenated():
    from sparsegen.gluon.contrib.nn import Concurrent, HybridConcurrent, Identity

    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    net = HybridConcurrent(axis=1)
    net.add(gluon.nn.Dense(3, in_units=2), Identity(), gluon.nn.Dense(1, in_units=2))
    net.initialize(mx.init.One())
    ones = x.sum(axis=1, keepdims=True)
    want = np.concatenate([np.repeat(ones, 3, axis=1), x, ones], axis=1)
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), want)
    assert net(mx.sym.var("x")).infer_shape(x=(4, 2))[1] == [(4, 6)]
    plain = Concurrent(axis=0)
    plain.add(Identity(), Identity())
    np.testing.assert_array_equal(plain(mx.nd.array(x)).asnumpy(), np.concatenate([x, x]))


def test_forward_hooks_run_around_each_call_until_detached():
    seen = []
    dense = gluon.nn.Dense(3, in_units=4)
    dense.initialize()
    post = dense.register_forward_hook(lambda block, args, out: seen.append(("post", out.shape)))
    pre = dense.register_forward_pre_hook(lambda block, args: seen.append(("pre", args[0].shape)))
    dense(mx.nd.ones((2, 4)))
    post.detach()
    dense(mx.nd.ones((5, 4)))
    pre.detach()
    pre.detach()  # a second detach does nothing
    dense(mx.nd.ones((1, 4)))
    assert seen == [("pre", (2, 4)), ("post", (2, 3)), ("pre", (5, 4))]
    with dense.register_forward_hook(lambda block, args, out: seen.append("with")):
        dense(mx.nd.ones((1, 4)))
    dense(mx.nd.ones((1, 4)))
    assert seen[-1] == "with" and seen.count("with") == 1
    with pytest.raises(TypeError, match="hook must be callable"):
        dense.register_forward_hook(3)


def test_sequential_of_hybrid_blocks_warns_on_hybridize():
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(3), gluon.nn.Dense(2))
    with pytest.warns(UserWarning, match="HybridSequential"):
        net.hybridize()
    mixed = gluon.nn.Sequential()
    mixed.add(gluon.nn.Dense(3), gluon.nn.Sequential())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mixed.hybridize()  # a plain Block among the children: no warning
        gluon.nn.Sequential().hybridize()  # no children: none either
