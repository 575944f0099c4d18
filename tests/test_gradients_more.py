"""Gradients of the indexing, sorting, padding and remaining elementwise ops (issue 14), against
hand-derived numpy oracles (``np.add.at`` of the output gradient at the positions read) and
``mx.test_utils.check_numeric_gradient``; and the list of every op the front end can record,
each with a gradient rule or named as not differentiable in MXNet 1.9.1.

What MXNet 1.9.1 does, asked of it with ``autograd.record`` + ``backward`` (the values below
were checked against it on small cases): ties in sort and topk send the gradient to the
positions the (stable) order picked, e.g. topk(k=2) of [1, 2, 2, 1, 2] gives [0, g0, g1, 0, 0];
topk's indices and mask, argsort, argmax/argmin, one_hot and the samplers with array
parameters give zero gradients; ``_shuffle`` registers no gradient (backward raises);
``x[idx] = v`` on a recorded array raises while recording.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import autograd
from sparsegen.autograd.gradients import GRADIENTS
from sparsegen.storage_rules import STORAGE_RULES
from sparsegen.test_utils import check_numeric_gradient
from test_conv import conv_oracle

nd = mx.nd
FLOATS = ("float16", "float32", "float64")
TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-9}

NOT_DIFFERENTIABLE = {
    "_shuffle": "MXNet 1.9.1: 'Operator _shuffle is non-differentiable' (no FGradient)",
    "_sigmoid_bce_grad": "the backward kernel of the fused sigmoid cross entropy (first order "
                         "only, as MXNet's _backward_* ops)",
    "digamma": "internal: the derivative inside gamma's and gammaln's gradients (first order "
               "only; MXNet has no digamma op)",
    "_scatter_elemwise_div": "no gradient rule in sparsegen yet (docs/mxnet-differences.md)",
}
"""Recordable ops without a gradient rule (MXNet 1.9.1 differentiates none of them but
``_scatter_elemwise_div``): backward through them raises."""



def _backward(f, arrays, head=None, dtype="float32", ctx=None):
    """The gradients (numpy) of ``sum(f(*arrays) * head)``, ``head`` default 1, and f's value."""
    xs = [nd.array(np.asarray(a), dtype=dtype, ctx=ctx) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = f(*xs)
    y = y[0] if isinstance(y, list) else y
    y.backward(None if head is None else nd.array(head, dtype=y.dtype, ctx=ctx))
    assert all(x.grad.context == y.context for x in xs)
    return [x.grad.asnumpy() for x in xs], y.asnumpy()


def _head(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def _values(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


shapes = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


# -- take on every axis and mode ---------------------------------------------------------------
@settings(max_examples=25)
@given(shape=shapes, data=st.data(), mode=st.sampled_from(("clip", "wrap", "raise")),
       dtype=st.sampled_from(FLOATS), seed=st.integers(0, 2**31))
def test_take_gradient_adds_up_every_read_along_any_axis(shape, data, mode, dtype, seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    ids_shape = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=2).map(tuple))
    if n == 0:
        ids_shape = (0,)
    ids = (rng.integers(0, n, ids_shape) if mode == "raise" or n == 0
           else rng.integers(-2 * n - 1, 2 * n + 2, ids_shape))
    x = _values(rng, shape, dtype)
    k = axis % len(shape)
    out_shape = shape[:k] + ids_shape + shape[k + 1:]
    head = _head(rng, out_shape)
    (grad, _), y = _backward(lambda a, i: nd.take(a, i, axis=axis, mode=mode), [x, ids], head,
                             dtype)
    rows = np.mod(ids, n) if mode == "wrap" else np.clip(ids, 0, max(n - 1, 0))
    want = np.zeros(x.shape, np.float64)
    moved = np.moveaxis(want, k, 0)  # a view: add.at writes through it
    g = np.moveaxis(head.reshape(shape[:k] + (ids.size,) + shape[k + 1:]), k, 0)
    np.add.at(moved, rows.reshape(-1), g.astype(dtype).astype(np.float64))
    np.testing.assert_allclose(grad, want, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])
    assert grad.dtype == np.dtype(dtype)


def test_take_gradient_numeric_on_inner_axes():
    rng = np.random.default_rng(1)
    for axis, mode in ((1, "clip"), (2, "wrap"), (-2, "raise")):
        ids = nd.array([[2, 0], [1, 2]] if mode != "wrap" else [[5, -1], [-4, 2]])
        check_numeric_gradient(lambda a: nd.take(a, ids, axis=axis, mode=mode),
                               [rng.standard_normal((2, 3, 3))], dtype=np.float64,
                               numeric_eps=1e-4, rtol=1e-4)


# -- gather_nd, scatter_nd, advanced indexing --------------------------------------------------
@settings(max_examples=25)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), data=st.data(),
       seed=st.integers(0, 2**31))
def test_gather_nd_gradient_adds_repeated_picks(shape, data, seed):
    rng = np.random.default_rng(seed)
    m = data.draw(st.integers(1, len(shape)))
    picks = data.draw(st.integers(0, 6)) if all(shape[:m]) else 0
    ids = np.stack([rng.integers(-d, d, picks) if d else np.zeros(picks, int)
                    for d in shape[:m]]) if picks else np.zeros((m, 0))
    x = _values(rng, shape, np.float32)
    head = _head(rng, (picks, *shape[m:]))
    (grad, _), y = _backward(nd.gather_nd, [x, ids], head)
    want = np.zeros(shape, np.float64)
    if picks:
        np.add.at(want, tuple(ids.astype(int)), head.astype(np.float64))
        np.testing.assert_array_equal(y, x[tuple(ids.astype(int))])
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-6)


def test_gather_nd_and_scatter_nd_as_mxnet():
    # MXNet 1.9.1: repeated picks add up (gather_nd); every scattered element gets the gradient
    # of the position it was written to, even where a later one overwrote it (scatter_nd)
    head = np.arange(1, 3, dtype=np.float32)
    (grad, _), _ = _backward(nd.gather_nd, [np.ones((2, 3)), [[1, 1], [2, 2]]], head)
    np.testing.assert_array_equal(grad, [[0, 0, 0], [0, 0, 3]])
    head = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    (grad, _), _ = _backward(lambda d, i: nd.scatter_nd(d, i, shape=(2, 3)),
                             [np.ones(2), [[1, 1], [2, 2]]], head)
    np.testing.assert_array_equal(grad, [6, 6])


@settings(max_examples=20)
@given(rows=st.integers(1, 5), cols=st.integers(1, 4), picks=st.integers(0, 5),
       seed=st.integers(0, 2**31))
def test_scatter_nd_gradient_reads_back_the_written_positions(rows, cols, picks, seed):
    rng = np.random.default_rng(seed)
    ids = np.stack([rng.integers(-rows, rows, picks), rng.integers(0, cols, picks)]) \
        if picks else np.zeros((2, 0))
    head = _head(rng, (rows, cols))
    (grad, _), _ = _backward(lambda d, i: nd.scatter_nd(d, i, shape=(rows, cols)),
                             [_values(rng, (picks,), np.float32), ids], head)
    want = head[tuple(ids.astype(int))] if picks else np.zeros(0)
    np.testing.assert_array_equal(grad, want)


KEYS = {
    "int list": [1, 0, 1],
    "int array 2-d": np.array([[2, 0], [2, 2]]),
    "two arrays": (np.array([1, 0, 1]), np.array([2, 2, 0])),
    "slice and array": (slice(None), np.array([2, 0, 2])),
    "array and int": (np.array([0, 2, 0]), 1),
    "negative ids": np.array([-1, -3, 0]),
    "empty": np.array([], dtype=np.int64),
}


@pytest.mark.parametrize("name", KEYS)
def test_advanced_indexing_gradient(name):
    key = KEYS[name]
    rng = np.random.default_rng(3)
    x = _values(rng, (3, 3, 2), np.float32)
    out_shape = x[key].shape
    head = _head(rng, out_shape)
    (grad,), y = _backward(lambda a: a[key], [x], head)
    np.testing.assert_array_equal(y, x[key])
    want = np.zeros(x.shape)
    np.add.at(want, key, head)
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-6)
    if y.size:
        check_numeric_gradient(lambda a: a[key], [x.astype(np.float64)], dtype=np.float64,
                               numeric_eps=1e-4, rtol=1e-4)


def test_setitem_on_a_recorded_array_raises_as_mxnet():
    x = nd.ones((2, 3))
    x.attach_grad()
    for key in (0, nd.array([0], dtype="int64"), slice(None)):
        with autograd.record():
            z = x * 2
            with pytest.raises(mx.MXNetError, match="in-place"):
                z[key] = 5


# -- sort and topk: ties, axes, direction ------------------------------------------------------
def _lines(rng, shape, dtype, ties):
    values = rng.integers(0, 3, shape) if ties else rng.permutation(math.prod(shape))
    return values.reshape(shape).astype(dtype)


def _stable_order(x, axis, ascend):
    """Positions in the order sparsegen's stable sort takes them (MXNet's on its tests)."""
    return np.argsort(x if ascend else -x, axis=axis, kind="stable")


@settings(max_examples=25)
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple), data=st.data(),
       ascend=st.booleans(), ties=st.booleans(), dtype=st.sampled_from(FLOATS),
       seed=st.integers(0, 2**31))
def test_sort_gradient_goes_to_the_sorted_positions(shape, data, ascend, ties, dtype, seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = _lines(rng, shape, dtype, ties)
    head = _head(rng, shape)
    (grad,), y = _backward(lambda a: nd.sort(a, axis=axis, is_ascend=ascend), [x], head, dtype)
    order = _stable_order(x, axis, ascend)
    want = np.zeros(shape)
    np.put_along_axis(want, order, head.astype(dtype), axis=axis)
    np.testing.assert_array_equal(y, np.take_along_axis(x, order, axis=axis))
    np.testing.assert_array_equal(grad, want)


@settings(max_examples=25)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), data=st.data(),
       ascend=st.booleans(), ties=st.booleans(), ret_typ=st.sampled_from(("value", "both")),
       seed=st.integers(0, 2**31))
def test_topk_value_gradient_goes_to_the_k_picked_positions(shape, data, ascend, ties, ret_typ,
                                                           seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(1, shape[axis]))
    x = _lines(rng, shape, np.float32, ties)
    order = np.take(_stable_order(x, axis, ascend), np.arange(k), axis=axis)
    head = _head(rng, order.shape)
    (grad,), y = _backward(lambda a: nd.topk(a, axis=axis, k=k, ret_typ=ret_typ,
                                               is_ascend=ascend), [x], head)
    want = np.zeros(shape)
    np.put_along_axis(want, order, head, axis=axis)
    np.testing.assert_array_equal(y, np.take_along_axis(x, order, axis=axis))
    np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_ties_as_mxnet_and_zero_gradient_of_indices_and_masks():
    x = [[1, 2, 2, 1, 2]]
    (grad,), _ = _backward(lambda a: nd.topk(a, k=2, ret_typ="value"), [x], [[10, 20]])
    np.testing.assert_array_equal(grad, [[0, 10, 20, 0, 0]])  # MXNet 1.9.1's answer
    (grad,), _ = _backward(lambda a: nd.sort(a, axis=1), [x], [[1, 2, 3, 4, 5]])
    np.testing.assert_array_equal(grad, [[1, 3, 4, 2, 5]])  # MXNet 1.9.1's answer
    zero_gradient = (lambda a: nd.topk(a, k=2), lambda a: nd.topk(a, k=2, ret_typ="mask"),
                     lambda a: nd.argsort(a), lambda a: nd.argmax(a, axis=1),
                     lambda a: nd.topk(a, k=2, ret_typ="both")[1])
    for f in zero_gradient:
        x_ = nd.array(x)
        x_.attach_grad()
        with autograd.record():
            y = f(x_) * 1 + nd.sum(x_) * 0
        y.backward()
        np.testing.assert_array_equal(x_.grad.asnumpy(), np.zeros((1, 5)))


def test_sort_and_topk_numeric_gradients_on_flattened_input():
    rng = np.random.default_rng(5)
    x = rng.permutation(12).reshape(3, 4).astype(np.float64)
    for f in (lambda a: nd.sort(a, axis=None, is_ascend=False),
              lambda a: nd.topk(a, axis=None, k=5, ret_typ="value"),
              lambda a: nd.topk(a, axis=0, k=2, ret_typ="both")[0]):
        check_numeric_gradient(f, [x], dtype=np.float64, numeric_eps=1e-4, rtol=1e-4)


# -- pad, csr slices and concat, retain ------------------------------------------------------------
@settings(max_examples=20)
@given(mode=st.sampled_from(("constant", "edge", "reflect")), ndim=st.sampled_from((4, 5)),
       data=st.data(), seed=st.integers(0, 2**31))
def test_pad_gradient_adds_every_padded_copy_back(mode, ndim, data, seed):
    rng = np.random.default_rng(seed)
    spatial = data.draw(st.lists(st.integers(1, 4), min_size=ndim - 2, max_size=ndim - 2))
    widths = [data.draw(st.tuples(st.integers(0, n - 1 if mode == "reflect" else 3),
                                  st.integers(0, n - 1 if mode == "reflect" else 3)))
              for n in spatial]
    shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)), *spatial)
    pad_width = (0, 0, 0, 0, *(w for pair in widths for w in pair))
    x = _values(rng, shape, np.float32)
    # the position of x each padded element copies (constant: any, its gradient is checked apart)
    where = np.pad(np.arange(x.size).reshape(shape), [(0, 0), (0, 0), *widths],
                   mode="edge" if mode == "constant" else mode)
    head = _head(rng, where.shape)
    (grad,), y = _backward(lambda a: nd.pad(a, mode=mode, pad_width=pad_width), [x], head)
    want = np.zeros(x.size)
    if mode == "constant":  # only the copy of x itself reads x
        inner = tuple(slice(b, b + n) for (b, _), n in zip(widths, spatial))
        want = head[(slice(None), slice(None), *inner)]
    else:
        np.add.at(want, where.reshape(-1), head.reshape(-1))
        np.testing.assert_array_equal(y, x.reshape(-1)[where])
    np.testing.assert_allclose(grad, want.reshape(shape), rtol=1e-5, atol=1e-5)


def test_pad_numeric_gradient():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 2, 3, 3))
    for mode in ("constant", "edge", "reflect"):
        check_numeric_gradient(lambda a: nd.pad(a, mode=mode, pad_width=(0, 0, 0, 0, 1, 2, 2, 1)),
                               [x], dtype=np.float64, numeric_eps=1e-4, rtol=1e-4)


def test_csr_slice_and_concat_gradients_dense_as_mxnet():
    rng = np.random.default_rng(7)
    x = np.where(rng.random((4, 5)) < 0.5, rng.standard_normal((4, 5)), 0).astype(np.float32)
    head = _head(rng, (2, 2))
    (grad,), _ = _backward(lambda a: nd.slice(a.tostype("csr"), begin=(1, 2), end=(3, 4))
                           .tostype("default"), [x], head)
    want = np.zeros((4, 5))
    want[1:3, 2:4] = head
    np.testing.assert_array_equal(grad, want)
    head = _head(rng, (8, 5))
    (g1, g2), _ = _backward(lambda a, b: nd.concat(a.tostype("csr"), b.tostype("csr"), dim=0)
                            .tostype("default"), [x, x * 2], head)
    np.testing.assert_array_equal(g1, head[:4])
    np.testing.assert_array_equal(g2, head[4:])


@settings(max_examples=20)
@given(rows=st.integers(1, 8), seed=st.integers(0, 2**31))
def test_retain_gradient_keeps_the_retained_rows_row_sparse(rows, seed):
    rng = np.random.default_rng(seed)
    stored = np.flatnonzero(rng.random(rows) < 0.6)
    keep = np.flatnonzero(rng.random(rows) < 0.5)
    data = np.zeros((rows, 3), np.float32)
    data[stored] = rng.standard_normal((stored.size, 3))
    x = nd.array(data).tostype("row_sparse")
    x.attach_grad()
    head = _head(rng, (rows, 3))
    with autograd.record():
        y = nd.sparse.retain(x, nd.array(keep, dtype="int64"))
    y.backward(nd.array(head))
    assert x.grad.stype == "row_sparse"
    want = np.zeros((rows, 3), np.float32)
    want[keep] = head[keep]
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


# -- elementwise leftovers, samplers, Dropout ----------------------------------------------------
def test_quadratic_rmod_and_broadcast_mod_gradients():
    rng = np.random.default_rng(8)
    x = rng.uniform(0.3, 3, (3, 4)).astype(np.float32)
    b = rng.uniform(0.3, 3, (1, 4)).astype(np.float32)
    head = _head(rng, (3, 4))
    (grad,), _ = _backward(lambda a: nd.contrib.quadratic(a, a=2, b=-3, c=1), [x], head)
    np.testing.assert_allclose(grad, head * (4 * x - 3), rtol=1e-5)
    (grad,), _ = _backward(lambda a: 5 % a, [x], head)
    np.testing.assert_allclose(grad, -head * np.floor(5 / x), rtol=1e-6)
    (ga, gb), _ = _backward(nd.broadcast_mod, [x, b], head)
    np.testing.assert_allclose(ga, head, rtol=1e-6)
    np.testing.assert_allclose(gb, np.sum(-head * np.floor(x / b), axis=0, keepdims=True),
                               rtol=1e-5)
    check_numeric_gradient(lambda a: nd.contrib.quadratic(a, a=0.5, b=2, c=3), [x],
                           dtype=np.float64, numeric_eps=1e-4, rtol=1e-4)


def test_samplers_with_array_parameters_give_zero_gradients_as_mxnet():
    for f in (lambda m, s: nd.random.normal(m, s, shape=(2,)),
              lambda m, s: nd.random.uniform(m, m + s, shape=(2,)),
              lambda m, s: nd.random.gamma(m, s)):
        (gm, gs), y = _backward(f, [[1.0, 2.0], [0.5, 1.0]])
        assert np.all(np.isfinite(y))
        np.testing.assert_array_equal(gm, 0)
        np.testing.assert_array_equal(gs, 0)


def test_dropout_gradient_is_the_scaled_mask():
    rng = np.random.default_rng(9)
    x = rng.uniform(1, 2, (40, 30)).astype(np.float32)
    head = _head(rng, x.shape)
    (grad,), y = _backward(lambda a: nd.Dropout(a, p=0.3), [x], head)
    kept = y != 0
    assert 0.5 < kept.mean() < 0.9
    np.testing.assert_allclose(y[kept], x[kept] / 0.7, rtol=1e-6)
    np.testing.assert_allclose(grad, np.where(kept, head / 0.7, 0), rtol=1e-6)
    xs = nd.array(x)
    xs.attach_grad()
    with autograd.record(train_mode=False):  # predict mode: Dropout is the identity
        out = nd.Dropout(xs, p=0.3) * 1
    out.backward(nd.array(head))
    np.testing.assert_array_equal(xs.grad.asnumpy(), head)


# -- LeakyReLU and softmin (composed of recorded ops) ------------------------------------------
X0 = np.arange(1, 7).reshape(2, 3) * 0.37 % 1.3 + 0.1 - 0.6
HEAD0 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
MXNET_LEAKY = {  # (kwargs, value, gradient of sum(y * HEAD0)): MXNet 1.9.1's answers
    "leaky": (dict(slope=0.1), [[-0.013, 0.24, 0.61], [-0.032, 0.05, 0.42]],
              [[0.1, 2, 3], [0.4, 5, 6]]),
    "elu": (dict(slope=0.3), [[-0.036571, 0.24, 0.61], [-0.082155, 0.05, 0.42]],
            [[0.263429, 2, 3], [0.871379, 5, 6]]),
    # selu below 0: MXNet's backward gives λ(y + α) (1.532913, 5.008928), not the derivative
    # λαeˣ = y + λα that sparsegen gives (docs/mxnet-differences.md)
    "selu": ({}, [[-0.21432, 0.252168, 0.640928], [-0.481457, 0.052535, 0.441294]],
             [[1.543779, 2.101402, 3.152103], [5.106569, 5.253505, 6.304206]]),
}


@pytest.mark.parametrize("act_type", MXNET_LEAKY)
def test_leaky_relu_values_and_gradients_as_mxnet(act_type):
    kwargs, value, grad_want = MXNET_LEAKY[act_type]
    (grad,), y = _backward(lambda a: nd.LeakyReLU(a, act_type=act_type, **kwargs), [X0], HEAD0)
    np.testing.assert_allclose(y, value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, grad_want, rtol=1e-5)
    check_numeric_gradient(lambda a: nd.LeakyReLU(a, act_type=act_type, **kwargs), [X0],
                           dtype=np.float64, numeric_eps=1e-5, rtol=1e-4)


@settings(max_examples=15)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple),
       per_channel=st.booleans(), seed=st.integers(0, 2**31))
def test_prelu_gradients_of_data_and_gamma(shape, per_channel, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    channels = shape[1] if len(shape) > 1 else 1
    gamma = rng.standard_normal(channels if per_channel else 1).astype(np.float32)
    slope = gamma.reshape((1, -1) + (1,) * (len(shape) - 2)) if len(shape) > 1 else gamma
    head = _head(rng, shape)
    (gx, gg), y = _backward(lambda a, g: nd.LeakyReLU(a, g, act_type="prelu"), [x, gamma], head)
    np.testing.assert_allclose(y, np.where(x > 0, x, x * slope), rtol=1e-6)
    np.testing.assert_allclose(gx, np.where(x > 0, head, head * slope), rtol=1e-6)
    per_element = np.where(x > 0, 0, head * x)
    want = (per_element.sum(axis=tuple(k for k in range(len(shape)) if k != 1))
            if per_channel and len(shape) > 1 else per_element.sum(keepdims=True).reshape(1))
    np.testing.assert_allclose(gg, want, rtol=1e-4, atol=1e-5)


def test_prelu_gamma_as_mxnet_and_rrelu():
    (gx, gg), y = _backward(lambda a, g: nd.LeakyReLU(a, g, act_type="prelu"),
                            [X0.T, [0.2, -0.5]], HEAD0.T)
    np.testing.assert_allclose(gx, [[0.2, -2], [2, 5], [3, 6]], rtol=1e-6)  # MXNet 1.9.1's
    np.testing.assert_allclose(gg, [-0.13, -1.28], rtol=1e-5)
    rng = np.random.default_rng(11)
    x = -rng.uniform(0.5, 1, (50, 20))
    (grad,), y = _backward(lambda a: nd.LeakyReLU(a, act_type="rrelu", lower_bound=0.1,
                                                  upper_bound=0.3), [x])
    rate = y / x.astype(np.float32)  # one slope per element, drawn when training
    assert 0.1 <= rate.min() < 0.12 and 0.28 < rate.max() <= 0.3
    np.testing.assert_allclose(grad, rate, rtol=1e-5)
    predicted = nd.LeakyReLU(nd.array(x), act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    np.testing.assert_allclose(predicted.asnumpy(), x * 0.2, rtol=1e-6)  # the mean slope
    with pytest.raises(mx.MXNetError, match="gamma must have shape"):
        nd.LeakyReLU(nd.ones((2, 3)), nd.ones((2,)), act_type="prelu")


def test_softmin_value_and_gradient_as_mxnet():
    (grad,), y = _backward(lambda a: nd.softmin(a, temperature=2.0), [X0], HEAD0)
    want = np.exp(-X0 / 2) / np.exp(-X0 / 2).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(y, want, rtol=1e-5)
    np.testing.assert_allclose(y[0], [0.396536, 0.329563, 0.273901], rtol=1e-5)  # MXNet's
    np.testing.assert_allclose(grad[0], [0.173953, -0.020208, -0.153745], rtol=1e-4)
    np.testing.assert_allclose(grad, -want * (HEAD0 - (HEAD0 * want).sum(-1, keepdims=True)) / 2,
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(nd.array(X0).softmin(temperature=2.0).asnumpy(), want, rtol=1e-5)


# -- Convolution ---------------------------------------------------------------------------------
def _transpose_of(f, shape, head):
    """The exact gradient of ``sum(f(x) * head)`` for a linear ``f``: f of each basis vector."""
    grad = np.zeros(shape)
    for i in np.ndindex(shape):
        basis = np.zeros(shape)
        basis[i] = 1
        grad[i] = np.sum(f(basis) * head)
    return grad


@settings(max_examples=15)
@given(rank=st.integers(1, 3), data=st.data(), bias=st.booleans(), seed=st.integers(0, 2**31))
def test_convolution_gradients_are_the_transposes_of_the_oracle(rank, data, bias, seed):
    rng = np.random.default_rng(seed)
    groups = data.draw(st.sampled_from((1, 2)))
    channels, filters = groups * data.draw(st.integers(1, 2)), groups * data.draw(st.integers(1, 2))
    window = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    stride = data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    dilate = data.draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
    pad = data.draw(st.lists(st.integers(0, 2), min_size=rank, max_size=rank))
    spatial = [max(d * (k - 1) + 1 - 2 * p, 1) + data.draw(st.integers(0, 3))
               for k, d, p in zip(window, dilate, pad)]
    x = rng.standard_normal((data.draw(st.integers(1, 2)), channels, *spatial))
    w = rng.standard_normal((filters, channels // groups, *window))
    b = rng.standard_normal(filters)
    geometry = dict(stride=tuple(stride), dilate=tuple(dilate), pad=tuple(pad), groups=groups)
    head = rng.standard_normal(conv_oracle(x, w, None, **geometry).shape)
    grads, _ = _backward(
        lambda *a: nd.Convolution(*a, kernel=window, stride=stride, dilate=dilate, pad=pad,
                                  num_filter=filters, num_group=groups, no_bias=not bias),
        [x, w, b] if bias else [x, w], head, "float64")
    np.testing.assert_allclose(grads[0], _transpose_of(
        lambda e: conv_oracle(e, w, None, **geometry), x.shape, head), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(grads[1], _transpose_of(
        lambda e: conv_oracle(x, e, None, **geometry), w.shape, head), rtol=1e-9, atol=1e-9)
    if bias:
        np.testing.assert_allclose(grads[2], head.sum(axis=(0, *range(2, head.ndim))),
                                   rtol=1e-9)


def test_convolution_gradient_as_mxnet_and_numeric():
    x = np.arange(1, 5).reshape(1, 1, 4) * 0.37 % 1.3 + 0.1  # MXNet 1.9.1's answer, asked of it
    w = np.arange(1, 5).reshape(2, 1, 2) * 0.37 % 1.3 + 0.1
    head = np.arange(1, 7).reshape(1, 2, 3)
    (gx, gw), _ = _backward(lambda a, b: nd.Convolution(a, b, kernel=(2,), num_filter=2,
                                                        no_bias=True), [x, w], head)
    np.testing.assert_allclose(gx, [[[5.31, 8.95, 11.75, 4.2]]], rtol=1e-5)
    np.testing.assert_allclose(gw, [[[5.78, 4.1]], [[13.34, 11.09]]], rtol=1e-5)
    rng = np.random.default_rng(10)
    check_numeric_gradient(
        lambda a, b, c: nd.Convolution(a, b, c, kernel=(2, 2), stride=(2, 1), pad=(1, 1),
                                       num_filter=2),
        [rng.standard_normal((1, 2, 3, 4)), rng.standard_normal((2, 2, 2, 2)),
         rng.standard_normal(2)], dtype=np.float64, numeric_eps=1e-4, rtol=1e-4)


# -- the list of recordable ops ----------------------------------------------------------------
def _recorded_outside_invoke() -> dict[str, bool]:
    """Op names the front end records itself (``tape.record("name", ...)``), and whether the
    call passes its own gradient function."""
    found = {}
    for path in Path(mx.__file__).parent.rglob("*.py"):
        for match in re.finditer(r'tape\.record\("(\w+)"([^\n]*)', path.read_text()):
            found[match.group(1)] = "gradient=" in match.group(2)
    return found


def recordable_ops() -> set[str]:
    """Every op a backward pass can meet: the rules with an array result (``name->stype``
    variants share their op's name), and the names recorded outside ``invoke``."""
    ops = {op.split("->", 1)[0] for (op, _), rule in STORAGE_RULES.items()
           if rule.output_stype is not None}
    return ops | {op for op, own in _recorded_outside_invoke().items() if not own}


def test_every_recordable_op_has_a_gradient_or_is_named_not_differentiable():
    ops = recordable_ops()
    assert {"take", "sort", "_topk_both", "_getitem_advanced", "_shuffle"} <= ops
    without = ops - set(GRADIENTS)
    assert without == set(NOT_DIFFERENTIABLE), sorted(without)


def test_gather_nd_and_scatter_nd_of_empty_rows():
    # an empty table beside an empty trailing block (numpy cannot infer -1 there)
    assert nd.gather_nd(nd.zeros((0, 0)), nd.zeros((1, 0))).shape == (0, 0)
    assert nd.scatter_nd(nd.zeros((0, 0)), nd.zeros((1, 0)), shape=(2, 0)).shape == (2, 0)


def test_convolution_gradient_of_an_empty_batch_and_of_the_data_alone():
    x, w, b = nd.zeros((0, 2, 5)), nd.ones((3, 2, 2)), nd.ones((3,))
    for a in (x, w, b):
        a.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, w, b, kernel=(2,), num_filter=3)
    y.backward()
    assert x.grad.shape == (0, 2, 5)
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((3, 2, 2)))
    np.testing.assert_array_equal(b.grad.asnumpy(), np.zeros(3))
    rng = np.random.default_rng(12)
    data, weight = rng.standard_normal((2, 2, 6)), rng.standard_normal((2, 2, 3))
    x = nd.array(data, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = nd.Convolution(x, nd.array(weight, dtype="float64"), kernel=(3,), stride=(2,),
                           num_filter=2, no_bias=True)
    y.backward()
    geometry = dict(stride=(2,), dilate=(1,), pad=(0,), groups=1)
    np.testing.assert_allclose(x.grad.asnumpy(), _transpose_of(
        lambda e: conv_oracle(e, weight, None, **geometry), data.shape, np.ones(y.shape)),
        rtol=1e-9, atol=1e-9)


# -- depth_to_space, space_to_depth ------------------------------------------------------------
def test_depth_and_space_moves_and_their_gradients_as_mxnet():
    head = np.arange(24).reshape(1, 1, 4, 6) * 10
    (grad,), y = _backward(lambda a: nd.depth_to_space(a, 2), [np.arange(24).reshape(1, 4, 2, 3)],
                           head)
    np.testing.assert_array_equal(y, [[[[0, 6, 1, 7, 2, 8], [12, 18, 13, 19, 14, 20],
                                        [3, 9, 4, 10, 5, 11], [15, 21, 16, 22, 17, 23]]]])
    np.testing.assert_array_equal(grad, [[[[0, 20, 40], [120, 140, 160]],
                                          [[10, 30, 50], [130, 150, 170]],
                                          [[60, 80, 100], [180, 200, 220]],
                                          [[70, 90, 110], [190, 210, 230]]]])  # MXNet 1.9.1's
    (grad,), y = _backward(lambda a: nd.space_to_depth(a, 2), [np.arange(24).reshape(1, 1, 4, 6)],
                           np.arange(24).reshape(1, 4, 2, 3) * 10)
    np.testing.assert_array_equal(y, [[[[0, 2, 4], [12, 14, 16]], [[1, 3, 5], [13, 15, 17]],
                                       [[6, 8, 10], [18, 20, 22]], [[7, 9, 11], [19, 21, 23]]]])
    np.testing.assert_array_equal(grad, [[[[0, 60, 10, 70, 20, 80],
                                           [120, 180, 130, 190, 140, 200],
                                           [30, 90, 40, 100, 50, 110],
                                           [150, 210, 160, 220, 170, 230]]]])
    for call, message in ((lambda: nd.depth_to_space(nd.zeros((1, 3, 2, 2)), 2), "multiple"),
                          (lambda: nd.space_to_depth(nd.zeros((1, 1, 3, 4)), 2), "multiples"),
                          (lambda: nd.depth_to_space(nd.zeros((4, 2, 2)), 2), "4-D"),
                          (lambda: nd.depth_to_space(nd.zeros((1, 4, 2, 2)), 0), "block_size")):
        with pytest.raises(mx.MXNetError, match=message):
            call()


@settings(max_examples=20)
@given(n=st.integers(0, 2), c=st.integers(1, 3), hw=st.tuples(st.integers(0, 3), st.integers(1, 3)),
       b=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_depth_to_space_gradient_is_the_inverse_move(n, c, hw, b, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, (n, c * b * b, *hw), np.float32)
    head = _head(rng, (n, c, hw[0] * b, hw[1] * b))
    (grad,), y = _backward(lambda a: nd.depth_to_space(a, b), [x], head)
    where = np.arange(x.size).reshape(x.shape)  # MXNet's definition of the move, on positions
    moved = where.reshape(n, b, b, c, *hw).transpose(0, 3, 4, 1, 5, 2).reshape(head.shape)
    np.testing.assert_array_equal(y, x.reshape(-1)[moved])
    want = np.zeros(x.size, np.float32)
    want[moved.reshape(-1)] = head.reshape(-1)
    np.testing.assert_array_equal(grad, want.reshape(x.shape))
    np.testing.assert_array_equal(nd.array(x).depth_to_space(b).asnumpy(), y)
    (back,), _ = _backward(lambda a: a.space_to_depth(b), [y], x)
    np.testing.assert_array_equal(back, y)  # space_to_depth undoes the move, so does its gradient



def test_gradients_on_an_emulated_gpu_as_mxnet(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")  # the GPU code path, in host memory
    gpu = mx.gpu(0)
    x23 = np.arange(1, 7).reshape(2, 3) * 0.37 % 1.3 + 0.1
    cases = [  # (function, inputs, head, MXNet 1.9.1's gradient of the first input)
        (lambda a: nd.take(a, nd.array([4, -1, 2], ctx=gpu), axis=1, mode="wrap"), [x23],
         np.arange(1, 7).reshape(2, 3), [[0, 1, 5], [0, 4, 11]]),
        (lambda a: nd.gather_nd(a, nd.array([[1, 1], [2, 2]], ctx=gpu)), [x23], [1, 2],
         [[0, 0, 0], [0, 0, 3]]),
        (lambda a: nd.sort(a, axis=1), [[[1, 2, 2, 1, 2]]], [[1, 2, 3, 4, 5]], [[1, 3, 4, 2, 5]]),
        (lambda a: nd.topk(a, k=2, ret_typ="value"), [[[1, 2, 2, 1, 2]]], [[10, 20]],
         [[0, 10, 20, 0, 0]]),
        (lambda a: a[[1, 0, 1]], [x23], np.arange(1, 7).reshape(3, 2)[:, :1].repeat(3, 1),
         [[3, 3, 3], [6, 6, 6]]),  # x[0] gets row 1 of head, x[1] rows 0 and 2
        (lambda a: nd.pad(a, mode="edge", pad_width=(0, 0, 0, 0, 1, 2, 0, 1)),
         [x23.reshape(1, 1, 2, 3)], np.arange(1, 21).reshape(1, 1, 5, 4),
         [[[[6, 8, 22], [39, 42, 93]]]]),
        (lambda a, b: nd.Convolution(a, b, kernel=(2,), num_filter=2, no_bias=True),
         [np.arange(1, 5).reshape(1, 1, 4) * 0.37 % 1.3 + 0.1,
          np.arange(1, 5).reshape(2, 1, 2) * 0.37 % 1.3 + 0.1],
         np.arange(1, 7).reshape(1, 2, 3), [[[5.31, 8.95, 11.75, 4.2]]]),
    ]
    for f, arrays, head, want in cases:
        grads, _ = _backward(f, arrays, head, ctx=gpu)
        np.testing.assert_allclose(grads[0], want, rtol=1e-5)
