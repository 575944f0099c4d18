"""The ``mx.nd`` operators of issue 38 against numpy and hand-computed values: ``batch_dot`` and
``cumsum`` (generated kernels), the composed ops (``smooth_l1``, ``softmax_cross_entropy``,
``moments``, ``hard_sigmoid``, ``SoftmaxActivation``, ``logical_not``, ``identity``, ``diag``,
``ravel_multi_index``, ``unravel_index``, ``histogram``, ``SVMOutput``,
``IdentityAttachKLSparseReg``), MXNet's ``_internal`` creation, logical and assignment ops,
their gradients, their ``mx.sym`` forms and ``mx.sym``'s own functions (``hypot``, ``eye``,
``linspace``, ``histogram``, the samplers' names)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import autograd

FLOATS = ("float32", "float64")


def _grad_of(function, *arrays, head=None):
    """The gradients of ``sum(function(*arrays) * head)`` in each array (head: ones)."""
    variables = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for v in variables:
        v.attach_grad()
    with autograd.record():
        out = function(*variables)
    out.backward(None if head is None else mx.nd.array(head, dtype=out.dtype))
    return out.asnumpy(), [v.grad.asnumpy() for v in variables]


# -- batch_dot ------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(batch=st.lists(st.integers(0, 3), min_size=1, max_size=2),
       m=st.sampled_from([0, 1, 3, 9]), k=st.sampled_from([0, 1, 5, 17]),
       n=st.sampled_from([0, 1, 7, 8, 70]), ta=st.booleans(), tb=st.booleans(),
       dtype=st.sampled_from(FLOATS), seed=st.integers(0, 2**31))
def test_batch_dot_is_numpys_matmul_of_each_batch_entry(batch, m, k, n, ta, tb, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, m, k)).astype(dtype)
    b = rng.standard_normal((*batch, k, n)).astype(dtype)
    lhs = np.swapaxes(a, -1, -2).copy() if ta else a
    rhs = np.swapaxes(b, -1, -2).copy() if tb else b
    out = mx.nd.batch_dot(mx.nd.array(lhs, dtype=dtype), mx.nd.array(rhs, dtype=dtype),
                          transpose_a=ta, transpose_b=tb)
    assert out.shape == (*batch, m, n) and out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out.asnumpy(), a @ b, rtol=1e-4 if dtype == "float32" else 1e-12,
                               atol=1e-4 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_dot_gradients_are_the_matrix_products_of_the_head(ta, tb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    head = rng.standard_normal((2, 3, 5))
    lhs = np.swapaxes(a, 1, 2).copy() if ta else a
    rhs = np.swapaxes(b, 1, 2).copy() if tb else b
    _, (ga, gb) = _grad_of(lambda x, y: mx.nd.batch_dot(x, y, transpose_a=ta, transpose_b=tb),
                           lhs, rhs, head=head)
    da, db = head @ np.swapaxes(b, 1, 2), np.swapaxes(a, 1, 2) @ head
    np.testing.assert_allclose(ga, np.swapaxes(da, 1, 2) if ta else da, rtol=1e-12)
    np.testing.assert_allclose(gb, np.swapaxes(db, 1, 2) if tb else db, rtol=1e-12)


def test_batch_dot_writes_out_and_refuses_bad_input():
    a, b = mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 4, 5))
    out = mx.nd.zeros((2, 3, 5))
    assert mx.nd.batch_dot(a, b, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3, 5), 4.0))
    with pytest.raises(mx.MXNetError, match="reduces 4 elements, the rhs 5"):
        mx.nd.batch_dot(a, b, transpose_b=True)
    with pytest.raises(mx.MXNetError, match="batch"):
        mx.nd.batch_dot(a, mx.nd.ones((3, 4, 5)))
    with pytest.raises(mx.MXNetError, match="at least 3"):
        mx.nd.batch_dot(mx.nd.ones((3, 4)), mx.nd.ones((4, 5)))
    with pytest.raises(mx.MXNetError, match="int32"):
        mx.nd.batch_dot(a.astype("int32"), b.astype("int32"))
    with pytest.raises(mx.MXNetError, match="forward_stype"):
        mx.nd.batch_dot(a, b, forward_stype="csr")
    with pytest.raises(mx.MXNetError, match="lhs must be an NDArray"):
        mx.nd.batch_dot(np.ones((2, 3, 4)), b)


# -- cumsum ---------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.sampled_from([0, 1, 2, 5]), min_size=1, max_size=3),
       dtype=st.sampled_from(("float16", "float32", "float64", "int32", "int64", "uint8")),
       data=st.data())
def test_cumsum_is_numpys_in_the_input_dtype(shape, dtype, data):
    axis = data.draw(st.sampled_from([None, *range(-len(shape), len(shape))]))
    rng = np.random.default_rng(len(shape))
    x = rng.integers(0, 9, size=shape).astype(dtype)
    out = mx.nd.cumsum(mx.nd.array(x, dtype=dtype), axis=axis)
    expected = np.cumsum(x, axis=axis, dtype=dtype)
    assert out.dtype == np.dtype(dtype) and out.shape == expected.shape
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_cumsum_carries_nan_and_inf_and_casts_to_dtype():
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, -np.inf]], np.float32)
    np.testing.assert_array_equal(mx.nd.cumsum(mx.nd.array(x), axis=1).asnumpy(),
                                  np.cumsum(x, axis=1))
    ints = mx.nd.cumsum(mx.nd.array([[1, 2], [3, 4]], dtype="int32"), axis=0, dtype="float64")
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints.asnumpy(), [[1, 2], [4, 6]])


def test_cumsum_gradient_is_the_head_summed_from_the_end():
    head = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _, (g,) = _grad_of(lambda x: mx.nd.cumsum(x, axis=1), np.zeros((2, 3)), head=head)
    np.testing.assert_array_equal(g, np.cumsum(head[:, ::-1], axis=1)[:, ::-1])
    _, (g,) = _grad_of(lambda x: mx.nd.cumsum(x), np.zeros((2, 2)))
    np.testing.assert_array_equal(g, [[4, 3], [2, 1]])


def test_cumsum_refuses_bad_axis_and_dtype():
    with pytest.raises(mx.MXNetError, match="axis 2 is out of range"):
        mx.nd.cumsum(mx.nd.ones((2, 2)), axis=2)
    with pytest.raises(mx.MXNetError, match="dtype"):
        mx.nd.cumsum(mx.nd.ones((2,)), dtype="complex64")


# -- losses and activations -----------------------------------------------------------------
def _smooth_l1(x, sigma):
    s2 = sigma * sigma
    return np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(-5, 5, width=32), min_size=0, max_size=12),
       sigma=st.sampled_from([0.5, 1.0, 2.0, 3.0]))
def test_smooth_l1_is_mxnets_formula_and_gradient(values, sigma):
    x = np.array(values, np.float64)
    out, (g,) = _grad_of(lambda a: mx.nd.smooth_l1(a, scalar=sigma), x)
    np.testing.assert_allclose(out, _smooth_l1(x, sigma), rtol=1e-12)
    inside = np.abs(x) < 1 / sigma**2
    np.testing.assert_allclose(g, np.where(inside, sigma**2 * x, np.sign(x)), rtol=1e-12)


def test_smooth_l1_matches_mxnet_values_and_nan():
    # recorded from MXNet 1.9.1: smooth_l1([-2, -0.3, 0.2, 3], scalar=2) and scalar=1
    x = mx.nd.array([-2, -0.3, 0.2, 3])
    np.testing.assert_allclose(mx.nd.smooth_l1(x, scalar=2).asnumpy(),
                               [1.875, 0.175, 0.08, 2.875], rtol=1e-6)
    np.testing.assert_allclose(mx.nd.smooth_l1(x).asnumpy(), [1.5, 0.045, 0.02, 2.5], rtol=1e-6)
    special = mx.nd.smooth_l1(mx.nd.array([np.nan, np.inf, -np.inf])).asnumpy()
    assert np.isnan(special[0]) and (special[1:] == np.inf).all()
    with pytest.raises(mx.MXNetError, match="scalar must not be 0"):
        mx.nd.smooth_l1(x, scalar=0)


def test_softmax_cross_entropy_is_the_summed_negative_log_likelihood():
    rng = np.random.default_rng(1)
    x, label = rng.standard_normal((4, 5)), np.array([0, 4, 2, 2], np.float64)
    out, (g, _) = _grad_of(mx.nd.softmax_cross_entropy, x, label)
    p = np.exp(x - x.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    rows = np.arange(4), label.astype(int)
    assert out.shape == (1,)
    np.testing.assert_allclose(out, [-np.log(p[rows]).sum()], rtol=1e-12)
    onehot = np.zeros_like(p)
    onehot[rows] = 1
    np.testing.assert_allclose(g, p - onehot, rtol=1e-10, atol=1e-12)
    # MXNet 1.9.1's value
    np.testing.assert_allclose(mx.nd.softmax_cross_entropy(
        mx.nd.array([[1, 2, 3], [4, 5, -6]]), mx.nd.array([0, 2])).asnumpy(), [13.72088],
        rtol=1e-6)
    with pytest.raises(mx.MXNetError, match=r"\(batch, classes\)"):
        mx.nd.softmax_cross_entropy(mx.nd.ones((2, 3)), mx.nd.ones((3,)))


def test_hard_sigmoid_clips_the_line_and_passes_its_slope_inside():
    x = np.array([-5.0, -1.0, 0.0, 1.0, 5.0, np.nan])
    out = mx.nd.hard_sigmoid(mx.nd.array(x, dtype="float64")).asnumpy()
    np.testing.assert_allclose(out[:5], [0.0, 0.3, 0.5, 0.7, 1.0], rtol=1e-12)
    out, (g,) = _grad_of(lambda a: mx.nd.hard_sigmoid(a, alpha=0.5, beta=0.25),
                         np.array([-3.0, 0.5, 3.0]))
    np.testing.assert_allclose(out, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(g, [0.0, 0.5, 0.0])
    # MXNet 1.9.1: no gradient at the ends (-2.5 and 2.5 with the defaults)
    out, (g,) = _grad_of(mx.nd.hard_sigmoid, np.array([-2.5, 2.5, 0.0, -3.0], np.float32))
    np.testing.assert_allclose(out, [0.0, 1.0, 0.5, 0.0])
    np.testing.assert_allclose(g, [0.0, 0.0, 0.2, 0.0], rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="alpha"):
        mx.nd.hard_sigmoid(mx.nd.ones((2,)), alpha="x")


@pytest.mark.parametrize("mode", ["instance", "channel"])
def test_softmax_activation_normalizes_instances_or_channels(mode):
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    out = mx.nd.SoftmaxActivation(mx.nd.array(x, dtype="float64"), mode=mode).asnumpy()
    if mode == "instance":
        flat = np.exp(x.reshape(2, -1))
        expected = (flat / flat.sum(axis=1, keepdims=True)).reshape(x.shape)
    else:
        expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    with pytest.raises(mx.MXNetError, match="mode"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2, 2)), mode="row")
    with pytest.raises(mx.MXNetError, match="at least 2"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2,)))


# -- moments --------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), keepdims=st.booleans(),
       data=st.data())
def test_moments_are_numpys_mean_and_variance(shape, keepdims, data):
    axes = tuple(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    mean, var = mx.nd.moments(mx.nd.array(x, dtype="float64"), axes=axes, keepdims=keepdims)
    want_mean = x.mean(axis=axes, keepdims=keepdims)
    want_var = x.var(axis=axes, keepdims=keepdims)
    np.testing.assert_allclose(mean.asnumpy().reshape(want_mean.shape), want_mean, rtol=1e-12)
    np.testing.assert_allclose(var.asnumpy().reshape(want_var.shape), want_var, rtol=1e-10,
                               atol=1e-14)
    assert mean.shape == var.shape


def test_moments_gradient_and_errors():
    x = np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 3.0]])
    variable = mx.nd.array(x, dtype="float64")
    variable.attach_grad()
    with autograd.record():
        mean, var = mx.nd.moments(variable, axes=(1,))
        loss = mx.nd.sum(mean) + mx.nd.sum(var)
    loss.backward()
    centered = x - x.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(variable.grad.asnumpy(), 1 / 3 + 2 * centered / 3, rtol=1e-12)
    with pytest.raises(mx.MXNetError, match="axes must name"):
        mx.nd.moments(mx.nd.ones((2, 2)))
    with pytest.raises(mx.MXNetError, match="repeat"):
        mx.nd.moments(mx.nd.ones((2, 2)), axes=(1, -1))


# -- logical ops ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
def test_logical_not_and_the_internal_logical_ops(dtype):
    a = np.array([0, 1, 2, 0], dtype)
    b = np.array([0, 0, 3, 5], dtype)
    nd_a, nd_b = mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)
    out = mx.nd.logical_not(nd_a)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.asnumpy(), np.logical_not(a))
    internal = mx.nd._internal
    for name, f in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
        np.testing.assert_array_equal(getattr(internal, f"_logical_{name}")(nd_a, nd_b).asnumpy(),
                                      f(a, b))
        for scalar in (0, 2):
            np.testing.assert_array_equal(
                getattr(internal, f"_logical_{name}_scalar")(nd_a, scalar=scalar).asnumpy(),
                f(a, scalar))
    np.testing.assert_array_equal(internal._Logical_And(nd_a, nd_b).asnumpy(), a * b != 0)
    np.testing.assert_array_equal(internal._LogicalOrScalar(nd_a, scalar=0).asnumpy(), a != 0)
    with pytest.raises(mx.MXNetError, match="one shape"):
        internal._logical_and(nd_a, mx.nd.ones((2,), dtype=dtype))
    with pytest.raises(mx.MXNetError, match="scalar must be a number"):
        internal._logical_or_scalar(nd_a, scalar="1")
    assert np.isnan(mx.nd.logical_not(mx.nd.array([np.nan])).asnumpy()).sum() == 0


def test_logical_ops_pass_no_gradient():
    _, (g,) = _grad_of(lambda a: mx.nd.logical_not(a) + a, np.array([0.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, 1.0])


# -- identity, _copy and the creation ops ---------------------------------------------------
def test_identity_copies_and_passes_the_gradient():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    y = mx.nd.identity(x)
    y[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(mx.nd._internal._copy(x).asnumpy(), x.asnumpy())
    csr = x.tostype("csr")
    assert mx.nd.identity(csr).stype == "csr"
    out, (g,) = _grad_of(mx.nd.identity, np.array([1.0, 2.0]), head=np.array([3.0, 4.0]))
    np.testing.assert_array_equal(g, [3.0, 4.0])
    target = mx.nd.zeros((2, 2))
    assert mx.nd.identity(x, out=target) is target
    np.testing.assert_array_equal(target.asnumpy(), x.asnumpy())


def test_internal_creation_ops_take_mxnets_parameters():
    internal = mx.nd._internal
    np.testing.assert_array_equal(internal._zeros(shape=(2, 3)).asnumpy(), np.zeros((2, 3)))
    ones = internal._ones(shape=(2,), dtype="int32")
    assert ones.dtype == np.int32 and (ones.asnumpy() == 1).all()
    full = internal._full(shape=(2, 2), value=3.5, dtype="float64")
    np.testing.assert_array_equal(full.asnumpy(), np.full((2, 2), 3.5))
    np.testing.assert_array_equal(internal._arange(start=3).asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(internal._arange(start=1, stop=7, step=2, repeat=2).asnumpy(),
                                  [1, 1, 3, 3, 5, 5])
    np.testing.assert_allclose(internal._linspace(start=0, stop=1, num=5).asnumpy(),
                               np.linspace(0, 1, 5), rtol=1e-7)
    np.testing.assert_allclose(internal._linspace(start=0, stop=1, num=5, endpoint=False)
                               .asnumpy(), np.linspace(0, 1, 5, endpoint=False), rtol=1e-7)
    np.testing.assert_array_equal(internal._eye(N=3, M=2, k=-1).asnumpy(), np.eye(3, 2, -1))
    out = mx.nd.ones((2,))
    assert internal._zeros(shape=(2,), out=out) is out and (out.asnumpy() == 0).all()
    with pytest.raises(mx.MXNetError, match="value must be a number"):
        internal._full(shape=(2,), value="x")
    with pytest.raises(mx.MXNetError, match="stop"):
        internal._linspace(start=0, num=3)


def test_hypot_scalar_is_numpys_hypot():
    x = np.array([3.0, 0.0, -4.0, np.inf, np.nan], np.float32)
    for op in (mx.nd._internal._hypot_scalar, mx.nd._internal._HypotScalar):
        np.testing.assert_allclose(op(mx.nd.array(x), scalar=4).asnumpy(), np.hypot(x, 4),
                                   rtol=1e-6)
    _, (g,) = _grad_of(lambda a: mx.nd._internal._hypot_scalar(a, scalar=4.0),
                       np.array([3.0, -3.0]))
    np.testing.assert_allclose(g, [0.6, -0.6], rtol=1e-12)


def test_scatter_set_nd_sets_the_named_positions():
    lhs = np.arange(6, dtype=np.float32).reshape(3, 2)
    out = mx.nd._internal._scatter_set_nd(mx.nd.array(lhs), mx.nd.array([50.0, 60.0]),
                                          mx.nd.array([[0, 2], [1, 0]]), shape=(3, 2))
    expected = lhs.copy()
    expected[0, 1], expected[2, 0] = 50, 60
    np.testing.assert_array_equal(out.asnumpy(), expected)
    target = mx.nd.array(lhs)
    mx.nd._internal._scatter_set_nd(target, mx.nd.array([7.0]), mx.nd.array([[1], [1]]),
                                    shape=(3, 2), out=target)
    assert target.asnumpy()[1, 1] == 7
    with pytest.raises(mx.MXNetError, match="not lhs' shape"):
        mx.nd._internal._scatter_set_nd(target, mx.nd.array([7.0]), mx.nd.array([[1], [1]]),
                                        shape=(2, 3))


def test_split_v2_op_form_and_onehot_encode_op():
    parts = mx.nd._internal._split_v2(mx.nd.arange(6), indices=(0, 1, 4))
    assert [p.asnumpy().tolist() for p in parts] == [[0], [1, 2, 3], [4, 5]]
    halves = mx.nd._internal._split_v2(mx.nd.arange(6), sections=2)
    assert [p.asnumpy().tolist() for p in halves] == [[0, 1, 2], [3, 4, 5]]
    out = mx.nd.zeros((2, 3))
    assert mx.nd._internal._onehot_encode(mx.nd.array([2, 0]), out) is out
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0, 1], [1, 0, 0]])


# -- ravel / unravel ------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), count=st.integers(0, 6),
       seed=st.integers(0, 2**31))
def test_ravel_and_unravel_index_are_numpys(shape, count, seed):
    rng = np.random.default_rng(seed)
    flat = rng.integers(0, int(np.prod(shape)), size=count)
    ids = np.array(np.unravel_index(flat, shape), np.float32).reshape(len(shape), count)
    raveled = mx.nd.ravel_multi_index(mx.nd.array(ids), shape=shape)
    np.testing.assert_array_equal(raveled.asnumpy(), flat)
    unraveled = mx.nd.unravel_index(mx.nd.array(flat.astype(np.float32)), shape=shape)
    assert unraveled.shape == (len(shape), count)
    np.testing.assert_array_equal(unraveled.asnumpy(), ids)
    as_ints = mx.nd.unravel_index(mx.nd.array(flat, dtype="int64"), shape=shape)
    np.testing.assert_array_equal(as_ints.asnumpy(), ids.astype(np.int64))


def test_ravel_aliases_and_errors():
    ids = mx.nd.array([[1, 0], [2, 1]])
    np.testing.assert_array_equal(mx.nd._internal._ravel_multi_index(ids, shape=(3, 4))
                                  .asnumpy(), [6, 1])  # MXNet 1.9.1's
    np.testing.assert_array_equal(mx.nd._internal._unravel_index(mx.nd.array([9, 1]),
                                                                 shape=(3, 4)).asnumpy(),
                                  [[2, 0], [1, 1]])
    with pytest.raises(mx.MXNetError, match="one row of ids per dimension"):
        mx.nd.ravel_multi_index(mx.nd.ones((3, 2)), shape=(2, 2))
    with pytest.raises(mx.MXNetError, match="shape must name"):
        mx.nd.unravel_index(mx.nd.ones((2,)))


# -- diag -----------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=3), k=st.integers(-4, 4),
       data=st.data())
def test_diag_of_an_array_is_numpys_diagonal(shape, k, data):
    axis1 = data.draw(st.integers(-len(shape), len(shape) - 1))
    axis2 = data.draw(st.integers(-len(shape), len(shape) - 1).filter(
        lambda a: a % len(shape) != axis1 % len(shape)))
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    out = mx.nd.diag(mx.nd.array(x, dtype="float64"), k=k, axis1=axis1, axis2=axis2)
    np.testing.assert_array_equal(out.asnumpy(), np.diagonal(x, k, axis1, axis2))


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_diag_of_a_vector_is_numpys_and_gradients_flow(k):
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(mx.nd.diag(mx.nd.array(v), k=k).asnumpy(), np.diag(v, k))
    assert mx.nd.diag(mx.nd.array(np.zeros(0)), k=k).shape == (abs(k), abs(k))
    head = np.arange(np.diag(v, k).size, dtype=np.float64).reshape(np.diag(v, k).shape)
    _, (g,) = _grad_of(lambda a: mx.nd.diag(a, k=k), v, head=head)
    np.testing.assert_array_equal(g, np.diagonal(head, k))
    m = np.arange(12.0).reshape(3, 4)
    _, (g,) = _grad_of(lambda a: mx.nd.diag(a, k=k), m)
    np.testing.assert_array_equal(g, np.eye(3, 4, k))


def test_diag_errors():
    with pytest.raises(mx.MXNetError, match="must differ"):
        mx.nd.diag(mx.nd.ones((2, 2)), axis1=1, axis2=-1)
    with pytest.raises(mx.MXNetError, match="at least one dimension"):
        mx.nd.diag(mx.nd.array(np.float32(1.0)).reshape(()))


# -- histogram ------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(-3, 8, width=32), max_size=20), bins=st.integers(1, 6))
def test_histogram_is_numpys(values, bins):
    x = np.array(values, np.float32)
    counts, edges = mx.nd.histogram(mx.nd.array(x), bins=bins, range=(-1.0, 5.0))
    want, want_edges = np.histogram(x, bins=bins, range=(-1.0, 5.0))
    assert counts.dtype == np.int64 and edges.dtype == np.float32
    np.testing.assert_allclose(edges.asnumpy(), want_edges, rtol=1e-6)
    np.testing.assert_array_equal(counts.asnumpy(), want)
    edges_given = np.array([-2.0, 0.0, 0.5, 6.0], np.float32)
    counts, edges = mx.nd.histogram(mx.nd.array(x), bins=mx.nd.array(edges_given))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x, bins=edges_given)[0])


def test_histogram_without_range_is_numpys_with_mxnets_warning():
    x = np.array([0, 1, 1, 2, 5, np.nan, 7, -1], np.float32)
    with pytest.warns(UserWarning, match="range is not specified"):
        counts, edges = mx.nd.histogram(mx.nd.array([0, 1, 1, 2, 5]))
    want, want_edges = np.histogram([0, 1, 1, 2, 5])
    assert counts.dtype == np.float32  # MXNet's array() of numpy's result
    np.testing.assert_array_equal(counts.asnumpy(), want)
    np.testing.assert_allclose(edges.asnumpy(), want_edges, rtol=1e-6)
    counts, _ = mx.nd.histogram(mx.nd.array(x), bins=3, range=(0, 5))  # nan, 7, -1 left out
    np.testing.assert_array_equal(counts.asnumpy(), [3, 1, 1])  # MXNet 1.9.1's
    with pytest.raises(mx.MXNetError, match="bins must be an integer"):
        mx.nd.histogram(mx.nd.array(x), bins=2.5)
    with pytest.raises(mx.MXNetError, match="range"):
        mx.nd.histogram(mx.nd.array(x), bins=2, range=(3, 1))
    with pytest.raises(mx.MXNetError, match="at least 2 edges"):
        mx.nd.histogram(mx.nd.array(x), bins=mx.nd.array([1.0]))


# -- SVMOutput and IdentityAttachKLSparseReg ------------------------------------------------
@pytest.mark.parametrize("use_linear,expected", [
    (False, [[-0.5, 0.0, 2.5], [0.7, 1.2, 0.0]]),  # MXNet 1.9.1's gradients
    (True, [[-0.5, 0.0, 0.5], [0.5, 0.5, 0.0]]),
])
def test_svm_output_is_the_data_with_mxnets_hinge_gradient(use_linear, expected):
    x = np.array([[0.5, -2, 1.5], [-0.3, 0.2, 3]], np.float32)
    out, (g, gl) = _grad_of(
        lambda a, b: mx.nd.SVMOutput(a, b, margin=1.0, regularization_coefficient=0.5,
                                     use_linear=use_linear),
        x, np.array([0, 2], np.float32), head=np.full((2, 3), 7.0))
    np.testing.assert_array_equal(out, x)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(gl, 0)
    with pytest.raises(mx.MXNetError, match="one class per sample"):
        mx.nd.SVMOutput(mx.nd.ones((2, 3)), mx.nd.ones((3,)))


def test_identity_attach_kl_sparse_reg_moves_the_average_and_adds_the_penalty():
    x = np.array([[0.5, 0.2, 0.9], [0.3, 0.6, 0.1]], np.float32)
    moving = mx.nd.array([0.5, 0.5, 0.5])
    data = mx.nd.array(x)
    data.attach_grad()
    with autograd.record():
        out = mx.nd.IdentityAttachKLSparseReg(data, moving, sparseness_target=0.1,
                                              penalty=0.01, momentum=0.9)
    out.backward(mx.nd.full((2, 3), 2.0))
    avg = 0.9 * 0.5 + 0.1 * x.mean(axis=0)
    np.testing.assert_allclose(moving.asnumpy(), avg, rtol=1e-6)
    step = 0.01 * (-0.1 / avg + 0.9 / (1 - avg))
    np.testing.assert_allclose(data.grad.asnumpy(), 2 + np.broadcast_to(step, (2, 3)),
                               rtol=1e-6)
    np.testing.assert_allclose(data.grad.asnumpy()[0], [2.0156062, 2.0156062, 2.016],
                               rtol=1e-6)  # MXNet 1.9.1's
    with pytest.raises(mx.MXNetError, match=r"moving_avg \(hidden,\)"):
        mx.nd.IdentityAttachKLSparseReg(data, mx.nd.ones((2,)))


# -- mx.sym ---------------------------------------------------------------------------------
def test_symbols_of_the_new_ops_run_and_differentiate():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    y = mx.sym.batch_dot(a, b, transpose_b=True)
    assert y.infer_shape(a=(2, 3, 4), b=(2, 5, 4))[1] == [(2, 3, 5)]
    rng = np.random.default_rng(3)
    av, bv = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    executor = y.bind(mx.cpu(), {"a": mx.nd.array(av, dtype="float64"),
                                 "b": mx.nd.array(bv, dtype="float64")},
                      args_grad={"a": mx.nd.zeros((2, 3, 4), dtype="float64"),
                                 "b": mx.nd.zeros((2, 5, 4), dtype="float64")})
    out = executor.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), av @ np.swapaxes(bv, 1, 2), rtol=1e-12)
    executor.backward(mx.nd.ones((2, 3, 5), dtype="float64"))
    np.testing.assert_allclose(executor.grad_dict["a"].asnumpy(),
                               np.ones((2, 3, 5)) @ bv, rtol=1e-12)
    m = mx.sym.moments(a, axes=(1,))
    assert m.list_outputs() == ["moments0_output0", "moments0_output1"]
    mean, var = m.eval(a=mx.nd.array([[1.0, 3.0], [2.0, 2.0]]))
    np.testing.assert_array_equal(mean.asnumpy(), [2, 2])
    np.testing.assert_array_equal(var.asnumpy(), [1, 0])
    assert mx.sym.SVMOutput(a).list_arguments() == ["a", "svmoutput0_label"]
    c = mx.sym.cumsum(a, axis=0)
    np.testing.assert_array_equal(c.eval(a=mx.nd.array([1.0, 2.0, 3.0]))[0].asnumpy(), [1, 3, 6])


def test_mx_sym_functions_of_issue_38():
    np.testing.assert_array_equal(mx.sym.eye(3, k=1).eval()[0].asnumpy(), np.eye(3, k=1))
    np.testing.assert_allclose(mx.sym.linspace(0, 1, 5).eval()[0].asnumpy(),
                               np.linspace(0, 1, 5), rtol=1e-7)
    a = mx.sym.var("a")
    np.testing.assert_allclose(mx.sym.hypot(a, 4).eval(a=mx.nd.array([3.0]))[0].asnumpy(), [5])
    np.testing.assert_allclose(mx.sym.hypot(a, a).eval(a=mx.nd.array([3.0]))[0].asnumpy(),
                               [np.hypot(3, 3)], rtol=1e-6)
    assert mx.sym.hypot(3, 4) == 5
    counts, edges = mx.sym.histogram(a, bins=3, range=(0, 5)).eval(
        a=mx.nd.array([0, 1, 1, 2, 5]))
    np.testing.assert_array_equal(counts.asnumpy(), [3, 1, 1])
    with pytest.raises(mx.MXNetError, match="range is required"):
        mx.sym.histogram(a, bins=3)
    for name in ("normal", "uniform", "random_normal", "sample_normal", "random_randint"):
        assert callable(getattr(mx.sym, name)) and callable(getattr(mx.sym.op, name))
    assert mx.sym.normal(0, 1, shape=(2,)).eval()[0].shape == (2,)
    for name in ("arange", "eye", "full", "histogram", "hypot", "linspace", "load", "load_json",
                 "maximum", "minimum", "ones", "pow", "power", "split_v2", "zeros"):
        assert callable(getattr(mx.sym.symbol, name)), name


def test_graphs_name_mxnets_ops():
    a = mx.sym.var("a")
    graph = json.loads(mx.sym.identity(a).tojson())
    assert graph["nodes"][1]["op"] == "_copy"  # identity is MXNet's alias of _copy
    graph = json.loads(mx.sym.eye(2).tojson())
    assert graph["nodes"][0]["op"] == "_eye"
    graph = json.loads(mx.sym.hypot(a, 2).tojson())
    assert graph["nodes"][1]["op"] == "_hypot_scalar"
    loaded = mx.sym.load_json(mx.sym.batch_dot(a, a).tojson())
    assert json.loads(loaded.tojson())["nodes"][1]["op"] == "batch_dot"


def test_mxnet_ndarray_module_functions():
    from sparsegen.ndarray import ndarray as module

    for name in ("from_dlpack", "histogram", "split_v2", "to_dlpack_for_read",
                 "to_dlpack_for_write"):
        assert callable(getattr(module, name)), name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = mx.nd.array([1.0, 2.0])
        np.testing.assert_array_equal(module.from_dlpack(module.to_dlpack_for_read(x)).asnumpy(),
                                      [1, 2])
