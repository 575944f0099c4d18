"""The blocked prefix sums, ``unique`` and the blocked radix sort at sizes around their chunk edges.

Every op whose index phase scans is checked against numpy / scipy with row or entry counts one
below, at and one above ``SCAN_CHUNK`` and over several chunks, in serial and parallel builds.
"""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import tvm_runtime as runtime
from sparsegen.formats import CSR, SCAN_CHUNK, SORT_CHUNK, radix_passes
from sparsegen.ops.radix import sort_by_column

EDGES = (SCAN_CHUNK - 1, SCAN_CHUNK, SCAN_CHUNK + 1, 2 * SCAN_CHUNK, 3 * SCAN_CHUNK + 5)
"""Counts that straddle chunk boundaries: the last chunk short, full, of one element; several."""


def _matrix(rng: np.random.Generator, rows: int, cols: int, row_density: float) -> np.ndarray:
    """float32 values in rows kept with probability ``row_density``, half their elements zero."""
    x = rng.integers(1, 9, size=(rows, cols)).astype(np.float32)
    x[rng.random((rows, cols)) < 0.5] = 0
    x[rng.random(rows) >= row_density] = 0
    return x


@given(rows=st.sampled_from(EDGES), cols=st.sampled_from((1, 5)),
       row_density=st.sampled_from((0.0, 0.01, 0.5, 1.0)), seed=st.integers(0, 2**32 - 1))
def test_cast_scans(rows, cols, row_density, seed):
    x = _matrix(np.random.default_rng(seed), rows, cols, row_density)
    rsp = mx.nd.array(x).tostype("row_sparse")
    kept = np.flatnonzero(x.any(axis=1))
    np.testing.assert_array_equal(rsp.indices.asnumpy(), kept)
    np.testing.assert_array_equal(rsp.data.asnumpy(), x[kept])
    csr = mx.nd.sparse.csr_matrix(x)
    oracle = scipy.sparse.csr_matrix(x)
    np.testing.assert_array_equal(csr.indptr.asnumpy(), oracle.indptr)
    np.testing.assert_array_equal(csr.indices.asnumpy(), oracle.indices)
    np.testing.assert_array_equal(csr.data.asnumpy(), oracle.data)


@given(rows=st.sampled_from(EDGES), cols=st.sampled_from((1, 7)),
       densities=st.tuples(*[st.sampled_from((0.0, 0.3, 1.0))] * 2),
       seed=st.integers(0, 2**32 - 1))
def test_csr_count_scans(rows, cols, densities, seed):
    rng = np.random.default_rng(seed)
    a, b = (_matrix(rng, rows, cols, d) for d in densities)
    ca, cb = mx.nd.sparse.csr_matrix(a), mx.nd.sparse.csr_matrix(b)
    for result, expected, stored in ((ca + cb, a + b, (a != 0) | (b != 0)),
                                     (ca * cb, a * b, (a != 0) & (b != 0))):
        pattern = scipy.sparse.csr_matrix(stored)
        assert result.stype == "csr"
        np.testing.assert_array_equal(result.indptr.asnumpy(), pattern.indptr)
        np.testing.assert_array_equal(result.indices.asnumpy(), pattern.indices)
        np.testing.assert_array_equal(result.asnumpy(), expected)


def _csr_with_entries(rng: np.random.Generator, entries: int,
                      columns: int) -> scipy.sparse.csr_matrix:
    """A csr matrix of ``entries`` entries, up to 8 a row, over ``columns`` columns."""
    rows = max(1, -(-entries // min(columns, 8)))
    cells = np.sort(rng.choice(rows * columns, size=entries, replace=False))
    data = rng.integers(1, 9, size=entries).astype(np.float32)
    return scipy.sparse.csr_matrix((data, (cells // columns, cells % columns)),
                                   shape=(rows, columns))


def _check_products(csr: scipy.sparse.csr_matrix, ctx: mx.Context,
                    rng: np.random.Generator) -> None:
    """csrᵀ·dense -> row_sparse and dense·csr -> csr against scipy, both on ``ctx``."""
    lhs_csr = mx.nd.sparse.csr_matrix((csr.data, csr.indices.astype(np.int64),
                                       csr.indptr.astype(np.int64)), shape=csr.shape, ctx=ctx)
    used = np.unique(csr.indices)
    rhs = rng.integers(1, 5, size=(csr.shape[0], 6)).astype(np.float32)
    result = mx.nd.dot(lhs_csr, mx.nd.array(rhs, ctx=ctx), transpose_a=True)
    np.testing.assert_array_equal(result.indices.asnumpy(), used)
    np.testing.assert_array_equal(result.data.asnumpy(), (csr.T @ rhs)[used])
    lhs = rng.integers(1, 5, size=(2, csr.shape[0])).astype(np.float32)
    product = mx.nd.dot(mx.nd.array(lhs, ctx=ctx), lhs_csr)
    np.testing.assert_array_equal(product.indices.asnumpy(), np.tile(used, 2))
    np.testing.assert_array_equal(product.data.asnumpy(), (csr.T @ lhs.T).T[:, used].ravel())


@given(entries=st.sampled_from(EDGES), columns=st.sampled_from((1, 3, 40, 10**6)),
       seed=st.integers(0, 2**32 - 1))
def test_unique_scans(entries, columns, seed):
    """csrᵀ·dense and dense·csr -> csr: runs of one column across chunk edges (few columns) or
    one entry per column (many)."""
    rng = np.random.default_rng(seed)
    _check_products(_csr_with_entries(rng, entries, columns), mx.cpu(), rng)


@pytest.mark.parametrize("entries", EDGES)
def test_unique_scan_on_an_emulated_gpu(entries, monkeypatch):
    """The same through the GPU code path (scratch allocated per buffer on the device)."""
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    rng = np.random.default_rng(entries)
    _check_products(_csr_with_entries(rng, entries, 200), mx.gpu(0), rng)


SMALL_CHUNK = 64
"""The sort chunk of the templates built below: chunk edges within a few hundred entries."""

SORT_EDGES = (SMALL_CHUNK - 1, SMALL_CHUNK, SMALL_CHUNK + 1, 5 * SMALL_CHUNK + 3)
"""Entry counts around the sort's chunk edges: a short chunk, a full one, one of one entry;
several."""

SORT_COLUMNS = (1, 10, 5000, 3 * 10**6)
"""Column counts needing no radix pass (the first lists the rows), 1, 2 and 3 passes of at most
``MAX_RADIX_BITS`` = 10 bits."""


@pytest.fixture(scope="module")
def small_chunk_sorter():
    """The index phases built at ``SMALL_CHUNK`` entries per chunk, parallel CPU schedule."""
    import tvm

    from sparsegen.schedules import cpu
    from sparsegen.target import host_cpu
    from sparsegen.templates import radix

    phases = radix.phases("sort_dense", "gather_rsp", "sort_pass", "unique", "rank",
                          sort_chunk=SMALL_CHUNK)
    funcs = {name: func.with_attr("global_symbol", name) for name, func in phases.items()}
    scheduled = cpu.ROWS.apply(tvm.IRModule(funcs), {"parallel": True, "chunk": 1, "lanes": 16})
    target = host_cpu().to_tvm()
    with target:
        built = tvm.compile(scheduled, target=target)
    return SimpleNamespace(**{name: runtime.wrap(built[name]) for name in funcs})


@given(entries=st.sampled_from(SORT_EDGES), columns=st.sampled_from(SORT_COLUMNS),
       stored=st.sampled_from((None, 0.0, 0.5, 1.0)), seed=st.integers(0, 2**32 - 1))
def test_radix_sort_chunks(small_chunk_sorter, entries, columns, stored, seed):
    """The blocked radix sort is the stable sort by column of the entries of every row
    (``stored`` None) or of the rows a row_sparse rhs stores (that fraction of them)."""
    rng = np.random.default_rng(seed)
    matrix = _csr_with_entries(rng, entries, columns)
    csr = CSR(matrix.data, matrix.indices.astype(np.int64), matrix.indptr.astype(np.int64),
              matrix.shape)
    rows = np.arange(matrix.shape[0])
    ids = None if stored is None else rows[rng.random(rows.size) < stored]
    rows_of = np.repeat(rows, np.diff(csr.indptr))
    positions = np.flatnonzero(np.isin(rows_of, rows if ids is None else ids))
    src, erow, distinct, starts = sort_by_column(small_chunk_sorter, csr, ids, positions.size,
                                                 SMALL_CHUNK)
    order = positions[np.argsort(csr.indices[positions], kind="stable")]
    np.testing.assert_array_equal(src, order)
    expected_rows = rows_of if ids is None else np.searchsorted(ids, rows_of)
    np.testing.assert_array_equal(erow[positions], expected_rows[positions])
    used, first = np.unique(csr.indices[order], return_index=True)
    np.testing.assert_array_equal(distinct, used)
    np.testing.assert_array_equal(starts, np.append(first, order.size))


@pytest.mark.parametrize("columns", SORT_COLUMNS)
@pytest.mark.parametrize("entries", (SORT_CHUNK - 1, SORT_CHUNK, SORT_CHUNK + 1,
                                     3 * SORT_CHUNK + 5))
def test_radix_sort_chunks_of_the_ops(entries, columns):
    """csrᵀ·dense and dense·csr -> csr with the built kernels' ``SORT_CHUNK`` edges."""
    rng = np.random.default_rng(entries + columns)
    _check_products(_csr_with_entries(rng, entries, columns), mx.cpu(), rng)


def test_radix_sort_on_an_emulated_gpu(monkeypatch):
    """Several sort chunks and three radix passes through the GPU code path."""
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    rng = np.random.default_rng(3)
    _check_products(_csr_with_entries(rng, 3 * SORT_CHUNK + 5, 3 * 10**6), mx.gpu(0), rng)


@pytest.mark.parametrize("bits, passes", [
    (0, []), (1, [(0, 1)]), (8, [(0, 8)]), (10, [(0, 10)]), (11, [(0, 6), (6, 5)]),
    (17, [(0, 9), (9, 8)]), (20, [(0, 10), (10, 10)]), (21, [(0, 7), (7, 7), (14, 7)]),
    (40, [(0, 10), (10, 10), (20, 10), (30, 10)]), (56, [(0, 10), (10, 10), (20, 9), (29, 9),
                                                        (38, 9), (47, 9)]),
])
def test_radix_passes_cover_the_bits_in_the_fewest_even_passes(bits, passes):
    assert radix_passes(bits) == passes


def test_radix_pass_checks_its_digit_width_and_table():
    """A pass's digit width and table size are checked by the kernel itself (``check=False``:
    no Python check runs first) before it writes."""
    from sparsegen import kernels as K

    sorter = K.get("dot_csrT", "float32", check=False)
    keys = np.array([5, 3, 7, 3], np.int64)
    for bits, size, message in ((11, 2**11 + 1, "bits .* must lie in \\[0, 10\\]"),
                                (-1, 1, "bits .* must lie"),
                                (4, 2**4, "table must have 2\\*\\*bits")):
        out = [np.full(4, -9, np.int64) for _ in range(2)]
        table = np.full(size, -9, np.int64)
        with pytest.raises(Exception, match=message):
            sorter.sort_pass(keys, keys, *out, table, 0, bits)
        assert (table == -9).all() and all((o == -9).all() for o in out)
