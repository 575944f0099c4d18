"""MXNet's 2-bit gradient compression on the kvstore (``set_gradient_compression``, the
Trainer's and Module's ``compression_params``): pushed values against a numpy oracle of MXNet's
quantization (residual += grad; +threshold from threshold up, -threshold from -threshold down,
else 0; the residual keeps the rest), per pushed array on a 'device' store and per worker on
dist_sync (2 processes); int8 codes on the wire; the refusals MXNet makes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
import dist_worker as worker
from test_kvstore_dist import _launch


def _quantized(grad: np.ndarray, residual: np.ndarray, threshold: float) -> np.ndarray:
    """MXNet's quantize_2bit (float32, as its kernel): the dequantized values; ``residual``
    updated in place."""
    residual += grad
    up, down = residual >= np.float32(threshold), residual <= -np.float32(threshold)
    values = np.where(up, np.float32(threshold), np.where(down, -np.float32(threshold), 0))
    residual -= values.astype(np.float32)
    return values.astype(np.float32)


@settings(max_examples=30, deadline=None)
@given(st.tuples(st.integers(1, 6), st.integers(1, 5)), st.integers(1, 3),
       st.sampled_from((0.1, 0.5, 2.0)), st.integers(0, 2**31))
def test_device_store_pushes_the_sum_of_each_arrays_quantized_values(shape, arrays, threshold,
                                                                   seed):
    rng = np.random.default_rng(seed)
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": threshold})
    kv.init("k", mx.nd.zeros(shape))
    residuals = [np.zeros(shape, np.float32) for _ in range(arrays)]
    for _ in range(4):
        grads = [rng.uniform(-1.5 * threshold, 1.5 * threshold, shape).astype(np.float32)
                 for _ in range(arrays)]
        grads[0][0, 0] = threshold  # exactly at the threshold: sent
        kv.push("k", [mx.nd.array(g) for g in grads])
        want = sum(_quantized(g, r, threshold) for g, r in zip(grads, residuals))
        got = mx.nd.zeros(shape)
        kv.pull("k", out=got)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=0)


def test_mxnets_residual_sequence_with_the_test_optimizer():
    # MXNet's nightly check_compr_residual on one process: 0.4 stays, 0.1 more is sent, ...
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.set_optimizer(mx.optimizer.create("test", rescale_grad=2.0))
    kv.init(9, mx.nd.zeros((3, 4)))
    value = mx.nd.zeros((3, 4))
    for pushed, total in ((0.4, 0.0), (0.1, 1.0), (0.2, 1.0), (0.3, 2.0), (-1.2, 1.0)):
        kv.push(9, mx.nd.ones((3, 4)) * pushed)
        kv.pull(9, out=value)
        np.testing.assert_allclose(value.asnumpy(), total, atol=1e-6)


def test_compression_is_refused_where_mxnet_refuses_it():
    with pytest.raises(mx.MXNetError, match="not supported for kvstore type 'local'"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit"})
    kv = mx.kv.create("device")
    for params, match in (({"threshold": 0.5}, "'type'"), ({"type": "1bit"}, "'2bit' or 'none'"),
                          ({"type": "2bit", "threshold": 0}, "threshold"),
                          ({"type": "2bit", "threshold": float("inf")}, "threshold"),
                          ({"type": "2bit", "ratio": 2}, "unknown keys"), ("2bit", "dict")):
        with pytest.raises(mx.MXNetError, match=match):
            kv.set_gradient_compression(params)
    kv.set_gradient_compression({"type": "2bit"})
    kv.init(["d", "h", "s"], [mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2), dtype="float16"),
                              mx.nd.zeros((2, 2)).tostype("row_sparse")])
    with pytest.raises(mx.MXNetError, match="dense float32 values, got a default float16"):
        kv.push("h", mx.nd.ones((2, 2), dtype="float16"))
    with pytest.raises(mx.MXNetError, match="dense float32 values, got a row_sparse"):
        kv.push("s", mx.nd.ones((2, 2)).tostype("row_sparse"))
    kv.set_gradient_compression({"type": "none"})  # off again: the sum as it is
    kv.push("d", mx.nd.ones((2, 2)) * 0.3)
    out = mx.nd.zeros((2, 2))
    kv.pull("d", out=out)
    np.testing.assert_allclose(out.asnumpy(), 0.3, rtol=1e-6)


def test_trainer_and_module_pass_compression_params_to_their_kvstore():
    with pytest.raises(mx.MXNetError, match="type"):
        mx.gluon.Trainer([], "sgd", compression_params={"type": "3bit"})
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize(mx.init.One(), ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0},
                               kvstore="device",
                               compression_params={"type": "2bit", "threshold": 0.25})
    x = mx.nd.array([[0.1, 0.3]])
    for ctx in (mx.cpu(0), mx.cpu(1)):
        with mx.autograd.record():
            out = net(x.as_in_context(ctx))
        out.backward()
    trainer.step(1)
    # each context's gradient (0.1, 0.3) quantizes to (0, 0.25): the update is twice that
    np.testing.assert_allclose(net.weight.data(mx.cpu(0)).asnumpy(), [[1.0, 0.5]], atol=1e-6)
    with pytest.raises(mx.MXNetError, match="type"):
        mx.mod.Module(mx.sym.Variable("data"), compression_params={"type": "x"})
    with pytest.raises(mx.MXNetError, match="group2ctxs has 2 dicts for 1 contexts"):
        mx.mod.Module(mx.sym.Variable("data"), group2ctxs=[{"a": mx.cpu()}] * 2)


def test_dist_sync_sums_each_workers_quantized_values_sent_as_int8(tmp_path):
    workers = 2
    _launch(workers, "compressed", tmp_path)
    residuals = [np.zeros((worker.N, worker.D), np.float32) for _ in range(workers)]
    value = np.zeros((worker.N, worker.D), np.float32)
    for rank in range(workers):
        seen = np.load(tmp_path / f"compressed-{rank}.npz")
        assert "gradient compression takes dense float32" in str(seen["refused"])
    for step in range(worker.STEPS):
        value += worker.RATE * sum(_quantized(worker.compressed_push(step, r), residuals[r],
                                              worker.THRESHOLD) for r in range(workers))
        for rank in range(workers):
            seen = np.load(tmp_path / f"compressed-{rank}.npz")
            np.testing.assert_allclose(seen[f"w_{step}"], value, rtol=1e-6, atol=1e-6)
            # one int8 code per value (plus a small header), a quarter of float32's bytes
            assert int(seen[f"bytes_{step}"]) < worker.N * worker.D * 2


def test_more_codes_than_int8_holds_are_summed_in_int32():
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init("k", mx.nd.zeros((2, 2)))
    kv.push("k", [mx.nd.ones((2, 2)) for _ in range(130)])  # each array's code is 1
    out = mx.nd.zeros((2, 2))
    kv.pull("k", out=out)
    np.testing.assert_allclose(out.asnumpy(), 130 * 0.5)
