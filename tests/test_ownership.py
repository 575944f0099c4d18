"""Sparse arrays own their indices: no write by the caller to a source array, after
construction, reaches the kernels, and no sequence of public calls reads or writes out of bounds.

The issue's reproducers come first (those that crashed before run in a fresh interpreter, see
tests/isolated.py), then a hypothesis state machine that builds arrays through every
constructor and interop path, writes garbage into every source array it handed in, and checks
every later result against numpy / scipy oracles computed from copies taken at construction.
"""

import math

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, initialize, invariant, multiple,
                                 rule)

import isolated
import sparsegen as mx
from sparsegen import interop

try:
    import torch
except ImportError:  # an optional dependency: without it the sources are numpy and scipy only
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (optional) is not installed")

HOST_GPU = {"SPARSEGEN_GPU": "host"}


# -- the reproducers -----------------------------------------------------------------------
def test_row_ids_written_after_construction_do_not_reach_asnumpy():
    assert isolated.result("""
        import numpy as np
        import sparsegen as mx
        idx = np.array([0, 1], np.int64)
        a = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], idx), shape=(4, 2))
        idx[1] = 10**12
        result = a
    """) == [[1, 2], [3, 4], [0, 0], [0, 0]]


def test_csr_indptr_written_after_construction_does_not_reach_dot():
    assert isolated.result("""
        import numpy as np
        import sparsegen as mx
        indptr = np.array([0, 1, 2], np.int64)
        m = mx.nd.sparse.csr_matrix(([1., 2.], np.array([1, 0], np.int64), indptr), shape=(2, 2))
        indptr[1:] = 10**12
        result = mx.nd.dot(m, mx.nd.array([[1.], [10.]]))
    """) == [[10], [2]]


def test_csr_indices_written_after_construction_do_not_reach_a_cast():
    assert isolated.result("""
        import numpy as np
        import sparsegen as mx
        indices = np.array([1, 0], np.int64)
        m = mx.nd.sparse.csr_matrix(([1., 2.], indices, [0, 1, 2]), shape=(2, 2))
        indices[:] = 10**12
        result = m.tostype("default")
    """) == [[0, 1], [2, 0]]


def test_duplicated_row_id_written_after_construction_keeps_sums_right():
    idx = np.array([0, 1], np.int64)
    a = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], idx), shape=(4, 2))
    idx[1] = 0
    np.testing.assert_array_equal((a + a).asnumpy(), [[2, 4], [6, 8], [0, 0], [0, 0]])
    np.testing.assert_array_equal((a + a).indices.asnumpy(), [0, 1])


def test_sgd_gradient_id_written_after_construction_stays_in_the_weight():
    outcome = isolated.run("""
        import numpy as np
        import sparsegen as mx
        ids = np.array([1, 3], np.int64)
        grad = mx.nd.sparse.row_sparse_array((np.ones((2, 2), np.float32), ids), shape=(4, 2))
        guard = mx.nd.array(np.full((64, 2), 7.0))  # memory a stray write could reach
        weight = mx.nd.zeros((4, 2))
        ids[1] = 4  # one past the weight's last row
        mx.optimizer.SGD(learning_rate=1.0).update(0, weight, grad, None)
        assert (guard.asnumpy() == 7).all()
        result = weight
    """)
    assert outcome.error is None, outcome.traceback
    assert outcome.result["ndarray"] == [[0, 0], [-1, -1], [0, 0], [-1, -1]]


def test_retain_result_does_not_share_the_requested_ids():
    rsp = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [0, 2]), shape=(4, 2))
    ids = np.array([0, 2, 3], np.int64)
    kept = mx.nd.sparse.retain(rsp, ids)
    ids[:] = [3, 2, 10**12]
    np.testing.assert_array_equal(kept.indices.asnumpy(), [0, 2, 3])
    np.testing.assert_array_equal(kept.asnumpy(), [[1, 2], [0, 0], [3, 4], [0, 0]])


@settings(max_examples=25, deadline=None)
@given(cols=st.integers(1, 300), nnz=st.integers(0, 200), seed=st.integers(0, 2**31))
def test_retain_by_a_csrs_indices_for_several_weights(cols, nnz, seed):
    # a batch's indices pulled for several weights: the distinct ids are worked out once per
    # index buffer; each result owns its ids, and a weight with fewer rows is checked again
    rng = np.random.default_rng(seed)
    rows = max(1, nnz // 10)
    matrix = scipy.sparse.random(rows, cols, density=min(1.0, nnz / (rows * cols)),
                                 random_state=rng, format="csr", dtype=np.float32)
    csr = mx.nd.sparse.csr_matrix(matrix)
    wanted = np.unique(matrix.indices)
    table = rng.normal(size=(cols, 3)).astype(np.float32)
    kept = []
    for _ in range(3):  # as many weights as a model pulls for one batch, each a fresh .indices
        weight = mx.nd.array(table).tostype("row_sparse")
        kept.append(mx.nd.sparse.retain(weight, csr.indices))
    for result in kept:
        np.testing.assert_array_equal(result.indices.asnumpy(), wanted)
        np.testing.assert_array_equal(result.data.asnumpy(), table[wanted])
    assert not np.shares_memory(kept[0]._storage.indices, kept[1]._storage.indices)
    if wanted.size and wanted[-1] > 0:  # a weight too short for the largest id still raises
        short = mx.nd.sparse.zeros("row_sparse", (int(wanted[-1]), 3))
        with pytest.raises(mx.MXNetError, match=f"out of range \\[0, {wanted[-1]}\\)"):
            mx.nd.sparse.retain(short, csr.indices)


def test_retain_with_ids_on_the_gpu_copies_them():
    assert isolated.result("""
        import numpy as np
        import sparsegen as mx
        rsp = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [0, 2]), shape=(4, 2),
                                            ctx=mx.gpu(0))
        ids = mx.nd.array([1, 2], dtype="int64", ctx=mx.gpu(0))  # checked and used on the GPU
        kept = rsp.retain(ids)
        ids[:] = np.array([10**12, 0])
        result = [kept.indices.asnumpy().tolist(), kept.asnumpy().tolist()]
    """, env=HOST_GPU) == [[1, 2], [[0, 0], [0, 0], [3, 4], [0, 0]]]


def test_sources_written_after_construction_on_an_emulated_gpu():
    assert isolated.result("""
        import numpy as np
        import sparsegen as mx
        ids, values = np.array([0, 2], np.int64), np.array([[1., 2.], [3., 4.]], np.float32)
        rsp = mx.nd.sparse.row_sparse_array((values, ids), shape=(4, 2), ctx=mx.gpu(0))
        indices, indptr = np.array([1, 0], np.int64), np.array([0, 1, 2], np.int64)
        csr = mx.nd.sparse.csr_matrix(([1., 2.], indices, indptr), shape=(2, 2), ctx=mx.gpu(0))
        for source in (ids, indices, indptr):
            source[:] = 10**12
        values[:] = 99
        column = mx.nd.array([[1.], [10.]], ctx=mx.gpu(0))
        result = [(rsp + rsp).asnumpy().tolist(), mx.nd.dot(csr, column).asnumpy().tolist(),
                  csr.tostype("default").asnumpy().tolist()]
    """, env=HOST_GPU) == [[[2, 4], [0, 0], [6, 8], [0, 0]], [[10], [2]], [[0, 1], [2, 0]]]


@pytest.mark.parametrize("env", [{}, HOST_GPU], ids=["cpu", "emulated-gpu"])
def test_index_views_cannot_be_made_writeable(env):
    assert isolated.result("""
        import numpy as np
        import sparsegen as mx
        import os
        ctx = mx.gpu(0) if os.environ.get("SPARSEGEN_GPU") == "host" else mx.cpu()
        rsp = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [0, 2]), shape=(4, 2), ctx=ctx)
        csr = mx.nd.sparse.csr_matrix(np.eye(3, dtype=np.float32), ctx=ctx)
        refused = []
        for view in (rsp.indices, csr.indices, csr.indptr):
            for attempt in (lambda: setattr(np.asarray(view).flags, "writeable", True),
                            lambda: view.__setitem__(slice(None), 10**12),
                            lambda: view.__setitem__(0, 10**12)):
                try:
                    attempt()
                except (ValueError, mx.MXNetError):
                    refused.append(True)
            shared = np.asarray(view)
            if shared.flags.writeable:  # a GPU's view is a copy: writing it changes nothing
                shared[:] = 10**12
        result = [len(refused), rsp.asnumpy().tolist(), csr.asnumpy().tolist()]
    """, env=env) == [9 if not env else 6, [[1, 2], [0, 0], [3, 4], [0, 0]], np.eye(3).tolist()]


@needs_torch
def test_torch_and_scipy_views_do_not_expose_the_ids():
    assert isolated.result("""
        import numpy as np
        import sparsegen as mx
        from sparsegen import interop
        rsp = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [0, 2]), shape=(4, 2))
        csr = mx.nd.sparse.csr_matrix(np.eye(3, dtype=np.float32))
        coo = rsp.to_torch()
        coo._indices()[0, 1] = 10**12  # torch lets sparse index tensors be written
        t = csr.to_torch()
        t.crow_indices()[1:] = 10**12
        t.col_indices()[:] = 10**12
        matrix = interop.to_scipy(csr)
        try:
            matrix.indices[0] = 10**6
        except ValueError:
            pass
        result = [rsp.asnumpy().tolist(), csr.asnumpy().tolist()]
    """) == [[[1, 2], [0, 0], [3, 4], [0, 0]], np.eye(3).tolist()]


# -- index values and shapes are checked before any cast --------------------------------------------
@pytest.mark.parametrize("ids, shown", [
    (np.array([np.inf]), "[inf]"),
    (np.array([1e30]), "[1e+30]"),
    (np.array([-1e30]), "[-1e+30]"),
    (np.array([np.nan]), "[nan]"),
    (np.array([2**63], np.uint64), "[9223372036854775808]"),
    ([2**63], "[9223372036854775808]"),
    ([0, 2**64], "[18446744073709551616]"),
    ([-1, 2**63], "[9223372036854775808]"),  # numpy reads this list as float64: the int is shown
    ([0.5], "[0.5]"),
    (["1"], "['1']"),
])
def test_index_values_that_are_not_int64_are_shown_as_given(ids, shown):
    data = np.ones((len(ids), 2))
    for call in (lambda: mx.nd.sparse.row_sparse_array((data, ids), shape=(4, 2)),
                 lambda: mx.nd.sparse.retain(mx.nd.sparse.zeros("row_sparse", (4, 2)), ids),
                 lambda: mx.nd.sparse.csr_matrix((data[:, 0], ids, [0, len(ids)]), shape=(1, 4)),
                 lambda: mx.nd.sparse.csr_matrix((data[:, 0], (ids, [0] * len(ids))))):
        with pytest.raises(mx.MXNetError, match="must hold integers") as caught:
            call()
        assert shown in str(caught.value) and "-9223372036854775808" not in str(caught.value)


@pytest.mark.parametrize("indptr, shown", [
    (np.array([0, np.inf]), "[inf]"), (np.array([0, 2**63], np.uint64), "[9223372036854775808]"),
    ([0, 1e30], "[1e+30]"),
])
def test_indptr_values_that_are_not_int64_are_shown_as_given(indptr, shown):
    with pytest.raises(mx.MXNetError, match=r"indptr must hold integers.*at positions \[1\]") as caught:
        mx.nd.sparse.csr_matrix(([1.0], [0], indptr), shape=(1, 4))
    assert shown in str(caught.value)


def test_negative_zero_and_integral_floats_are_indices():
    rsp = mx.nd.sparse.row_sparse_array((np.ones((2, 1)), np.array([-0.0, 2.0])), shape=(3, 1))
    np.testing.assert_array_equal(rsp.indices.asnumpy(), [0, 2])
    assert rsp.indices.dtype == np.int64


@pytest.mark.parametrize("shape, error, fragment", [
    ((2.0, 2), TypeError, "2.0 (float) at position 0"),
    ((float("inf"), 2), TypeError, "inf (float) at position 0"),
    ((None, 2), TypeError, "None (NoneType) at position 0"),
    ("22", TypeError, "'2' (str) at position 0"),
    ((2**63, 2), mx.MXNetError, "9223372036854775808 at position 0"),
    ((-1, 2), mx.MXNetError, "non-negative"),
])
def test_bad_shapes_are_named(shape, error, fragment):
    for call in (lambda: mx.nd.sparse.zeros("row_sparse", shape),
                 lambda: mx.nd.sparse.row_sparse_array((np.ones((1, 2)), [0]), shape=shape),
                 lambda: mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=shape),
                 lambda: mx.nd.zeros(shape)):
        with pytest.raises(error) as caught:
            call()
        assert isinstance(caught.value, mx.MXNetError) and fragment in str(caught.value)


def test_rows_too_long_to_index_are_refused():
    with pytest.raises(mx.MXNetError, match="more than int64 indexes"):
        mx.nd.sparse.zeros("row_sparse", (1, 2**40, 2**40))


@pytest.mark.parametrize("make", [mx.nd.sparse.row_sparse_array, mx.nd.sparse.csr_matrix])
def test_shape_tuple_with_another_shape_raises_value_error(make):
    with pytest.raises(ValueError, match=r"shape=\(5, 6\) does not match the shape \(3, 4\)") as caught:
        make((3, 4), shape=(5, 6))
    assert isinstance(caught.value, mx.MXNetError)
    assert make((3, 4), shape=[3, 4]).shape == (3, 4)  # MXNet refuses a list here: sparsegen does not
    with pytest.raises(TypeError, match=r"4.0 \(float\) at position 1"):
        make((3, 4.0))


@pytest.mark.parametrize("make, source", [
    (mx.nd.sparse.row_sparse_array, lambda: mx.nd.ones((3, 4))),
    (mx.nd.sparse.row_sparse_array, lambda: np.ones((3, 4))),
    (mx.nd.sparse.row_sparse_array, lambda: mx.nd.ones((3, 4)).tostype("row_sparse")),
    (mx.nd.sparse.csr_matrix, lambda: mx.nd.ones((3, 4))),
    (mx.nd.sparse.csr_matrix, lambda: mx.nd.ones((3, 4)).tostype("csr")),
    (mx.nd.sparse.csr_matrix, lambda: scipy.sparse.csr_matrix(np.ones((3, 4)))),
])
def test_every_source_with_another_shape_raises_value_error(make, source):
    with pytest.raises(ValueError, match=r"shape=\(4, 4\) does not match the shape \(3, 4\)"):
        make(source(), shape=(4, 4))


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_retain_refuses_sparse_ids(stype):
    rsp = mx.nd.sparse.row_sparse_array(([[1., 2.]], [1]), shape=(3, 2))
    ids = mx.nd.array([[0.0, 1.0, 2.0]]).tostype(stype)
    for call in (lambda: mx.nd.sparse.retain(rsp, ids), lambda: rsp.retain(ids)):
        with pytest.raises(mx.MXNetError, match=f"indices must be a dense array .*got a {stype}"):
            call()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "uint8", "int8", "int32",
                                   "int64"])
def test_retain_takes_dense_ids_of_every_dtype(dtype):
    rsp = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [0, 2]), shape=(4, 2))
    kept = rsp.retain(mx.nd.array([[2, 3]], dtype=dtype))  # any shape is flattened, as MXNet
    np.testing.assert_array_equal(kept.indices.asnumpy(), [2, 3])
    np.testing.assert_array_equal(kept.asnumpy(), [[0, 0], [0, 0], [3, 4], [0, 0]])


def test_metadata_is_exact_for_huge_shapes():
    rsp = mx.nd.sparse.zeros("row_sparse", (2**62, 4))
    assert rsp.size == 2**64 and type(rsp.size) is int
    assert rsp.shape == (2**62, 4) and all(type(d) is int for d in rsp.shape)
    assert len(rsp) == 2**62 and rsp.ndim == 2
    csr = mx.nd.sparse.csr_matrix(([1.0], [2**40], [0, 1]), shape=(1, 2**62))
    assert csr.size == 2**62 and csr.shape == (1, 2**62)
    with pytest.raises(TypeError, match="0-d"):
        len(mx.nd.array(np.float32(3.0)))


# -- the state machine ------------------------------------------------------------------------------
ROWS, COLS = st.integers(1, 7), st.integers(1, 4)
DTYPES = st.sampled_from(["float32", "float64"])
KINDS = st.sampled_from(["numpy", "torch"] if torch is not None else ["numpy"])
GARBAGE = st.sampled_from([10**12, -(10**12), 2**62, -1, 0, 1])


class Built:
    """An array under test, the sources handed in to build it, and its oracle."""

    def __init__(self, array, sources, dense, live=None):
        self.array = array
        self.sources = sources  # (label, numpy or torch array) pairs, written later
        self._dense = dense  # the values the array must show, copied at construction
        self._live = live  # for explicitly zero-copy interop: the values from the live source

    def oracle(self) -> np.ndarray:
        """The dense values the array must have now."""
        return self._live() if self._live is not None else self._dense


def _random_dense(data, rows: int, cols: int, dtype: str) -> np.ndarray:
    """A small integer-valued dense array (exact in float32 sums and products)."""
    values = data.draw(st.lists(st.integers(-4, 4), min_size=rows * cols, max_size=rows * cols))
    keep = data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    dense = np.array(values, dtype).reshape(rows, cols)
    dense[~np.array(keep)] = 0  # whole zero rows, so row_sparse arrays store only some rows
    return dense


def _as_kind(values: np.ndarray, kind: str):
    return torch.from_numpy(values.copy()) if kind == "torch" else values.copy()


def _write(target, garbage: int) -> None:
    """Write ``garbage`` into every element of an index source, 99 into a values source."""
    if torch is not None and isinstance(target, torch.Tensor):
        target.fill_(garbage if not target.is_floating_point() else 99.0)
    elif isinstance(target, mx.nd.NDArray):
        target[:] = 99.0
    elif target.dtype.kind == "f":
        target[...] = 99.0
    else:
        target[...] = garbage


class Ownership(RuleBasedStateMachine):
    """Build arrays, write into what was handed in, and check every result against oracles."""

    arrays = Bundle("arrays")

    @initialize()
    def start(self):
        self.built: list[Built] = []

    def _keep(self, built: Built) -> Built:
        self.built.append(built)
        return built

    # -- construction ------------------------------------------------------------------------
    @rule(target=arrays, data=st.data(), rows=ROWS, cols=COLS, dtype=DTYPES, kind=KINDS)
    def row_sparse_from_pair(self, data, rows, cols, dtype, kind):
        dense = _random_dense(data, rows, cols, dtype)
        ids = np.flatnonzero(dense.any(axis=1)).astype(np.int64)
        values, indices = _as_kind(dense[ids], kind), _as_kind(ids, kind)
        array = mx.nd.sparse.row_sparse_array((values, indices), shape=(rows, cols))
        return self._keep(Built(array, [("data", values), ("indices", indices)], dense.copy()))

    @rule(target=arrays, data=st.data(), rows=ROWS, cols=COLS, dtype=DTYPES, kind=KINDS)
    def csr_from_triple(self, data, rows, cols, dtype, kind):
        dense = _random_dense(data, rows, cols, dtype)
        m = scipy.sparse.csr_matrix(dense)
        values, indices, indptr = (_as_kind(a, kind) for a in
                                   (m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64)))
        array = mx.nd.sparse.csr_matrix((values, indices, indptr), shape=(rows, cols))
        return self._keep(Built(array, [("data", values), ("indices", indices),
                                        ("indptr", indptr)], dense.copy()))

    @rule(target=arrays, data=st.data(), rows=ROWS, cols=COLS, dtype=DTYPES)
    def csr_from_coordinates(self, data, rows, cols, dtype):
        dense = _random_dense(data, rows, cols, dtype)
        row, col = (a.astype(np.int64) for a in np.nonzero(dense))
        values = dense[row, col].copy()
        array = mx.nd.sparse.csr_matrix((values, (row, col)), shape=(rows, cols))
        return self._keep(Built(array, [("data", values), ("row", row), ("col", col)],
                                dense.copy()))

    @rule(target=arrays, data=st.data(), rows=ROWS, cols=COLS, dtype=DTYPES)
    def csr_from_scipy(self, data, rows, cols, dtype):
        dense = _random_dense(data, rows, cols, dtype)
        m = scipy.sparse.csr_matrix(dense)
        m.indices, m.indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
        array = mx.nd.sparse.csr_matrix(m)
        return self._keep(Built(array, [("data", m.data), ("indices", m.indices),
                                        ("indptr", m.indptr)], dense.copy()))

    @rule(target=arrays, data=st.data(), rows=ROWS, cols=COLS, dtype=DTYPES,
          stype=st.sampled_from(["row_sparse", "csr"]), kind=st.sampled_from(["numpy", "ndarray"]))
    def from_dense(self, data, rows, cols, dtype, stype, kind):
        dense = _random_dense(data, rows, cols, dtype)
        source = dense.copy()
        handed = mx.nd.array(source, dtype=dtype) if kind == "ndarray" else source
        make = mx.nd.sparse.row_sparse_array if stype == "row_sparse" else mx.nd.sparse.csr_matrix
        array = make(handed)
        return self._keep(Built(array, [("dense", handed)], dense.copy()))

    # -- explicitly zero-copy interop: values shared (documented), ids owned ---------------------
    @rule(target=arrays, data=st.data(), rows=ROWS, cols=COLS, dtype=DTYPES)
    def interop_pair(self, data, rows, cols, dtype):
        dense = _random_dense(data, rows, cols, dtype)
        ids = np.flatnonzero(dense.any(axis=1)).astype(np.int64)
        values = dense[ids].copy()
        array = interop.from_pair(values, ids, (rows, cols))
        kept = ids.copy()

        def live():
            out = np.zeros((rows, cols), dtype)
            out[kept] = values
            return out

        return self._keep(Built(array, [("values", values), ("ids", ids)], None, live))

    @rule(target=arrays, data=st.data(), rows=ROWS, cols=COLS, dtype=DTYPES,
          layout=st.sampled_from(["coo", "csr", "scipy"] if torch is not None else ["scipy"]))
    def interop_sparse(self, data, rows, cols, dtype, layout):
        dense = _random_dense(data, rows, cols, dtype)
        if layout == "coo":
            source = torch.from_numpy(dense.copy()).to_sparse(1).coalesce()
            values, parts = source.values(), [("indices", source.indices())]
            where = (source.indices()[0].numpy().copy(),)
            array = interop.from_torch(source)
        elif layout == "csr":
            source = torch.from_numpy(dense.copy()).to_sparse_csr()
            values = source.values()
            parts = [("crow_indices", source.crow_indices()), ("col_indices", source.col_indices())]
            where = np.nonzero(dense)  # row-major, the order of csr values
            array = interop.from_torch(source)
        else:
            source = scipy.sparse.csr_matrix(dense)
            source.indices, source.indptr = (source.indices.astype(np.int64),
                                             source.indptr.astype(np.int64))
            values, parts = source.data, [("indices", source.indices), ("indptr", source.indptr)]
            where = np.nonzero(dense)
            array = interop.from_scipy(source)

        def live():
            out = np.zeros((rows, cols), dtype)
            out[where] = values.numpy() if not isinstance(values, np.ndarray) else values
            return out

        return self._keep(Built(array, [("values", values), *parts], None, live))

    @rule(target=arrays, source=arrays, data=st.data(), kind=st.sampled_from(["numpy", "list"]))
    def retained(self, source, data, kind):
        if source.array.stype != "row_sparse":
            return multiple()
        rows = source.array.shape[0]
        ids = data.draw(st.lists(st.integers(0, rows - 1), max_size=rows))
        handed = np.array(ids, np.int64) if kind == "numpy" else ids
        array = mx.nd.sparse.retain(source.array, handed)
        dense = np.zeros_like(source.oracle())
        dense[ids] = source.oracle()[ids]
        written = [("ids", handed)] if kind == "numpy" else []
        return self._keep(Built(array, written, dense))

    # -- writes by the caller ------------------------------------------------------------------
    @rule(built=arrays, data=st.data(), garbage=GARBAGE)
    def write_a_source(self, built, data, garbage):
        if built.sources:
            _, target = data.draw(st.sampled_from(built.sources))
            _write(target, garbage)

    # -- every later result ----------------------------------------------------------------------
    @invariant()
    def values_match(self):
        for built in self.built:
            np.testing.assert_array_equal(built.array.asnumpy(), built.oracle())

    @rule(built=arrays)
    def arithmetic(self, built):
        a, expected = built.array, built.oracle()
        np.testing.assert_array_equal((a + a).asnumpy(), expected + expected)
        np.testing.assert_array_equal((a - a).asnumpy(), np.zeros_like(expected))
        np.testing.assert_array_equal((a * a).asnumpy(), expected * expected)
        np.testing.assert_array_equal((a * 2).asnumpy(), expected * 2)

    @rule(built=arrays, data=st.data())
    def dot(self, built, data):
        a, expected = built.array, built.oracle()
        rows, cols = expected.shape
        other = np.arange(rows * 3, dtype=expected.dtype).reshape(rows, 3) % 5
        if a.stype == "csr":
            rhs = np.arange(cols * 2, dtype=expected.dtype).reshape(cols, 2) % 3
            np.testing.assert_array_equal(mx.nd.dot(a, mx.nd.array(rhs, dtype=a.dtype)).asnumpy(),
                                          expected @ rhs)
            np.testing.assert_array_equal(
                mx.nd.dot(a, mx.nd.array(other, dtype=a.dtype), transpose_a=True).asnumpy(),
                expected.T @ other)
        else:
            lhs = scipy.sparse.csr_matrix(other.T)
            product = mx.nd.dot(mx.nd.sparse.csr_matrix(lhs), a)
            np.testing.assert_array_equal(product.asnumpy(), other.T @ expected)

    @rule(built=arrays, data=st.data())
    def retain_and_cast(self, built, data):
        a, expected = built.array, built.oracle()
        np.testing.assert_array_equal(a.tostype("default").asnumpy(), expected)
        np.testing.assert_array_equal(a.astype("float64").asnumpy(), expected.astype("float64"))
        if a.stype == "row_sparse":
            ids = data.draw(st.lists(st.integers(0, a.shape[0] - 1), max_size=a.shape[0]))
            kept = np.zeros_like(expected)
            kept[ids] = expected[ids]
            np.testing.assert_array_equal(a.retain(np.array(ids, np.int64)).asnumpy(), kept)

    @rule(built=arrays)
    def sgd_update(self, built):
        a, expected = built.array, built.oracle()
        if a.stype != "row_sparse":
            return
        start = np.arange(math.prod(a.shape), dtype=a.dtype).reshape(a.shape)
        weight = mx.nd.array(start, dtype=a.dtype)
        mx.optimizer.SGD(learning_rate=1.0).update(0, weight, a, None)
        np.testing.assert_array_equal(weight.asnumpy(), start - expected)


Ownership.TestCase.settings = settings(max_examples=15, stateful_step_count=12, deadline=None)
TestOwnership = Ownership.TestCase
