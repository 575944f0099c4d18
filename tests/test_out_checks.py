"""``out=`` of every op, ``copyto``, ``x[:] = y`` and in-place operators: a mismatch raises,
naming ``out`` and the expected and given shape and dtype, and leaves ``out`` unchanged; what
MXNet 1.9.1 accepts (another storage type for out, ``copyto`` casting, aliasing an input)
gives numpy's values. Oracles: numpy, and values MXNet 1.9.1 printed (noted where used)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import isolated
import sparsegen as mx
from sparsegen.ndarray.elemwise import UNARY_OPS

A = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
B = np.array([[1.0, 0.0], [0.5, 1.0]], np.float32)


def _a(stype="default"):
    return mx.nd.array(A).tostype(stype)


def _b(stype="default"):
    return mx.nd.array(B).tostype(stype)


def _state(x):
    """Storage type, dense values and stored indices of an NDArray."""
    ids = None if x.stype == "default" else x.indices.asnumpy()
    return x.stype, x.asnumpy(), ids


def _assert_same(before, after):
    assert before[0] == after[0]
    np.testing.assert_array_equal(before[1], after[1])
    if before[2] is not None:
        np.testing.assert_array_equal(before[2], after[2])


# every public function taking out=, called with a (2, 2) float32 result
OPS = {
    "dot": lambda out: mx.nd.dot(_a(), _b(), out=out),
    "dot csr": lambda out: mx.nd.sparse.dot(_a("csr"), _b(), out=out),
    "dot csrT": lambda out: mx.nd.dot(_a("csr"), _b(), transpose_a=True, out=out),
    "elemwise_add": lambda out: mx.nd.elemwise_add(_a(), _b(), out=out),
    "elemwise_sub": lambda out: mx.nd.elemwise_sub(_a("row_sparse"), _b("row_sparse"), out=out),
    "elemwise_mul": lambda out: mx.nd.sparse.elemwise_mul(_a("csr"), _b("csr"), out=out),
    "elemwise_div": lambda out: mx.nd.elemwise_div(_a(), _b() + 1, out=out),
    "clip": lambda out: mx.nd.clip(_a(), 0, 2, out=out),
    "cast_storage": lambda out: mx.nd.sparse.cast_storage(_a(), "default", out=out),
    "retain": lambda out: mx.nd.sparse.retain(_a("row_sparse"), [0], out=out),
    "zeros": lambda out: mx.nd.zeros((2, 2), out=out),
    "sparse.zeros": lambda out: mx.nd.sparse.zeros("row_sparse", (2, 2), out=out),
    "ones": lambda out: mx.nd.ones((2, 2), out=out),
    "full": lambda out: mx.nd.full((2, 2), 7, out=out),
    "zeros_like": lambda out: mx.nd.zeros_like(_a(), out=out),
    "ones_like": lambda out: mx.nd.ones_like(_a(), out=out),
    **{name: (lambda name: lambda out: UNARY_OPS[name](_a(), out=out))(name)
       for name in UNARY_OPS},
}
# the storage types each op writes; others accept any storage type for out
OUT_STYPE = {"cast_storage": "default", "retain": "row_sparse"}


def _out(shape=(2, 2), dtype="float32", stype=None, ctx=None, op=None):
    stype = stype or OUT_STYPE.get(op, "default")
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 9
    return mx.nd.array(values, ctx=ctx, dtype=dtype).tostype(stype)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shape, dtype", [((3, 3), "float32"), ((1, 2), "float32"),
                                          ((2, 2, 1), "float32"), ((4,), "float32"),
                                          ((2, 2), "int32"), ((2, 2), "float64"),
                                          ((2, 2), "float16")])
def test_out_of_another_shape_or_dtype_raises_and_stays(op, shape, dtype):
    out = _out(shape, dtype, op=op)
    before = _state(out)
    given = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    with pytest.raises(mx.MXNetError, match=rf"out has shape \({given}\) and dtype {dtype}; the "
                                            r"result has shape \(2, 2\) and dtype float32"):
        OPS[op](out)
    _assert_same(before, _state(out))


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("bad", [np.zeros((2, 2), np.float32), [[0.0, 0.0]] * 2, 3.0])
def test_out_that_is_not_an_ndarray_is_a_type_error(op, bad):
    with pytest.raises(TypeError, match=f"out must be an NDArray, got {type(bad).__name__}"):
        OPS[op](bad)


@pytest.mark.parametrize("op", ["dot", "elemwise_add", "sqrt", "clip", "cast_storage", "retain"])
def test_out_on_another_context_raises(op, monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")  # cpu ids share the host's memory; a GPU does not
    out = _out(ctx=mx.gpu(0), op=op)
    with pytest.raises(mx.MXNetError, match=r"out is on gpu\(0\)"):
        OPS[op](out)


def test_int32_out_is_refused_not_truncated():
    # the reproducer: a float32 product of 2.5 written into an int32 out was 2
    lhs, rhs = mx.nd.array([[2.5]]), mx.nd.array([[1.0]])
    out = mx.nd.zeros((1, 1), dtype="int32")
    with pytest.raises(mx.MXNetError, match="dtype int32; the result has shape"):
        mx.nd.dot(lhs, rhs, out=out)
    with pytest.raises(mx.MXNetError, match=r"out has shape \(3, 3\)"):
        mx.nd.dot(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), out=mx.nd.zeros((3, 3)))
    np.testing.assert_array_equal(out.asnumpy(), [[0]])


# -- what is accepted ---------------------------------------------------------------------------
EXPECTED = {"dot": A @ B, "dot csr": A @ B, "dot csrT": A.T @ B, "elemwise_add": A + B,
            "elemwise_sub": A - B, "elemwise_mul": A * B, "elemwise_div": A / (B + 1),
            "clip": np.clip(A, 0, 2), "cast_storage": A, "retain": np.where([[1], [0]], A, 0),
            "zeros": np.zeros((2, 2)), "sparse.zeros": np.zeros((2, 2)), "ones": np.ones((2, 2)),
            "full": np.full((2, 2), 7.0), "zeros_like": np.zeros((2, 2)),
            "ones_like": np.ones((2, 2)), "sqrt": np.sqrt(A), "exp": np.exp(A)}


@pytest.mark.parametrize("op", sorted(EXPECTED))
@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
def test_out_of_any_storage_type_receives_the_result(op, stype):
    # MXNet 1.9.1 converts elementwise results to out's storage type; its dot refuses that
    # ("not implemented"), sparsegen converts (docs/mxnet-differences.md)
    out = _out(stype=stype)
    if op in OUT_STYPE and stype != OUT_STYPE[op]:
        with pytest.raises(mx.MXNetError, match=f"out has storage type {stype}, the op writes"):
            OPS[op](out)
        return
    result = OPS[op](out)
    assert result is out and out.stype == stype and out.shape == (2, 2)
    np.testing.assert_allclose(out.asnumpy(), EXPECTED[op], rtol=1e-6)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_dot_out_aliasing_an_input_is_correct(transpose_b):
    # MXNet 1.9.1 gives zeros for dot(a, b, out=b) and dot(a, b, out=a); sparsegen the product
    ref = A @ (B.T if transpose_b else B)
    a, b = _a(), _b()
    mx.nd.dot(a, b, transpose_b=transpose_b, out=b)
    np.testing.assert_allclose(b.asnumpy(), ref, rtol=1e-6)
    a, b = _a(), _b()
    mx.nd.dot(a, b, transpose_b=transpose_b, out=a)
    np.testing.assert_allclose(a.asnumpy(), ref, rtol=1e-6)
    c = _a("csr")
    rsp = mx.nd.dot(c, _b(), transpose_a=True)
    mx.nd.dot(c, rsp, out=rsp)  # csr · rsp -> dense, written back into the rsp operand
    np.testing.assert_allclose(rsp.asnumpy(), A @ (A.T @ B), rtol=1e-6)


def test_elementwise_and_retain_out_aliasing_an_input_are_correct():
    r = _a("row_sparse")
    mx.nd.elemwise_add(r, r, out=r)  # MXNet 1.9.1 refuses this (no in-place rsp add)
    np.testing.assert_array_equal(r.asnumpy(), 2 * A)
    d = _a()
    mx.nd.sqrt(d, out=d)
    np.testing.assert_allclose(d.asnumpy(), np.sqrt(A), rtol=1e-6)
    r = _a("row_sparse")
    mx.nd.sparse.retain(r, [1], out=r)  # MXNet 1.9.1 refuses (req must be 'write')
    np.testing.assert_array_equal(r.asnumpy(), [[0, 0], [3, 4]])
    np.testing.assert_array_equal(r.indices.asnumpy(), [1])
    x = _a()
    mx.nd.sparse.cast_storage(x, "default", out=x)
    np.testing.assert_array_equal(x.asnumpy(), A)
    assert x.copyto(x) is x
    np.testing.assert_array_equal(x.asnumpy(), A)


@settings(max_examples=25)
@given(rows=st.integers(1, 5), cols=st.integers(1, 5), out_rows=st.integers(1, 5),
       out_cols=st.integers(1, 5), stype=st.sampled_from(["default", "row_sparse", "csr"]))
def test_out_shape_must_match_exactly(rows, cols, out_rows, out_cols, stype):
    x = mx.nd.array(np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)).tostype(stype)
    out = mx.nd.array(np.full((out_rows, out_cols), -1.0, np.float32))
    if (out_rows, out_cols) == (rows, cols):
        mx.nd.elemwise_add(x, x, out=out)
        np.testing.assert_array_equal(out.asnumpy(), 2 * x.asnumpy())
        return
    with pytest.raises(mx.MXNetError, match=r"out has shape"):
        mx.nd.elemwise_add(x, x, out=out)
    if out.shape != (rows, rows):
        with pytest.raises(mx.MXNetError, match=r"out has shape"):
            mx.nd.dot(x, x, transpose_b=True, out=out)
    np.testing.assert_array_equal(out.asnumpy(), -1.0)


def test_too_small_out_cannot_crash():
    code = """
    import sparsegen as mx
    lhs = mx.nd.sparse.csr_matrix(([1.0] * 4, [0, 1, 2, 3], [0, 1, 2, 3, 4]), shape=(4, 4))
    mx.nd.dot(lhs, mx.nd.ones((4, 100)), out=mx.nd.zeros((1, 1)))
    """
    isolated.raises(code, "MXNetError", r"out has shape (1, 1)")


# -- copyto, [:] = and in place -----------------------------------------------------------------
def test_copyto_checks_shape_and_casts_dtype_as_mxnet():
    src = mx.nd.array([[1.0, 3.5], [4.2, 6.9]])
    with pytest.raises(mx.MXNetError, match=r"cannot copy an array of shape \(2, 2\) into one "
                                            r"of shape \(3, 2\)"):
        src.copyto(mx.nd.zeros((3, 2)))
    # MXNet 1.9.1 casts into the destination's dtype (truncating): [[1, 3], [4, 6]]
    dst = mx.nd.zeros((2, 2), dtype="int32")
    src.copyto(dst)
    np.testing.assert_array_equal(dst.asnumpy(), [[1, 3], [4, 6]])
    with pytest.raises(TypeError, match="other must be an NDArray or a Context, got ndarray"):
        src.copyto(np.zeros((2, 2)))
    rsp = mx.nd.zeros((2, 2)).tostype("row_sparse")
    src.copyto(rsp)  # MXNet: accepted, rsp keeps its storage type
    assert rsp.stype == "row_sparse"
    np.testing.assert_allclose(rsp.asnumpy(), src.asnumpy())
    with pytest.raises(mx.MXNetError, match="cannot assign a csr array to a row_sparse"):
        _a("csr").copyto(rsp)


def test_slice_assignment_shapes():
    dst = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(2, 2))
    before = _state(dst)
    with pytest.raises(mx.MXNetError, match=r"row_sparse array of shape \(3, 2\) to an array "
                                            r"of shape \(2, 2\)"):
        dst[:] = mx.nd.ones((3, 2)).tostype("row_sparse")
    with pytest.raises(mx.MXNetError, match=r"shape \(3, 2\) to an array of shape \(2, 2\)"):
        dst[:] = mx.nd.ones((3, 2))
    _assert_same(before, _state(dst))
    dense = mx.nd.zeros((2, 2), dtype="int32")
    dense[:] = mx.nd.array([[1.5, 2.5]])  # broadcast and cast, as MXNet's dense [:] =
    np.testing.assert_array_equal(dense.asnumpy(), [[1, 2], [1, 2]])
    with pytest.raises(mx.MXNetError, match=r"shape \(3,\) to x\[0\] of an array of shape"):
        dense[0] = mx.nd.ones((3,))
    with pytest.raises(mx.MXNetError, match="cannot assign str"):
        dense[0] = "abc"
    with pytest.raises(IndexError):  # as MXNet
        dense[5] = 1
    np.testing.assert_array_equal(dense.asnumpy(), [[1, 2], [1, 2]])


@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
def test_in_place_mismatches_leave_the_array_unchanged(stype):
    x = _a(stype)
    before = _state(x)
    cases = [
        (lambda: x.__iadd__(mx.nd.ones((3, 2)).tostype(stype)), mx.MXNetError, r"\(3, 2\)"),
        (lambda: x.__isub__(mx.nd.ones((2, 2), dtype="float64").tostype(stype)),
         mx.MXNetError, "float64"),
        (lambda: x.__imul__(None), TypeError, "NoneType is not supported"),
        (lambda: x.__itruediv__("2"), TypeError, "str is not supported"),
        (lambda: x.__iadd__(np.complex64(1j)), TypeError, "complex64 is not supported"),
    ]
    if stype == "default":
        cases.append((lambda: mx.nd.zeros((1, 2)).__iadd__(mx.nd.ones((2, 2))), mx.MXNetError,
                      r"does not fit the updated array of shape \(1, 2\)"))
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
        _assert_same(before, _state(x))
