"""Property tests: storage round trips, retain and copy rules against numpy / scipy oracles."""

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st
from strategies import sparse_dense_arrays

import sparsegen as mx


def _nonzero_rows(x: np.ndarray) -> np.ndarray:
    return np.flatnonzero(x.reshape(x.shape[0], -1).any(axis=1)) if x.size else np.zeros(0, int)


@given(sparse_dense_arrays())
def test_dense_row_sparse_dense(x):
    rsp = mx.nd.array(x, dtype=x.dtype).tostype("row_sparse")
    rows = _nonzero_rows(x) if x.shape[0] else np.zeros(0, int)
    if x.size == 0:
        rows = np.zeros(0, int)
    assert rsp.stype == "row_sparse" and rsp.dtype == x.dtype.type and rsp.shape == x.shape
    np.testing.assert_array_equal(rsp.indices.asnumpy(), rows)
    np.testing.assert_array_equal(rsp.data.asnumpy(), x[rows])
    back = rsp.tostype("default")
    assert back.dtype == x.dtype.type
    np.testing.assert_array_equal(back.asnumpy(), x)


@given(sparse_dense_arrays(ndim=2))
def test_dense_csr_dense(x):
    csr = mx.nd.sparse.csr_matrix(x)
    oracle = scipy.sparse.csr_matrix(x.astype(np.float32) if x.dtype == np.float16 else x)
    assert csr.dtype == x.dtype.type and csr.shape == x.shape
    np.testing.assert_array_equal(csr.indptr.asnumpy(), oracle.indptr)
    np.testing.assert_array_equal(csr.indices.asnumpy(), oracle.indices)
    np.testing.assert_array_equal(csr.data.asnumpy(), oracle.data)
    np.testing.assert_array_equal(csr.tostype("default").asnumpy(), x)
    if x.dtype == np.float16:  # scipy.sparse has no float16
        with pytest.raises(mx.MXNetError, match="float16"):
            csr.asscipy()
    else:
        np.testing.assert_array_equal(csr.asscipy().toarray(), x)


@given(sparse_dense_arrays(ndim=2, max_rows=30), st.data())
def test_retain_matches_numpy(x, data):
    rsp = mx.nd.sparse.row_sparse_array(x)
    rows = x.shape[0]
    wanted = data.draw(st.lists(st.integers(0, max(rows - 1, 0)), max_size=rows if rows else 0))
    kept = mx.nd.sparse.retain(rsp, np.array(wanted, dtype=np.int64))
    ids = np.unique(np.array(wanted, dtype=np.int64))
    oracle = np.zeros_like(x)
    oracle[ids] = x[ids]
    assert kept.stype == "row_sparse" and kept.dtype == x.dtype.type
    np.testing.assert_array_equal(kept.indices.asnumpy(), ids)
    np.testing.assert_array_equal(kept.data.asnumpy(), x[ids])
    np.testing.assert_array_equal(kept.asnumpy(), oracle)



@given(sparse_dense_arrays(ndim=2, max_rows=30), st.data())
def test_retain_by_an_int64_array_matches_numpy(x, data):
    """Ids as an int64 NDArray, the kernel-checked path when they are sorted, unique and in
    range: ascending ids, any order, repeats, and ids out of range (which raise)."""
    rsp = mx.nd.sparse.row_sparse_array(x)
    rows = x.shape[0]
    wanted = data.draw(st.lists(st.integers(-1, rows), max_size=rows + 2)
                       | st.sets(st.integers(0, max(rows - 1, 0)), max_size=rows).map(sorted))
    ids = mx.nd.array(np.array(wanted, dtype=np.int64), dtype="int64")
    if any(not 0 <= w < rows for w in wanted):
        with pytest.raises(mx.MXNetError, match=rf"indices out of range \[0, {rows}\)"):
            mx.nd.sparse.retain(rsp, ids)
        return
    kept = mx.nd.sparse.retain(rsp, ids)
    unique = np.unique(np.array(wanted, dtype=np.int64))
    np.testing.assert_array_equal(kept.indices.asnumpy(), unique)
    np.testing.assert_array_equal(kept.data.asnumpy(), x[unique])
    assert not np.shares_memory(kept._storage.indices, ids._storage)

@given(sparse_dense_arrays(ndim=2, max_rows=30), st.data())
def test_retain_of_every_row_stored_matches_numpy(x, data):
    """retain from a row_sparse array storing every row (zero rows too, as a kvstore's
    weight), read by position, with ids repeated and in any order."""
    rows = x.shape[0]
    rsp = mx.nd.sparse.row_sparse_array((x, np.arange(rows)), shape=x.shape)
    wanted = data.draw(st.lists(st.integers(0, max(rows - 1, 0)),
                                max_size=2 * rows if rows else 0))
    kept = mx.nd.sparse.retain(rsp, np.array(wanted, dtype=np.int64))
    ids = np.unique(np.array(wanted, dtype=np.int64))
    np.testing.assert_array_equal(kept.indices.asnumpy(), ids)
    np.testing.assert_array_equal(kept.data.asnumpy(), x[ids])


def test_retain_of_few_ids_among_many_rows():
    """A few unsorted, repeated ids among many rows (the sorting path of the unique ids)."""
    x = np.arange(40000, dtype=np.float32).reshape(20000, 2)
    kept = mx.nd.sparse.retain(mx.nd.array(x).tostype("row_sparse"),
                               np.array([19999, 3, 3, 7000], dtype=np.int64))
    np.testing.assert_array_equal(kept.indices.asnumpy(), [3, 7000, 19999])
    np.testing.assert_array_equal(kept.data.asnumpy(), x[[3, 7000, 19999]])


@given(sparse_dense_arrays(ndim=2), st.sampled_from(["default", "row_sparse", "csr"]),
       st.sampled_from(["default", "row_sparse", "csr"]), st.sampled_from(["copyto", "slice"]))
def test_copy_rules(x, src_stype, dst_stype, how):
    src = mx.nd.array(x, dtype=x.dtype).tostype(src_stype)
    dst = mx.nd.sparse.zeros(dst_stype, x.shape, dtype=x.dtype)
    if {src_stype, dst_stype} == {"row_sparse", "csr"}:
        try:
            src.copyto(dst) if how == "copyto" else dst.__setitem__(slice(None), src)
        except mx.MXNetError as err:
            assert "cast_storage" in str(err) or "cannot assign" in str(err)
            assert dst.stype == dst_stype and not dst.asnumpy().any()  # unchanged
            return
        raise AssertionError("csr <-> row_sparse copies must raise, as in MXNet")
    if how == "copyto":
        assert src.copyto(dst) is dst
    else:
        dst[:] = src
    assert dst.stype == dst_stype and dst.dtype == x.dtype.type
    np.testing.assert_array_equal(dst.asnumpy(), x)
    copy = src.copy()
    assert copy is not src and copy.stype == src_stype
    np.testing.assert_array_equal(copy.asnumpy(), x)


@given(sparse_dense_arrays(ndim=2, dtypes=("float32", "float64")))
def test_copyto_casts_to_destination_dtype(x):
    dst = mx.nd.sparse.zeros("row_sparse", x.shape, dtype="float16")
    mx.nd.array(x, dtype=x.dtype).copyto(dst)
    assert dst.dtype == np.float16
    np.testing.assert_array_equal(dst.asnumpy(), x.astype(np.float16))


def test_huge_row_ids():
    big = 2**40
    rsp = mx.nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [5, big - 1]), shape=(big, 2))
    kept = mx.nd.sparse.retain(rsp, [0, big - 1, 7])
    np.testing.assert_array_equal(kept.indices.asnumpy(), [0, 7, big - 1])
    np.testing.assert_array_equal(kept.data.asnumpy(), [[0, 0], [0, 0], [3, 4]])


def test_empty_and_single_column_edges():
    for shape in [(0, 3), (4, 0), (0, 0), (5, 1)]:
        x = np.zeros(shape, np.float32)
        if shape == (5, 1):
            x[[1, 3]] = 2
        for stype in ("row_sparse", "csr"):
            s = mx.nd.array(x).tostype(stype)
            np.testing.assert_array_equal(s.asnumpy(), x)
    zero = mx.nd.sparse.row_sparse_array(([], []), shape=(0, 3))
    assert zero.shape == (0, 3) and zero.data.shape == (0, 3)
    kept = mx.nd.sparse.retain(mx.nd.sparse.zeros("row_sparse", (4, 3)), [1, 2])
    np.testing.assert_array_equal(kept.asnumpy(), np.zeros((4, 3)))


def test_nan_and_negative_zero_follow_mxnet():
    x = np.array([[-0.0, np.nan, 0.0], [0.0, 0.0, 0.0], [0.0, -0.0, 2.0]], np.float32)
    rsp = mx.nd.array(x).tostype("row_sparse")
    np.testing.assert_array_equal(rsp.indices.asnumpy(), [0, 2])  # nan is stored, -0.0 is not
    np.testing.assert_array_equal(rsp.asnumpy(), x)
    csr = mx.nd.array(x).tostype("csr")
    np.testing.assert_array_equal(csr.indices.asnumpy(), [1, 2])
    np.testing.assert_array_equal(csr.indptr.asnumpy(), [0, 1, 1, 2])
    np.testing.assert_array_equal(csr.asnumpy(), x)


@given(st.sampled_from(("float16", "float32", "float64")), st.integers(1, 40),
       st.integers(1, 37), st.integers(0, 2**32 - 1))
def test_dense_to_sparse_stores_nan_inf_and_not_negative_zero(dtype, rows, cols, seed):
    """tostype's non-zero test (one unordered compare, ``!(x == 0)``): nan and inf are stored,
    -0.0 and 0.0 are not, at any column of any row (the vector steps and the scalar tail),
    against numpy's ``x != 0`` (unordered: true for nan)."""
    rng = np.random.default_rng(seed)
    x = rng.choice(np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.5, -2.0], dtype),
                   size=(rows, cols), p=[0.4, 0.3, 0.06, 0.06, 0.06, 0.06, 0.06])
    x[rng.random(rows) < 0.5] = -0.0  # rows of only -0.0 and 0.0
    stored = x != 0  # numpy's != is unordered: nan != 0
    rsp = mx.nd.array(x, dtype=dtype).tostype("row_sparse")
    np.testing.assert_array_equal(rsp.indices.asnumpy(), np.flatnonzero(stored.any(axis=1)))
    np.testing.assert_array_equal(rsp.data.asnumpy(), x[stored.any(axis=1)])
    csr = mx.nd.array(x, dtype=dtype).tostype("csr")
    np.testing.assert_array_equal(csr.indptr.asnumpy(), np.r_[0, np.cumsum(stored.sum(axis=1))])
    np.testing.assert_array_equal(csr.indices.asnumpy(), np.nonzero(stored)[1])
    np.testing.assert_array_equal(csr.data.asnumpy(), x[stored])
