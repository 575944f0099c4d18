"""A csr whose column ids are out of order within a row (as MXNet and scipy accept them) is
sorted at construction on the generated ``nn_sort`` kernel; numpy's lexsort and scipy are the
oracles."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.interop import from_torch

DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")


@st.composite
def shuffled_csr(draw):
    """(data, indices, indptr, shape): rows of distinct columns, each row's order shuffled."""
    rows = draw(st.integers(0, 12))
    cols = draw(st.sampled_from((1, 3, 17, 2**40)))  # one column ... huge column ids
    dtype = draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    counts = [draw(st.integers(0, min(cols, 40))) for _ in range(rows)]
    ids = [rng.choice(cols, size=c, replace=False) if cols < 2**20
           else np.unique(rng.integers(0, cols, size=c))[::-1] for c in counts]
    ids = [rng.permutation(r) for r in ids]
    indices = np.concatenate([np.zeros(0, np.int64), *ids]).astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum([r.size for r in ids])]).astype(np.int64)
    data = rng.integers(-50, 50, indices.size).astype(dtype)
    if dtype.startswith("float") and data.size:  # nan, inf and -0.0 travel with their ids
        data[rng.integers(0, data.size)] = rng.choice([np.nan, np.inf, -0.0])
    return data, indices, indptr, (rows, cols)


def _oracle(data, indices, indptr):
    """numpy's stable lexicographic order of (row, column): the sorted ids and values."""
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    order = np.lexsort((indices, rows))
    return indices[order], data[order]


@settings(max_examples=60, deadline=None)
@given(shuffled_csr())
def test_unsorted_columns_are_sorted_with_their_values(case):
    data, indices, indptr, shape = case
    got = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=shape)
    want_indices, want_data = _oracle(data, indices, indptr)
    np.testing.assert_array_equal(got.indices.asnumpy(), want_indices)
    np.testing.assert_array_equal(got.indptr.asnumpy(), indptr)
    np.testing.assert_array_equal(got.data.asnumpy(), want_data)  # nan == nan here
    assert np.signbit(got.data.asnumpy()).tolist() == np.signbit(want_data).tolist()
    assert got.dtype == np.dtype(data.dtype) and got.shape == shape
    if shape[1] < 100:  # scipy reads unsorted rows as they are
        dense = scipy.sparse.csr_matrix((data.astype("float64"), indices, indptr), shape=shape)
        np.testing.assert_array_equal(got.asnumpy().astype("float64"), dense.toarray())

def test_sorting_leaves_the_callers_arrays_alone():
    data, indices, indptr = np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1]), np.array([0, 2, 3])
    got = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(2, 3))
    np.testing.assert_array_equal(got.asnumpy(), [[2, 0, 1], [0, 3, 0]])
    assert indices.tolist() == [2, 0, 1] and data.tolist() == [1.0, 2.0, 3.0]


def test_a_repeated_column_is_refused_naming_the_row_and_column():
    with pytest.raises(mx.MXNetError, match="row 1 has duplicate column 4"):
        mx.nd.sparse.csr_matrix(([1.0, 2, 3, 4], [0, 4, 1, 4], [0, 1, 4]), shape=(2, 5))


def test_the_kernel_function_checks_what_a_user_passes():
    from sparsegen import kernels

    sorter = kernels.get("nn_sort", "float32")
    ids, ptr, data = np.array([1, 0], np.int64), np.array([0, 3], np.int64), np.ones(2, np.float32)
    outs = [np.empty(2, np.int64), np.empty(2, np.float32), np.empty(2, np.int64),
            np.empty(2, np.int64)]
    with pytest.raises(mx.MXNetError, match="indptr"):
        sorter.csr_rows(ids, ptr, data, *outs)


def test_torch_csr_with_unsorted_columns_converts_sorted():
    torch = pytest.importorskip("torch")
    t = torch.sparse_csr_tensor(torch.tensor([0, 2, 3]), torch.tensor([2, 0, 1]),
                                torch.tensor([1.0, 2.0, 3.0]), size=(2, 3))
    got = from_torch(t)
    assert got.indices.asnumpy().tolist() == [0, 2, 1]
    np.testing.assert_array_equal(got.asnumpy(), t.to_dense().numpy())

