"""mx.kv: the one-machine kvstore against values recorded from MXNet 1.9.1
(tests/fixtures/record_output_kvstore.py) and numpy oracles; gluon.Trainer on a KVStore."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, strategies as st

import sparsegen as mx
from sparsegen import autograd, gluon
from sparsegen.errors import InvalidType, InvalidValue

KV = json.loads((pathlib.Path(__file__).parent / "fixtures" /
                 "output_kvstore.json").read_text())["kvstore"]


def _rsp(rows: dict[int, float], shape=(6, 3)) -> mx.nd.NDArray:
    ids = sorted(rows)
    data = np.array([[rows[i]] * shape[1] for i in ids], np.float32).reshape(len(ids), shape[1])
    return mx.nd.sparse.row_sparse_array((data, np.array(ids, np.int64)), shape=shape)


def test_identity_matches_mxnet():
    kv = mx.kv.create("local")
    assert (kv.type, kv.rank, kv.num_workers) == (KV["type"], KV["rank"], KV["num_workers"])
    assert mx.kvstore.create("device").type == "device"
    kv.barrier()


@pytest.mark.parametrize("kv_type", mx.kvstore.LOCAL_TYPES)
def test_every_local_type_keeps_its_name_and_sums(kv_type):
    kv = mx.kv.create(kv_type)
    assert kv.type == kv_type
    kv.init("w", mx.nd.zeros((2, 2)))
    kv.push("w", [mx.nd.ones((2, 2)), mx.nd.array([[1, 2], [3, 4]])])
    out = mx.nd.zeros((2, 2))
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), [[2, 3], [4, 5]])


def test_push_sums_then_optimizer_updates_as_mxnet():
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    kv.push(3, [mx.nd.ones((2, 3)) * 2, mx.nd.ones((2, 3)) * 5])
    out = mx.nd.zeros((2, 3))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), KV["summed"])
    kv = mx.kv.create("local")  # as the recording: a fresh store (docs/kvstore.md says why)
    kv.init(3, mx.nd.ones((2, 3)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv.push(3, [mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 3])
    kv.push(3, mx.nd.ones((2, 3)))
    outs = [mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3), ctx=mx.cpu(1))]
    kv.pull(3, out=outs)
    for array in outs:
        np.testing.assert_allclose(array.asnumpy(), KV["sgd_momentum"], rtol=1e-6)


def test_row_sparse_push_replaces_and_pull_returns_requested_rows():
    kv = mx.kv.create("local")
    kv.init("e", mx.nd.array(KV["whole"]).tostype("row_sparse"))
    kv.push("e", [_rsp({0: 1.0}), _rsp({0: 2.0, 4: 2.0})])  # the rsp-sum kernel: rows 0, 4
    out = mx.nd.sparse.zeros("row_sparse", (6, 3))
    kv.row_sparse_pull("e", out=out, row_ids=mx.nd.array([5, 4, 0, 4]))
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.indices.asnumpy(), KV["replaced_indices"])
    np.testing.assert_array_equal(out.data.asnumpy(), KV["replaced_data"])


def test_lazy_sgd_on_row_sparse_matches_mxnet():
    kv = mx.kv.create("local")
    kv.init("e", mx.nd.array(KV["whole"]).tostype("row_sparse"))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, wd=0.1))
    kv.push("e", [_rsp({0: 1.0}), _rsp({0: 2.0, 4: 2.0})])
    out = mx.nd.sparse.zeros("row_sparse", (6, 3))
    kv.row_sparse_pull("e", out=out, row_ids=mx.nd.arange(6))
    np.testing.assert_array_equal(out.indices.asnumpy(), KV["lazy_indices"])
    np.testing.assert_allclose(out.asnumpy(), KV["lazy"], rtol=1e-6)


@given(rows=st.integers(1, 30), cols=st.integers(1, 4), pushes=st.integers(1, 4),
       density=st.sampled_from((0.0, 0.3, 1.0)), seed=st.integers(0, 2**31))
def test_row_sparse_pull_oracle(rows, cols, pushes, density, seed):
    rng = np.random.default_rng(seed)
    kv = mx.kv.create("device")
    kv.init(0, mx.nd.sparse.zeros("row_sparse", (rows, cols)))
    dense = [np.where(rng.random((rows, 1)) < density, rng.standard_normal((rows, cols)), 0)
             .astype(np.float32) for _ in range(pushes)]
    kv.push(0, [mx.nd.array(d).tostype("row_sparse") for d in dense])
    ids = rng.integers(0, rows, rng.integers(0, 2 * rows + 1))
    outs = [mx.nd.sparse.zeros("row_sparse", (rows, cols)) for _ in range(2)]
    kv.row_sparse_pull(0, out=outs, row_ids=mx.nd.array(ids, dtype="int64"))
    want_ids = np.unique(ids)
    for out in outs:
        np.testing.assert_array_equal(out.indices.asnumpy(), want_ids)
        np.testing.assert_allclose(out.data.asnumpy(), sum(dense)[want_ids], rtol=1e-5,
                                   atol=1e-6)


def test_lists_of_keys_per_out_row_ids_and_pushpull():
    kv = mx.kv.create()
    kv.init([0, 1], [mx.nd.zeros((2,)), _rsp({1: 4.0}, (3, 2))])
    kv.pushpull(0, [mx.nd.ones((2,)), mx.nd.array([2.0, -1.0])])  # into the values
    fresh = mx.nd.zeros((2,))
    kv.pull([0], out=[fresh])
    np.testing.assert_array_equal(fresh.asnumpy(), [3.0, 0.0])
    outs = [mx.nd.sparse.zeros("row_sparse", (3, 2)) for _ in range(2)]
    kv.row_sparse_pull(1, out=outs, row_ids=[mx.nd.array([0]), mx.nd.array([2, 1])])
    assert [o.indices.asnumpy().tolist() for o in outs] == [[0], [1, 2]]
    np.testing.assert_array_equal(outs[1].asnumpy(), [[0, 0], [4, 4], [0, 0]])
    skipped = mx.nd.sparse.zeros("row_sparse", (3, 2))
    kv.pull(1, out=skipped)  # ignore_sparse: row_sparse outs are left alone
    assert skipped.indices.size == 0
    kv.pull(1, out=skipped, ignore_sparse=False)
    np.testing.assert_array_equal(skipped.asnumpy(), [[0, 0], [4, 4], [0, 0]])


def test_custom_updater_and_optimizer_states(tmp_path):
    kv = mx.kv.create()
    seen = []

    def update(key, merged, stored):
        seen.append(key)
        stored += merged * 2

    kv.init("w", mx.nd.ones((2,)))
    kv._set_updater(update)
    kv.push("w", mx.nd.ones((2,)))
    out = mx.nd.zeros((2,))
    kv.pull("w", out=out)
    assert seen == ["w"] and out.asnumpy().tolist() == [3.0, 3.0]
    with pytest.raises(mx.MXNetError, match="no optimizer"):
        kv.save_optimizer_states(str(tmp_path / "s"))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0, momentum=0.5))
    kv.push("w", mx.nd.ones((2,)))
    kv.save_optimizer_states(str(tmp_path / "s"), dump_optimizer=True)
    other = mx.kv.create()
    other.init("w", mx.nd.array([2.0, 2.0]))
    other.set_optimizer(mx.optimizer.SGD(learning_rate=0.0))
    other.load_optimizer_states(str(tmp_path / "s"))
    other.push("w", mx.nd.ones((2,)))  # momentum -1 kept: w = 2 + 0.5 * -1 - 1
    other.pull("w", out=out)
    np.testing.assert_allclose(out.asnumpy(), [0.5, 0.5])


@pytest.mark.parametrize("call, error, match", [
    (lambda kv: mx.kv.create("dist_async"), InvalidValue,
     "asynchronous kvstore type 'dist_async'.*local, device, local_allreduce_cpu.*dist_sync"),
    (lambda kv: mx.kv.create("nccl"), InvalidValue, "unsupported kvstore type 'nccl'"),
    (lambda kv: mx.kv.create("local", timeout=5), InvalidValue, "timeout is for the distrib"),
    (lambda kv: kv.init(0, mx.nd.ones((2,))), InvalidValue, "duplicate init of key 0"),
    (lambda kv: kv.init("a", mx.nd.ones((2,))), InvalidValue, "mixes int and str"),
    (lambda kv: kv.pull(9, out=mx.nd.ones((2,))), InvalidValue, "key 9 has not been"),
    (lambda kv: kv.push(0, mx.nd.ones((3,))), InvalidValue, r"shape \(2,\).*\(3,\)"),
    (lambda kv: kv.push(1.5, mx.nd.ones((2,))), InvalidType, "int or a str"),
    (lambda kv: kv.push(0, np.ones(2)), InvalidType, "NDArray"),
    (lambda kv: kv.pull(0), InvalidValue, "out is required"),
    (lambda kv: kv.row_sparse_pull(0, out=mx.nd.ones((2,)), row_ids=mx.nd.array([0])),
     InvalidValue, "needs a row_sparse one"),
    (lambda kv: kv.set_optimizer("sgd"), InvalidType, "Optimizer"),
])
def test_bad_input(call, error, match):
    kv = mx.kv.create()
    kv.init(0, mx.nd.ones((2,)))
    with pytest.raises(error, match=match):
        call(kv)


# -- gluon.Trainer on a kvstore ----------------------------------------------------------------
def _dense_two_contexts():
    layer = gluon.nn.Dense(2, in_units=3, use_bias=False)
    layer.initialize(mx.init.Constant(0.5), ctx=[mx.cpu(0), mx.cpu(1)])
    return layer


@pytest.mark.parametrize("kvstore", ["device", "local", "object"])
def test_trainer_reduces_over_contexts_on_the_kvstore(kvstore):
    layer = _dense_two_contexts()
    store = mx.kv.create("local") if kvstore == "object" else kvstore
    trainer = gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.1},
                            kvstore=store)
    xs = [np.array([[1.0, 2.0, 0.0]], np.float32), np.array([[0.0, -1.0, 3.0]], np.float32)]
    with autograd.record():
        losses = [layer(mx.nd.array(x, ctx=c)).sum() for x, c in zip(xs, (mx.cpu(0),
                                                                             mx.cpu(1)))]
    autograd.backward(losses)
    trainer.step(2)
    grad = np.ones((2, 1)) * (xs[0] + xs[1])  # d sum(x W^T) / dW, summed over the contexts
    for data in layer.weight.list_data():
        np.testing.assert_allclose(data.asnumpy(), 0.5 - 0.1 * grad / 2, rtol=1e-6)
    assert trainer._update_on_kvstore
    if kvstore == "object":
        assert trainer._kvstore is store


def test_trainer_update_on_kvstore_false_reduces_gradients():
    layer = _dense_two_contexts()
    trainer = gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 1.0},
                            update_on_kvstore=False)
    with autograd.record():
        losses = [layer(mx.nd.ones((1, 3), ctx=c)).sum() for c in (mx.cpu(0), mx.cpu(1))]
    autograd.backward(losses)
    trainer.allreduce_grads()
    for grad in layer.weight.list_grad():
        np.testing.assert_array_equal(grad.asnumpy(), np.full((2, 3), 2.0))
    trainer.update(1)
    np.testing.assert_allclose(layer.weight.data(mx.cpu(1)).asnumpy(), np.full((2, 3), -1.5))


def test_trainer_row_sparse_weight_lives_in_the_kvstore():
    emb = gluon.contrib.nn.SparseEmbedding(5, 2)
    emb.initialize(mx.init.Constant(1.0))
    store = mx.kv.create("local")
    trainer = gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 1.0}, kvstore=store)
    with autograd.record():
        loss = emb(mx.nd.array([1, 3, 3])).sum()
    loss.backward()
    trainer.step(1)
    held = mx.nd.sparse.zeros("row_sparse", (5, 2))
    store.row_sparse_pull(0, out=held, row_ids=mx.nd.arange(5))
    np.testing.assert_array_equal(held.asnumpy(), [[1, 1], [0, 0], [1, 1], [-1, -1], [1, 1]])
    rows = emb.weight.row_sparse_data(mx.nd.array([3]))
    np.testing.assert_array_equal(rows.asnumpy()[3], [-1, -1])


def test_trainer_kvstore_argument_errors():
    layer = gluon.nn.Dense(1, in_units=1)
    layer.initialize()
    with pytest.raises(InvalidValue, match="'dist_async'.*dist_sync, dist_device_sync"):
        gluon.Trainer(layer.collect_params(), "sgd", kvstore="dist_async")
    with pytest.raises(InvalidType, match="kvstore"):
        gluon.Trainer(layer.collect_params(), "sgd", kvstore=3)


def test_a_key_listed_twice_sums_both_and_updates_once():
    kv = mx.kv.create()
    kv.init(0, mx.nd.zeros((2,)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0, momentum=0.5))
    kv.push([0, 0], [mx.nd.ones((2,)), [mx.nd.ones((2,)), mx.nd.ones((2,))]])
    kv.push(0, mx.nd.zeros((2,)))  # momentum of one update: -3, then 0.5 * -3
    out = mx.nd.zeros((2,))
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), [-4.5, -4.5])


def test_pushed_and_pulled_arrays_do_not_share_the_stored_value():
    kv = mx.kv.create()
    pushed = _rsp({1: 2.0}, (3, 2))
    kv.init(0, _rsp({0: 1.0}, (3, 2)))
    kv.push(0, pushed)
    pushed.data[:] = 9
    out = mx.nd.sparse.zeros("row_sparse", (3, 2))
    kv.row_sparse_pull(0, out=out, row_ids=mx.nd.array([1]))
    out.data[:] = 7
    again = mx.nd.sparse.zeros("row_sparse", (3, 2), dtype="float64")
    kv.row_sparse_pull(0, out=again, row_ids=mx.nd.array([1, 2]))
    np.testing.assert_array_equal(again.asnumpy(), [[0, 0], [2, 2], [0, 0]])
    assert again.dtype == np.float64
