"""gluon.Trainer: steps against hand-computed SGD / Adam updates (numpy), lazy row_sparse
updates, stale gradients, states, and small training loops on csr data."""

from __future__ import annotations

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import autograd, gluon
from gluon_init import seeded
import test_gpu


def _linear(units: int, in_units: int, use_bias: bool = True) -> gluon.nn.Dense:
    layer = gluon.nn.Dense(units, in_units=in_units, use_bias=use_bias)
    seeded(layer.collect_params(), seed=units)
    return layer


def _backward(layer: gluon.Block, x: np.ndarray) -> None:
    with autograd.record():
        loss = (layer(mx.nd.array(x)) ** 2).sum()
    loss.backward()


def test_sgd_step_matches_numpy():
    layer = _linear(2, 3)
    w0, b0 = layer.weight.data().asnumpy(), layer.bias.data().asnumpy()
    x = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0]], np.float32)
    trainer = gluon.Trainer(layer.collect_params(), "sgd",
                            {"learning_rate": 0.1, "wd": 0.01, "momentum": 0.0})
    _backward(layer, x)
    y = x @ w0.T + b0
    gw, gb = (2 * y).T @ x, (2 * y).sum(0)
    trainer.step(batch_size=2)
    np.testing.assert_allclose(layer.weight.data().asnumpy(),
                               w0 - 0.1 * (gw / 2 + 0.01 * w0), rtol=1e-5, atol=1e-6)
    # MXNet's wd_mult default: 0 for names not ending in _weight / _gamma -- but a Trainer's
    # param_dict multipliers (1.0) take precedence, as in MXNet.
    np.testing.assert_allclose(layer.bias.data().asnumpy(), b0 - 0.1 * (gb / 2 + 0.01 * b0),
                               rtol=1e-5, atol=1e-6)
    assert trainer.learning_rate == pytest.approx(0.1)
    trainer.set_learning_rate(0.5)
    assert trainer.optimizer.lr == 0.5


def test_adam_two_steps_match_numpy():
    layer = _linear(3, 2, use_bias=False)
    w = layer.weight.data().asnumpy().astype(np.float64)
    trainer = gluon.Trainer(layer.collect_params(), "adam", {"learning_rate": 0.01})
    m, v = np.zeros_like(w), np.zeros_like(w)
    x = np.array([[0.5, -1.0]], np.float32)
    for t in (1, 2):
        _backward(layer, x)
        g = 2 * (x @ w.T).T @ x / 4  # batch_size 4
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        lr = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        w = w - lr * m / (np.sqrt(v) + 1e-8)
        trainer.step(4)
    np.testing.assert_allclose(layer.weight.data().asnumpy(), w, rtol=1e-5, atol=1e-6)


def test_stale_gradient_and_update_split():
    layer = _linear(2, 2)
    trainer = gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.1})
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        trainer.step(1)
    before = layer.weight.data().asnumpy()
    trainer.step(1, ignore_stale_grad=True)  # stale parameters are skipped
    np.testing.assert_array_equal(layer.weight.data().asnumpy(), before)
    _backward(layer, np.ones((1, 2), np.float32))
    trainer.allreduce_grads()
    trainer.update(1)
    assert not np.array_equal(layer.weight.data().asnumpy(), before)
    with pytest.raises(UserWarning):
        trainer.update(1)  # the gradient was used
    with pytest.raises(ValueError, match="kvstore"):
        gluon.Trainer(layer.collect_params(), "sgd", kvstore="dist_async")
    with pytest.raises(TypeError, match="Parameters"):
        gluon.Trainer([1], "sgd")


def test_lazy_row_sparse_update_touches_batch_rows_only():
    emb = gluon.nn.Embedding(8, 2, sparse_grad=True)
    w0 = seeded(emb.collect_params(), seed=5)[emb.weight.name]
    trainer = gluon.Trainer(emb.collect_params(), "sgd",
                            {"learning_rate": 0.5, "wd": 0.1, "lazy_update": True})
    with autograd.record():
        loss = emb(mx.nd.array([2, 5, 2])).sum()
    loss.backward()
    trainer.step(1)
    w = emb.weight.data().asnumpy()
    counts = np.zeros((8, 1), np.float32)
    counts[2], counts[5] = 2, 1
    rows = [2, 5]
    np.testing.assert_allclose(w[rows], (w0 - 0.5 * (counts + 0.1 * w0))[rows], rtol=1e-5)
    untouched = [r for r in range(8) if r not in rows]
    np.testing.assert_array_equal(w[untouched], w0[untouched])  # no weight decay there


def test_sparse_embedding_pulls_rows_and_trains():
    emb = gluon.contrib.nn.SparseEmbedding(6, 2)
    w0 = seeded(emb.collect_params(), seed=6)[emb.weight.name]
    trainer = gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 1.0})
    ids = mx.nd.array([4, 1])
    with autograd.record():
        out = emb(ids)
        loss = out.sum()
    np.testing.assert_allclose(out.asnumpy(), w0[[4, 1]])
    pulled = emb.weight.row_sparse_data(ids)
    assert pulled.stype == "row_sparse" and sorted(pulled.indices.asnumpy()) == [1, 4]
    loss.backward()
    trainer.step(1)
    whole = trainer._whole(emb.weight).asnumpy()
    expect = w0.copy()
    expect[[1, 4]] -= 1.0
    np.testing.assert_allclose(whole, expect, rtol=1e-6)
    # as MXNet 1.9.1: the constructor accepts it, picking the kvstore refuses it
    other = gluon.contrib.nn.SparseEmbedding(6, 3)
    other.initialize()
    refused = gluon.Trainer(other.collect_params(), "sgd", update_on_kvstore=False)
    with pytest.raises(ValueError, match="update_on_kvstore"):
        refused._init_kvstore()


def test_trainer_attributes_mxnets_tests_read():
    # MXNet 1.9.1 (recorded): _update_on_kvstore None until the kvstore is picked and None
    # without one, _kv_initialized, _params_to_init all parameters before, none after
    dense = gluon.nn.Dense(2, in_units=3)
    dense.initialize()
    trainer = gluon.Trainer(dense.collect_params(), "sgd", {"learning_rate": 0.1})
    assert trainer._update_on_kvstore is None and trainer._kv_initialized is False
    assert len(trainer._params_to_init) == 2
    with autograd.record():
        out = dense(mx.nd.ones((1, 3)))
    out.backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is None and trainer._kvstore is None
    assert trainer._kv_initialized is True and trainer._params_to_init == []
    emb = gluon.nn.Embedding(10, 2, sparse_grad=True)
    emb.initialize()
    trainer = gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 0.1},
                            kvstore=mx.kv.create("local"))
    with autograd.record():
        out = emb(mx.nd.array([1, 2]))
    out.backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False and trainer._params_to_init == []


def _csr_problem(seed: int = 0) -> tuple[mx.nd.NDArray, mx.nd.NDArray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 10)).astype(np.float32) * (rng.random((16, 10)) < 0.3)
    truth = rng.standard_normal((10, 1)).astype(np.float32)
    return mx.nd.array(x).tostype("csr"), mx.nd.array(x @ truth), x


def _train(weight_stype: str, steps: int = 8) -> tuple[list[float], np.ndarray]:
    """A linear model ``dot(csr x, w)`` with a dense or row_sparse gradient buffer."""
    x, y, _ = _csr_problem()
    w = gluon.Parameter("w", shape=(10, 1), grad_stype=weight_stype)
    seeded({"w": w}, seed=9)
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.2})
    losses = []
    for _ in range(steps):
        with autograd.record():
            loss = ((mx.nd.dot(x, w.data()) - y) ** 2).mean()
        loss.backward()
        assert w.grad().stype == weight_stype
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    return losses, w.data().asnumpy()


def test_csr_training_loss_decreases_and_sparse_equals_dense():
    dense_losses, dense_w = _train("default")
    sparse_losses, sparse_w = _train("row_sparse")
    assert dense_losses[-1] < 0.5 * dense_losses[0]
    np.testing.assert_allclose(sparse_losses, dense_losses, rtol=1e-5)
    np.testing.assert_allclose(sparse_w, dense_w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("optimizer, options", [
    ("sgd", {"learning_rate": 0.1}),  # lazy SGD applies wd to the gradient rows only
    ("adam", {"learning_rate": 0.05, "lazy_update": False}),  # lazy Adam skips absent rows
])
def test_embedding_sparse_grad_equals_dense_grad_training(optimizer, options):
    def run(sparse_grad: bool) -> np.ndarray:
        net = gluon.nn.Sequential()
        with net.name_scope():
            net.add(gluon.nn.Embedding(7, 3, sparse_grad=sparse_grad),
                    gluon.nn.Dense(1, in_units=6))
        seeded(net.collect_params(), seed=11)
        trainer = gluon.Trainer(net.collect_params(), optimizer, dict(options))
        for ids in ([[0, 3], [3, 6]], [[1, 1], [2, 0]], [[0, 3], [5, 4]]):
            with autograd.record():
                loss = (net(mx.nd.array(ids)) ** 2).sum()
            loss.backward()
            trainer.step(2)
        return net[0].weight.data().asnumpy()

    np.testing.assert_allclose(run(True), run(False), rtol=1e-5, atol=1e-6)


def test_save_load_states(tmp_path):
    layer = _linear(2, 2)
    trainer = gluon.Trainer(layer.collect_params(), "adam", {"learning_rate": 0.01})
    _backward(layer, np.ones((1, 2), np.float32))
    trainer.step(1)
    path = str(tmp_path / "trainer.states")
    trainer.save_states(path)
    mean = trainer._updaters[0].states[0][0].asnumpy()
    other = gluon.Trainer(layer.collect_params(), "sgd")
    other.load_states(path)
    assert type(other.optimizer).__name__ == "Adam"
    np.testing.assert_array_equal(other._updaters[0].states[0][0].asnumpy(), mean)
    assert other.optimizer.param_dict[0] is layer.weight


gpu = test_gpu.gpu  # the fixture: GPUs emulated in host memory, and CUDA ones where present


def test_dense_dropout_and_step_on_gpu(gpu):
    layer = _linear(2, 3)
    w0, b0 = layer.weight.data().asnumpy(), layer.bias.data().asnumpy()
    layer.collect_params().reset_ctx(gpu)
    assert layer.weight.data().context == gpu and layer.weight.grad().context == gpu
    trainer = gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.1})
    x = np.array([[1.0, 2.0, -1.0]], np.float32)
    with autograd.record():
        out = gluon.nn.Dropout(0.5)(layer(mx.nd.array(x, ctx=gpu)))
        loss = out.sum()
    loss.backward()
    mask = out.asnumpy() / (x @ w0.T + b0)  # 0 or 2 per unit
    assert set(np.round(mask, 4).ravel()) <= {0.0, 2.0}
    trainer.step(1)
    np.testing.assert_allclose(layer.weight.data().asnumpy(), w0 - 0.1 * mask.T @ x,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.bias.data().asnumpy(), b0 - 0.1 * mask[0], rtol=1e-5)


def _two_context_step(trainer: gluon.Trainer, x: gluon.Parameter, grads: list[np.ndarray]):
    with autograd.record():
        for w, g in zip(x.list_data(), grads):
            (w * mx.nd.array(g, ctx=w.context)).sum().backward()
    trainer.step(1)


@pytest.mark.parametrize("update_on_kvstore", [None, False])
def test_two_contexts_keep_their_own_states_and_count_a_step_once(update_on_kvstore):
    """Momentum SGD on two copies equals numpy's on the summed gradient (each context keeps
    its own momentum), and a FactorScheduler sees one update per step."""
    x = gluon.Parameter("x", shape=(3,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    schedule = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0, "momentum": 0.5,
                                         "lr_scheduler": schedule},
                            update_on_kvstore=update_on_kvstore)
    rng = np.random.default_rng(0)
    weight, momentum = np.zeros(3), np.zeros(3)
    for step in range(5):
        grads = [rng.standard_normal(3).astype(np.float32) for _ in range(2)]
        _two_context_step(trainer, x, grads)
        lr = 0.5 ** (step // 2)  # FactorScheduler: num_update 1, 2 at 1.0; 3, 4 at 0.5; ...
        momentum = 0.5 * momentum - lr * (grads[0] + grads[1])
        weight = weight + momentum
        assert trainer.learning_rate == pytest.approx(lr)
        for copy in x.list_data():
            np.testing.assert_allclose(copy.asnumpy(), weight, rtol=1e-5, atol=1e-6)


def test_update_and_allreduce_refused_when_the_kvstore_updates():
    x = gluon.Parameter("x", shape=(2,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 0.1}, update_on_kvstore=True)
    _two_context_step(trainer, x, [np.ones(2, np.float32)] * 2)
    for call in (lambda: trainer.update(1), trainer.allreduce_grads):
        with pytest.raises(AssertionError, match="updated on kvstore is not supported"):
            call()
    with pytest.raises(mx.MXNetError):
        trainer.update(1)


def test_loading_parameters_drops_the_store_the_trainer_made(tmp_path):
    """MXNet's _reset_kvstore: after a load the next step starts a new store from the loaded
    values (plain SGD, lr 0.1, gradient 1 per copy: -0.2 per step)."""
    params = gluon.ParameterDict()
    x = params.get("x", shape=(4,))
    params.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1}, kvstore="local")
    path = str(tmp_path / "x.params")
    params.save(path)
    _two_context_step(trainer, x, [np.ones(4, np.float32)] * 2)
    assert trainer._update_on_kvstore and trainer._kvstore.type == "local"
    params.load(path)
    assert trainer._kvstore is None and trainer._kv_initialized is False
    _two_context_step(trainer, x, [np.ones(4, np.float32)] * 2)
    for copy in x.list_data():
        np.testing.assert_allclose(copy.asnumpy(), -0.2, rtol=1e-6)
