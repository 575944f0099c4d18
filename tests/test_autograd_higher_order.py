"""Higher-order gradients: ``autograd.grad(..., create_graph=True)`` and the backward pass of
its results, against numpy oracles: analytic second (and third) derivatives of the unary ops,
and Hessian-vector products by central differences of float64 first gradients (themselves
central differences of the numpy function) for the binary, scalar, broadcast, reduction,
dot / FullyConnected and nn ops. Ops whose gradient is not differentiable raise naming it."""

import math

import numpy as np
import pytest
import scipy.sparse
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import needs_cuda
import sparsegen as mx
from sparsegen import autograd, nd

RTOL, ATOL = 2e-3, 2e-4


def variable(values, grad_stype=None):
    x = nd.array(np.asarray(values, np.float32))
    x.attach_grad(stype=grad_stype)
    return x


def second_order(function, values, h1, h2):
    """``x.grad`` after ``backward`` of ``grad(function(x), x, h1, create_graph=True)`` with
    the head gradient ``h2``: ``Σ h1 f''(x) h2`` elementwise for a unary ``f``, and the first
    gradient itself."""
    x = variable(values)
    with autograd.record():
        y = function(x)
        (first,) = autograd.grad(y, x, head_grads=nd.array(h1), create_graph=True)
    first.backward(nd.array(h2))
    return first.asnumpy(), x.grad.asnumpy()


def _gradient(total, xs, h=1e-5):
    """The gradient of the float64 scalar function ``total(*xs)`` by central differences."""
    out = []
    for k, x in enumerate(xs):
        grad = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            up = [a.copy() for a in xs]
            down = [a.copy() for a in xs]
            up[k][i] += h
            down[k][i] -= h
            grad[i] = (total(*up) - total(*down)) / (2 * h)
        out.append(grad)
    return out


def hessian_times(function, xs, h1, vs, t=1e-4):
    """``(∇ S, H_S · v)`` of ``S = Σ h1 · function(*xs)`` (numpy, float64): the first gradient
    and the directional derivative of the numerical first gradient along ``vs``."""
    xs = [np.asarray(x, np.float64) for x in xs]

    def total(*args):
        return float(np.sum(np.asarray(h1, np.float64) * function(*args)))

    first = _gradient(total, xs)
    up = _gradient(total, [x + t * v for x, v in zip(xs, vs)])
    down = _gradient(total, [x - t * v for x, v in zip(xs, vs)])
    return first, [(u - d) / (2 * t) for u, d in zip(up, down)]


def sparsegen_hessian_times(function, xs, h1, vs):
    """sparsegen's first gradients and Hessian-vector products of ``Σ h1 · function(*xs)``."""
    arrays = [variable(x) for x in xs]
    with autograd.record():
        y = function(*arrays)
        firsts = autograd.grad(y, arrays, head_grads=nd.array(np.float32(h1)),
                               create_graph=True)
    autograd.backward(firsts, [nd.array(np.float32(v)) for v in vs])
    return [g.asnumpy() for g in firsts], [a.grad.asnumpy() for a in arrays]


def check_hessian(np_function, mx_function, xs, rng, rtol=RTOL, atol=1e-3):
    xs = [np.asarray(x, np.float32) for x in xs]
    shape = np.shape(np.atleast_1d(np_function(*[x.astype(np.float64) for x in xs])))
    h1 = rng.uniform(0.5, 1.5, shape)
    vs = [rng.uniform(-1, 1, x.shape) for x in xs]
    want_first, want = hessian_times(np_function, xs, h1, vs)
    got_first, got = sparsegen_hessian_times(mx_function, xs, h1, vs)
    for w, g in zip(want_first, got_first):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# -- MXNet's example (test_autograd.py::test_gradient) -----------------------------------------
def test_mxnet_docstring_example():
    x = nd.ones((1,))
    x.attach_grad()
    with autograd.record():
        z = nd.elemwise_add(nd.exp(x), x)
    dx, = autograd.grad(z, [x], create_graph=True)
    assert abs(dx.asscalar() - (math.e + 1)) < 1e-6
    dx.backward()
    assert abs(x.grad.asscalar() - math.e) < 1e-6


# -- unary ops: analytic second derivatives -----------------------------------------------------
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


SECOND = {
    # op: (f'' from x, the domain (low, high), edge values inside it)
    "sin": (lambda x: -np.sin(x), (-3, 3), (0.0,)),
    "cos": (lambda x: -np.cos(x), (-3, 3), (0.0,)),
    "tan": (lambda x: 2 * np.tan(x) / np.cos(x) ** 2, (-1.2, 1.2), (0.0,)),
    "sinh": (np.sinh, (-2, 2), (0.0,)),
    "cosh": (np.cosh, (-2, 2), (0.0,)),
    "tanh": (lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2), (-3, 3), (0.0,)),
    "arcsin": (lambda x: x / (1 - x * x) ** 1.5, (-0.9, 0.9), (0.0,)),
    "arccos": (lambda x: -x / (1 - x * x) ** 1.5, (-0.9, 0.9), (0.0,)),
    "arctan": (lambda x: -2 * x / (1 + x * x) ** 2, (-3, 3), (0.0,)),
    "arcsinh": (lambda x: -x / (1 + x * x) ** 1.5, (-3, 3), (0.0,)),
    "arccosh": (lambda x: -x / (x * x - 1) ** 1.5, (1.2, 3), (1.2,)),
    "arctanh": (lambda x: 2 * x / (1 - x * x) ** 2, (-0.9, 0.9), (0.0,)),
    "exp": (np.exp, (-3, 3), (0.0,)),
    "expm1": (np.exp, (-3, 3), (0.0,)),
    "log": (lambda x: -1 / x ** 2, (0.3, 3), (1.0,)),
    "log2": (lambda x: -1 / (x ** 2 * math.log(2)), (0.3, 3), (1.0,)),
    "log10": (lambda x: -1 / (x ** 2 * math.log(10)), (0.3, 3), (1.0,)),
    "log1p": (lambda x: -1 / (1 + x) ** 2, (-0.5, 3), (0.0,)),
    "sqrt": (lambda x: -0.25 * x ** -1.5, (0.3, 3), (1.0,)),
    "rsqrt": (lambda x: 0.75 * x ** -2.5, (0.3, 3), (1.0,)),
    "cbrt": (lambda x: -2 / 9 * x ** (-5 / 3), (0.3, 3), (1.0,)),
    "rcbrt": (lambda x: 4 / 9 * x ** (-7 / 3), (0.3, 3), (1.0,)),
    "reciprocal": (lambda x: 2 / x ** 3, (0.3, 3), (1.0,)),
    "square": (lambda x: np.full_like(x, 2.0), (-3, 3), (0.0,)),
    "sigmoid": (lambda x: _sigmoid(x) * (1 - _sigmoid(x)) * (1 - 2 * _sigmoid(x)), (-4, 4),
                (0.0,)),
    "relu": (np.zeros_like, (-3, 3), (0.0,)),
    "abs": (np.zeros_like, (-3, 3), (0.0,)),
    "negative": (np.zeros_like, (-3, 3), (0.0,)),
    "radians": (np.zeros_like, (-3, 3), (0.0,)),
    "degrees": (np.zeros_like, (-3, 3), (0.0,)),
    "floor": (np.zeros_like, (-3, 3), (0.5,)),
    "sign": (np.zeros_like, (-3, 3), (0.0,)),
    "erf": (lambda x: -4 * x / math.sqrt(math.pi) * np.exp(-x * x), (-2, 2), (0.0,)),
    "erfinv": (lambda x: 2 * scipy.special.erfinv(x) * (
        math.sqrt(math.pi) / 2 * np.exp(scipy.special.erfinv(x) ** 2)) ** 2, (-0.8, 0.8),
               (0.0,)),
    "softsign": (lambda x: -2 * np.sign(x) / (1 + np.abs(x)) ** 3, (-3, 3), (0.5,)),
}


def _unary_values(op):
    low, high = SECOND[op][1]
    inside = st.floats(float(np.float32(low)), float(np.float32(high)), width=32)
    values = st.one_of(inside, st.sampled_from(SECOND[op][2]))
    return st.lists(values, min_size=1, max_size=6)


@settings(max_examples=4, deadline=None)
@pytest.mark.parametrize("op", sorted(SECOND))
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_unary_second_derivatives_are_analytic(op, data, seed):
    values = np.array(data.draw(_unary_values(op)), np.float32)
    rng = np.random.default_rng(seed)
    h1 = rng.uniform(-1.5, 1.5, values.shape).astype(np.float32)
    h2 = rng.uniform(-1.5, 1.5, values.shape).astype(np.float32)
    _, got = second_order(getattr(nd, op), values, h1, h2)
    want = SECOND[op][0](values.astype(np.float64)) * h1 * h2
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("act_type, second", [
    ("relu", np.zeros_like),
    ("sigmoid", lambda x: _sigmoid(x) * (1 - _sigmoid(x)) * (1 - 2 * _sigmoid(x))),
    ("tanh", lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    ("softrelu", lambda x: _sigmoid(x) * (1 - _sigmoid(x))),
    ("softsign", lambda x: -2 * np.sign(x) / (1 + np.abs(x)) ** 3),
])
def test_activation_second_derivatives(act_type, second, rng):
    x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    h1, h2 = rng.uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    _, got = second_order(lambda a: nd.Activation(a, act_type=act_type), x, h1, h2)
    np.testing.assert_allclose(got, second(x.astype(np.float64)) * h1 * h2, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("op, derivatives", [
    ("sin", [np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x), np.sin]),
    ("exp", [np.exp] * 4),
    ("log", [lambda x: 1 / x, lambda x: -1 / x ** 2, lambda x: 2 / x ** 3,
             lambda x: -6 / x ** 4]),
    ("tanh", [lambda x: 1 - np.tanh(x) ** 2, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2),
              lambda x: (6 * np.tanh(x) ** 2 - 2) * (1 - np.tanh(x) ** 2), None]),
])
def test_nth_order_gradients(op, derivatives, rng):
    """Repeated ``grad(create_graph=True)``: the n-th derivative times the n head gradients."""
    values = rng.uniform(0.3, 1.5, (2, 3)).astype(np.float32)
    x = variable(values)
    heads, got = [], []
    with autograd.record():
        y = getattr(nd, op)(x)
        for _ in derivatives:
            head = rng.uniform(0.5, 1.5, values.shape).astype(np.float32)
            heads.append(head)
            (y,) = autograd.grad(y, x, head_grads=nd.array(head), create_graph=True)
            got.append(y.asnumpy())
    for order, derivative in enumerate(derivatives):
        if derivative is not None:
            want = derivative(values.astype(np.float64)) * np.prod(heads[:order + 1], axis=0)
            np.testing.assert_allclose(got[order], want, rtol=5e-3, atol=1e-4)


# -- binary, scalar and broadcast ops: Hessian-vector products ---------------------------------
BINARY = {
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "add_mul": (lambda a, b: (a + b) * a, lambda a, b: (a + b) * a),
    "sub_square": (lambda a, b: (a - b) ** 2, lambda a, b: nd.square(a - b)),
    "elemwise": (lambda a, b: a * b / (a + b),
                 lambda a, b: nd.elemwise_div(nd.elemwise_mul(a, b), nd.elemwise_add(a, b))),
    "power": (lambda a, b: a ** b, lambda a, b: nd.broadcast_power(a, b)),
    "hypot": (np.hypot, lambda a, b: nd.broadcast_hypot(a, b)),
    "maximum": (lambda a, b: np.maximum(a, b) * a, lambda a, b: nd.broadcast_maximum(a, b) * a),
    "minimum": (lambda a, b: np.minimum(a, b) * b, lambda a, b: nd.broadcast_minimum(a, b) * b),
}


@settings(max_examples=3, deadline=None)
@pytest.mark.parametrize("name", sorted(BINARY))
@given(seed=st.integers(0, 2**16), shapes=st.sampled_from([((2, 3), (2, 3)), ((2, 3), (1, 3)),
                                                          ((3, 1), (1, 4)), ((4,), (2, 4))]))
def test_binary_and_broadcast_hessians(name, seed, shapes):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shapes[0])
    b = rng.uniform(0.5, 2.0, shapes[1])
    if name in ("maximum", "minimum"):  # keep the two apart: the kink is not differentiable
        b = b + np.where(rng.random(shapes[1]) < 0.5, 3.0, -3.0)
    np_f, mx_f = BINARY[name]
    if shapes[0] != shapes[1] and name in ("mul", "div", "add_mul", "sub_square", "elemwise"):
        mx_f = {"mul": nd.broadcast_mul, "div": nd.broadcast_div,
                "add_mul": lambda x, y: nd.broadcast_mul(nd.broadcast_add(x, y), x),
                "sub_square": lambda x, y: nd.square(nd.broadcast_sub(x, y)),
                "elemwise": lambda x, y: nd.broadcast_div(nd.broadcast_mul(x, y),
                                                          nd.broadcast_add(x, y))}[name]
    check_hessian(np_f, mx_f, [a, b], rng)


SCALAR = {
    "x + s": (lambda x: (x + 1.5) ** 3, lambda x: (x + 1.5) ** 3),
    "x - s": (lambda x: (x - 0.5) ** 2, lambda x: (x - 0.5) ** 2),
    "s - x": (lambda x: (2 - x) * x, lambda x: (2 - x) * x),
    "x * s": (lambda x: (x * 3) * x, lambda x: (x * 3) * x),
    "x / s": (lambda x: (x / 4) * x, lambda x: (x / 4) * x),
    "s / x": (lambda x: 2 / x, lambda x: 2 / x),
    "x ** s": (lambda x: x ** 2.5, lambda x: x ** 2.5),
    "s ** x": (lambda x: 1.7 ** x, lambda x: 1.7 ** x),
    "maximum": (lambda x: np.maximum(x, 1.0) * x, lambda x: nd.maximum(x, 1.0) * x),
    "minimum": (lambda x: np.minimum(x, 1.0) * x, lambda x: nd.minimum(x, 1.0) * x),
    "clip": (lambda x: np.clip(x, 0.8, 1.6) * x, lambda x: nd.clip(x, 0.8, 1.6) * x),
}


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_scalar_op_hessians(name, rng):
    x = rng.uniform(0.5, 2.0, (2, 3))
    x = np.where(np.abs(x - 1.0) < 0.05, 1.2, x)  # away from the kinks of maximum / minimum
    x = np.where(np.abs(x - 0.8) < 0.05, 0.9, x)
    x = np.where(np.abs(x - 1.6) < 0.05, 1.7, x)
    np_f, mx_f = SCALAR[name]
    check_hessian(np_f, mx_f, [x], rng)


# -- reductions, dot, FullyConnected, nn -------------------------------------------------------
def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


COMPOSED = {
    "sum": (lambda x: np.sum(x ** 3), lambda x: nd.sum(x ** 3)),
    "sum_axis": (lambda x: np.sum(x * x, axis=1) ** 2, lambda x: nd.sum(x * x, axis=1) ** 2),
    "mean": (lambda x: np.mean(np.sin(x), axis=0, keepdims=True) * x,
             lambda x: nd.broadcast_mul(nd.mean(nd.sin(x), axis=0, keepdims=True), x)),
    "prod": (lambda x: np.prod(x, axis=1), lambda x: nd.prod(x, axis=1)),
    "norm": (lambda x: np.sqrt(np.sum(x * x)), lambda x: nd.norm(x)),
    "max": (lambda x: np.max(x, axis=1) ** 2, lambda x: nd.max(x, axis=1) ** 2),
    "softmax": (_softmax, lambda x: nd.softmax(x)),
    "log_softmax": (lambda x: np.log(_softmax(x)), lambda x: nd.log_softmax(x)),
    "transpose": (lambda x: np.sin(x.T) * x.T, lambda x: nd.sin(nd.transpose(x)) * nd.transpose(x)),
    "reshape": (lambda x: np.exp(x.reshape(-1)) * x.reshape(-1),
                lambda x: nd.exp(x.reshape((-1,))) * x.reshape((-1,))),
    "slice": (lambda x: x[:, 1:] ** 3, lambda x: nd.slice(x, begin=(0, 1), end=(None, None)) ** 3),
    "broadcast_to": (lambda x: np.broadcast_to(x[:1], x.shape) * x,
                     lambda x: nd.broadcast_to(nd.slice_axis(x, axis=0, begin=0, end=1),
                                               x.shape) * x),
    "concat": (lambda x: np.concatenate([x, x * x], axis=1) ** 2,
               lambda x: nd.concat(x, x * x, dim=1) ** 2),
    "where": (lambda x: np.where(x > 1.2, x * x, np.sin(x)),
              lambda x: nd.where(x > 1.2, x * x, nd.sin(x))),
    "add_n": (lambda x: x * x + np.exp(x) + x, lambda x: nd.add_n(x * x, nd.exp(x), x)),
    "stack": (lambda x: np.stack([x, np.sin(x)]) * np.stack([x, x]),
              lambda x: nd.stack(x, nd.sin(x)) * nd.stack(x, x)),
    "flip_tile": (lambda x: np.tile(x[::-1], (2, 1)) ** 3,
                  lambda x: nd.tile(nd.flip(x, axis=0), (2, 1)) ** 3),
    "expand_dims": (lambda x: np.exp(x[None]) * x[None],
                    lambda x: nd.exp(nd.expand_dims(x, axis=0)) * nd.expand_dims(x, axis=0)),
    "cumsum": (lambda x: np.cumsum(x * x, axis=1) ** 2, lambda x: nd.cumsum(x * x, axis=1) ** 2),
    "batch_dot": (lambda x: np.matmul(x.reshape(1, 3, 4), np.sin(x).T.reshape(1, 4, 3)),
                  lambda x: nd.batch_dot(x.reshape((1, 3, 4)),
                                         nd.transpose(nd.sin(x)).reshape((1, 4, 3)))),
    "quadratic": (lambda x: (1.5 * x * x - x + 2) * x,
                  lambda x: nd.contrib.quadratic(x, a=1.5, b=-1.0, c=2.0) * x),
    "gradientmultiplier": (lambda x: x ** 3, lambda x: nd.contrib.gradientmultiplier(
        x ** 3, scalar=1.0)),
    "BlockGrad": (lambda x: x * x, lambda x: nd.BlockGrad(x) * x + x * x - x * nd.BlockGrad(x)),
    "LeakyReLU": (lambda x: np.where(x > 1.0, x - 1, 0.25 * (x - 1)) * x,
                  lambda x: nd.LeakyReLU(x - 1, slope=0.25) * x),
    "elu": (lambda x: np.where(x > 1.0, x - 1, 0.5 * np.expm1(x - 1)) * x,
            lambda x: nd.LeakyReLU(x - 1, act_type="elu", slope=0.5) * x),
}


@pytest.mark.parametrize("name", sorted(COMPOSED))
def test_composed_op_hessians(name, rng):
    x = rng.uniform(0.5, 2.0, (3, 4))
    for kink in (1.0, 1.2):  # away from the kinks of LeakyReLU, elu and where
        x = np.where(np.abs(x - kink) < 0.05, kink + 0.1, x)
    np_f, mx_f = COMPOSED[name]
    check_hessian(np_f, mx_f, [x], rng)


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False),
                                                      (False, True), (True, True)])
def test_dot_hessians(transpose_a, transpose_b, rng):
    a = rng.uniform(-1, 1, (4, 3) if transpose_a else (3, 4))
    b = rng.uniform(-1, 1, (5, 4) if transpose_b else (4, 5))

    def np_f(x, y):
        return np.sin(np.dot(x.T if transpose_a else x, y.T if transpose_b else y))

    def mx_f(x, y):
        return nd.sin(nd.dot(x, y, transpose_a=transpose_a, transpose_b=transpose_b))

    check_hessian(np_f, mx_f, [a, b], rng)


@pytest.mark.parametrize("flatten, shape", [(True, (2, 3, 2)), (False, (2, 3, 2)),
                                            (True, (3, 4))])
def test_fully_connected_hessians(flatten, shape, rng):
    x = rng.uniform(-1, 1, shape)
    k = int(np.prod(shape[1:])) if flatten else shape[-1]
    w = rng.uniform(-1, 1, (3, k))
    bias = rng.uniform(-1, 1, (3,))

    def np_f(data, weight, b):
        flat = data.reshape((shape[0], -1)) if flatten else data
        return np.tanh(flat @ weight.T + b)

    def mx_f(data, weight, b):
        return nd.tanh(nd.FullyConnected(data, weight, b, num_hidden=3, flatten=flatten))

    check_hessian(np_f, mx_f, [x, w, bias], rng)


def test_dense_layer_mixed_second_derivatives_as_mxnet_test(rng):
    """MXNet's test_dense_backward: the gradient of x's gradient with respect to w, and of w's
    with respect to x, of a Dense layer (linear: o_y · o_x_gradᵀ-style products)."""
    from sparsegen import gluon

    x = variable(rng.uniform(-1, 1, (3, 4)))
    net = gluon.nn.Dense(2, flatten=True)
    net.initialize(mx.initializer.Constant(0.5))
    with autograd.record():
        y = net(x)
        w = net.weight.data()
        o_y = nd.array(rng.uniform(-1, 1, y.shape))
        (x_grad,) = autograd.grad(y, x, head_grads=o_y, create_graph=True, retain_graph=True)
        o_x_grad = nd.array(rng.uniform(-1, 1, x_grad.shape))
        (w_grad_grad,) = autograd.grad(x_grad, w, head_grads=o_x_grad)
        (w_grad,) = autograd.grad(y, w, head_grads=o_y, create_graph=True, retain_graph=True)
        o_w_grad = nd.array(rng.uniform(-1, 1, w_grad.shape))
        (x_grad_grad,) = autograd.grad(w_grad, x, head_grads=o_w_grad)
    np.testing.assert_allclose(x_grad.asnumpy(), o_y.asnumpy() @ w.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(w_grad.asnumpy(), o_y.asnumpy().T @ x.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(w_grad_grad.asnumpy(), o_y.asnumpy().T @ o_x_grad.asnumpy(),
                               rtol=1e-5)
    np.testing.assert_allclose(x_grad_grad.asnumpy(), o_y.asnumpy() @ o_w_grad.asnumpy(),
                               rtol=1e-5)


def test_csr_dot_hessian_of_a_squared_loss(rng):
    """``Σ (csr · w)²``: the gradient ``2 csrᵀ csr w``, its Hessian-vector product
    ``2 csrᵀ (csr v)`` (scipy oracle)."""
    dense = rng.uniform(-1, 1, (5, 4)) * (rng.random((5, 4)) < 0.5)
    csr = nd.array(dense.astype(np.float32)).tostype("csr")
    w0 = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    v = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    w = variable(w0)
    with autograd.record():
        loss = nd.sum(nd.square(nd.dot(csr, w)))
        (first,) = autograd.grad(loss, w, create_graph=True)
    first.backward(nd.array(v))
    m = scipy.sparse.csr_matrix(dense)
    np.testing.assert_allclose(first.asnumpy(), 2 * (m.T @ (m @ w0)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * (m.T @ (m @ v)), rtol=1e-4, atol=1e-5)


def test_gradient_penalty_through_backward_into_parameters(rng):
    """A gradient penalty, ``Σ (∂L/∂x)²`` of ``L = Σ tanh(x · w)``, trained through
    ``backward``: ``w.grad`` is the float64 numerical gradient of the penalty."""
    x0, w0 = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 2))
    x, w = variable(x0), variable(w0)
    with autograd.record():
        loss = nd.sum(nd.tanh(nd.dot(x, w)))
        (gx,) = autograd.grad(loss, x, create_graph=True)
        penalty = nd.sum(gx * gx)
    penalty.backward()

    def np_penalty(wv):
        gx = (1 - np.tanh(x0 @ wv) ** 2) @ wv.T
        return np.sum(gx * gx)

    (want,) = _gradient(np_penalty, [w0.astype(np.float64)])
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=RTOL, atol=1e-4)


# -- the graph, retain_graph and constants ------------------------------------------------------
def test_create_graph_retains_the_graph_by_default_and_grad_returns_a_list():
    x = variable([0.5, 1.0])
    with autograd.record():
        y = nd.sin(x)
    result = autograd.grad(y, x, create_graph=True)  # one variable: a list, as MXNet's
    assert isinstance(result, list) and len(result) == 1
    y.backward()  # retain_graph defaulted to create_graph: the graph is still there
    np.testing.assert_allclose(x.grad.asnumpy(), np.cos([0.5, 1.0]), rtol=1e-6)
    with autograd.record():
        z = nd.sin(x)
    autograd.grad(z, x)  # create_graph=False: retain_graph defaults to False
    with pytest.raises(mx.MXNetError, match="not in a recorded graph"):
        z.backward()


def test_gradients_that_are_constants_have_zero_gradients():
    """A gradient that no recorded array reaches (``radians``', Dropout's, a linear op's) is
    still a recorded result: differentiating it gives zeros, as MXNet's radians / Dropout."""
    for function in (nd.radians, lambda a: a * 3 + 1, lambda a: nd.Dropout(a, p=0.5),
                     lambda a: -a):
        x = variable([0.5, 1.0, 2.0])
        x.grad[:] = 7.0
        with autograd.record():
            (first,) = autograd.grad(function(x), x, create_graph=True)
        first.backward()
        np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0, 0.0])


def test_the_second_backward_accumulates_with_grad_req_add():
    x = nd.array([0.5, 1.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            (first,) = autograd.grad(x * x * x, x, create_graph=True)
        first.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * 6 * np.array([0.5, 1.0]), rtol=1e-6)


# -- ops without a differentiable gradient raise naming them ----------------------------------
class _Cube(autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x * x * x

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * x * x * 3


@pytest.mark.parametrize("function, op", [
    (lambda x: nd.take(x, nd.array([0, 1, 1])) ** 2, "take"),
    (lambda x: nd.Embedding(nd.array([0, 2]), x, input_dim=3, output_dim=1) ** 2, "Embedding"),
    (lambda x: nd.pick(x.reshape((1, 3)), nd.array([1])) ** 2, "pick"),
    (lambda x: nd.Cast(x, dtype="float64") ** 2, "Cast"),
    (lambda x: _Cube()(x), "_Cube"),
])
def test_an_op_without_a_differentiable_gradient_raises_naming_it(function, op):
    x = variable([0.5, 1.0, 2.0] if op != "Embedding" else [[0.5], [1.0], [2.0]])
    with autograd.record():
        (first,) = autograd.grad(function(x), x, create_graph=True)
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros(x.shape))
    with pytest.raises(mx.MXNetError, match=f"the gradient of {op} is not differentiable"):
        first.backward()


def test_an_op_inside_a_gradient_without_a_gradient_raises_naming_it():
    """gamma's gradient uses digamma, which has no gradient: the second backward names it."""
    x = variable([0.5, 1.5])
    with autograd.record():
        (first,) = autograd.grad(nd.gamma(x), x, create_graph=True)
    np.testing.assert_allclose(first.asnumpy(), scipy.special.gamma([0.5, 1.5])
                               * scipy.special.digamma([0.5, 1.5]), rtol=1e-4)
    with pytest.raises(mx.MXNetError, match="digamma has no gradient"):
        first.backward()


def test_bad_arguments_raise_clearly():
    x = variable([1.0, 2.0])
    plain = nd.array([1.0, 2.0])
    with autograd.record():
        y = x * x
    with pytest.raises(mx.MXNetError, match=r"variables\[0\] has no gradient buffer"):
        autograd.grad(y, [plain], create_graph=True)
    with pytest.raises(mx.MXNetError, match=r"head_grads\[0\] has shape"):
        autograd.grad(y, [x], head_grads=nd.ones((3,)), create_graph=True)
    with pytest.raises(mx.MXNetError, match=r"variables\[0\] must be an NDArray"):
        autograd.grad(y, [np.ones(2)], create_graph=True)


@pytest.mark.parametrize("mode", ["host", "cuda"])
def test_second_order_on_a_gpu_context(mode, monkeypatch):
    """On ``gpu(0)`` (emulated in host memory, or CUDA): the gradients, their aliases and the
    second derivative stay on the device; a non-differentiable gradient still raises."""
    monkeypatch.setenv("SPARSEGEN_GPU", mode)
    if mode == "cuda":
        needs_cuda.gpu()
    ctx = mx.gpu(0)
    values = np.array([0.5, 1.0, -0.7], np.float32)
    x = nd.array(values, ctx=ctx)
    x.attach_grad()
    with autograd.record():
        (first,) = autograd.grad(nd.tanh(x) * x, x, create_graph=True)
        (constant,) = autograd.grad(nd.radians(x), x, create_graph=True)
    first.backward()
    t = np.tanh(values.astype(np.float64))
    s = 1 - t * t
    assert first.context == ctx and x.grad.context == ctx and constant.context == ctx
    np.testing.assert_allclose(first.asnumpy(), s * values + t, rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * s - 2 * t * s * values, rtol=1e-4)
    w = nd.array([[0.5], [1.0]], ctx=ctx)
    w.attach_grad()
    with autograd.record():
        (first,) = autograd.grad(nd.take(w, nd.array([0, 1], ctx=ctx)) ** 2, w,
                                 create_graph=True)
    with pytest.raises(mx.MXNetError, match="the gradient of take is not differentiable"):
        first.backward()


# -- what a rule marked differentiable may use ----------------------------------------------------
_UNRECORDED = (r"\bnp\.", r"\bto_host\(", r"\bwrap\(", r"\bhold\(", r"\.astype\(", r"\._storage\b",
               r"\.asnumpy\(", r"\bnumpy\b")
"""What runs outside the tape: numpy, host copies, arrays built from raw storage, ``astype``."""


def _own_functions(function, seen):
    """``function`` and the functions of its module it calls, transitively."""
    import inspect

    if function in seen:
        return
    seen.add(function)
    module = inspect.getmodule(function)
    for name in function.__code__.co_names:
        called = getattr(module, name, None)
        if inspect.isfunction(called) and inspect.getmodule(called) is module:
            _own_functions(called, seen)


def test_rules_marked_differentiable_use_recorded_ops_only():
    """A rule marked ``tape.differentiable`` (and the helpers of its module it calls) has no
    numpy, host copy, raw storage or ``astype`` (which records nothing): its gradient would be
    a silent constant in a recorded backward pass."""
    import inspect
    import re

    from sparsegen import tape
    from sparsegen.autograd.gradients import GRADIENTS
    from sparsegen.autograd.gradients import elemwise

    marked = {rule for rule in GRADIENTS.values() if tape.is_differentiable(rule)}
    assert {GRADIENTS["sin"], GRADIENTS["dot"], GRADIENTS["sum"], GRADIENTS["_mul_scalar"],
            GRADIENTS["broadcast_mul"], GRADIENTS["FullyConnected"]} <= marked
    assert not {GRADIENTS["take"], GRADIENTS["Cast"], GRADIENTS["_square_sum"]} & marked
    functions: set = set()
    for rule in marked:
        _own_functions(rule, functions)
    sources = {f.__qualname__: inspect.getsource(f) for f in functions}
    module = inspect.getsource(elemwise)  # the tables of derivatives the rules look up
    sources["elemwise tables"] = module[module.index("_UNARY: dict"):
                                        module.index('@gradient("add_n")')]
    for name, source in sources.items():
        for pattern in _UNRECORDED:
            assert not re.search(pattern, source), (name, pattern)
