"""The argument forms and module-level names MXNet code uses, against MXNet 1.9.1's answers
(recorded by hand from MXNet 1.9.1 on CPU; the values are numpy's or hand-computed)."""

from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest
from hypothesis import given, strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=32), min_size=1, max_size=6),
       st.sampled_from(["float32", "float64"]))
def test_nd_array_reads_numeric_strings_as_numpy_does(values, dtype):
    # example/sparse/matrix_factorization reads lists of numeric strings from a file
    strings = [repr(v) for v in values]
    np.testing.assert_array_equal(mx.nd.array(strings, dtype=dtype).asnumpy(),
                                  np.array(strings, dtype=dtype))


def test_nd_array_of_strings_that_are_no_numbers_names_the_value():
    np.testing.assert_array_equal(mx.nd.array([["1", "2"], ["3", "4"]], dtype="int32").asnumpy(),
                                  [[1, 2], [3, 4]])
    with pytest.raises(InvalidType, match="'x' is not a number"):
        mx.nd.array(["1", "x"])
    with pytest.raises(InvalidType, match="str"):
        mx.nd.array("1")
    with pytest.raises(mx.MXNetError, match="does not fit in uint8"):
        mx.nd.array(["300"], dtype="uint8")


@pytest.mark.parametrize("shape, written", [((1), (1,)), (3, (3,)), ([2, 3], (2, 3)),
                                            ((0, 4), (0, 4))])
def test_symbol_variable_takes_an_int_shape(shape, written):
    var = mx.sym.var("x", shape=shape)
    assert var.attr("__shape__") == str(written)
    if 0 not in written:
        assert (var * 2).infer_shape()[1] == [written]


@pytest.mark.parametrize("shape", ["a", 2.5, (2, -1), (True, 2)])
def test_symbol_variable_refuses_a_shape_of_no_ints(shape):
    with pytest.raises(InvalidValue, match="shape must be an int or a sequence of ints"):
        mx.sym.var("x", shape=shape)


def test_the_names_mxnets_test_files_import():
    from sparsegen.base import _as_list, py_str, string_types  # noqa: F401
    from sparsegen.module.executor_group import DataParallelExecutorGroup  # noqa: F401
    from sparsegen.ndarray.ndarray import _STORAGE_TYPE_STR_TO_ID, add, py_slice, zeros

    assert _STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
    assert py_slice is slice
    np.testing.assert_array_equal(add(zeros((2,)), 3).asnumpy(), [3, 3])
    assert _as_list(3) == [3] and _as_list((1, 2)) == (1, 2)
    assert py_str(b"ab") == "ab"


def test_lib_serves_the_c_api_calls_scripts_make(monkeypatch):
    from sparsegen.base import _LIB, c_array, c_str, check_call, mx_float

    monkeypatch.setenv("TVM_NUM_THREADS", os.environ.get("TVM_NUM_THREADS", "2"))
    version = ctypes.c_int()
    check_call(_LIB.MXGetVersion(ctypes.byref(version)))
    assert version.value == 10901
    count = ctypes.c_int(-1)
    check_call(_LIB.MXGetGPUCount(ctypes.byref(count)))
    assert count.value == mx.context.num_gpus()
    check_call(_LIB.MXRandomSeed(ctypes.c_int(7)))
    first = mx.nd.random.uniform(shape=(3,)).asnumpy()
    check_call(_LIB.MXRandomSeed(7))
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=(3,)).asnumpy(), first)
    check_call(_LIB.MXNDArrayWaitAll())
    previous = ctypes.c_int()
    check_call(_LIB.MXEngineSetBulkSize(4, ctypes.byref(previous)))
    check_call(_LIB.MXEngineSetBulkSize(previous.value, ctypes.byref(previous)))
    assert previous.value == 4
    with pytest.raises(AttributeError, match="MXNoSuchCall.*MXGetVersion"):
        _LIB.MXNoSuchCall
    with pytest.raises(mx.MXNetError, match="returned -1"):
        check_call(-1)
    with pytest.raises(mx.MXNetError, match="out of scope"):
        _LIB.MXSetIsNumpyShape(1, ctypes.byref(previous))
    assert c_str("ab").value == b"ab" and list(c_array(mx_float, [1, 2])) == [1.0, 2.0]


def test_set_num_omp_threads_resizes_the_kernels_thread_pool(monkeypatch):
    from sparsegen.base import _LIB, check_call
    from sparsegen.tvm_runtime import runtime_library, tvm_ffi

    monkeypatch.setenv("TVM_NUM_THREADS", os.environ.get("TVM_NUM_THREADS", "2"))
    before = int(os.environ["TVM_NUM_THREADS"])
    runtime_library()
    check_call(_LIB.MXSetNumOMPThreads(ctypes.c_int(1)))
    try:
        assert tvm_ffi.get_global_func("runtime.NumThreads")() == 1
        x = mx.nd.arange(0, 1000).reshape((10, 100))
        np.testing.assert_array_equal(mx.nd.sum(x, axis=1).asnumpy(),
                                      np.arange(1000.0).reshape(10, 100).sum(axis=1))
    finally:
        check_call(_LIB.MXSetNumOMPThreads(before))
    with pytest.raises(InvalidValue, match="positive"):
        _LIB.MXSetNumOMPThreads(0)


def test_gpu_memory_info_names_a_missing_gpu():
    with pytest.raises(mx.MXNetError, match="no gpu"):
        mx.context.gpu_memory_info(mx.context.num_gpus())
    with pytest.raises(mx.MXNetError, match="device_id"):
        mx.context.gpu_memory_info(-1)


def test_mxnets_function_errors_name_the_function():
    from sparsegen.base import NotImplementedForSymbol, NotSupportedForSparseNDArray

    assert str(NotImplementedForSymbol(len, "-")) == (
        "Function len (-) (namely operator) is not implemented for Symbol")
    assert str(NotSupportedForSparseNDArray(len)) == "Function len is not supported for SparseNDArray"
    assert isinstance(NotSupportedForSparseNDArray(len), mx.MXNetError)


@given(st.lists(st.integers(-2, 2), min_size=1, max_size=8), st.integers(-2, 2),
       st.sampled_from(["float32", "int32"]))
def test_logical_ops_of_arrays_and_scalars_are_numpys(values, scalar, dtype):
    x = np.array(values, dtype=dtype)
    y = np.roll(x, 1)
    a, b = mx.nd.array(x, dtype=dtype), mx.nd.array(y, dtype=dtype)
    for name, oracle in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                         ("logical_xor", np.logical_xor)):
        function = getattr(mx.nd, name)
        for result, expected in ((function(a, b), oracle(x, y)), (function(a, scalar),
                                 oracle(x, scalar)), (function(scalar, a), oracle(scalar, x))):
            assert result.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(result.asnumpy(), expected.astype(dtype))
        assert function(scalar, 1) == int(oracle(scalar, 1))
    csr = mx.nd.array(x.reshape(1, -1), dtype="float32").tostype("csr")
    assert mx.nd.logical_and(csr, 2).stype == "default"  # MXNet's dense-only scalar kernels


@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.data())
def test_moveaxis_and_concatenate_are_numpys(shape, data):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    source = data.draw(st.integers(-len(shape), len(shape) - 1))
    destination = data.draw(st.integers(-len(shape), len(shape) - 1))
    np.testing.assert_array_equal(mx.nd.moveaxis(mx.nd.array(x), source, destination).asnumpy(),
                                  np.moveaxis(x, source, destination))
    axis = data.draw(st.integers(0, len(shape) - 1))
    np.testing.assert_array_equal(
        mx.nd.concatenate([mx.nd.array(x), mx.nd.array(x + 1)], axis=axis).asnumpy(),
        np.concatenate([x, x + 1], axis=axis))
    np.testing.assert_array_equal(mx.nd.true_divide(mx.nd.array(x), 4).asnumpy(), x / 4)


def test_onehot_encode_writes_out():
    out = mx.nd.zeros((3, 4))
    assert mx.nd.onehot_encode(mx.nd.array([0, 3, 1]), out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.eye(4, dtype=np.float32)[[0, 3, 1]])
    with pytest.raises(InvalidValue, match="2-D"):
        mx.nd.onehot_encode(mx.nd.array([0]), mx.nd.zeros((4,)))
    with pytest.raises(InvalidValue, match="as many axes"):
        mx.nd.moveaxis(mx.nd.zeros((2, 3)), 0, [0, 1])


def test_inplace_shape_methods_return_views_as_mxnet():
    x = mx.nd.array(np.arange(30.0).reshape(5, 2, 3))
    flat = x.flatten(inplace=True)
    assert flat.shape == (5, 6)
    flat[:] = -1  # a view: x changes too
    assert (x.asnumpy() == -1).all()
    assert (x.flatten().asnumpy() == -1).all() and x.flatten().shape == (5, 6)
    y = mx.nd.array(np.arange(6.0).reshape(2, 3))
    for axis, shape in ((1, (2, 1, 3)), (-1, (2, 3, 1)), (0, (1, 2, 3))):
        view = y.expand_dims(axis, inplace=True)
        assert view.shape == shape == y.expand_dims(axis).shape
    view = y.expand_dims(1, inplace=True)
    view[:] = 7
    assert (y.asnumpy() == 7).all()
    z = mx.nd.ones((1, 3, 1))
    assert z.squeeze(inplace=True).shape == (3,)
    assert z.squeeze(axis=(0,), inplace=True).shape == (3, 1)
    ones = mx.nd.ones((1, 1))
    assert ones.squeeze(inplace=True).shape == (1,) == ones.squeeze().shape  # as MXNet
    z.squeeze(inplace=True)[:] = 2
    assert (z.asnumpy() == 2).all()
    with pytest.raises(mx.MXNetError, match="axis 1 has size 3"):
        z.squeeze(axis=1, inplace=True)
    with pytest.raises(mx.MXNetError):
        y.expand_dims(5, inplace=True)


@given(st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.0, 8.0, np.inf, -np.inf, np.nan]),
                min_size=1, max_size=8), st.sampled_from(["float32", "float64"]))
def test_abs_reciprocal_and_contrib_isinf_isnan_isfinite_against_numpy(values, dtype):
    v = np.array(values, dtype)
    x = mx.nd.array(v, dtype=dtype)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(abs(x).asnumpy(), np.abs(v))
        np.testing.assert_array_equal(x.reciprocal().asnumpy(), np.reciprocal(v))
        np.testing.assert_allclose(x.rcbrt().asnumpy(), 1 / np.cbrt(v), rtol=1e-6)
    np.testing.assert_array_equal(mx.nd.contrib.isinf(x).asnumpy(), np.isinf(v))
    np.testing.assert_array_equal(mx.nd.contrib.isnan(x).asnumpy(), np.isnan(v))
    np.testing.assert_array_equal(mx.nd.contrib.isfinite(x).asnumpy(), np.isfinite(v))
    s = abs(mx.sym.Variable("a"))
    np.testing.assert_array_equal(s.eval(a=x)[0].asnumpy(), np.abs(v))
