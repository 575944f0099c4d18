"""sparsegen.interop: (values, indices) pairs, scipy.sparse and PyTorch, zero-copy via DLPack."""

import sys

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given

import sparsegen as mx
from sparsegen import interop
from sparsegen.errors import SparsegenError

from strategies import sparse_dense_arrays

SMALL_FLOATS = ("float32", "float64", "int32")


@pytest.fixture
def torch():
    """PyTorch, or a skip where it is not installed (it is an optional dependency)."""
    return pytest.importorskip("torch")


# -- pairs -----------------------------------------------------------------------------------------
def test_pair_round_trip_shares_values_and_owns_ids():
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    ids = np.array([0, 4, 2**40 - 1])
    rsp = interop.from_pair(values, ids, (2**40, 2))
    assert rsp.shape == (2**40, 2)
    data, indices = interop.to_pair(rsp)
    assert np.shares_memory(data, values) and not np.shares_memory(indices, ids)
    assert not indices.flags.writeable
    with pytest.raises(ValueError, match="WRITEABLE"):
        indices.flags.writeable = True  # read-only for good: the kernels trust these ids
    ids[1] = 2**41  # the caller's ids are theirs: the array keeps its validated copy
    np.testing.assert_array_equal(interop.to_pair(rsp)[1], [0, 4, 2**40 - 1])
    again = interop.from_pair(data, indices, rsp.shape)  # read-only ids are copied, not refused
    np.testing.assert_array_equal(again.retain([4]).data.asnumpy(), [[2, 3]])
    values[1] = 7  # the array sees later writes to the shared values
    np.testing.assert_array_equal(rsp.retain([4]).data.asnumpy(), [[7, 7]])
    with pytest.raises(SparsegenError, match="sorted and unique"):
        interop.from_pair(values, np.array([4, 0, 9]))
    with pytest.raises(SparsegenError, match="same length"):
        interop.from_pair(values, np.array([0, 1]))
    with pytest.raises(SparsegenError, match="row_sparse"):
        interop.to_pair(mx.nd.sparse.zeros("csr", (2, 2)))


def test_pair_with_no_stored_rows():
    rsp = interop.from_pair(np.zeros((0, 3), np.float64), np.zeros(0, np.int64), (5, 3))
    np.testing.assert_array_equal(rsp.asnumpy(), np.zeros((5, 3)))
    assert interop.to_pair(rsp)[0].shape == (0, 3)


# -- scipy -----------------------------------------------------------------------------------------
@given(sparse_dense_arrays(ndim=2, dtypes=SMALL_FLOATS))
def test_scipy_view_computes_like_the_dense_array(dense):
    csr = mx.nd.sparse.csr_matrix(dense)
    matrix = interop.to_scipy(csr)
    assert np.shares_memory(matrix.data, csr._storage.data) or not csr._storage.data.size
    np.testing.assert_array_equal(matrix.toarray(), dense)
    vector = np.arange(dense.shape[1], dtype=dense.dtype)
    np.testing.assert_allclose(matrix @ vector, dense @ vector, rtol=1e-6)
    back = interop.from_scipy(matrix)  # shares the values; the read-only ids are copied
    assert np.shares_memory(back._storage.data, csr._storage.data) or not csr._storage.data.size
    np.testing.assert_array_equal(back.asnumpy(), dense)


def test_from_scipy_converts_what_it_cannot_share():
    coo = scipy.sparse.coo_matrix(([1.0, 2.0, 3.0], ([0, 2, 0], [1, 0, 1])), shape=(3, 2))
    np.testing.assert_array_equal(interop.from_scipy(coo).asnumpy(), [[0, 4], [0, 0], [2, 0]])
    int32 = scipy.sparse.csr_matrix(np.eye(3, dtype=np.float32))
    assert int32.indices.dtype == np.int32
    converted = interop.from_scipy(int32)
    assert converted._storage.indices.dtype == np.int64
    assert np.shares_memory(converted._storage.data, int32.data)
    with pytest.raises(SparsegenError, match="float16"):
        interop.to_scipy(mx.nd.sparse.csr_matrix(np.eye(2, dtype=np.float16)))
    with pytest.raises(SparsegenError, match="scipy.sparse matrix"):
        interop.from_scipy(np.eye(2))


# -- torch -----------------------------------------------------------------------------------------
@given(sparse_dense_arrays(dtypes=SMALL_FLOATS))
def test_row_sparse_to_torch_coo_and_back(dense):
    torch = pytest.importorskip("torch")
    rsp = mx.nd.sparse.row_sparse_array(dense)
    coo = rsp.to_torch()
    assert coo.layout == torch.sparse_coo and coo.sparse_dim() == 1 and coo.is_coalesced()
    np.testing.assert_array_equal(coo.to_dense().numpy(), dense)
    back = interop.from_torch(coo)
    assert isinstance(back, mx.nd.sparse.RowSparseNDArray) and back.shape == dense.shape
    np.testing.assert_array_equal(back.asnumpy(), dense)
    if rsp._storage.data.size:
        assert np.shares_memory(back._storage.data, rsp._storage.data)


@given(sparse_dense_arrays(ndim=2, dtypes=SMALL_FLOATS))
def test_csr_to_torch_csr_and_back(dense):
    torch = pytest.importorskip("torch")
    csr = mx.nd.sparse.csr_matrix(dense)
    tensor = csr.to_torch()
    assert tensor.layout == torch.sparse_csr
    np.testing.assert_array_equal(tensor.to_dense().numpy(), dense)
    back = interop.from_torch(tensor)
    np.testing.assert_array_equal(back.asnumpy(), dense)
    assert not np.shares_memory(tensor.crow_indices().numpy(), csr._storage.indptr)
    if csr._storage.data.size:
        assert np.shares_memory(back._storage.data, csr._storage.data)


def test_torch_writes_show_in_the_sparsegen_array(torch):
    rsp = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [1, 3]), shape=(5, 3))
    coo = rsp.to_torch()
    coo._values().mul_(4)
    np.testing.assert_array_equal(rsp.asnumpy()[[1, 3]], np.full((2, 3), 4))
    dense = mx.nd.array(np.zeros((2, 2)))
    interop.to_torch(dense).add_(1)
    np.testing.assert_array_equal(dense.asnumpy(), np.ones((2, 2)))


def test_from_torch_layouts(torch):
    values = torch.arange(6.0).reshape(3, 2).requires_grad_()
    strided = interop.from_torch(values)
    assert type(strided) is mx.nd.NDArray and strided._storage.ctypes.data == values.data_ptr()
    uncoalesced = torch.sparse_coo_tensor(torch.tensor([[3, 0, 3]]), torch.ones(3, 2), (5, 2),
                                          check_invariants=True)
    np.testing.assert_array_equal(interop.from_torch(uncoalesced).asnumpy(),
                                  [[1, 1], [0, 0], [0, 0], [2, 2], [0, 0]])
    matrix = torch.sparse_coo_tensor(torch.tensor([[0, 1], [2, 0]]), torch.tensor([1.0, 2.0]),
                                     (2, 3), check_invariants=True)
    converted = interop.from_torch(matrix)
    assert converted.stype == "csr"
    np.testing.assert_array_equal(converted.asnumpy(), [[0, 0, 1], [2, 0, 0]])


@pytest.mark.parametrize("make, message", [
    (lambda t: t.ones(2, dtype=t.bfloat16), "DLPack"),
    (lambda t: t.ones(2, dtype=t.bool), "dtype bool is not supported"),
    (lambda t: t.eye(2).to_sparse_csc(), "unsupported torch layout"),
    (lambda t: t.sparse_coo_tensor(t.zeros((3, 0), dtype=t.int64), t.zeros(0), (2, 2, 2),
                                   check_invariants=True), "3 sparse dimensions"),
    (lambda t: [1.0], "needs a torch.Tensor"),
])
def test_from_torch_refuses_what_it_cannot_represent(torch, make, message):
    with pytest.raises(SparsegenError, match=message):
        interop.from_torch(make(torch))


def test_creation_functions_take_torch_tensors_with_their_dtype(torch):
    rsp = mx.nd.sparse.row_sparse_array((torch.ones(2, 3, dtype=torch.float64),
                                         torch.tensor([0, 2])), shape=(4, 3))
    assert rsp.dtype == np.float64 and rsp.asnumpy().sum() == 6
    csr = mx.nd.sparse.csr_matrix((torch.tensor([1.0, 2.0]), torch.tensor([1, 0]),
                                   torch.tensor([0, 1, 2])), shape=(2, 2))
    np.testing.assert_array_equal(csr.asnumpy(), [[0, 1], [2, 0]])
    grad = torch.ones(2, 3, requires_grad=True)  # an autograd tensor shares data, not the graph
    assert mx.nd.sparse.row_sparse_array((grad, torch.tensor([0, 1]))).shape == (2, 3)


def test_without_torch_the_torch_functions_say_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    rsp = mx.nd.sparse.zeros("row_sparse", (2, 2))
    with pytest.raises(SparsegenError, match="PyTorch is not installed"):
        rsp.to_torch()
    with pytest.raises(SparsegenError, match="PyTorch is not installed"):
        interop.from_torch(np.zeros(2))


def test_device_tensors_are_refused_before_any_copy():
    class OnGpu:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be exported")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(SparsegenError, match=r"device \(2, 0\), not the CPU"):
        interop.from_pair(OnGpu(), np.array([0]))
