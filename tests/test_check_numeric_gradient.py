"""``mx.test_utils.check_numeric_gradient`` on functions of NDArrays: it passes on correct
gradients (dense, broadcast, csr · row_sparse, by position and by name, ``grad_req`` add and
null) and raises ``AssertionError`` on a wrong ``autograd.Function`` backward."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import sparsegen as mx
from sparsegen import autograd
from sparsegen.test_utils import check_numeric_gradient

nd = mx.nd


class _Cube(autograd.Function):
    """``x³`` with a backward ``factor * x² * g`` (3 is right)."""

    factor = 3.0

    def forward(self, x):
        self.save_for_backward(x)
        return x * x * x

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * x * x * self.factor


class _WrongCube(_Cube):
    factor = 2.0


def test_passes_on_correct_gradients_by_position():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (1, 4))
    check_numeric_gradient(lambda x, y: nd.broadcast_mul(nd.tanh(x), y) + nd.square(y),
                           [a, nd.array(b)])


def test_passes_by_name_with_aux_states_and_grad_nodes():
    rng = np.random.default_rng(2)
    location = {"x": rng.uniform(0.5, 2, (2, 3)), "y": rng.uniform(-1, 1, (2, 3))}
    shift = nd.array(rng.uniform(size=(2, 3)))
    check_numeric_gradient(lambda x, y, shift: nd.log(x) * y + shift, location,
                           aux_states={"shift": shift}, grad_nodes=["x"])


def test_user_function_right_backward_passes_wrong_one_fails():
    x = [np.random.default_rng(3).uniform(0.5, 1.5, (2, 3))]
    check_numeric_gradient(lambda a: _Cube()(a), x)
    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_numeric_gradient(lambda a: _WrongCube()(a), x)


def test_csr_times_row_sparse_gradient():
    rng = np.random.default_rng(4)
    data = scipy.sparse.random(4, 5, density=0.4, random_state=5, format="csr")
    w = rng.uniform(-1, 1, (5, 3))
    check_numeric_gradient(lambda c, v: nd.dot(c, v), [data, w], grad_nodes=[1],
                           grad_stype_dict={1: "row_sparse"})


def test_grad_req_add_and_null():
    rng = np.random.default_rng(6)
    a, b = rng.uniform(-1, 1, (3,)), rng.uniform(-1, 1, (3,))
    check_numeric_gradient(lambda x, y: x * y, [a, b], grad_nodes={0: "add", 1: "null"})


def test_multiple_outputs():
    a = np.random.default_rng(7).uniform(-1, 1, (2, 2))
    check_numeric_gradient(lambda x: [nd.exp(x), nd.sum(x * x, axis=1)], [a])


def test_bad_arguments():
    class _SymbolLike:
        def list_arguments(self):
            return ["data"]

    with pytest.raises(NotImplementedError, match="Symbol"):
        check_numeric_gradient(_SymbolLike(), [np.ones(2)])
    with pytest.raises(mx.MXNetError):
        check_numeric_gradient(_SymbolLike(), [np.ones(2)])
    with pytest.raises(ValueError, match="dtype"):
        check_numeric_gradient(lambda x: x, [np.ones(2)], dtype=np.int32)
    with pytest.raises(ValueError, match="grad_nodes"):
        check_numeric_gradient(lambda x: x, [np.ones(2)], grad_nodes=["z"])
    with pytest.raises(ValueError, match="grad_req"):
        check_numeric_gradient(lambda x: x, [np.ones(2)], grad_nodes={0: "sometimes"})
    with pytest.raises(ValueError, match="output 0"):
        check_numeric_gradient(lambda x: 1.0, [np.ones(2)])
    with pytest.raises(ValueError, match="numeric_eps"):
        check_numeric_gradient(lambda x: x, [np.ones(2)], numeric_eps=1e-7)
