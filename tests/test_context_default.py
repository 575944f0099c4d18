"""Default contexts (``with mx.cpu(1):``, ``Context.default_ctx``) and which contexts mix."""

import threading
import warnings

import numpy as np
import pytest

import sparsegen as mx


def _default_ctx():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return mx.Context.default_ctx


def test_default_ctx_is_cpu0_and_deprecated():
    with pytest.warns(DeprecationWarning, match="current_context"):
        assert mx.Context.default_ctx == mx.cpu(0)
    assert mx.current_context() == mx.cpu(0)


def test_with_block_sets_the_default_for_creation_and_restores_it():
    with mx.cpu(1) as ctx:
        assert ctx == mx.cpu(1)
        assert mx.current_context() == _default_ctx() == mx.cpu(1)
        assert mx.test_utils.default_context() == mx.cpu(1)
        made = [mx.nd.zeros((2,)), mx.nd.ones((2,)), mx.nd.full((2,), 3), mx.nd.array([1, 2]),
                mx.nd.sparse.zeros("csr", (2, 2)), mx.nd.sparse.zeros("row_sparse", (2, 2)),
                mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1, 1]), shape=(2, 2)),
                mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))]
        assert [a.context for a in made] == [mx.cpu(1)] * len(made)
        with mx.cpu(2):
            assert mx.nd.zeros((1,)).context == mx.cpu(2)
        assert mx.current_context() == mx.cpu(1)
        assert mx.nd.zeros((1,), ctx=mx.cpu(0)).context == mx.cpu(0)  # an explicit ctx wins
    assert mx.current_context() == mx.cpu(0)


def test_default_ctx_setter_and_set_default_context():
    try:
        with pytest.warns(DeprecationWarning):
            mx.Context.default_ctx = mx.cpu(3)
        assert mx.nd.zeros((1,)).context == mx.cpu(3)
        mx.test_utils.set_default_context(mx.cpu(4))
        assert mx.current_context() == mx.cpu(4)
        with pytest.raises(TypeError, match="Context such as mx.cpu"):
            mx.test_utils.set_default_context("cpu")
    finally:
        mx.test_utils.set_default_context(mx.cpu(0))


def test_default_is_per_thread():
    seen = []
    with mx.cpu(5):
        worker = threading.Thread(target=lambda: seen.append(mx.current_context()))
        worker.start()
        worker.join()
    assert seen == [mx.cpu(0)]


def test_cpu_ids_mix_and_the_result_is_on_the_first_inputs_context():
    x = np.array([[1.0, 0.0], [2.0, 3.0]], np.float32)
    a, b = mx.nd.array(x, ctx=mx.cpu(0)), mx.nd.array(x + 1, ctx=mx.cpu(1))
    assert (a + b).context == mx.cpu(0) and (b + a).context == mx.cpu(1)
    np.testing.assert_array_equal((b + a).asnumpy(), 2 * x + 1)
    product = mx.nd.dot(b, a)
    assert product.context == mx.cpu(1)
    np.testing.assert_allclose(product.asnumpy(), (x + 1) @ x, rtol=1e-6)
    csr = mx.nd.sparse.elemwise_add(a.tostype("csr"), b.tostype("csr"))
    assert csr.stype == "csr" and csr.context == mx.cpu(0)
    np.testing.assert_array_equal(csr.asnumpy(), 2 * x + 1)
    out = mx.nd.zeros((2, 2), ctx=mx.cpu(2))
    assert mx.nd.elemwise_add(a, b, out=out) is out and out.context == mx.cpu(2)
    np.testing.assert_array_equal(out.asnumpy(), 2 * x + 1)
    pinned = mx.nd.array(x, ctx=mx.cpu_pinned(0))
    assert (a * pinned).context == mx.cpu(0)
    np.testing.assert_array_equal((a * pinned).asnumpy(), x * x)


def test_optimizer_takes_a_gradient_on_another_cpu_id():
    weight = mx.nd.ones((3, 2)).tostype("row_sparse")
    grad = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2), ctx=mx.cpu(1))
    sgd = mx.optimizer.SGD(learning_rate=0.5)
    sgd.update(0, weight, grad, sgd.create_state(0, weight))
    np.testing.assert_allclose(weight.asnumpy(), [[1, 1], [0.5, 0], [1, 1]])


def test_gpus_do_not_mix_with_each_other_or_the_host(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    with mx.gpu(0):
        a = mx.nd.array([[1.0, 2.0]])
        assert a.context == mx.gpu(0) and mx.nd.sparse.zeros("csr", (1, 2)).context == mx.gpu(0)
    np.testing.assert_array_equal((a + a).asnumpy(), [[2, 4]])
    with pytest.raises(mx.MXNetError, match=r"one context, got gpu\(0\), cpu\(1\)"):
        a + mx.nd.ones((1, 2), ctx=mx.cpu(1))
    with pytest.raises(mx.MXNetError, match=r"one context, got cpu\(0\), gpu\(0\)"):
        mx.nd.ones((1, 2)) * a
    with pytest.raises(mx.MXNetError, match=r"one context, got gpu\(0\), gpu\(1\)"):
        a - a.as_in_context(mx.gpu(1))
    with pytest.raises(mx.MXNetError, match=r"out is on cpu\(0\)"):
        mx.nd.elemwise_add(a, a, out=mx.nd.zeros((1, 2)))
