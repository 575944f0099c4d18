"""``mx.test_utils``: comparisons against numpy's own checks, random arrays checked for shape,
storage type, dtype and density (statistically), and ``compare_optimizer``."""

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import test_utils as tu


@pytest.fixture(autouse=True)
def _seeded():
    np.random.seed(7)


def test_star_import_brings_mx_np_and_the_helpers():
    scope = {}
    exec("from sparsegen.test_utils import *", scope)  # noqa: S102 - as MXNet's tests import it
    assert scope["mx"] is mx and scope["np"] is np and scope["rnd"] is np.random
    assert scope["array"] is mx.nd.array and scope["os"].sep == "/"
    assert {"assert_almost_equal", "rand_ndarray", "Context", "default_context"} <= set(scope)


def test_default_tolerances_per_dtype():
    base = np.ones(4, np.float32)
    tu.assert_almost_equal(base, base + 9e-4)  # float32: atol 1e-3 (+ rtol 1e-4 * 1)
    with pytest.raises(AssertionError, match="Location of maximum error"):
        tu.assert_almost_equal(base, base + 2e-3)
    tu.assert_almost_equal(base.astype("float16"), base + 0.1)  # float16: 1e-2 / 1e-1
    with pytest.raises(AssertionError):  # float64 against float32 uses the larger (float32) one
        tu.assert_almost_equal(base.astype("float64"), base + 2e-3)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([3], np.int64), np.array([4], np.int64))  # exact
    tu.assert_almost_equal(base, base + 0.5, rtol=0, atol=0.5)
    tu.assert_almost_equal(base, base + 0.5, atol={np.dtype("float32"): 0.6})


def test_assert_almost_equal_names_the_worst_position():
    a = np.zeros((2, 3), np.float32)
    b = a.copy()
    b[1, 2], b[0, 0] = 1.0, 0.01
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, names=("mine", "numpy"))
    text = str(info.value)
    assert "(1, 2)" in text and "mine=" in text and "numpy=" in text and "2 of 6" in text


@settings(max_examples=10)
@given(stype=st.sampled_from(["csr", "row_sparse"]), seed=st.integers(0, 1000))
def test_assert_almost_equal_takes_sparse_arrays(stype, seed):
    values = np.random.RandomState(seed).rand(4, 3).astype(np.float32)
    values[values < 0.5] = 0
    sparse = mx.nd.array(values).tostype(stype)
    tu.assert_almost_equal(sparse, values)
    tu.assert_almost_equal(values, sparse)
    tu.assert_almost_equal(scipy.sparse.csr_matrix(values), sparse)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(sparse, values + 1)


def test_nan_handling_and_exact_helpers():
    a = np.array([1.0, np.nan], np.float32)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(a, a)
    tu.assert_almost_equal(a, a, equal_nan=True)
    tu.assert_almost_equal_ignore_nan(a, np.array([1.0, 5.0], np.float32))
    assert tu.almost_equal(a, a, equal_nan=True) and not tu.almost_equal(a, a)
    assert tu.almost_equal(np.ones(2), np.ones(2) + 5e-6) and not tu.almost_equal(np.ones(2), np.ones(2) + 2e-5)
    assert tu.same(mx.nd.array([1, 2]), np.array([1, 2])) and not tu.same(np.array([1, 2]), np.array([1, 3]))
    assert not tu.same(a, a)  # nan is not nan
    with pytest.raises(AssertionError, match="shape"):
        tu.almost_equal(np.ones(2), np.ones((1, 2)), use_broadcast=False)
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError, match="did not raise"):
        tu.assert_exception(int, ValueError, "3")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rand_ndarray_dense(dtype):
    a = tu.rand_ndarray((30, 40), dtype=dtype)
    assert (a.shape, a.stype, a.dtype) == ((30, 40), "default", np.dtype(dtype).type)
    values = a.asnumpy()
    assert abs(values.mean()) < 0.1 and 0.9 < values.std() < 1.1  # standard normal
    assert tu.rand_ndarray((3,)).dtype == np.float32


@pytest.mark.parametrize("density", [0.0, 0.1, 0.5, 1.0])
def test_rand_ndarray_row_sparse_density(density):
    rows = 2000
    a, (data, indices) = tu.rand_sparse_ndarray((rows, 3), "row_sparse", density=density)
    assert a.stype == "row_sparse" and a.shape == (rows, 3) and a.dtype == np.float32
    stored = a.indices.asnumpy()
    np.testing.assert_array_equal(stored, indices)
    np.testing.assert_array_equal(a.data.asnumpy(), data)
    sigma = np.sqrt(rows * density * (1 - density))
    assert abs(stored.size - rows * density) <= 5 * sigma + 1e-9
    assert ((data >= 0) & (data < 1)).all()


@pytest.mark.parametrize("shape, density, dtype", [((40, 50), 0.2, "float64"), ((7, 3), 1.0, "float16"),
                                                  ((10, 10), 0.0, "float32")])
def test_rand_ndarray_csr_uniform_density(shape, density, dtype):
    a = tu.rand_ndarray(shape, "csr", density=density, dtype=dtype)
    assert (a.stype, a.shape, a.dtype) == ("csr", shape, np.dtype(dtype).type)
    nnz = int(a.indptr.asnumpy()[-1])
    assert abs(nnz - shape[0] * shape[1] * density) <= 1
    a.check_format()


def test_rand_sparse_csr_parts_are_its_arrays():
    csr, (indptr, indices, data) = tu.rand_sparse_ndarray((6, 5), "csr", density=0.4)
    dense = scipy.sparse.csr_matrix((data.asnumpy(), indices.asnumpy(), indptr.asnumpy()),
                                    shape=(6, 5)).toarray()
    np.testing.assert_array_equal(csr.asnumpy(), dense)
    shuffled = tu.rand_ndarray((6, 5), "csr", density=0.4, shuffle_csr_indices=True)
    shuffled.check_format()  # sparsegen stores column ids sorted


def test_powerlaw_rows_double():
    # MXNet's docstring example: (5, 16) at density 0.5 places 40 entries, one per row first,
    # then row i grows to 2 ** (i + 1) entries; row 3 fills up and row 4 takes the rest
    csr, (indptr, indices, data) = tu.rand_sparse_ndarray((5, 16), "csr", density=0.5,
                                                          distribution="powerlaw")
    np.testing.assert_array_equal(np.diff(indptr.asnumpy()), [2, 4, 8, 16, 10])
    starts = indptr.asnumpy()
    for row in range(5):
        np.testing.assert_array_equal(indices.asnumpy()[starts[row]:starts[row + 1]],
                                      np.arange(starts[row + 1] - starts[row]))
    values = data.asnumpy()
    assert ((values > 1.001) & (values < 3)).all()
    with pytest.raises(ValueError, match="powerlaw"):
        tu.rand_ndarray((10, 2), "csr", density=0.5, distribution="powerlaw")


def test_bad_requests_raise_value_errors():
    for call in (lambda: tu.rand_ndarray((3, 3), "csr", density=1.5),
                 lambda: tu.rand_ndarray((3, 3, 3), "csr", density=0.5),
                 lambda: tu.rand_ndarray((3, 3), "row_sparse", distribution="powerlaw"),
                 lambda: tu.rand_ndarray((3, 3), "csr", distribution="zipf"),
                 lambda: tu.rand_ndarray((3, 3), "coo"),
                 lambda: tu.create_sparse_array((3, 3), "coo")):
        with pytest.raises(ValueError):
            call()


def test_modifier_data_init_and_rsp_indices():
    a, (data, _) = tu.rand_sparse_ndarray((6, 2), "row_sparse", density=1.0,
                                          modifier_func=lambda x: -x)
    assert (data <= 0).all() and a.asnumpy().min() <= 0
    b = tu.create_sparse_array((6, 2), "row_sparse", data_init=3.0, rsp_indices=[4, 1])
    np.testing.assert_array_equal(b.indices.asnumpy(), [1, 4])
    np.testing.assert_array_equal(b.data.asnumpy(), np.full((2, 2), 3.0))
    zd = tu.create_sparse_array_zd((6, 2), "row_sparse", density=0.9, rsp_indices=[2])
    np.testing.assert_array_equal(zd.indices.asnumpy(), [2])
    assert tu.create_sparse_array_zd((6, 2), "row_sparse", density=0.9).indices.shape == (0,)
    csr = tu.create_sparse_array_zd((6, 4), "csr", density=0.5, data_init=2.0)
    assert set(csr.data.asnumpy().tolist()) <= {2.0}


def test_random_shapes_are_in_range():
    for _ in range(50):
        r, c = tu.rand_shape_2d(3, 4)
        assert 1 <= r <= 3 and 1 <= c <= 4
        assert all(1 <= d <= 5 for d in tu.rand_shape_3d(5, 5, 5))
        nd = tu.rand_shape_nd(4, 2, allow_zero_size=True)
        assert len(nd) == 4 and all(0 <= d <= 2 for d in nd)
        x, y = tu.rand_coord_2d(0, 3, 10, 12)
        assert 0 <= x < 3 and 10 <= y < 12
    assert {tu.rand_shape_2d(1, 1, allow_zero_size=True) for _ in range(60)} > {(0, 0)}


@settings(max_examples=20)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=4), keepdims=st.booleans(),
       data=st.data())
def test_np_reduce_matches_numpy(shape, keepdims, data):
    values = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a % len(shape)))
    expected = np.sum(values, axis=tuple(axes) if axes else None, keepdims=keepdims)
    got = tu.np_reduce(values, axes if axes else None, keepdims, np.sum)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(tu.np_reduce(values, 0, True, np.max), values.max(0, keepdims=True))


def test_contexts_and_gpus(monkeypatch):
    assert tu.default_context() == mx.cpu(0) and tu.default_dtype() is np.float32
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))


@pytest.mark.parametrize("w_stype, g_stype", [("default", "default"), ("row_sparse", "row_sparse"),
                                              ("default", "row_sparse")])
def test_compare_optimizer(w_stype, g_stype):
    same_kind = (mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                 mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    tu.compare_optimizer(*same_kind, (5, 3), "float32", w_stype, g_stype)
    differing = (mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.2))
    with pytest.raises(AssertionError):
        tu.compare_optimizer(*differing, (5, 3), "float32", w_stype, "default")
