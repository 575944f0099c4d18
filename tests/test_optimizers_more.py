"""MXNet's FTML, DCASGD, contrib GroupAdaGrad, Test and ccSGD optimizers and the
``ftml_update`` / ``contrib.group_adagrad_update`` operators, as update rules: several steps
against a float64 numpy reference of MXNet 1.9.1's update equations (its optimizer.py and
optimizer_op-inl.h), over shapes, dtypes, gradient storage and hyper-parameters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.update_rules.language import define_update, store_order

# hyper-parameters reach the kernels as float32 (MXNet's operator parameters are C floats)
TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=2e-6, atol=1e-8)}


def _clip(x, bound):
    return x if bound is None or bound < 0 else np.clip(x, -bound, bound)


def _f32(*values):
    """Hyper-parameters as the kernels get them: float32 (MXNet's are C floats)."""
    return [None if v is None else float(np.float32(v)) for v in values]


def _ftml(w, g, d, v, z, t, lr, beta1, beta2, eps, wd, rg, clip):
    d_scale, v_scale = _f32((1 - beta1**t) / lr, 1 / (1 - beta2**t))
    beta1, beta2, eps, wd, rg, clip = _f32(beta1, beta2, eps, wd, rg, clip)
    r = _clip(rg * g + wd * w, clip)
    v = beta2 * v + (1 - beta2) * r * r
    d_t = d_scale * (np.sqrt(v * v_scale) + eps)
    z = beta1 * z + (1 - beta1) * r - (d_t - beta1 * d) * w
    return -z / d_t, d_t, v, z


def _dcasgd(w, g, mom, prev, lr, momentum, lamda, wd, rg, clip):
    r = _clip(rg * g, clip)
    mom = momentum * mom - lr * (r + wd * w + lamda * r * r * (w - prev))
    return w + mom, mom, w.copy()


def _group_adagrad(w, g, hist, rows, lr, eps, rg, clip):
    w, hist = w.copy(), hist.copy()
    r = _clip(rg * g[rows], clip)
    hist[rows] += (r * r).mean(axis=1, keepdims=True)
    w[rows] -= lr * r / np.sqrt(hist[rows] + eps)
    return w, hist


shapes = st.tuples(st.integers(1, 7), st.integers(1, 5))
dtypes = st.sampled_from(("float32", "float64"))
clips = st.sampled_from((None, 0.5, 3.0))


def _arrays(seed, shape, dtype, count):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for _ in range(count)]


@settings(max_examples=25, deadline=None)
@given(shapes, dtypes, st.integers(0, 2**31), st.sampled_from((0.0, 0.01)), clips,
       st.sampled_from((0.5, 0.6, 0.9)))
def test_ftml_optimizer_matches_mxnets_equations(shape, dtype, seed, wd, clip, beta1):
    w0, *grads = _arrays(seed, shape, dtype, 4)
    opt = mx.optimizer.create("ftml", learning_rate=0.05, wd=wd, beta1=beta1,
                              clip_gradient=clip, rescale_grad=0.5)
    weight = mx.nd.array(w0, dtype=dtype)
    state = opt.create_state(0, weight)
    w, d, v, z = (w0.astype("float64"), *(np.zeros(shape) for _ in range(3)))
    for t, g in enumerate(grads, 1):
        opt.update(0, weight, mx.nd.array(g, dtype=dtype), state)
        w, d, v, z = _ftml(w, g.astype("float64"), d, v, z, t, 0.05, beta1, 0.999, 1e-8, wd,
                           0.5, clip)
    np.testing.assert_allclose(weight.asnumpy(), w, **TOL[dtype])
    for got, want in zip(state, (d, v, z)):
        np.testing.assert_allclose(got.asnumpy(), want, **TOL[dtype])


@settings(max_examples=25, deadline=None)
@given(shapes, dtypes, st.integers(0, 2**31), st.sampled_from((0.0, 0.5, 0.9)),
       st.sampled_from((0.0, 0.04, 1.0)), st.sampled_from((0.0, 0.1)), clips)
def test_dcasgd_matches_mxnets_equations(shape, dtype, seed, momentum, lamda, wd, clip):
    w0, *grads = _arrays(seed, shape, dtype, 4)
    opt = mx.optimizer.DCASGD(momentum=momentum, lamda=lamda, learning_rate=0.1, wd=wd,
                              clip_gradient=clip)
    weight = mx.nd.array(w0, dtype=dtype)
    state = opt.create_state(0, weight)
    assert (state[0] is None) == (momentum == 0.0)  # MXNet's state: (None, weight copy)
    w, mom, prev = w0.astype("float64"), np.zeros(shape), w0.astype("float64")
    for g in grads:
        opt.update(0, weight, mx.nd.array(g, dtype=dtype), state)
        w, mom, prev = _dcasgd(w, g.astype("float64"), mom, prev, 0.1, momentum, lamda, wd,
                               1.0, clip)
    np.testing.assert_allclose(weight.asnumpy(), w, **TOL[dtype])
    np.testing.assert_allclose(state[1].asnumpy(), prev, **TOL[dtype])
    if momentum:
        np.testing.assert_allclose(state[0].asnumpy(), mom, **TOL[dtype])


@settings(max_examples=25, deadline=None)
@given(shapes, dtypes, st.integers(0, 2**31), clips, st.data())
def test_group_adagrad_updates_the_gradients_rows_only(shape, dtype, seed, clip, data):
    w0, *grads = _arrays(seed, shape, dtype, 3)
    opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1, clip_gradient=clip, eps=1e-5)
    weight = mx.nd.array(w0, dtype=dtype)
    state = opt.create_state(0, weight)
    assert state.shape == (shape[0], 1)
    w, hist = w0.astype("float64"), np.zeros((shape[0], 1))
    for g in grads:  # no stored row, some rows, every row
        rows = sorted(data.draw(st.sets(st.integers(0, shape[0] - 1))))
        grad = mx.nd.sparse.row_sparse_array((g[rows].reshape(len(rows), shape[1]), rows),
                                             shape=shape, dtype=dtype)
        opt.update(0, weight, grad, state)
        w, hist = _group_adagrad(w, g.astype("float64"), hist, rows, 0.1, 1e-5, 1.0, clip)
    np.testing.assert_allclose(weight.asnumpy(), w, **TOL[dtype])
    np.testing.assert_allclose(state.asnumpy(), hist, **TOL[dtype])


def test_group_adagrad_dense_gradient_updates_every_row_and_refuses_wd():
    w0, g = _arrays(1, (4, 3), "float32", 2)
    opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.2)
    weight = mx.nd.array(w0)
    state = opt.create_state(0, weight)
    opt.update(0, weight, mx.nd.array(g), state)
    w, hist = _group_adagrad(w0.astype("float64"), g.astype("float64"), np.zeros((4, 1)),
                             [0, 1, 2, 3], 0.2, 1e-5, 1.0, None)
    np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-5)
    np.testing.assert_allclose(state.asnumpy(), hist, rtol=1e-5)
    before = weight.asnumpy()
    with pytest.raises(mx.MXNetError, match="weight decay is not supported, got wd=0.1"):
        mx.optimizer.contrib.GroupAdaGrad(wd=0.1).update(0, weight, mx.nd.array(g), state)
    np.testing.assert_array_equal(weight.asnumpy(), before)  # refused: nothing changed
    with pytest.raises(mx.MXNetError, match="weight must be 2-D"):
        opt.create_state(1, mx.nd.zeros((2, 2, 2)))


def test_mxnets_test_optimizer_accumulates_and_copies_the_weight():  # rule accumulate
    w0, g = _arrays(2, (5, 2), "float32", 2)
    opt = mx.optimizer.create("test", rescale_grad=0.25)
    weight = mx.nd.array(w0)
    state = opt.create_state(0, weight)
    rows = [1, 4]
    grad = mx.nd.sparse.row_sparse_array((g[rows], rows), shape=(5, 2))
    opt.update(0, weight, grad, state)
    want = w0.copy()
    want[rows] += 0.25 * g[rows]
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(state.asnumpy(), weight.asnumpy())  # every row, not only 1, 4


def test_ccsgd_is_sgd():
    opt = mx.optimizer.create("ccsgd", learning_rate=0.5, momentum=0.9)
    assert isinstance(opt, mx.optimizer.SGD) and type(opt).__name__ == "ccSGD"
    weight, grad = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    opt.update(0, weight, grad, opt.create_state(0, weight))
    np.testing.assert_allclose(weight.asnumpy(), 0.5)


@settings(max_examples=15, deadline=None)
@given(shapes, st.integers(1, 5), st.sampled_from((-1.0, 0.0, 0.3)), st.integers(0, 2**31))
def test_ftml_update_operator(shape, t, clip_grad, seed):
    w0, g, d0, v0, z0 = _arrays(seed, shape, "float64", 5)
    v0 = np.abs(v0)
    d, v, z = (mx.nd.array(a, dtype="float64") for a in (d0, v0, z0))
    weight = mx.nd.array(w0, dtype="float64")
    got = mx.nd.ftml_update(weight, mx.nd.array(g, dtype="float64"), d, v, z, lr=0.1, t=t,
                            wd=0.01, clip_grad=clip_grad)
    want = _ftml(w0, g, d0, v0, z0, t, 0.1, 0.6, 0.999, 1e-8, 0.01, 1.0, clip_grad)
    np.testing.assert_allclose(got.asnumpy(), want[0], **TOL["float64"])
    for arr, ref in zip((d, v, z), want[1:]):
        np.testing.assert_allclose(arr.asnumpy(), ref, **TOL["float64"])
    np.testing.assert_array_equal(weight.asnumpy(), w0)  # no out=: a new array


def test_update_operators_refuse_bad_arguments_naming_them():
    w, g = mx.nd.ones((3, 2)), mx.nd.ones((3, 2))
    d, v, z = (mx.nd.zeros((3, 2)) for _ in range(3))
    with pytest.raises(mx.MXNetError, match="parameter t"):
        mx.nd.ftml_update(w, g, d, v, z, lr=0.1)
    with pytest.raises(mx.MXNetError, match="t"):
        mx.nd.ftml_update(w, g, d, v, z, lr=0.1, t=0)
    with pytest.raises(mx.MXNetError, match="lr"):
        mx.nd.ftml_update(w, g, d, v, z, lr=0.0, t=1)
    with pytest.raises(mx.MXNetError, match=r"history must be an NDArray of shape \(3, 1\)"):
        mx.nd.contrib.group_adagrad_update(w, g, mx.nd.zeros((3,)), lr=0.1)
    with pytest.raises(mx.MXNetError, match="Cannot find argument 'wd'"):
        mx.nd.contrib.group_adagrad_update(w, g, mx.nd.zeros((3, 1)), lr=0.1, wd=0.1)
    assert d.asnumpy().sum() == 0 and w.asnumpy().sum() == 6  # refused: nothing changed


def test_states_survive_an_updater_round_trip():
    for name, kw in (("ftml", {}), ("dcasgd", {"momentum": 0.0}), ("dcasgd", {"momentum": 0.5}),
                     ("groupadagrad", {}), ("test", {})):
        updater = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kw))
        weight = mx.nd.ones((3, 2))
        updater(0, mx.nd.ones((3, 2)), weight)
        other = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kw))
        other.set_states(updater.get_states(dump_optimizer=True))  # FTML's step count too
        again = weight.copy()
        updater(0, mx.nd.ones((3, 2)), weight)
        other(0, mx.nd.ones((3, 2)), again)
        np.testing.assert_array_equal(again.asnumpy(), weight.asnumpy(), err_msg=name)


def test_a_rule_returning_one_value_for_two_arrays_stores_it_from_the_old_values():
    # both outputs are one node: the state must not read the weight's new value back
    def update(x, h, g, f):
        new = x.weight + g * h.lr
        return new, new

    rule = define_update("both_same", update, states=("copy",), hyper=("lr",),
                         functions=("dense",))
    assert store_order(rule) == [1, 0]  # the copy reads the old weight: it is stored first
