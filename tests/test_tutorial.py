"""Every operation of MXNet's row_sparse tutorial, against hand-computed values."""

import warnings
from pathlib import Path

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import tutorial


def test_motivation_dot_and_its_gradient():
    X = mx.nd.array([[1, 0]])
    W = mx.nd.array([[3, 4, 5], [6, 7, 8]])
    Y = mx.nd.dot(X, W)
    np.testing.assert_array_equal(Y.asnumpy(), [[3, 4, 5]])
    grad_W = mx.nd.dot(X, mx.nd.ones_like(Y), transpose_a=True)
    np.testing.assert_array_equal(grad_W.asnumpy(), [[1, 1, 1], [0, 0, 0]])


def test_storage_type_inference_and_fallback():
    lhs = mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
    transpose_dot = mx.nd.sparse.dot(lhs, mx.nd.ones((3, 2)), transpose_a=True)
    assert transpose_dot.stype == "row_sparse"
    np.testing.assert_array_equal(transpose_dot.indices.asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(transpose_dot.asnumpy(), [[7, 7], [9, 9], [8, 8], [0, 0], [0, 0]])
    a = transpose_dot.copy()
    b = a * 2
    c = a + mx.nd.ones((5, 2))
    assert (b.stype, c.stype) == ("row_sparse", "default")
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy() * 2)
    np.testing.assert_array_equal(c.asnumpy(), a.asnumpy() + 1)
    e = mx.nd.sparse.zeros("row_sparse", a.shape)
    with warnings.catch_warnings():  # the warning itself is tested in test_fallback.py
        warnings.simplefilter("ignore", mx.StorageFallbackWarning)
        d = mx.nd.log(a)
        e = mx.nd.log(a, out=e)
    assert (a.stype, d.stype, e.stype) == ("row_sparse", "default", "row_sparse")
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(d.asnumpy(), np.log(a.asnumpy()), rtol=1e-6)
    np.testing.assert_array_equal(e.asnumpy(), d.asnumpy())


def test_sparse_sgd_example():
    weight = mx.nd.ones((4, 2)).tostype("row_sparse")
    grad = mx.nd.sparse.row_sparse_array(([[1, 2], [4, 5]], [1, 2]), shape=(4, 2))
    sgd = mx.optimizer.SGD(learning_rate=0.01, momentum=0.01)
    momentum = sgd.create_state(0, weight)
    sgd.update(0, weight, grad, momentum)
    # only rows 1 and 2 (grad.indices) change; momentum = -lr * grad there (MXNet 1.9.1's numbers)
    np.testing.assert_allclose(weight.asnumpy(), [[1, 1], [0.99, 0.98], [0.96, 0.95], [1, 1]], rtol=1e-6)
    np.testing.assert_allclose(momentum.asnumpy(), [[0, 0], [-0.01, -0.02], [-0.04, -0.05], [0, 0]],
                               rtol=1e-6)


def test_row_sparse_format_from_dense():
    dense = np.array([[1, 2, 3], [0, 0, 0], [4, 0, 5], [0, 0, 0], [0, 0, 0]])
    rsp = mx.nd.sparse.row_sparse_array(dense)
    assert rsp.stype == "row_sparse"
    np.testing.assert_array_equal(rsp.data.asnumpy(), [[1, 2, 3], [4, 0, 5]])
    np.testing.assert_array_equal(rsp.indices.asnumpy(), [0, 2])
    assert rsp.indices.dtype == np.int64


def test_row_sparse_format_3d():
    dense = np.array([[[1, 0], [0, 2], [3, 4]], [[5, 0], [6, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]]],
                     dtype=np.float32)
    rsp = mx.nd.sparse.row_sparse_array(dense)
    np.testing.assert_array_equal(rsp.indices.asnumpy(), [0, 1])
    np.testing.assert_array_equal(rsp.data.asnumpy(), dense[:2])
    assert rsp.shape == (3, 3, 2)
    np.testing.assert_array_equal(rsp.asnumpy(), dense)


def test_array_creation_lists_and_numpy():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    b = mx.nd.sparse.row_sparse_array((np.array([[1, 2], [3, 4]]), np.array([1, 4])), shape=(6, 2))
    expected = np.array([[0, 0], [1, 2], [0, 0], [0, 0], [3, 4], [0, 0]])
    np.testing.assert_array_equal(a.asnumpy(), expected)
    np.testing.assert_array_equal(b.asnumpy(), expected)
    assert a.dtype == np.float32  # lists give float32
    assert b.dtype == np.int64  # numpy keeps its dtype
    assert repr(a) == "\n<RowSparseNDArray 6x2 @cpu(0)>"


def test_setting_type():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    c = mx.nd.sparse.array(a)
    d = mx.nd.array(a, dtype=np.float16)
    assert (c.dtype, d.dtype) == (np.float32, np.float16)
    assert (c.stype, d.stype) == ("row_sparse", "row_sparse")
    np.testing.assert_array_equal(d.asnumpy(), a.asnumpy().astype(np.float16))


def test_storage_type_conversion():
    ones = mx.nd.ones((2, 2))
    rsp = ones.tostype("row_sparse")
    assert rsp.stype == "row_sparse"
    np.testing.assert_array_equal(rsp.indices.asnumpy(), [0, 1])
    dense = rsp.tostype("default")
    assert dense.stype == "default"
    np.testing.assert_array_equal(dense.asnumpy(), np.ones((2, 2)))
    rsp2 = mx.nd.sparse.cast_storage(ones, "row_sparse")
    np.testing.assert_array_equal(mx.nd.sparse.cast_storage(rsp2, "default").asnumpy(), np.ones((2, 2)))


def test_copies():
    a = mx.nd.ones((2, 2)).tostype("row_sparse")
    b = a.copy()
    c = mx.nd.sparse.zeros("row_sparse", (2, 2))
    c[:] = a
    d = mx.nd.sparse.zeros("row_sparse", (2, 2))
    a.copyto(d)
    assert b is not a
    for x in (b, c, d):
        assert x.stype == "row_sparse"
        np.testing.assert_array_equal(x.asnumpy(), np.ones((2, 2)))
    b.data[:] = 5  # the copy shares nothing with a
    np.testing.assert_array_equal(a.asnumpy(), np.ones((2, 2)))


def test_copy_keeps_destination_stype():
    e = mx.nd.sparse.zeros("row_sparse", (2, 2))
    f = mx.nd.sparse.zeros("row_sparse", (2, 2))
    g = mx.nd.ones(e.shape)
    e[:] = g
    g.copyto(f)
    assert (e.stype, f.stype, g.stype) == ("row_sparse", "row_sparse", "default")
    np.testing.assert_array_equal(e.asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(f.asnumpy(), np.ones((2, 2)))


def test_retain():
    rsp = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4], [5, 6]], [0, 2, 3]), shape=(5, 2))
    kept = mx.nd.sparse.retain(rsp, mx.nd.array([0, 1]))
    np.testing.assert_array_equal(rsp.asnumpy(), [[1, 2], [0, 0], [3, 4], [5, 6], [0, 0]])
    assert kept.stype == "row_sparse" and kept.shape == (5, 2)
    np.testing.assert_array_equal(kept.indices.asnumpy(), [0, 1])  # the requested ids
    np.testing.assert_array_equal(kept.data.asnumpy(), [[1, 2], [0, 0]])  # row 1 not stored
    np.testing.assert_array_equal(kept.asnumpy(), [[1, 2], [0, 0], [0, 0], [0, 0], [0, 0]])


def test_csr_counterparts():
    lhs = mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
    assert lhs.stype == "csr" and lhs.dtype == np.float32
    np.testing.assert_array_equal(lhs.asnumpy(), [[7, 0, 8, 0, 0], [0] * 5, [0, 9, 0, 0, 0]])
    np.testing.assert_array_equal(lhs.indptr.asnumpy(), [0, 2, 2, 3])
    np.testing.assert_array_equal(lhs.indices.asnumpy(), [0, 2, 1])
    np.testing.assert_array_equal(lhs.data.asnumpy(), [7, 8, 9])
    np.testing.assert_array_equal(lhs.asscipy().toarray(), lhs.asnumpy())
    np.testing.assert_array_equal(lhs[1:3].asnumpy(), [[0] * 5, [0, 9, 0, 0, 0]])
    back = lhs.tostype("default").tostype("csr")
    np.testing.assert_array_equal(back.indptr.asnumpy(), [0, 2, 2, 3])
    c = mx.nd.sparse.zeros("csr", (3, 5))
    c[:] = lhs
    np.testing.assert_array_equal(c.asnumpy(), lhs.asnumpy())
    dense = mx.nd.zeros((3, 5))
    lhs.copyto(dense)
    assert dense.stype == "default"
    np.testing.assert_array_equal(dense.asnumpy(), lhs.asnumpy())


def test_gpu_context_beyond_the_gpus_raises():
    missing = mx.context.num_gpus()
    with pytest.raises(mx.MXNetError, match=rf"cannot use gpu\({missing}\): this machine has"):
        mx.nd.sparse.zeros("row_sparse", (100, 100), ctx=mx.gpu(missing))


def test_docs_tutorial_is_current():
    expected = tutorial.markdown(tutorial.run())
    docs = Path(__file__).parents[1] / "docs" / "tutorial.md"
    assert docs.read_text() == expected, "regenerate with: python -m sparsegen.tutorial > docs/tutorial.md"
