"""NDArray odds and ends MXNet code touches (iteration, truth, scalars, ``np.dtype``), unknown
keyword arguments, and the MXNet error classes (ValueError / TypeError that are MXNetError)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx


@settings(max_examples=15)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "int64"]))
def test_iteration_and_len_follow_the_first_axis(shape, dtype):
    values = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    a = mx.nd.array(values, dtype=dtype)
    assert len(a) == shape[0]
    rows = list(a)
    assert len(rows) == shape[0]
    for row, expected in zip(rows, values):
        assert isinstance(row, mx.nd.NDArray) and row.shape == expected.shape
        np.testing.assert_array_equal(row.asnumpy(), expected)


def test_zero_d_arrays_have_no_len_and_do_not_iterate():
    scalar = mx.nd.array([5.0])[0]
    assert scalar.shape == ()
    for call in (len, iter):
        with pytest.raises(TypeError, match="0-d NDArray") as info:
            call(scalar)
        assert isinstance(info.value, mx.MXNetError)


def test_csr_iterates_over_its_rows():
    dense = np.array([[0, 1, 0], [2, 0, 3]], np.float32)
    rows = list(mx.nd.array(dense).tostype("csr"))
    assert [r.stype for r in rows] == ["csr", "csr"]
    np.testing.assert_array_equal(np.vstack([r.asnumpy() for r in rows]), dense)


@pytest.mark.parametrize("dtype", ["float16", "float32", "int64"])
@pytest.mark.parametrize("stype", ["default", "csr", "row_sparse"])
def test_np_dtype_of_an_array(dtype, stype):
    a = mx.nd.zeros((2, 2), dtype=dtype).tostype(stype)
    assert np.dtype(a) == np.dtype(dtype)
    assert a.dtype is np.dtype(dtype).type  # MXNet's dtype is the numpy scalar type
    assert np.asarray(a).dtype == np.dtype(dtype)


def test_asscalar_and_bool():
    one = mx.nd.array([2.5])
    assert one.asscalar() == 2.5 and type(one.asscalar()) is np.float32
    assert mx.nd.array([[7]], dtype="int32").asscalar() == 7
    assert bool(mx.nd.array([1.0])) and not bool(mx.nd.array([0.0]))
    assert bool(mx.nd.array([[3.0]]).tostype("csr"))
    assert not bool(mx.nd.array([])) and not bool(mx.nd.zeros((0, 3), stype="csr"))
    many = mx.nd.ones((2,))
    with pytest.raises(ValueError, match="not a scalar|one element") as info:
        many.asscalar()
    assert isinstance(info.value, mx.MXNetError)
    with pytest.raises(ValueError, match="multiple elements is ambiguous") as info:
        bool(many)
    assert isinstance(info.value, mx.MXNetError)


def test_attributes_mxnet_tests_touch():
    a = mx.nd.ones((2, 3), ctx=mx.cpu(1))
    assert a.context == a.ctx == mx.cpu(1) and a.stype == "default"
    assert a.wait_to_read() is None and mx.nd.waitall() is None
    csr, rsp = a.tostype("csr"), a.tostype("row_sparse")
    assert (csr._num_aux, rsp._num_aux) == (2, 1)
    assert (csr.stype, rsp.stype) == ("csr", "row_sparse")
    assert not hasattr(a, "_num_aux")  # dense arrays have none, as in MXNet
    csr.check_format()
    rsp.check_format(full_check=False)


def test_unknown_keyword_raises_mxnet_error_naming_it():
    a = mx.nd.ones((2, 2))
    cases = [lambda: mx.nd.dot(a, a, foo=1), lambda: mx.nd.zeros((2,), bar=1),
             lambda: mx.nd.sparse.retain(a.tostype("row_sparse"), [0], rows=1),
             lambda: mx.nd.sqrt(a, axis=0), lambda: mx.nd.sparse.zeros("csr", (2, 2), dtyp="f")]
    for call, name in zip(cases, ["foo", "bar", "rows", "axis", "dtyp"]):
        with pytest.raises(mx.MXNetError, match=f"cannot find argument '{name}'") as info:
            call()
        assert isinstance(info.value, TypeError)
    np.testing.assert_array_equal(mx.nd.dot(a, a, transpose_a=True).asnumpy(), np.full((2, 2), 2))
    assert mx.nd.abs is mx.nd.sparse.abs  # one wrapper per function, wherever it is exported
    with pytest.raises(TypeError, match="missing") as info:  # other binding errors stay Python's
        mx.nd.dot(a)
    assert not isinstance(info.value, mx.MXNetError)


def test_value_and_type_errors_are_mxnet_errors():
    csr = mx.nd.ones((2, 2)).tostype("csr")
    rsp = mx.nd.ones((2, 2)).tostype("row_sparse")
    value_errors = [
        lambda: mx.nd.sparse.csr_matrix((np.array([]), np.array([]), np.array([0]))),
        lambda: mx.nd.sparse.csr_matrix((np.array([]), np.array([]), np.array([0, 0]))),
        lambda: mx.nd.sparse.row_sparse_array((np.zeros((0, 2)), np.array([]))),
        lambda: csr.tostype("row_sparse"), lambda: rsp.tostype("csr"),
        lambda: rsp[1], lambda: csr[::2], lambda: csr.__setitem__(0, 1.0),
        lambda: mx.nd.sparse.zeros("coo", (2, 2)), lambda: mx.nd.sparse.array(np.ones((2, 2))),
        lambda: mx.nd.sparse.row_sparse_array(csr), lambda: mx.nd.sparse.csr_matrix(rsp),
        lambda: mx.nd.sparse.csr_matrix((1, 2, 3, 4)),
    ]
    for call in value_errors:
        with pytest.raises(ValueError) as info:
            call()
        assert isinstance(info.value, mx.MXNetError), info.value
    with pytest.raises(TypeError) as info:
        rsp[0] = 1.0
    assert isinstance(info.value, mx.MXNetError)
    inferred = mx.nd.sparse.csr_matrix(([1.0], [2], [0, 0, 1]))  # ids given: the shape is inferred
    assert inferred.shape == (2, 3)


def test_ops_read_the_read_only_index_arrays_users_see():
    csr = mx.nd.array([[0, 1, 2], [3, 0, 4]]).tostype("csr")
    indices, indptr = csr.indices, csr.indptr
    np.testing.assert_array_equal((2 <= indices).asnumpy(), [0, 1, 0, 1])  # 2 <= [1, 2, 0, 2]
    np.testing.assert_array_equal((indptr <= 2).asnumpy(), [1, 1, 0])
    with pytest.raises(mx.MXNetError, match="read-only"):
        mx.nd.elemwise_add(indices, indices, out=indices)
    np.testing.assert_array_equal(csr.indices.asnumpy(), [1, 2, 0, 2])


def test_misc_on_an_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]], ctx=mx.gpu(0))
    assert [r.asnumpy().tolist() for r in a] == [[1, 2], [3, 4]]
    assert a[1, 0].asscalar() == 3.0 and np.dtype(a) == np.float32
    assert a.tostype("csr")._num_aux == 2 and len(a.tostype("row_sparse")) == 2
    a.wait_to_read()


def test_fallback_warning_names_the_callers_line(fresh_warnings):
    csr = mx.nd.ones((2, 2)).tostype("csr")
    with pytest.warns(mx.StorageFallbackWarning) as record:
        mx.nd.log(csr)  # through the keyword-checking wrapper and the front end
    assert record[0].filename == __file__


def test_from_numpy_twice_shares_one_memory():
    """A second zero-copy from_numpy of an array the first made read-only shares it too (as
    MXNet's); an array read-only for another reason is refused."""
    values = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    first, second = mx.nd.from_numpy(values), mx.nd.from_numpy(values)
    second[2, 1] = 100
    assert values[2, 1] == 100 and first[2, 1].asscalar() == 100
    assert not values.flags.writeable
    with pytest.raises(ValueError):
        values[0, 0] = 1
    frozen = np.ones(3, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        mx.nd.from_numpy(frozen)
    np.testing.assert_array_equal(mx.nd.from_numpy(frozen, zero_copy=False).asnumpy(), frozen)


def test_getstate_and_setstate_take_mxnet_states():
    """MXNet's pickled state (``{'handle': bytes}``, recorded from MXNet 1.9.1 for
    ``mx.nd.arange(3)`` and, on a GPU, ``mx.nd.arange(1)``) round-trips; a GPU array comes
    back on the CPU here."""
    mxnet_arange3 = bytearray(b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00"
                              b"\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                              b"\x00\x00\x00\x00\x00\x00\x80?\x00\x00\x00@")
    assert mx.nd.arange(3).__getstate__() == {"handle": mxnet_arange3}
    array = mx.nd.zeros((5,))
    array.__setstate__({"handle": mxnet_arange3})
    np.testing.assert_array_equal(array.asnumpy(), [0, 1, 2])
    gpu_arange1 = bytearray(b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00"
                            b"\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
                            b"\x00\x00\x00\x00")
    array.__setstate__({"handle": gpu_arange1})
    assert array.shape == (1,) and array.asscalar() == 0
    with pytest.raises(ValueError, match="state must be a dict with the array's bytes"):
        array.__setstate__(b"junk")
    with pytest.raises(mx.MXNetError):
        array.__setstate__({"handle": b"\x00\x01"})
    assert array.shape == (1,)  # a refused state changes nothing


@pytest.mark.parametrize("source, destination, shape", [
    (range(4), range(4), (1, 2, 3, 4)), ([0, 1], [2, 3], (3, 4, 1, 2)),
    ((3, 0), (1, 0), (1, 4, 2, 3)), (0, -1, (2, 3, 4, 1)),
])
def test_moveaxis_takes_every_sequence_form(source, destination, shape):
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    got = mx.nd.moveaxis(mx.nd.array(x), source, destination)
    np.testing.assert_array_equal(got.asnumpy(), np.moveaxis(x, list(source) if isinstance(
        source, range) else source, list(destination) if isinstance(destination, range)
        else destination))
    assert got.shape == shape


@pytest.mark.parametrize("source, destination", [([0, 0], [0, 1]), ([0, 1], [1, 1]),
                                                  (3, 0), (0, -4)])
def test_moveaxis_refuses_repeated_or_missing_axes_as_numpy_does(source, destination):
    x = np.zeros((1, 2, 3), dtype=np.float32)
    with pytest.raises(ValueError):
        np.moveaxis(x, source, destination)
    with pytest.raises(ValueError, match="moveaxis"):
        mx.nd.moveaxis(mx.nd.array(x), source, destination)


def test_basic_indexing_contiguity_is_numpys():
    shape = (3, 4, 5)
    x = np.arange(60).reshape(shape)
    for key in [(slice(None),) * 3, (slice(1, 2), slice(None), slice(None)),
                (slice(None), slice(1, 3), slice(None)), (slice(None, None, 2),) + (slice(None),) * 2,
                (slice(0, 1), slice(0, 1), slice(None, None, -1)), (slice(2, 2),) * 3]:
        assert mx.nd.NDArray._basic_indexing_slice_is_contiguous(key, shape) == \
            x[key].flags.contiguous, key


def test_broadcast_like_refuses_empty_axes():
    with pytest.raises(mx.MXNetError, match="lhs_axes and rhs_axes are empty"):
        mx.nd.broadcast_like(mx.nd.ones((1, 2)), mx.nd.ones((3, 2)), lhs_axes=(), rhs_axes=())


def test_reshape_minus_one_beyond_the_input_dimensions():
    x = mx.nd.array([1.0, 2.0, 3.0])
    assert x.reshape((1, -1)).shape == (1, 3) and x.reshape((-1, 1, 1)).shape == (3, 1, 1)
    with pytest.raises(ValueError, match=r"6 elements in \(2, 3\), the array has 30"):
        mx.nd.zeros((2, 3, 5)).reshape((2, 3))


def test_reset_arrays_zeroes_every_array_in_place():
    arrays = [mx.nd.ones((2, 3)), mx.nd.ones((4,), dtype="float16"),
              mx.nd.ones((3, 2)).tostype("row_sparse"), mx.nd.ones((2, 2)).tostype("csr")]
    ids = [id(a) for a in arrays]
    mx.nd.reset_arrays(*arrays, num_arrays=len(arrays))
    assert [id(a) for a in arrays] == ids
    for array in arrays:
        np.testing.assert_array_equal(array.asnumpy(), np.zeros(array.shape))
    assert arrays[2].indices.shape == (0,) and arrays[3].data.shape == (0,)
    kept = mx.nd.ones((2,))
    with pytest.raises(TypeError, match=r"data\[1\] must be an NDArray"):
        mx.nd.reset_arrays(kept, 5)
    with pytest.raises(ValueError, match="num_arrays is 3 for 1 arrays"):
        mx.nd.reset_arrays(kept, num_arrays=3)
    np.testing.assert_array_equal(kept.asnumpy(), [1, 1])  # a refused call resets nothing


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 10), (15,), (0, 3)])
def test_dlpack_capsules_share_memory(dtype, shape):
    values = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    a = mx.nd.array(values, dtype=dtype)
    for capsule in (a.to_dlpack_for_read(), mx.nd.to_dlpack_for_read(a),
                    a.to_dlpack_for_write(), mx.nd.to_dlpack_for_write(a)):
        b = mx.nd.from_dlpack(capsule)
        assert b.dtype == np.dtype(dtype) and b.shape == shape
        np.testing.assert_array_equal(b.asnumpy(), values)
    if a.size:
        written = mx.nd.from_dlpack(a.to_dlpack_for_write())
        written[(0,) * len(shape)] = 7
        assert a.asnumpy().ravel()[0] == 7  # the same memory
    with pytest.raises(mx.MXNetError, match="dlpack must be a DLPack capsule"):
        mx.nd.from_dlpack([1, 2])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.lists(st.integers(1, 5), min_size=1, max_size=3),
       st.booleans())
def test_slice_assign_is_numpys_slice_assignment(seed, shape, scalar):
    rng = np.random.default_rng(seed)
    lead = int(rng.integers(1, len(shape) + 1))
    begin = [int(rng.integers(-n, n)) if rng.random() < 0.8 else None for n in shape[:lead]]
    end = [int(rng.integers(-n, n + 1)) if rng.random() < 0.8 else None for n in shape[:lead]]
    step = [int(rng.choice([-2, -1, 1, 2])) for _ in range(lead)]
    x = rng.standard_normal(shape).astype(np.float32)
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))
    want = x.copy()
    value = 3.5 if scalar else rng.standard_normal(x[key].shape).astype(np.float32)
    want[key] = value
    lhs = mx.nd.array(x)
    if scalar:
        got = mx.nd._internal._crop_assign_scalar(lhs, scalar=value, begin=begin, end=end,
                                                  step=step)
    else:
        got = mx.nd._internal._slice_assign(lhs, mx.nd.array(value), begin=begin, end=end,
                                            step=step)
    np.testing.assert_array_equal(got.asnumpy(), want)
    np.testing.assert_array_equal(lhs.asnumpy(), x)  # a new array unless out= says otherwise
    mx.nd._internal._slice_assign_scalar(lhs, scalar=-1.0, begin=begin, end=end, step=step,
                                         out=lhs)
    want = x.copy()
    want[key] = -1.0
    np.testing.assert_array_equal(lhs.asnumpy(), want)


def test_a_refused_slice_assign_changes_nothing():
    lhs, out = mx.nd.ones((2, 3)), mx.nd.zeros((2, 3))
    with pytest.raises(ValueError, match=r"rhs has shape \(1, 3\).* has shape \(2, 1\)"):
        mx.nd._internal._slice_assign(lhs, mx.nd.ones((1, 3)), begin=(0, 0), end=(2, 1),
                                      out=out)
    np.testing.assert_array_equal(out.asnumpy(), 0)
    with pytest.raises(mx.MXNetError, match="step\\[0\\] cannot be 0"):
        mx.nd._internal._slice_assign_scalar(lhs, scalar=1, begin=(0,), end=(1,), step=(0,))


def test_fill_element_0index_sets_one_element_per_row():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    values, ids = np.array([7, 8, 9], np.float32), np.array([0, 3, 9])  # 9: past the row
    want = x.copy()
    want[[0, 1], [0, 3]] = [7, 8]
    got = mx.nd.fill_element_0index(mx.nd.array(x), mx.nd.array(values), mx.nd.array(ids))
    np.testing.assert_array_equal(got.asnumpy(), want)
    x[0, 0] = np.nan  # a replaced nan is replaced, not propagated
    got = mx.nd.fill_element_0index(mx.nd.array(x), mx.nd.array(values), mx.nd.array(ids))
    np.testing.assert_array_equal(got.asnumpy()[0], [7, 1, 2, 3])
    with pytest.raises(ValueError, match=r"mhs \(2,\)"):
        mx.nd.fill_element_0index(mx.nd.array(x), mx.nd.array([1.0, 2.0]), mx.nd.array(ids))
