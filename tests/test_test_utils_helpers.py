"""mx.test_utils' tolerance, comparison, matrix and data helpers (test_utils.py,
test_matrices.py, test_data.py's DummyIter and download_model), against MXNet 1.9.1's
defaults and numpy / hand-computed answers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import test_utils as tu
from sparsegen.test_data import DataMissing


def test_tolerance_tables_are_mxnets():
    rtols, atols = tu.default_rtols(), tu.default_atols()
    assert rtols[np.dtype(np.float16)] == 1e-2 and atols[np.dtype(np.float16)] == 1e-1
    assert rtols[np.dtype(np.float32)] == 1e-4 and atols[np.dtype(np.float32)] == 1e-3
    assert rtols[np.dtype(np.float64)] == 1e-5 and atols[np.dtype(np.float64)] == 1e-20
    assert rtols[np.dtype(np.int64)] == 0 == atols[np.dtype(np.bool_)]
    assert tu.default_numeric_eps()[np.dtype(np.float32)] == 2.0 ** -9
    assert tu.get_tolerance(np.ones(1, np.float32), None, rtols) == 1e-4
    assert tu.get_tolerance(np.ones(1, np.float32), 0.5, rtols) == 0.5
    assert tu.get_tolerance(mx.nd.ones(1), {np.dtype(np.float32): 3.0}, rtols) == 3.0
    assert tu.effective_dtype(mx.nd.ones(1, dtype="float16")) == np.float16
    assert tu.get_etol() == 0 and tu.get_etol(0.1) == 0.1


def test_error_rate_comparison():
    a, b = np.array([1.0, 2, 3, 4]), np.array([1.0, 2, 3, 5])
    tu.assert_almost_equal_with_err(a, b, etol=0.3)  # 1 of 4 differs
    with pytest.raises(AssertionError, match="etol"):
        tu.assert_almost_equal_with_err(a, b, etol=0.2)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(a, b)
    assert tu.locationError(a, b, (3,), ("x", "y")) == \
        "Location of error: (3,), x=4.00000000, y=5.00000000"
    with pytest.raises(AssertionError, match="shape"):
        tu.checkShapes(np.ones(2), np.ones(3))


def test_same_array_and_symbol_structure():
    x = mx.nd.ones((2, 3))
    assert tu.same_array(x, x) and not tu.same_array(x, x.copy())
    assert x.asnumpy().tolist() == [[1.0] * 3] * 2  # restored
    one = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3)
    assert tu.same_symbol_structure(one, mx.sym.FullyConnected(mx.sym.var("y"), num_hidden=4))
    assert not tu.same_symbol_structure(one, mx.sym.Activation(mx.sym.var("x"),
                                                               act_type="relu"))


def test_numeric_grad_of_a_square():
    executor = mx.sym.square(mx.sym.var("x")).simple_bind(mx.cpu(), x=(2, 2))
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    grads = tu.numeric_grad(executor, {"x": x}, eps=1e-2)
    np.testing.assert_allclose(grads["x"], 2 * x, rtol=1e-3)


def test_gluon_hybridize_consistency():
    def build(prefix):
        net = mx.gluon.nn.HybridSequential(prefix=prefix)
        with net.name_scope():
            net.add(mx.gluon.nn.Dense(3, activation="relu"))
        return net

    x = mx.nd.array(np.random.RandomState(0).randn(4, 5))
    tu.check_gluon_hybridize_consistency(build, [x])
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(build, [x], numpy_func=lambda a: a[:, :3] + 100)


def test_large_tensor_builders():
    np.testing.assert_array_equal(tu.create_2d_tensor(3, 2).asnumpy(), [[0, 0], [1, 1], [2, 2]])
    assert tu.create_2d_tensor(3, 2).dtype == np.int64
    np.testing.assert_array_equal(tu.create_vector(4).asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(tu.get_identity_mat(3).asnumpy(), np.eye(3))
    np.testing.assert_array_equal(tu.get_identity_mat_batch(2).asnumpy(), [np.eye(2)] * 2)


@settings(deadline=None, max_examples=10)
@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_matrices_have_their_properties(n, seed):
    np.random.seed(seed)
    eig = np.linalg.eigvals(tu.new_matrix_with_real_eigvals_2d(n))
    assert np.allclose(eig.imag, 0, atol=1e-6) and np.all(np.abs(eig.real) <= 10 + 1e-6)
    q = tu.new_orthonormal_matrix_2d(n)
    np.testing.assert_allclose(q.T @ q, np.eye(n), atol=1e-8)
    sym = tu.new_sym_matrix_with_real_eigvals_nd((2, n, n))
    assert sym.shape == (2, n, n) and np.allclose(sym, np.swapaxes(sym, 1, 2))
    assert tu.new_matrix_with_real_eigvals_nd((3, n, n)).shape == (3, n, n)


def test_uniform_arrays_collapse_and_shuffle():
    low_high = tu.random_uniform_arrays((2, 3), (4,), low=2.0, high=3.0, dtype=np.float64)
    assert [a.shape for a in low_high] == [(2, 3), (4,)]
    assert all(a.dtype == np.float64 and a.min() >= 2 and a.max() < 3 for a in low_high)
    np.testing.assert_array_equal(tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)),
                                  np.full((3, 1), 8.0))
    assert tu.collapse_sum_like(np.ones((2, 0)), (0,)).shape == (0,)
    with pytest.raises(ValueError, match="broadcast"):
        tu.collapse_sum_like(np.ones((2, 3)), (2,))
    with pytest.raises(ValueError, match="square"):
        tu.new_matrix_with_real_eigvals_nd((2, 3))
    matrix = sps.random(6, 8, density=0.5, format="csr", random_state=0)
    dense, data, indices = matrix.toarray(), matrix.data.copy(), matrix.indices.copy()
    tu.shuffle_csr_column_indices(matrix)  # as MXNet's: the ids move, the values stay
    np.testing.assert_array_equal(matrix.data, data)
    for row in range(6):
        part = slice(matrix.indptr[row], matrix.indptr[row + 1])
        assert sorted(matrix.indices[part]) == sorted(indices[part])
    csr = mx.nd.array(dense).tostype("csr")
    tu.shuffle_csr_column_indices(csr)
    np.testing.assert_array_equal(csr.asnumpy(), dense.astype(np.float32))


def test_dummy_iter_and_download_model(tmp_path):
    real = mx.io.NDArrayIter(np.arange(12).reshape(6, 2), np.arange(6), batch_size=2)
    dummy = tu.DummyIter(real)
    first = next(dummy)
    assert all(next(dummy) is first for _ in range(5))
    assert dummy.batch_size == 2 and dummy.provide_data == real.provide_data
    assert tu.download_model("no-such-model", str(tmp_path)) == (None, 0)
    info = {"m": {"symbol": "http://x/m-symbol.json", "params": "http://x/m-0000.params"}}
    with pytest.raises(DataMissing, match="m-symbol.json"):
        tu.download_model("m", str(tmp_path), meta_info=info)
    (tmp_path / "m-symbol.json").write_text("{}")
    (tmp_path / "m-0000.params").write_text("")
    assert tu.download_model("m", str(tmp_path), meta_info=info) == (str(tmp_path / "m"), 0)
