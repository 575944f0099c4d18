"""mx.autograd: recording, backward, grad, variables and Function; every gradient rule against
numpy oracles (analytic derivatives, central differences in float64, or the exact transpose of
a linear op computed on basis vectors)."""

import numpy as np
import pytest
import scipy.sparse
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import isolated
import sparsegen as mx
from sparsegen import autograd, tape
from sparsegen.autograd.gradients import GRADIENTS
from sparsegen.autograd.gradients.elemwise import _UNARY

RTOL, ATOL = 2e-3, 2e-4


def variable(values, stype=None, grad_stype=None, req="write"):
    x = mx.nd.array(np.asarray(values, np.float32))
    if stype:
        x = x.tostype(stype)
    x.attach_grad(req, stype=grad_stype)
    return x


def numeric(f, x: np.ndarray, w: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """The gradient of ``sum(f(x) * w)`` by central differences, in float64."""
    x = x.astype(np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        grad[i] = np.sum((f(up) - f(down)) * w) / (2 * h)
    return grad


def linear_transpose(f, shape, w: np.ndarray) -> np.ndarray:
    """The exact gradient of ``sum(f(x) * w)`` for a linear ``f``: f applied to basis vectors."""
    grad = np.zeros(shape)
    for i in np.ndindex(shape):
        basis = np.zeros(shape)
        basis[i] = 1
        grad[i] = np.sum(f(basis) * w)
    return grad


def backward_of(function, x, w):
    """``x.grad`` after ``sum(function(x) * w)``'s backward."""
    with autograd.record():
        loss = mx.nd.sum(function(x) * mx.nd.array(w.astype(np.float32)))
    loss.backward()
    return x.grad


# -- flags and scopes ---------------------------------------------------------------------------
def test_flags_are_per_thread_and_a_new_thread_starts_off():
    """A thread started inside ``record()`` neither records nor trains until it says so, and
    what it sets does not reach the thread that started it."""
    import threading

    seen = []

    def other():
        seen.append((autograd.is_recording(), autograd.is_training()))
        autograd.set_recording(True)
        autograd.set_training(True)
        seen.append((autograd.is_recording(), autograd.is_training()))

    with autograd.record(train_mode=False):
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        assert autograd.is_recording() and not autograd.is_training()
    assert seen == [(False, False), (True, True)]
    assert not autograd.is_recording() and not autograd.is_training()


def test_record_pause_and_modes_nest_and_restore():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
            with autograd.train_mode():
                assert autograd.is_training() and not autograd.is_recording()
        with autograd.predict_mode():
            assert autograd.is_recording() and not autograd.is_training()
        assert autograd.is_training()
    with autograd.record(train_mode=False):
        assert autograd.is_recording() and not autograd.is_training()
    assert not autograd.is_recording() and not autograd.is_training()
    assert autograd.set_recording(True) is False
    assert autograd.set_recording(False) is True


# -- unary, scalar and binary elementwise ops ---------------------------------------------------
_DOMAIN = {"arccosh": (1.2, 3.0), "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9),
           "arctanh": (-0.9, 0.9), "log": (0.2, 3.0), "log10": (0.2, 3.0), "log2": (0.2, 3.0),
           "sqrt": (0.2, 3.0), "rsqrt": (0.2, 3.0), "cbrt": (0.2, 3.0), "log1p": (-0.5, 3.0),
           "erfinv": (-0.9, 0.9), "gamma": (0.2, 3.0), "gammaln": (0.2, 3.0),
           "reciprocal": (0.2, 3.0), "rcbrt": (0.2, 3.0)}
_NUMPY = {"relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
          "negative": np.negative, "rsqrt": lambda x: 1 / np.sqrt(x), "degrees": np.degrees,
          "radians": np.radians, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
          "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
          "erf": scipy.special.erf, "erfinv": scipy.special.erfinv, "gamma": scipy.special.gamma,
          "gammaln": scipy.special.gammaln, "softsign": lambda x: x / (1 + np.abs(x)),
          "rcbrt": lambda x: 1 / np.cbrt(x)}


@settings(max_examples=3)
@pytest.mark.parametrize("op", sorted(_UNARY))
@given(seed=st.integers(0, 2**16), shape=st.sampled_from([(3,), (2, 3), (1, 4)]))
def test_unary_gradients_match_central_differences(op, seed, shape):
    rng = np.random.default_rng(seed)
    lo, hi = _DOMAIN.get(op, (-2.0, 2.0))
    x = rng.uniform(lo, hi, shape)
    if op in ("abs", "relu"):
        x = np.where(np.abs(x) < 0.05, 0.5, x)  # away from the kink
    w = rng.normal(size=shape)
    function = _NUMPY.get(op) or getattr(np, op)
    got = backward_of(getattr(mx.nd, op), variable(x), w)
    np.testing.assert_allclose(got.asnumpy(), numeric(function, x.astype(np.float32), w),
                               rtol=RTOL, atol=ATOL)


_SCALAR_CASES = {
    "x + 3": (lambda x: x + 3, lambda x: x + 3), "x - 3": (lambda x: x - 3, lambda x: x - 3),
    "3 - x": (lambda x: 3 - x, lambda x: 3 - x), "x * 3": (lambda x: x * 3, lambda x: x * 3),
    "x / 4": (lambda x: x / 4, lambda x: x / 4), "4 / x": (lambda x: 4 / x, lambda x: 4 / x),
    "x ** 3": (lambda x: x ** 3, lambda x: x ** 3), "2 ** x": (lambda x: 2 ** x, lambda x: 2 ** x),
    "maximum(x, 1)": (lambda x: mx.nd.maximum(x, 1.0), lambda x: np.maximum(x, 1.0)),
    "minimum(x, 1)": (lambda x: mx.nd.minimum(x, 1.0), lambda x: np.minimum(x, 1.0)),
    "clip": (lambda x: mx.nd.clip(x, 0.5, 1.5), lambda x: np.clip(x, 0.5, 1.5)),
}


@pytest.mark.parametrize("case", sorted(_SCALAR_CASES))
def test_scalar_op_gradients(case):
    ours, theirs = _SCALAR_CASES[case]
    x = np.array([[0.3, 0.7, 1.3], [1.7, 2.2, 2.9]])  # away from the kinks at 0.5, 1 and 1.5
    w = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
    got = backward_of(ours, variable(x), w)
    np.testing.assert_allclose(got.asnumpy(), numeric(theirs, x.astype(np.float32), w),
                               rtol=RTOL, atol=ATOL)


_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "divide": np.divide, "power": np.power, "maximum": np.maximum,
           "minimum": np.minimum, "broadcast_hypot": np.hypot}


@settings(max_examples=4)
@pytest.mark.parametrize("op", sorted(_BINARY))
@given(shapes=st.sampled_from([((2, 3), (2, 3)), ((2, 3), (1, 3)), ((2, 1), (1, 3)),
                               ((3,), (2, 3)), ((2, 2, 3), (3,))]), seed=st.integers(0, 2**16))
def test_binary_gradients_sum_back_to_each_operand(op, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(0.5, 2.0, s) for s in shapes)
    out_shape = np.broadcast_shapes(*shapes)
    w = rng.normal(size=out_shape)
    x, y = variable(a), variable(b)
    with autograd.record():
        loss = mx.nd.sum(getattr(mx.nd, op)(x, y) * mx.nd.array(w.astype(np.float32)))
    loss.backward()
    f = _BINARY[op]
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(x.grad.asnumpy(), numeric(lambda v: f(v, b32), a32, w),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(y.grad.asnumpy(), numeric(lambda v: f(a32, v), b32, w),
                               rtol=RTOL, atol=ATOL)


def test_comparisons_and_rounding_have_zero_gradients():
    x = variable([[0.4, 1.6], [-2.2, 3.0]])
    with autograd.record():
        loss = mx.nd.sum(mx.nd.floor(x) + (x > 1) * 2 + x)
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.ones((2, 2)))


def test_add_n_and_where():
    a, b = variable([1.0, 2.0, 3.0]), variable([4.0, 5.0, 6.0])
    condition = mx.nd.array([1.0, 0.0, 1.0])
    with autograd.record():
        loss = mx.nd.sum(mx.nd.add_n(a, b, a) * mx.nd.array([1.0, 2.0, 3.0])
                         + mx.nd.where(condition, a, b))
    loss.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [2 + 1, 4 + 0, 6 + 1])
    np.testing.assert_allclose(b.grad.asnumpy(), [1 + 0, 2 + 1, 3 + 0])


# -- dot, FullyConnected, Embedding, take --------------------------------------------------------
@settings(max_examples=6)
@given(m=st.integers(1, 6), k=st.integers(1, 5), n=st.integers(1, 4),
       density=st.sampled_from((0.0, 0.3, 1.0)), seed=st.integers(0, 2**16),
       grad_stype=st.sampled_from(("default", "row_sparse")))
def test_dot_csr_gives_the_weight_csr_transpose_times_the_gradient(m, k, n, density, seed,
                                                                   grad_stype):
    rng = np.random.default_rng(seed)
    a = scipy.sparse.random(m, k, density=density, format="csr", dtype=np.float32,
                            random_state=seed)
    w0 = rng.normal(size=(k, n)).astype(np.float32)
    g = rng.normal(size=(m, n)).astype(np.float32)
    w = variable(w0, grad_stype=grad_stype)
    with autograd.record():
        loss = mx.nd.sum(mx.nd.dot(mx.nd.sparse.csr_matrix(a), w) * mx.nd.array(g))
    loss.backward()
    assert w.grad.stype == grad_stype
    np.testing.assert_allclose(w.grad.asnumpy(), a.T @ g, rtol=1e-5, atol=1e-5)
    if grad_stype == "row_sparse":  # the rows some stored entry reaches, no more
        np.testing.assert_array_equal(w.grad.indices.asnumpy(), np.unique(a.indices))


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_dense_dot_gradients_for_every_transpose(ta, tb):
    rng = np.random.default_rng(3)
    a0, b0 = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    a0, b0 = (a0.T if ta else a0), (b0.T if tb else b0)
    w = rng.normal(size=(3, 2))
    a, b = variable(a0), variable(b0)
    with autograd.record():
        loss = mx.nd.sum(mx.nd.dot(a, b, transpose_a=ta, transpose_b=tb)
                         * mx.nd.array(w.astype(np.float32)))
    loss.backward()
    op_a = (lambda v: v.T) if ta else (lambda v: v)
    op_b = (lambda v: v.T) if tb else (lambda v: v)
    np.testing.assert_allclose(a.grad.asnumpy(), linear_transpose(
        lambda v: op_a(v) @ op_b(b0), a0.shape, w), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), linear_transpose(
        lambda v: op_a(a0) @ op_b(v), b0.shape, w), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_stype", ["default", "csr", "row_sparse"])
def test_fully_connected_gradients(data_stype):
    rng = np.random.default_rng(5)
    x0 = np.where(rng.random((4, 6)) < 0.5, rng.normal(size=(4, 6)), 0.0)
    w0, b0 = rng.normal(size=(3, 6)), rng.normal(size=(3,))
    g = rng.normal(size=(4, 3))
    x = mx.nd.array(x0.astype(np.float32)).tostype(data_stype)
    w, b = variable(w0), variable(b0)
    if data_stype == "default":
        x.attach_grad()
    with autograd.record():
        out = mx.nd.FullyConnected(x, w, b, num_hidden=3)
        loss = mx.nd.sum(out * mx.nd.array(g.astype(np.float32)))
    loss.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), g.T @ x0, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), g.sum(0), rtol=1e-4, atol=1e-5)
    if data_stype == "default":
        np.testing.assert_allclose(x.grad.asnumpy(), g @ w0, rtol=1e-4, atol=1e-5)


@settings(max_examples=8)
@given(ids=st.lists(st.integers(-2, 12), min_size=0, max_size=9), sparse=st.booleans(),
       grad_stype=st.sampled_from(("default", "row_sparse")))
def test_embedding_gradient_sums_the_rows_of_each_id(ids, sparse, grad_stype):
    weight = variable(np.arange(30.0).reshape(10, 3) / 7, grad_stype=grad_stype)
    g = np.arange(len(ids) * 3, dtype=np.float64).reshape(len(ids), 3) - 4
    with autograd.record():
        out = mx.nd.Embedding(mx.nd.array(ids), weight, input_dim=10, output_dim=3,
                              sparse_grad=sparse)
        loss = mx.nd.sum(out * mx.nd.array(g.astype(np.float32)))
    loss.backward()
    want = np.zeros((10, 3))
    np.add.at(want, np.clip(ids, 0, 9).astype(int), g)
    assert weight.grad.stype == grad_stype
    np.testing.assert_allclose(weight.grad.asnumpy(), want)
    if grad_stype == "row_sparse":
        np.testing.assert_array_equal(weight.grad.indices.asnumpy(), np.unique(np.clip(ids, 0, 9)))


def test_take_row_sparse_gradient_and_wrap_mode():
    a = variable(np.ones((5, 2)), grad_stype="row_sparse")
    with autograd.record():
        loss = mx.nd.sum(mx.nd.take(a, mx.nd.array([6, 1, -1]), mode="wrap")
                         * mx.nd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    loss.backward()
    np.testing.assert_array_equal(a.grad.indices.asnumpy(), [1, 4])
    np.testing.assert_allclose(a.grad.data.asnumpy(), [[4.0, 6.0], [5.0, 6.0]])


# -- nn: activations, softmax, pick --------------------------------------------------------------
_ACT = {"relu": lambda x: np.maximum(x, 0), "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "tanh": np.tanh, "softrelu": lambda x: np.log1p(np.exp(x)),
        "softsign": lambda x: x / (1 + np.abs(x))}


@pytest.mark.parametrize("act_type", sorted(_ACT))
def test_activation_gradients(act_type):
    x = np.array([[-1.5, -0.4, 0.3], [0.8, 1.9, -2.6]])
    w = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]])
    got = backward_of(lambda v: mx.nd.Activation(v, act_type=act_type), variable(x), w)
    np.testing.assert_allclose(got.asnumpy(), numeric(_ACT[act_type], x.astype(np.float32), w),
                               rtol=RTOL, atol=ATOL)


def _np_softmax(x, axis, t, log):
    z = x / t
    z = z - z.max(axis=axis, keepdims=True)
    if log:
        return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
    return np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("axis,t", [(-1, 1.0), (0, 1.0), (1, 2.0)])
def test_softmax_gradients(log, axis, t):
    rng = np.random.default_rng(7)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    op = mx.nd.log_softmax if log else mx.nd.softmax
    got = backward_of(lambda v: op(v, axis=axis, temperature=t), variable(x), w)
    want = numeric(lambda v: _np_softmax(v, axis, t, log), x.astype(np.float32), w)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("axis,keepdims", [(-1, False), (0, False), (1, True)])
def test_pick_gradient_lands_on_the_picked_elements(axis, keepdims):
    x0 = np.arange(12.0).reshape(3, 4)
    index = np.array([1, 7, -3, 0])[: x0.shape[1 - axis % 2]] if axis == 0 else np.array([3, 0, 2])
    x = variable(x0)
    idx = mx.nd.array(index if not keepdims else np.expand_dims(index, axis))
    with autograd.record():
        out = mx.nd.pick(x, idx, axis=axis, keepdims=keepdims)
        loss = mx.nd.sum(out * mx.nd.array(np.arange(1.0, out.size + 1).reshape(out.shape)))
    loss.backward()
    clipped = np.clip(index, 0, x0.shape[axis] - 1)
    want = np.zeros_like(x0)
    for j, c in enumerate(clipped):
        want[(c, j) if axis == 0 else (j, c)] = j + 1
    np.testing.assert_allclose(x.grad.asnumpy(), want)


# -- reductions ----------------------------------------------------------------------------------
_REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
           "nansum": np.nansum, "norm": lambda v, axis, keepdims: np.sqrt(
               np.sum(v * v, axis=axis, keepdims=keepdims))}


@settings(max_examples=4)
@pytest.mark.parametrize("op", sorted(_REDUCE))
@given(axis=st.sampled_from([None, 0, 1, -1, (0, 2)]), keepdims=st.booleans(),
       seed=st.integers(0, 2**16))
def test_reduction_gradients(op, axis, keepdims, seed):
    rng = np.random.default_rng(seed)
    x = rng.permutation(24).reshape(2, 3, 4) / 7 + 0.5  # distinct: max and min have one winner
    out_shape = np.sum(x, axis=axis, keepdims=keepdims).shape
    w = rng.normal(size=out_shape)
    got = backward_of(lambda v: getattr(mx.nd, op)(v, axis=axis, keepdims=keepdims),
                      variable(x), w)
    want = numeric(lambda v: _REDUCE[op](v, axis=axis, keepdims=keepdims), x.astype(np.float32), w)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
@pytest.mark.parametrize("op,axis", [("sum", 0), ("sum", 1), ("mean", 0), ("sum", None)])
def test_sparse_reductions_give_dense_gradients(stype, op, axis):
    x0 = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 3.0]])
    x = variable(x0, stype=stype, grad_stype="default")
    w = np.arange(1.0, 4.0) if axis is not None else np.array(2.0)
    with autograd.record():
        out = getattr(mx.nd, op)(x, axis=axis)
        loss = mx.nd.sum(out * mx.nd.array(np.asarray(w, np.float32)))
    loss.backward()
    scale = 1 / 3 if op == "mean" else 1
    want = np.broadcast_to(np.expand_dims(w, axis) if axis is not None else w, x0.shape) * scale
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)


# -- shape and indexing ops ----------------------------------------------------------------------
_VIEWS = {
    "transpose": (lambda v: mx.nd.transpose(v, axes=(2, 0, 1)), lambda v: v.transpose(2, 0, 1)),
    "swapaxes": (lambda v: mx.nd.swapaxes(v, 0, 2), lambda v: v.swapaxes(0, 2)),
    "flip": (lambda v: mx.nd.flip(v, axis=1), lambda v: v[:, ::-1]),
    "reshape": (lambda v: mx.nd.reshape(v, (4, -1)), lambda v: v.reshape(4, -1)),
    "method reshape": (lambda v: v.reshape((3, 8)), lambda v: v.reshape(3, 8)),
    "expand_dims": (lambda v: mx.nd.expand_dims(v, 1), lambda v: v[:, None]),
    "flatten": (lambda v: mx.nd.flatten(v), lambda v: v.reshape(2, -1)),
    "tile": (lambda v: mx.nd.tile(v, (2, 1, 2)), lambda v: np.tile(v, (2, 1, 2))),
    "repeat": (lambda v: mx.nd.repeat(v, 2, axis=1), lambda v: np.repeat(v, 2, axis=1)),
    "broadcast_to": (lambda v: mx.nd.broadcast_to(mx.nd.slice_axis(v, 1, 0, 1), (2, 5, 4)),
                     lambda v: np.broadcast_to(v[:, :1], (2, 5, 4))),
    "slice": (lambda v: mx.nd.slice(v, (0, 1), (2, 3)), lambda v: v[0:2, 1:3]),
    "slice step": (lambda v: mx.nd.slice(v, (None, None, 3), (None, None, 0), (1, -1, -2)),
                   lambda v: v[:, ::-1, 3:0:-2]),
    "slice_axis": (lambda v: mx.nd.slice_axis(v, axis=2, begin=1, end=3), lambda v: v[:, :, 1:3]),
    "getitem": (lambda v: v[1], lambda v: v[1]),
    "concat": (lambda v: mx.nd.concat(v, v * 2, dim=1), lambda v: np.concatenate([v, v * 2], 1)),
    "stack": (lambda v: mx.nd.stack(v, v, axis=1), lambda v: np.stack([v, v], axis=1)),
    "split": (lambda v: mx.nd.split(v, 3, axis=1)[2], lambda v: np.split(v, 3, axis=1)[2]),
}


@pytest.mark.parametrize("case", sorted(_VIEWS))
def test_shape_op_gradients_are_the_transposed_copies(case):
    ours, theirs = _VIEWS[case]
    x0 = np.arange(24.0).reshape(2, 3, 4)
    w = np.random.default_rng(1).normal(size=theirs(x0).shape)
    got = backward_of(ours, variable(x0), w)
    np.testing.assert_allclose(got.asnumpy(), linear_transpose(theirs, x0.shape, w),
                               rtol=1e-5, atol=1e-5)


# -- the backward pass: requests, accumulation, graphs --------------------------------------------
def test_grad_req_write_overwrites_and_add_accumulates():
    x, y = variable([1.0, 2.0]), variable([1.0, 2.0], req="add")
    for _ in range(2):
        with autograd.record():
            loss = mx.nd.sum(x * x) + mx.nd.sum(y * 3)
        loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0])
    np.testing.assert_allclose(y.grad.asnumpy(), [6.0, 6.0])


def test_row_sparse_gradients_accumulate_as_row_sparse():
    weight = variable(np.ones((6, 2)), grad_stype="row_sparse", req="add")
    for ids in ([1.0, 3.0], [3.0, 5.0]):
        with autograd.record():
            loss = mx.nd.sum(mx.nd.Embedding(mx.nd.array(ids), weight, input_dim=6,
                                             output_dim=2, sparse_grad=True))
        loss.backward()
    assert weight.grad.stype == "row_sparse"
    np.testing.assert_array_equal(weight.grad.indices.asnumpy(), [1, 3, 5])
    np.testing.assert_allclose(weight.grad.data.asnumpy(), [[1, 1], [2, 2], [1, 1]])


def test_a_value_used_twice_sums_both_paths_and_head_grads_weight_heads():
    x = variable([1.0, -2.0, 3.0])
    with autograd.record():
        y = x * 2
        z = y * y + y
        u = mx.nd.exp(x)
    autograd.backward([z, u], [mx.nd.array([1.0, 2.0, 0.5]), mx.nd.ones((3,))])
    x0 = np.array([1.0, -2.0, 3.0])
    want = (8 * x0 + 2) * np.array([1.0, 2.0, 0.5]) + np.exp(x0)
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


def test_ndarray_backward_runs_the_pass_autograd_installed_in_the_tape():
    # NDArray.backward (the front end) reaches mx.autograd's pass through tape.py, below both
    assert tape._backward_pass is autograd.backward
    # in a fresh process whose code names neither mx.autograd nor sparsegen.autograd
    assert isolated.result("""
        from sparsegen import tape
        from sparsegen.ndarray import array
        x = array([1.0, 2.0])
        x.attach_grad()
        tape.set_recording(True)
        y = x * 3
        tape.set_recording(False)
        y.backward()
        result = x.grad
    """) == [3.0, 3.0]
    assert isolated.result("""
        import sparsegen as mx
        x = mx.nd.array([1.0])
        x.attach_grad()
        with mx.autograd.record():
            y = x * 2
        y.backward()
        result = x.grad
    """) == [2.0]


def test_backward_frees_the_graph_unless_retained():
    x = variable([1.0, 2.0])
    with autograd.record():
        y = mx.nd.sum(x * x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0])
    with pytest.raises(mx.MXNetError, match="retain_graph"):
        y.backward()


def test_autograd_grad_returns_gradients_and_leaves_buffers():
    x = variable([1.0, 2.0], grad_stype="default")
    w = variable(np.zeros((4, 2)), grad_stype="row_sparse")
    with autograd.record():
        loss = mx.nd.sum(x * x) + mx.nd.sum(mx.nd.Embedding(mx.nd.array([2.0]), w, 4, 2))
    gx, gw = autograd.grad(loss, [x, w])
    np.testing.assert_allclose(gx.asnumpy(), [2.0, 4.0])
    assert gw.stype == "row_sparse" and gw.indices.asnumpy().tolist() == [2]
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])
    with autograd.record():
        tripled = mx.nd.sum(x * 3)
    (alone,) = autograd.grad(tripled, x)  # one variable: a list too, as MXNet's
    np.testing.assert_allclose(alone.asnumpy(), [3.0, 3.0])


def test_untracked_heads_inplace_updates_and_detach():
    x = variable([1.0, 2.0])
    plain = mx.nd.array([1.0, 2.0])
    with autograd.record():
        y = plain * 2
    with pytest.raises(mx.MXNetError, match="not in a recorded graph"):
        y.backward()
    with autograd.record():
        z = x * 2
        with pytest.raises(mx.MXNetError, match="in-place"):
            z += 1
        with pytest.raises(mx.MXNetError, match="in-place"):
            z[0] = 5
        with pytest.raises(mx.MXNetError, match="write into"):
            mx.nd.exp(z, out=z)
        loss = mx.nd.sum(z * z.detach())
    np.testing.assert_allclose(z.asnumpy(), [2.0, 4.0])  # the refused updates changed nothing
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0, 8.0])  # d/dx 2x * const(2x)


def test_ops_outside_record_are_not_recorded_and_attach_grad_cuts_history():
    x = variable([1.0, 2.0])
    y = x * 3
    assert y._entry is None
    with autograd.record():
        y = x * 3
        y.attach_grad()
        z = mx.nd.sum(y * y)
    z.backward()
    np.testing.assert_allclose(y.grad.asnumpy(), [6.0, 12.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])


def test_mark_variables_and_bad_arguments():
    x, buffer = mx.nd.array([1.0, 2.0]), mx.nd.zeros((2,))
    autograd.mark_variables([x], [buffer])
    with autograd.record():
        y = mx.nd.sum(x * x)
    y.backward()
    np.testing.assert_allclose(buffer.asnumpy(), [2.0, 4.0])
    with pytest.raises(ValueError, match="grad_req"):
        x.attach_grad("sometimes")
    with pytest.raises(ValueError, match="shape"):
        autograd.mark_variables([x], [mx.nd.zeros((3,))])
    with pytest.raises(ValueError, match="head_grads"):
        autograd.backward([y], [mx.nd.ones((1,)), mx.nd.ones((1,))])


def test_an_op_without_a_gradient_raises_when_backward_reaches_it():
    x = variable([3.0, 1.0, 2.0])
    with autograd.record():
        y = mx.nd.random.shuffle(x)  # not differentiable in MXNet 1.9.1 either
    with pytest.raises(mx.MXNetError, match="_shuffle has no gradient"):
        y.backward()


class _Scale(autograd.Function):
    def forward(self, x, y):
        self.save_for_backward(x, y)
        return x * y, x + 0

    def backward(self, g1, g2):
        x, y = self.saved_tensors
        return g1 * y + g2, g1 * x


def test_function_runs_the_user_backward():
    x, y = variable([1.0, 2.0]), variable([3.0, 4.0])
    with autograd.record():
        a, b = _Scale()(x, y)
        loss = mx.nd.sum(a * 2 + b)
    loss.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [7.0, 9.0])
    np.testing.assert_allclose(y.grad.asnumpy(), [2.0, 4.0])
    scale = _Scale()
    with autograd.record():
        scale(x, y)
        with pytest.raises(mx.MXNetError, match="once"):
            scale(x, y)


def test_every_differentiable_rule_is_an_op_the_registry_knows():
    from sparsegen.storage_rules import COMPOSED_OPS, STORAGE_RULES

    ops = ({key[0].split("->")[0] for key in STORAGE_RULES} | set(COMPOSED_OPS)
           | {"_getitem_advanced"})  # NDArray[...]
    assert set(GRADIENTS) <= ops, sorted(set(GRADIENTS) - ops)


def _rsp_variable(rows: list[int], shape=(6, 3)):
    x = np.zeros(shape, np.float32)
    x[rows] = np.arange(1, len(rows) * shape[1] + 1, dtype=np.float32).reshape(len(rows), -1)
    v = mx.nd.array(x).tostype("row_sparse")
    v.attach_grad(stype="row_sparse")
    return v, x


def test_a_fresh_row_sparse_gradient_moves_into_its_buffer_and_a_shared_one_is_copied():
    csr = scipy.sparse.random(5, 7, density=0.4, format="csr", dtype=np.float32, random_state=3)
    w = mx.nd.array(np.ones((7, 3), np.float32))
    w.attach_grad(stype="row_sparse")
    head = np.arange(15, dtype=np.float32).reshape(5, 3)
    with autograd.record():
        y = mx.nd.sparse.dot(mx.nd.sparse.csr_matrix(csr), w)
    y.backward(mx.nd.array(head))
    assert w.grad.stype == "row_sparse"
    np.testing.assert_allclose(w.grad.asnumpy(), csr.T @ head, rtol=1e-6)
    # one gradient array reaches two variables, and the head gradient is the user's: each
    # buffer gets its own copy, sharing memory with neither the other nor the user's array
    a, xa = _rsp_variable([1, 4])
    b, xb = _rsp_variable([1, 4])
    given = mx.nd.array(np.full((6, 3), 2.0, np.float32)).tostype("row_sparse")
    with autograd.record():
        s = a + b
    s.backward(given)
    buffers = [a.grad._storage.data, b.grad._storage.data, given._storage.data]
    assert not any(np.shares_memory(p, q) for i, p in enumerate(buffers) for q in buffers[i + 1:])
    for v in (a, b):
        np.testing.assert_allclose(v.grad.asnumpy(), np.full((6, 3), 2.0))
    np.testing.assert_allclose(given.asnumpy(), np.full((6, 3), 2.0))


def test_a_gradient_the_user_holds_is_copied_into_the_buffer():
    v, x = _rsp_variable([0, 2, 5])
    head = mx.nd.array(np.ones((6, 3), np.float32)).tostype("row_sparse")
    other = mx.nd.sparse.zeros("row_sparse", (6, 3))
    with autograd.record():
        y = v + other  # add's gradient rule hands the head gradient itself on
    y.backward(head)
    assert not np.shares_memory(v.grad._storage.data, head._storage.data)
    np.testing.assert_allclose(v.grad.asnumpy(), np.ones((6, 3)))


@settings(max_examples=20, deadline=None)
@given(m=st.integers(1, 4), k=st.integers(1, 4), kind=st.sampled_from(
    ["vv", "mv", "vm", "mTv"]), seed=st.integers(0, 99))
def test_dot_gradients_with_vectors_against_numpy(m, k, kind, seed):
    """A vector operand of dot (a row on the left, a column on the right; vector·vector gives
    shape (1,)): the gradients are numpy's of sum(dot · head)."""
    rng = np.random.default_rng(seed)
    shapes = {"vv": ((k,), (k,)), "mv": ((m, k), (k,)), "vm": ((m,), (m, k)),
              "mTv": ((k, m), (k,))}[kind]
    x, y = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    xt = x.T if kind == "mTv" else x
    out = np.atleast_1d(xt @ y)
    head = rng.standard_normal(out.shape).astype(np.float32)
    a, b = mx.nd.array(x), mx.nd.array(y)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        c = mx.nd.dot(a, b, transpose_a=kind == "mTv")
    c.backward(mx.nd.array(head))
    h = head if kind != "vv" else head[0]
    grad_xt = np.outer(h, y) if xt.ndim == 2 else h @ y.T if y.ndim == 2 else h * y
    grad_x = grad_xt.T if kind == "mTv" else grad_xt
    grad_y = xt.T @ h if xt.ndim == 2 else np.outer(xt, h) if y.ndim == 2 else h * xt
    np.testing.assert_allclose(a.grad.asnumpy(), grad_x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), grad_y, rtol=1e-5, atol=1e-5)


def test_relu_gradient_passes_nan_on_as_mxnets_and_activation_gives_zero():
    x = np.array([np.nan, -1.0, 2.0, np.inf, -np.inf, -0.0], np.float32)
    a, b = mx.nd.array(x), mx.nd.array(x)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        mx.nd.relu(a).backward(mx.nd.full((6,), 3.0))
        mx.nd.Activation(b, act_type="relu").backward(mx.nd.full((6,), 3.0))
    # MXNet 1.9.1: relu's gradient at nan is nan; Activation's relu gives 0 there
    np.testing.assert_array_equal(a.grad.asnumpy(), [np.nan, 0, 3, 3, 0, 0])
    np.testing.assert_array_equal(b.grad.asnumpy(), [0, 0, 3, 3, 0, 0])


def test_backward_leaves_results_as_constants():
    # MXNet 1.9.1: after a backward without retain_graph, y is a plain array (a constant).
    x = variable([1.0, 2.0])
    with autograd.record():
        y = x * 2
        z = y + 1
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 2.0])
    with autograd.record():
        w = y * 3 + x
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1.0, 1.0])
    with pytest.raises(mx.MXNetError, match="not in a recorded graph"):
        z.backward()
