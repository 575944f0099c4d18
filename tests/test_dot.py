"""dot: values against numpy, storage types and index sets against MXNet 1.9.1's rules, errors.

Expected storage types were read off real MXNet 1.9.1 on CPU for every (lhs, rhs, transpose_a,
transpose_b, forward_stype) combination (see docs/operators.md).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from strategies import MERGE_SIZES

STYPES = ("default", "csr", "row_sparse")
HUGE = 2**40

# (lhs, rhs, transpose_a, transpose_b) -> output stype without forward_stype (MXNet on CPU);
# every other combination gives default.
SPARSE_OUTPUT = {
    ("csr", "default", True, False): "row_sparse",
    ("csr", "row_sparse", True, False): "row_sparse",
    ("default", "csr", False, False): "csr",
    ("default", "csr", False, True): "csr",
}
# combinations with a sparse kernel (no StorageFallbackWarning), forward_stype None
KERNELS = {
    ("csr", "default", False, False), ("csr", "default", True, False),
    ("csr", "row_sparse", False, False), ("csr", "row_sparse", True, False),
    ("default", "csr", False, False), ("default", "csr", False, True),
    ("default", "default", False, False), ("default", "default", True, False),
    ("default", "default", False, True), ("default", "default", True, True),
}


def _values(rng, shape, dtype):
    """Random small values; floats are multiples of 1/8 (exact sums in float32 for small sizes)."""
    values = rng.integers(-8, 9, size=shape)
    return (values / 8).astype(dtype) if np.dtype(dtype).kind == "f" else values.astype(dtype)


def _make(rng, dense_shape, stype, dtype, density, stored_zero_rows):
    """(NDArray of ``stype``, its dense values, its structure: csr entry mask or rsp row ids)."""
    values = _values(rng, dense_shape, dtype)
    if stype == "default":
        return mx.nd.array(values, dtype=dtype), values, None
    rows = dense_shape[0]
    if stype == "csr":
        mask = rng.random(dense_shape) < density
        # explicit zeros: stored entries whose value is 0
        dense = np.where(mask, values, 0).astype(dtype)
        indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))])
        array = mx.nd.sparse.csr_matrix((dense[mask], np.nonzero(mask)[1], indptr),
                                        shape=dense_shape, dtype=dtype)
        return array, dense, mask
    stored = np.flatnonzero(rng.random(rows) < density)
    data = values[stored]
    if stored_zero_rows and stored.size:
        data[0] = 0
    dense = np.zeros(dense_shape, dtype)
    dense[stored] = data
    array = mx.nd.sparse.row_sparse_array((data, stored), shape=dense_shape, dtype=dtype)
    return array, dense, stored


def _op(x, transpose):
    return x.T if transpose else x


def _oracle(a, b, ta, tb, dtype):
    """numpy product; floats in float64 then cast (our float sums may differ in order only)."""
    compute = np.float64 if np.dtype(dtype).kind == "f" else dtype
    return (_op(a.astype(compute), ta) @ _op(b.astype(compute), tb)).astype(dtype)


def _assert_close(actual, expected, dtype):
    if np.dtype(dtype).kind == "f":
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("lhs_stype", STYPES)
@pytest.mark.parametrize("rhs_stype", STYPES)
@given(
    forward=st.sampled_from([None, None, None, "default", "row_sparse", "csr"]),
    dtype=st.sampled_from(["float32", "float32", "float64", "int64", "int32", "int8"]),
    m=st.integers(0, 9),
    k=st.integers(0, 9),
    n=st.sampled_from([0, 1, 1, 3, 7, 17, 40]),
    density=st.sampled_from([0.0, 0.3, 1.0]),
    stored_zero_rows=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_dot_matches_numpy(lhs_stype, rhs_stype, ta, tb, forward, dtype, m, k, n, density,
                           stored_zero_rows, seed):
    rng = np.random.default_rng(seed)
    lhs, a, a_struct = _make(rng, (k, m) if ta else (m, k), lhs_stype, dtype, density,
                             stored_zero_rows)
    rhs, b, b_struct = _make(rng, (n, k) if tb else (k, n), rhs_stype, dtype, density,
                             stored_zero_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mx.StorageFallbackWarning)
        result = mx.nd.dot(lhs, rhs, transpose_a=ta, transpose_b=tb, forward_stype=forward)
    expected = _oracle(a, b, ta, tb, dtype)
    stype = forward or SPARSE_OUTPUT.get((lhs_stype, rhs_stype, ta, tb), "default")
    assert result.stype == stype
    assert result.dtype == np.dtype(dtype).type
    assert result.shape == (m, n)
    _assert_close(result.asnumpy(), expected, dtype)
    if forward is not None:
        return
    if stype == "row_sparse":  # csrᵀ·x: the columns holding an entry that meets a stored rhs row
        meets = a_struct.copy()
        if rhs_stype == "row_sparse":
            meets &= np.isin(np.arange(k), b_struct)[:, None]
        np.testing.assert_array_equal(result.indices.asnumpy(), np.flatnonzero(meets.any(axis=0)))
    elif stype == "csr" and not tb:  # dense·csr: every row stores every column of the csr
        columns = np.flatnonzero(b_struct.any(axis=0))
        np.testing.assert_array_equal(result.indptr.asnumpy(), np.arange(m + 1) * columns.size)
        np.testing.assert_array_equal(result.indices.asnumpy(), np.tile(columns, m))
    elif stype == "csr":  # dense·csrᵀ: the non-zeros of the product (MXNet casts its result)
        np.testing.assert_array_equal(result.indices.asnumpy(), np.nonzero(expected)[1])


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("lhs_stype", STYPES)
@pytest.mark.parametrize("rhs_stype", STYPES)
def test_fallback_warns_exactly_without_kernel(lhs_stype, rhs_stype, ta, tb, fresh_warnings):
    lhs = mx.nd.ones((3, 3)).tostype(lhs_stype)
    rhs = mx.nd.ones((3, 3)).tostype(rhs_stype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = mx.nd.dot(lhs, rhs, transpose_a=ta, transpose_b=tb)
    fell_back = [w for w in caught if issubclass(w.category, mx.StorageFallbackWarning)]
    assert len(fell_back) == (0 if (lhs_stype, rhs_stype, ta, tb) in KERNELS else 1)
    np.testing.assert_array_equal(result.asnumpy(), np.full((3, 3), 3, np.float32))


@given(
    transpose=st.booleans(),
    rows=st.integers(0, 6),
    d=st.integers(1, 5),
    stored=st.lists(st.integers(0, HUGE - 1), max_size=8, unique=True),
    extra=st.lists(st.integers(0, HUGE - 1), max_size=8),
    seed=st.integers(0, 2**32 - 1),
)
def test_huge_ids(transpose, rows, d, stored, extra, seed):
    """csr with 2**40 columns: csr·rsp looks rows up among huge ids; csrᵀ·dense and dense·csr
    sort huge column ids (four radix passes). Oracle: the same product on the compacted ids."""
    rng = np.random.default_rng(seed)
    stored = np.sort(np.array(stored, np.int64))
    pool = np.unique(np.concatenate([stored, np.array(extra, np.int64)]))
    picks = [np.unique(rng.choice(pool, size=rng.integers(0, pool.size + 1))) if pool.size
             else np.zeros(0, np.int64) for _ in range(rows)]
    indptr = np.concatenate([[0], np.cumsum([p.size for p in picks])]).astype(np.int64)
    cols = np.concatenate(picks).astype(np.int64) if picks else np.zeros(0, np.int64)
    data = _values(rng, cols.size, "float64")
    csr = mx.nd.sparse.csr_matrix((data, cols, indptr), shape=(rows, HUGE), dtype="float64")
    compact = np.zeros((rows, pool.size))
    compact[np.repeat(np.arange(rows), np.diff(indptr)), np.searchsorted(pool, cols)] = data
    if transpose:
        b = _values(rng, (rows, d), "float64")
        result = mx.nd.dot(csr, mx.nd.array(b, dtype="float64"), transpose_a=True)
        used = np.flatnonzero(np.isin(pool, cols))
        assert result.stype == "row_sparse" and result.shape == (HUGE, d)
        np.testing.assert_array_equal(result.indices.asnumpy(), pool[used])
        np.testing.assert_allclose(result.data.asnumpy(), (compact.T @ b)[used], atol=1e-12)
        lhs = _values(rng, (d, rows), "float64")
        product = mx.nd.dot(mx.nd.array(lhs, dtype="float64"), csr)
        assert product.stype == "csr" and product.shape == (d, HUGE)
        np.testing.assert_array_equal(product.indices.asnumpy(), np.tile(pool[used], d))
        np.testing.assert_allclose(product.data.asnumpy().reshape(d, -1), (lhs @ compact)[:, used],
                                   atol=1e-12)
    else:
        rdata = _values(rng, (stored.size, d), "float64")
        rsp = mx.nd.sparse.row_sparse_array((rdata, stored), shape=(HUGE, d), dtype="float64")
        dense_rhs = np.zeros((pool.size, d))
        dense_rhs[np.searchsorted(pool, stored)] = rdata
        result = mx.nd.dot(csr, rsp)
        assert result.stype == "default" and result.shape == (rows, d)
        np.testing.assert_allclose(result.asnumpy(), compact @ dense_rhs, atol=1e-12)


@given(columns=st.sampled_from(MERGE_SIZES), stored=st.sampled_from(MERGE_SIZES),
       shared=st.floats(0, 1), rows=st.integers(1, 9), d=st.sampled_from((1, 16)),
       seed=st.integers(0, 2**31))
def test_csr_row_sparse_locates_rows_across_merge_task_edges(columns, stored, shared, rows, d,
                                                             seed):
    """csr · rsp finds each entry's rhs row by one merge walk of the csr's distinct columns and
    the stored ids, split into tasks of MERGE_STEPS steps: lists of 0, 1, a task's steps - 1 /
    + 0 / + 1 and several tasks sharing a random fraction of ids (matches on every task edge),
    several entries per column, repeated products on one csr (the column sort reused), against
    numpy on dense arrays."""
    rng = np.random.default_rng(seed)
    universe = 2 * (columns + stored) + 1
    used = np.sort(rng.choice(universe, size=columns, replace=False))
    both = used[rng.random(columns) < shared]
    rest = np.setdiff1d(np.arange(universe), used)
    ids = np.union1d(both, rng.choice(rest, size=max(0, stored - both.size), replace=False))
    row_of = rng.integers(0, rows, size=2 * columns)  # every used column once, some twice
    col_of = np.concatenate([used, rng.choice(used, size=columns) if columns else used])
    dense = np.zeros((rows, universe))
    np.add.at(dense, (row_of, col_of), rng.integers(1, 5, size=row_of.size).astype(float))
    structure = scipy.sparse.csr_matrix(dense)
    csr = mx.nd.sparse.csr_matrix((structure.data, structure.indices, structure.indptr),
                                  shape=dense.shape, dtype="float64")
    rhs_rows = rng.integers(-3, 4, size=(ids.size, d)).astype(float)
    rhs = np.zeros((universe, d))
    rhs[ids] = rhs_rows
    rsp = mx.nd.sparse.row_sparse_array((rhs_rows, ids), shape=rhs.shape, dtype="float64")
    for _ in range(2):
        np.testing.assert_array_equal(mx.nd.dot(csr, rsp).asnumpy(), dense @ rhs)


@given(columns=st.sampled_from([1, 255, 256, 257, 2047, 2048, 2049, 5000, 65537, 10**6, 2**33]),
       rows=st.integers(1, 60), per_row=st.integers(0, 40), seed=st.integers(0, 2**32 - 1))
def test_transposed_product_many_entries(columns, rows, per_row, seed):
    """csrᵀ·dense with many entries per column and column counts around radix digit edges."""
    rng = np.random.default_rng(seed)
    picks = [np.unique(rng.integers(0, columns, size=per_row)) for _ in range(rows)]
    indptr = np.concatenate([[0], np.cumsum([p.size for p in picks])]).astype(np.int64)
    cols = np.concatenate(picks).astype(np.int64)
    data = _values(rng, cols.size, "float32")
    csr = mx.nd.sparse.csr_matrix((data, cols, indptr), shape=(rows, columns))
    b = _values(rng, (rows, 19), "float32")
    result = mx.nd.sparse.dot(csr, mx.nd.array(b), transpose_a=True)
    used = np.unique(cols)
    rows_of = np.repeat(np.arange(rows), np.diff(indptr))
    expected = np.zeros((used.size, 19))
    np.add.at(expected, np.searchsorted(used, cols), data[:, None] * b[rows_of].astype(np.float64))
    np.testing.assert_array_equal(result.indices.asnumpy(), used)
    np.testing.assert_allclose(result.data.asnumpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("columns", [3000, 2**33])
def test_sort_many_entries(columns):
    """60,000 entries over 3,000 or 2**33 columns (two or five radix passes)."""
    rng = np.random.default_rng(columns % 1000)
    rows, per_row = 3000, 20
    cols = np.sort(np.stack([rng.choice(columns, per_row, replace=False) for _ in range(rows)]),
                   axis=1).ravel().astype(np.int64)
    indptr = np.arange(rows + 1, dtype=np.int64) * per_row
    data = _values(rng, cols.size, "float64")
    csr = mx.nd.sparse.csr_matrix((data, cols, indptr), shape=(rows, columns), dtype="float64")
    used, position = np.unique(cols, return_inverse=True)
    compact = np.zeros((rows, used.size))
    compact[np.repeat(np.arange(rows), per_row), position] = data
    b = _values(rng, (rows, 3), "float64")
    result = mx.nd.dot(csr, mx.nd.array(b, dtype="float64"), transpose_a=True)
    np.testing.assert_array_equal(result.indices.asnumpy(), used)
    np.testing.assert_allclose(result.data.asnumpy(), compact.T @ b, atol=1e-12)
    lhs = _values(rng, (2, rows), "float64")
    product = mx.nd.dot(mx.nd.array(lhs, dtype="float64"), csr)
    np.testing.assert_array_equal(product.indices.asnumpy(), np.tile(used, 2))
    np.testing.assert_allclose(product.data.asnumpy().reshape(2, -1), lhs @ compact, atol=1e-12)


def test_tutorial_examples():
    x = mx.nd.array([[1, 0]])
    w = mx.nd.array([[3, 4, 5], [6, 7, 8]])
    y = mx.nd.dot(x, w)
    np.testing.assert_array_equal(y.asnumpy(), [[3, 4, 5]])
    grad_w = mx.nd.dot(x, mx.nd.ones_like(y), transpose_a=True)
    assert grad_w.stype == "default"
    np.testing.assert_array_equal(grad_w.asnumpy(), [[1, 1, 1], [0, 0, 0]])
    lhs = mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
    transpose_dot = mx.nd.sparse.dot(lhs, mx.nd.ones((3, 2)), transpose_a=True)
    assert transpose_dot.stype == "row_sparse" and transpose_dot.shape == (5, 2)
    np.testing.assert_array_equal(transpose_dot.indices.asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(transpose_dot.asnumpy(), [[7, 7], [9, 9], [8, 8], [0, 0], [0, 0]])


def test_mxnet_reference_values():
    """Outputs recorded from MXNet 1.9.1: dense·csr stores every csr column in every row."""
    a = mx.nd.array([[1, 0, 2], [0, 0, 0], [3, 0, 0]])
    b = mx.nd.sparse.csr_matrix(np.array([[0, 1, 0, 0], [0, 0, 0, 0], [2, 0, 0, 3]], np.float32))
    r = mx.nd.dot(a, b)
    assert r.stype == "csr"
    np.testing.assert_array_equal(r.indptr.asnumpy(), [0, 3, 6, 9])
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 1, 3] * 3)
    np.testing.assert_array_equal(r.data.asnumpy(), [4, 1, 6, 0, 0, 0, 0, 3, 0])
    explicit = mx.nd.sparse.csr_matrix(([0.0, 1.0], [1, 3], [0, 1, 2]), shape=(2, 5))
    r = mx.nd.dot(explicit, mx.nd.ones((2, 3)), transpose_a=True)
    np.testing.assert_array_equal(r.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(r.data.asnumpy(), [[0, 0, 0], [1, 1, 1]])
    c = mx.nd.sparse.csr_matrix(np.array([[1, 0, 2, 0], [0, 3, 0, 0], [0, 0, 0, 4]], np.float32))
    rsp = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(3, 2))
    r = mx.nd.dot(c, rsp, transpose_a=True)
    np.testing.assert_array_equal(r.indices.asnumpy(), [1])
    np.testing.assert_array_equal(r.data.asnumpy(), [[3, 3]])
    r = mx.nd.dot(c, mx.nd.sparse.zeros("row_sparse", (3, 2)), transpose_a=True)
    assert r.stype == "row_sparse" and r.indices.shape == (0,)


@pytest.mark.parametrize("shape", [(0, 4, 3), (3, 0, 2), (2, 4, 0), (0, 0, 0)])
@pytest.mark.parametrize("lhs_stype, rhs_stype, ta, tb", [
    ("csr", "default", False, False), ("csr", "default", True, False),
    ("csr", "row_sparse", False, False), ("csr", "row_sparse", True, False),
    ("default", "csr", False, False), ("default", "csr", False, True),
    ("default", "default", True, True),
])
def test_empty(lhs_stype, rhs_stype, ta, tb, shape):
    m, k, n = shape
    lhs = mx.nd.sparse.zeros(lhs_stype, (k, m) if ta else (m, k))
    rhs = mx.nd.sparse.zeros(rhs_stype, (n, k) if tb else (k, n))
    result = mx.nd.dot(lhs, rhs, transpose_a=ta, transpose_b=tb)
    assert result.shape == (m, n)
    np.testing.assert_array_equal(result.asnumpy(), np.zeros((m, n), np.float32))


def test_dense_any_rank():
    rng = np.random.default_rng(1)
    x, y = rng.random((2, 3, 4)), rng.random((4, 5))
    r = mx.nd.dot(mx.nd.array(x, dtype="float64"), mx.nd.array(y, dtype="float64"))
    np.testing.assert_allclose(r.asnumpy(), np.tensordot(x, y, 1))
    x2, y3 = rng.random((4, 3, 2)), rng.random((5, 2, 4))
    r = mx.nd.dot(mx.nd.array(x2), mx.nd.array(y), transpose_a=True)
    assert r.shape == (3, 2, 5)  # MXNet: lhs reshaped to (4, 6) and transposed
    np.testing.assert_allclose(r.asnumpy(), (x2.reshape(4, 6).T @ y).reshape(3, 2, 5), rtol=1e-5)
    r = mx.nd.dot(mx.nd.array(rng.random((3, 4))), mx.nd.array(y3), transpose_b=True)
    assert r.shape == (3, 5, 2)
    v = mx.nd.dot(mx.nd.array([1, 2, 3]), mx.nd.array([4, 5, 6]))
    assert v.shape == (1,) and v.asnumpy()[0] == 32
    assert mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.array([4, 5, 6])).shape == (2,)


def test_out_keeps_its_storage_type():
    lhs = mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
    out = mx.nd.zeros((5, 2))
    assert mx.nd.dot(lhs, mx.nd.ones((3, 2)), transpose_a=True, out=out) is out
    assert out.stype == "default"
    np.testing.assert_array_equal(out.asnumpy(), [[7, 7], [9, 9], [8, 8], [0, 0], [0, 0]])
    out = mx.nd.sparse.zeros("row_sparse", (3, 2))
    mx.nd.dot(lhs, mx.nd.ones((5, 2)), out=out)
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.asnumpy(), [[15, 15], [0, 0], [9, 9]])


def test_errors():
    csr = mx.nd.sparse.csr_matrix(np.eye(3, 4, dtype=np.float32))
    with pytest.raises(mx.MXNetError, match=r"\(2, 3\).*\(4, 5\)"):
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)))
    with pytest.raises(mx.MXNetError, match=r"\(3, 4\).*\(3, 2\)"):
        mx.nd.dot(csr, mx.nd.ones((3, 2)))
    with pytest.raises(mx.MXNetError, match="float32 and float64"):
        mx.nd.dot(csr, mx.nd.ones((4, 2), dtype="float64"))
    with pytest.raises(mx.MXNetError, match="float16"):
        mx.nd.dot(mx.nd.ones((2, 3), dtype="float16"), mx.nd.ones((3, 2), dtype="float16"))
    with pytest.raises(mx.MXNetError, match="forward_stype"):
        mx.nd.dot(csr, mx.nd.ones((4, 2)), forward_stype="dense")
    with pytest.raises(mx.MXNetError, match="rhs must be an NDArray"):
        mx.nd.dot(csr, np.ones((4, 2)))
    with pytest.raises(mx.MXNetError, match="cannot transpose vectors"):
        mx.nd.dot(mx.nd.ones((3,)), mx.nd.ones((3,)), transpose_a=True)
    with pytest.raises(mx.MXNetError, match="2-D"):
        mx.nd.dot(csr, mx.nd.ones((4, 2, 2)))
    out = mx.nd.zeros((2, 2))
    with pytest.raises(mx.MXNetError, match="shape"):
        mx.nd.dot(csr, mx.nd.ones((4, 3)), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((2, 2)))  # unchanged


def test_sparse_namespace_exports_dot():
    assert mx.nd.sparse.dot is mx.nd.dot and "dot" in mx.nd.sparse.__all__


def test_csr_t_dot_reuses_its_column_sort_only_for_the_same_structure():
    """csrᵀ · g keeps the column sort of a csr's index array for the next product with it (and
    with square(x), which shares it): every result matches scipy, also for new csr arrays
    made one after another (whose index arrays may take the freed ones' ids)."""
    rng = np.random.default_rng(11)
    for k in range(12):
        x = scipy.sparse.random(20, 30, density=0.1 + 0.05 * (k % 3), format="csr",
                                random_state=k, dtype=np.float32)
        g1 = rng.normal(size=(20, 1 + k % 4)).astype(np.float32)
        g2 = rng.normal(size=(20, 3)).astype(np.float32)
        xs = mx.nd.sparse.csr_matrix(x)
        first = mx.nd.sparse.dot(xs, mx.nd.array(g1), transpose_a=True)
        second = mx.nd.sparse.dot(mx.nd.square(xs), mx.nd.array(g2), transpose_a=True)
        assert first.stype == second.stype == "row_sparse"
        np.testing.assert_allclose(first.asnumpy(), x.T @ g1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(second.asnumpy(), x.multiply(x).T @ g2, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(first.indices.asnumpy(), np.unique(x.indices))
        assert not np.shares_memory(first._storage.indices, second._storage.indices)
