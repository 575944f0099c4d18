"""Bad input raises MXNetError naming the argument and the problem; nothing segfaults."""

import numpy as np
import pytest

import sparsegen as mx

rsp_cases = [
    (([[1, 2], [3, 4]], [4, 1]), (6, 2), "indices must be sorted and unique; unsorted"),
    (([[1, 2], [3, 4]], [1, 1]), (6, 2), "indices must be sorted and unique; duplicate"),
    (([[1, 2], [3, 4]], [1, 6]), (6, 2), r"indices out of range \[0, 6\): \[6\]"),
    (([[1, 2], [3, 4]], [-1, 2]), (6, 2), r"indices out of range \[0, 6\): \[-1\]"),
    (([[1, 2], [3, 4]], [1]), (6, 2), "data and indices must have the same length"),
    (([[1, 2, 3], [3, 4, 5]], [1, 2]), (6, 2), "data rows of shape"),
    (([1, 2], [1, 2]), (6, 2), "data must have rank 2"),
    (([[1, 2]], [1.5]), (6, 2), "indices must hold integers"),
    (([[1, 2]], [[1]]), (6, 2), "indices must be 1-D"),
    (([[1, 2]], [1]), (-6, 2), "shape must hold non-negative ints"),
]


@pytest.mark.parametrize("arg, shape, message", rsp_cases)
def test_row_sparse_array_rejects(arg, shape, message):
    with pytest.raises(mx.MXNetError, match=message):
        mx.nd.sparse.row_sparse_array(arg, shape=shape)


csr_cases = [
    (([1, 2], [0, 1], [1, 2, 2]), (2, 3), "indptr must start at 0"),
    (([1, 2], [0, 1], [0, 2, 1]), (2, 3), "indptr must be non-decreasing"),
    (([1, 2], [0, 1], [0, 1, 3]), (2, 3), r"indptr\[-1\] = 3"),
    (([1, 2], [0, 3], [0, 1, 2]), (2, 3), r"indices out of range \[0, 3\)"),
    (([1, 2], [2, 2], [0, 2, 2]), (2, 3), "unique within each row; row 0 has duplicate column 2"),
    (([1, 2, 3], [2, 0, 2], [0, 3, 3]), (2, 3), "row 0 has duplicate column 2"),  # after sorting
    (([1, 2], [1, 1], [0, 0, 2]), (2, 3), "sorted and unique within each row; row 1"),
    (([1, 2], [0, 1], [0, 1]), (2, 3), "indptr must have shape"),
    (([[1, 2]], [0, 1], [0, 1, 2]), (2, 3), "data must be 1-D"),
    (([1, 2], [0, 1], [0, 1, 2]), (2, 3, 4), "csr storage needs a 2-D shape"),
]


@pytest.mark.parametrize("arg, shape, message", csr_cases)
def test_csr_matrix_rejects(arg, shape, message):
    with pytest.raises(mx.MXNetError, match=message):
        mx.nd.sparse.csr_matrix(arg, shape=shape)


def test_csr_rows_of_different_lengths_are_checked_per_row():
    # column ids fall back between rows: that is legal
    m = mx.nd.sparse.csr_matrix(([1, 2, 3], [2, 0, 1], [0, 1, 3]), shape=(2, 3))
    np.testing.assert_array_equal(m.asnumpy(), [[0, 0, 1], [2, 3, 0]])


@pytest.mark.parametrize("dtype", ["bool", "complex64", "int16", "uint32", "object"])
def test_unsupported_dtypes(dtype):
    with pytest.raises(mx.MXNetError, match="not supported|not a dtype|cannot be read"):
        mx.nd.sparse.row_sparse_array((np.ones((1, 2), dtype=dtype), [0]), shape=(3, 2))
    with pytest.raises(mx.MXNetError, match="not supported|not a dtype"):
        mx.nd.sparse.zeros("csr", (2, 2), dtype=dtype)


def test_cast_storage_errors():
    csr = mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 2))
    with pytest.raises(mx.MXNetError, match="cast_storage from csr to row_sparse is not supported"):
        csr.tostype("row_sparse")
    with pytest.raises(mx.MXNetError, match="from row_sparse to csr"):
        mx.nd.sparse.cast_storage(mx.nd.ones((2, 2)).tostype("row_sparse"), "csr")
    with pytest.raises(mx.MXNetError, match="csr storage needs a 2-D array"):
        mx.nd.ones((2, 2, 2)).tostype("csr")
    with pytest.raises(mx.MXNetError, match="stype must be one of"):
        mx.nd.ones((2, 2)).tostype("coo")


def test_retain_errors():
    rsp = mx.nd.sparse.row_sparse_array(([[1, 2]], [1]), shape=(3, 2))
    with pytest.raises(mx.MXNetError, match=r"indices out of range \[0, 3\): \[3\]"):
        mx.nd.sparse.retain(rsp, [0, 3])
    with pytest.raises(mx.MXNetError, match="retain needs a row_sparse array as data, got csr"):
        mx.nd.sparse.retain(mx.nd.sparse.zeros("csr", (3, 2)), [0])
    with pytest.raises(mx.MXNetError, match="indices must hold integers"):
        mx.nd.sparse.retain(rsp, [0.5])


def test_failed_assignment_leaves_destination_unchanged():
    dst = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    before = dst.asnumpy()
    with pytest.raises(mx.MXNetError, match=r"cannot assign .* of shape \(4, 2\) to an array of shape \(3, 2\)"):
        dst[:] = mx.nd.ones((4, 2))
    with pytest.raises(mx.MXNetError, match="cannot assign a csr array to a row_sparse array"):
        dst[:] = mx.nd.sparse.zeros("csr", (3, 2))
    with pytest.raises(mx.MXNetError, match="supports only x\\[:\\] = value"):
        dst[1] = 5
    np.testing.assert_array_equal(dst.asnumpy(), before)
    dense = mx.nd.ones((3, 2))
    with pytest.raises(mx.MXNetError, match="cannot assign"):
        dense[:] = np.ones((4, 5))
    np.testing.assert_array_equal(dense.asnumpy(), np.ones((3, 2)))


def test_constructor_type_errors():
    with pytest.raises(mx.MXNetError, match="row_sparse_array expects"):
        mx.nd.sparse.row_sparse_array("abc")
    with pytest.raises(mx.MXNetError, match="csr_matrix expects"):
        mx.nd.sparse.csr_matrix(3.0)
    with pytest.raises(mx.MXNetError, match="mx.nd.sparse.array expects"):
        mx.nd.sparse.array(np.ones((2, 2)))
    with pytest.raises(mx.MXNetError, match=r"shape=\(3, 2\) does not match the shape \(2, 2\)"):
        mx.nd.sparse.row_sparse_array(np.ones((2, 2)), shape=(3, 2))
    with pytest.raises(mx.MXNetError, match="csr_matrix cannot be created from a row_sparse"):
        mx.nd.sparse.csr_matrix(mx.nd.ones((2, 2)).tostype("row_sparse"))


def test_check_format_accepts_valid_arrays():
    mx.nd.sparse.row_sparse_array(([[1, 2]], [1]), shape=(3, 2)).check_format()
    mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 2)).check_format(full_check=True)


def test_check_format_catches_corrupted_storage():
    from sparsegen.formats import RowSparse

    rsp = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 2]), shape=(3, 2))
    # storage built behind the validating constructors, as a buggy extension might
    rsp._storage = RowSparse(rsp._storage.data, np.array([2, 1]), rsp.shape)
    with pytest.raises(mx.MXNetError, match="unsorted"):
        rsp.check_format()


def test_index_views_are_read_only():
    rsp = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 2]), shape=(3, 2))
    csr = mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 2))
    for view in (rsp.indices, csr.indices, csr.indptr):
        with pytest.raises(mx.MXNetError, match="read-only view"):
            view[:] = 0
        with pytest.raises(mx.MXNetError, match="read-only view"):
            view[0] = 5
    np.testing.assert_array_equal(rsp.indices.asnumpy(), [1, 2])
    rsp.check_format()


def test_copyto_requires_equal_shapes_while_slice_assignment_broadcasts():
    with pytest.raises(mx.MXNetError, match=r"copyto: cannot copy an array of shape \(1, 2\)"):
        mx.nd.ones((1, 2)).copyto(mx.nd.zeros((3, 2)))
    d = mx.nd.zeros((3, 2))
    d[:] = mx.nd.array([[1, 2]])  # numpy broadcasting, as MXNet's dense [:] =
    np.testing.assert_array_equal(d.asnumpy(), [[1, 2]] * 3)


# -- dot and elementwise arguments (issue 11) ---------------------------------------------------
@pytest.mark.parametrize("flag", ["yes", None, 2, 0.5, [True]])
def test_dot_transpose_flags_must_be_booleans(flag):
    # MXNet 1.9.1: "Invalid Parameter format for transpose_a expect boolean"
    a = mx.nd.ones((2, 2))
    for name in ("transpose_a", "transpose_b"):
        with pytest.raises(mx.MXNetError, match=f"dot: {name} must be a boolean, got"):
            mx.nd.dot(a, a, **{name: flag})
    np.testing.assert_array_equal(mx.nd.dot(a, a, transpose_a=1, transpose_b=np.bool_(0))
                                  .asnumpy(), [[2, 2], [2, 2]])


@pytest.mark.parametrize("bound", [None, "0", 1j, float("nan"), [0], np.complex64(1)])
def test_clip_bounds_must_be_real_numbers(bound):
    a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(mx.MXNetError, match="clip: a_min must be"):
        mx.nd.clip(a, bound, 3)
    with pytest.raises(mx.MXNetError, match="clip: a_max must be"):
        mx.nd.clip(a, 0, bound)
    np.testing.assert_array_equal(mx.nd.clip(a, -np.inf, 2.5).asnumpy(), [[1, 2], [2.5, 2.5]])
    # an int beyond float64 is an infinite bound (MXNet 1.9.1 gives the same values)
    np.testing.assert_array_equal(mx.nd.clip(a, -10**400, 2.5).asnumpy(), [[1, 2], [2.5, 2.5]])


@pytest.mark.parametrize("operand", [np.complex128(1j), 1j, None, "2", [1.0], {"a": 1}])
def test_bad_operands_are_type_errors(operand):
    # MXNet 1.9.1: TypeError "type <class ...> not supported"
    for x in (mx.nd.ones((2, 2)), mx.nd.ones((2, 2)).tostype("row_sparse")):
        for op in (lambda: x + operand, lambda: operand * x, lambda: x / operand,
                   lambda: mx.nd.subtract(x, operand)):
            with pytest.raises(TypeError, match="is not supported"):
                op()


def test_dot_operands_and_dims():
    a = mx.nd.ones((2, 2))
    for bad in (np.ones((2, 2)), None, 2.0):
        with pytest.raises(mx.MXNetError, match="dot: rhs must be an NDArray"):
            mx.nd.dot(a, bad)
    with pytest.raises(mx.MXNetError, match=r"lhs \(2, 2\) and rhs \(3, 2\)"):
        mx.nd.dot(a, mx.nd.ones((3, 2)))
    with pytest.raises(mx.MXNetError, match="csr operand needs 2-D operands"):
        mx.nd.dot(a.tostype("csr"), mx.nd.ones((2, 2, 2)))
    with pytest.raises(mx.MXNetError, match="forward_stype must be None or one of"):
        mx.nd.dot(a, a, forward_stype="coo")
