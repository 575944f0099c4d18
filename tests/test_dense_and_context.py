"""Contexts and the dense NDArray: creation, dtypes, copies, numpy and DLPack interop."""

import numpy as np
import pytest

import sparsegen as mx


def test_contexts():
    assert mx.cpu() == mx.Context("cpu", 0) and repr(mx.cpu(1)) == "cpu(1)"
    assert repr(mx.gpu(0)) == "gpu(0)" and mx.gpu(0).device_typeid == 2
    assert mx.current_context() == mx.cpu(0)
    with mx.Context(mx.cpu(3)):
        assert mx.current_context() == mx.cpu(3)
        a = mx.nd.zeros((2,))
        assert a.context == a.ctx == mx.cpu(3)
        with mx.cpu(5):
            assert mx.nd.sparse.zeros("csr", (1, 1)).context == mx.cpu(5)
        assert mx.current_context() == mx.cpu(3)
    assert mx.current_context() == mx.cpu(0)
    with pytest.raises(mx.MXNetError, match="device_type must be one of"):
        mx.Context("tpu")


def test_gpu_arrays_beyond_the_gpus_raise():
    count = mx.num_gpus()
    for make in (lambda: mx.nd.zeros((2, 2), ctx=mx.gpu(count)),
                 lambda: mx.nd.array([1, 2], ctx=mx.gpu(count + 1)),
                 lambda: mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(2, 1),
                                                       ctx=mx.gpu(count)),
                 lambda: mx.nd.ones((1,)).copyto(mx.gpu(count))):
        with pytest.raises(mx.MXNetError, match=rf"cannot use gpu\(\d\): this machine has {count}"):
            make()
    assert mx.MXNetError is mx.SparsegenError


def test_dense_creation_and_dtypes():
    assert mx.nd.array([1, 2]).dtype == np.float32  # lists give float32
    assert mx.nd.array(np.arange(3)).dtype == np.float32  # MXNet 1.x: numpy input too
    assert mx.nd.array(np.arange(3), dtype="int64").dtype == np.int64
    assert mx.nd.array(mx.nd.array([1], dtype="float64")).dtype == np.float64
    np.testing.assert_array_equal(mx.nd.zeros((2, 3)).asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(mx.nd.ones((2,), dtype="int8").asnumpy(), [1, 1])
    z = mx.nd.zeros_like(mx.nd.ones((2, 2), dtype="float16"))
    assert z.dtype == np.float16 and not z.asnumpy().any()
    o = mx.nd.ones_like(mx.nd.sparse.zeros("row_sparse", (3, 2)))
    assert o.stype == "default" and o.asnumpy().sum() == 6
    zl = mx.nd.zeros_like(mx.nd.sparse.zeros("csr", (3, 2)))
    assert zl.stype == "csr"
    a = mx.nd.array([[1, 2], [3, 4]])
    assert a.shape == (2, 2) and a.size == 4 and a.ndim == 2 and a.stype == "default" and len(a) == 2
    assert repr(a) == "\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>"


def test_dense_copies_and_assignment():
    a = mx.nd.array([[1, 2], [3, 4]])
    b = a.copy()
    b[:] = 7
    np.testing.assert_array_equal(a.asnumpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(b.asnumpy(), [[7, 7], [7, 7]])
    c = mx.nd.zeros((2, 2))
    assert a.copyto(c) is c
    np.testing.assert_array_equal(c.asnumpy(), a.asnumpy())
    c[:] = np.array([[5, 6], [7, 8]])
    np.testing.assert_array_equal(c.asnumpy(), [[5, 6], [7, 8]])
    c[0] = 0
    c[1, 1] = -1
    np.testing.assert_array_equal(c.asnumpy(), [[0, 0], [7, -1]])
    d = mx.nd.zeros((2, 2))
    d[:] = mx.nd.sparse.row_sparse_array(([[1, 1]], [1]), shape=(2, 2))
    np.testing.assert_array_equal(d.asnumpy(), [[0, 0], [1, 1]])
    assert a.asnumpy() is not a.asnumpy()  # asnumpy copies
    a.wait_to_read()
    mx.nd.waitall()
    assert a.as_in_context(mx.cpu()) is a


def test_dense_tostype_and_astype():
    a = mx.nd.array([[0, 1], [0, 0]], dtype="int32")
    assert a.tostype("default") is not a
    assert a.astype("float64").dtype == np.float64
    rsp = a.tostype("row_sparse").astype("float16")
    assert rsp.stype == "row_sparse" and rsp.dtype == np.float16
    np.testing.assert_array_equal(rsp.asnumpy(), [[0, 1], [0, 0]])
    assert mx.nd.sparse.zeros("row_sparse", (2, 2)).tostype("row_sparse").stype == "row_sparse"


def test_numpy_and_dlpack_interop():
    a = mx.nd.array([[1, 2], [3, 4]])
    view = np.from_dlpack(a)  # zero-copy
    view[0, 0] = 9
    assert a.asnumpy()[0, 0] == 9
    np.testing.assert_array_equal(np.asarray(a), [[9, 2], [3, 4]])
    rsp = a.tostype("row_sparse")
    np.testing.assert_array_equal(np.asarray(rsp), [[9, 2], [3, 4]])
    with pytest.raises(mx.MXNetError, match="no dense buffer"):
        np.from_dlpack(rsp)


def test_sparse_data_views_share_memory():
    rsp = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    rsp.data[:] = 5
    np.testing.assert_array_equal(rsp.asnumpy(), [[0, 0], [5, 5], [0, 0]])


def test_csr_constructors_all_forms():
    import scipy.sparse

    dense = np.array([[0, 1, 0], [2, 0, 3]], dtype=np.float64)
    forms = [
        mx.nd.sparse.csr_matrix(scipy.sparse.csr_matrix(dense)),
        mx.nd.sparse.csr_matrix(scipy.sparse.coo_matrix(dense)),
        mx.nd.sparse.csr_matrix(dense),
        mx.nd.sparse.csr_matrix(mx.nd.array(dense, dtype="float64")),
        mx.nd.sparse.csr_matrix(([1, 2, 3], ([0, 1, 1], [1, 0, 2])), shape=(2, 3), dtype="float64"),
        mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [1, 0, 2], [0, 1, 3]), dtype="float64"),
        mx.nd.sparse.array(scipy.sparse.csr_matrix(dense)),
        mx.nd.array(scipy.sparse.csr_matrix(dense)),
    ]
    for m in forms:
        assert m.stype == "csr" and m.shape == (2, 3) and m.dtype == np.float64
        np.testing.assert_array_equal(m.asnumpy(), dense)
    # scipy input that is not canonical (duplicates, unsorted columns) is canonicalised
    messy = scipy.sparse.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])),
                                    shape=(1, 3))
    m = mx.nd.sparse.csr_matrix(messy)
    np.testing.assert_array_equal(m.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(m.asnumpy(), [[2, 0, 4]])
    empty = mx.nd.sparse.csr_matrix((4, 5))
    assert empty.shape == (4, 5) and empty.dtype == np.float32 and not empty.asnumpy().any()


def test_row_sparse_constructors_all_forms():
    dense = np.array([[0, 0], [1, 2], [0, 0]], dtype=np.float32)
    forms = [
        mx.nd.sparse.row_sparse_array(dense),
        mx.nd.sparse.row_sparse_array(mx.nd.array(dense)),
        mx.nd.sparse.row_sparse_array(([[1, 2]], [1]), shape=(3, 2)),
        mx.nd.sparse.row_sparse_array(mx.nd.sparse.row_sparse_array(dense)),
        mx.nd.array(mx.nd.sparse.row_sparse_array(dense)),
    ]
    for r in forms:
        assert r.stype == "row_sparse" and r.shape == (3, 2) and r.dtype == np.float32
        np.testing.assert_array_equal(r.asnumpy(), dense)
    inferred = mx.nd.sparse.row_sparse_array(([[1, 2]], [4]))
    assert inferred.shape == (5, 2)
    empty = mx.nd.sparse.row_sparse_array((4, 3), dtype="int32")
    assert empty.shape == (4, 3) and empty.dtype == np.int32 and empty.data.shape == (0, 3)
    assert mx.nd.sparse.empty("row_sparse", (2, 2)).indices.shape == (0,)
