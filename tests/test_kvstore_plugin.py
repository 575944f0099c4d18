"""Store types written in Python (``mx.kv.KVStoreBase.register``), as MXNet 1.9.1's: created by
name, used by the Trainer through broadcast / pushpull, refused where they cannot update."""

import warnings

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import gluon


def _two_context_step(kvstore, **kwargs):
    x = gluon.Parameter("x", shape=(4,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = gluon.Trainer([x], "sgd", {"learning_rate": 1.0, "momentum": 0.5},
                            kvstore=kvstore, **kwargs)
    with mx.autograd.record():
        for k, w in enumerate(x.list_data()):
            (w * (k + 1)).backward()  # gradients 1 and 2: their sum is 3
    trainer.step(1)
    return x, trainer


def test_teststore_sums_the_devices_gradients_and_the_trainer_updates_locally():
    x, trainer = _two_context_step(mx.kv.create("teststore"))
    assert trainer._update_on_kvstore is False
    for w in x.list_data():  # momentum SGD by hand: m = -lr * 3, w = 0 + m
        np.testing.assert_array_equal(w.asnumpy(), -3.0)
    x, trainer = _two_context_step("teststore")  # by name, too
    assert isinstance(trainer._kvstore, mx.kv.TestStore)


def test_a_store_that_runs_no_optimizer_refuses_update_on_kvstore():
    x = gluon.Parameter("x", shape=(2,))
    x.initialize(ctx=mx.cpu(), init="zeros")
    trainer = gluon.Trainer([x], "sgd", kvstore=mx.kv.create("teststore"),
                            update_on_kvstore=True)
    with pytest.raises(ValueError, match="update_on_kvstore=False when training with TestStore"):
        trainer._init_kvstore()
    with pytest.raises(ValueError, match="Unknown capability: sparse"):
        mx.kv.create("teststore").is_capable("sparse")


def test_registered_store_types_are_created_by_lower_case_name():
    calls = []

    @mx.kv.KVStoreBase.register
    class CountingStore(mx.kv.TestStore):
        def pushpull(self, key, value, out=None, priority=0):
            calls.append(key)
            super().pushpull(key, value, out, priority)

    try:
        store = mx.kv.create("countingstore")
        assert isinstance(store, CountingStore) and store.type == "teststore"
        x, _ = _two_context_step(store)
        assert calls == [0]
        np.testing.assert_array_equal(x.data(mx.cpu(1)).asnumpy(), -3.0)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            mx.kv.KVStoreBase.register(CountingStore)
        assert "replaces the registered" in str(seen[0].message)
    finally:
        del mx.kv.KVStoreBase.kv_registry["countingstore"]
    with pytest.raises(mx.MXNetError, match="expected a class"):
        mx.kv.KVStoreBase.register(store)
    assert isinstance(mx.kv.create("local"), mx.kv.KVStoreBase)  # the native store is one too
