"""MXNet's mixed-precision, two-phase and multi-tensor update operators (``mp_*``,
``lamb_update_phase*``, contrib ``adamw_update``, ``multi_*``, ``preloaded_multi_*``,
``multi_sum_sq``, ``multi_lars``) and the AMP ops (``all_finite``, ``multi_all_finite``,
``amp_cast``, ``amp_multicast``) against numpy re-implementations of MXNet's formulas, values
MXNet 1.9.1 printed, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx

nd = mx.nd
SHAPES = st.sampled_from([(4,), (3, 5), (2, 1, 3)])


def _clip(g, bound):
    return np.clip(g, -bound, bound) if bound > 0 else g


def _data(rng, shape, dtype=np.float32):
    return rng.uniform(-1, 1, shape).astype(dtype)


# -- mixed precision -------------------------------------------------------------------------
@settings(max_examples=8, deadline=None)
@given(shape=SHAPES, seed=st.integers(0, 2**16), momentum=st.sampled_from([0.0, 0.9]),
       clip=st.sampled_from([-1.0, 0.3]), wd=st.sampled_from([0.0, 0.1]))
def test_mp_sgd_updates_the_master_and_rounds_it(shape, seed, momentum, clip, wd):
    rng = np.random.default_rng(seed)
    w32, g16 = _data(rng, shape), _data(rng, shape, np.float16)
    mom0 = _data(rng, shape)
    lr, rescale = 0.25, 0.5
    g = _clip(rescale * g16.astype(np.float32), clip)
    weight, master = nd.array(w32.astype(np.float16), dtype="float16"), nd.array(w32)
    plain = nd.mp_sgd_update(weight, nd.array(g16, dtype="float16"), master, lr=lr, wd=wd,
                             rescale_grad=rescale, clip_gradient=clip)
    expected = (1 - lr * wd) * w32 - lr * g
    np.testing.assert_allclose(master.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert plain.dtype == np.float16
    np.testing.assert_array_equal(plain.asnumpy(), expected.astype(np.float16))
    np.testing.assert_array_equal(weight.asnumpy(), w32.astype(np.float16))  # out=None

    master, mom = nd.array(w32), nd.array(mom0)
    nd.mp_sgd_mom_update(weight, nd.array(g16, dtype="float16"), mom, master, lr=lr,
                         momentum=momentum, wd=wd, rescale_grad=rescale, clip_gradient=clip,
                         out=weight)
    new_mom = momentum * mom0 - lr * wd * w32 - lr * g
    np.testing.assert_allclose(mom.asnumpy(), new_mom, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(master.asnumpy(), w32 + new_mom, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(weight.asnumpy(), master.asnumpy().astype(np.float16))

    master, mom = nd.array(w32), nd.array(mom0)
    nd.mp_nag_mom_update(weight, nd.array(g16, dtype="float16"), mom, master, lr=lr,
                         momentum=momentum, wd=wd, rescale_grad=rescale, clip_gradient=clip,
                         out=weight)
    step = g + wd * w32
    nag_mom = momentum * mom0 - lr * step
    np.testing.assert_allclose(mom.asnumpy(), nag_mom, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(master.asnumpy(), w32 + momentum * nag_mom - lr * step,
                               rtol=1e-5, atol=1e-6)


def test_mp_nag_matches_mxnet():
    # MXNet 1.9.1: mp_nag_mom_update([1, 2] f16, [1, 1], zeros, lr=0.5, momentum=0.9)
    w16 = nd.array([1.0, 2.0], dtype="float16")
    w32 = w16.astype("float32")
    nd.mp_nag_mom_update(w16, nd.array([1.0, 1.0], dtype="float16"), nd.zeros(2), w32, lr=0.5,
                         momentum=0.9, out=w16)
    np.testing.assert_allclose(w32.asnumpy(), [0.05, 1.05], rtol=1e-6)
    np.testing.assert_allclose(w16.asnumpy(), [0.05, 1.05], rtol=1e-3)


# -- LAMB phases -----------------------------------------------------------------------------
def lamb_phase1(w, g, m, v, beta1, beta2, eps, t, bias, wd, rescale, clip):
    g = _clip(g * rescale, clip)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    if bias:
        return m, v, m / (1 - beta1**t) / (np.sqrt(v / (1 - beta2**t)) + eps) + wd * w
    return m, v, m / (np.sqrt(v) + eps) + wd * w


@settings(max_examples=8, deadline=None)
@given(shape=SHAPES, seed=st.integers(0, 2**16), t=st.integers(1, 5), bias=st.booleans(),
       clip=st.sampled_from([-1.0, 0.2]))
def test_lamb_phases(shape, seed, t, bias, clip):
    rng = np.random.default_rng(seed)
    w, g, m, v = (_data(rng, shape) for _ in range(4))
    v = np.abs(v)
    mean, var = nd.array(m), nd.array(v)
    step = nd.lamb_update_phase1(nd.array(w), nd.array(g), mean, var, beta1=0.8, beta2=0.9,
                                 epsilon=1e-6, t=t, bias_correction=bias, wd=0.05,
                                 rescale_grad=2.0, clip_gradient=clip)
    em, ev, es = lamb_phase1(w, g, m, v, 0.8, 0.9, 1e-6, t, bias, 0.05, 2.0, clip)
    np.testing.assert_allclose(mean.asnumpy(), em, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), ev, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(step.asnumpy(), es, rtol=1e-4, atol=1e-5)
    r1, r2 = np.linalg.norm(w), np.linalg.norm(es)
    new = nd.lamb_update_phase2(nd.array(w), step, nd.array([r1]), nd.array([r2]), lr=0.1)
    np.testing.assert_allclose(new.asnumpy(), w - 0.1 * r1 / r2 * es, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("lower, upper, expected", [
    (-1, -1, [0.5, 1.5]), (5, -1, [-0.25, 0.75]), (-1, 1, [0.75, 1.75]),
    (0.5, 1.0, [0.75, 1.75]), (0, 0, [0.0, 1.0]),
])
def test_lamb_phase2_bounds_as_mxnet(lower, upper, expected):
    # MXNet 1.9.1's values: r1 = 2, r2 = 4, lr = 1; a bound applies where it is >= 0
    w = nd.lamb_update_phase2(nd.array([1.0, 2.0]), nd.array([1.0, 1.0]), nd.array([2.0]),
                              nd.array([4.0]), lr=1.0, lower_bound=lower, upper_bound=upper)
    np.testing.assert_allclose(w.asnumpy(), expected)


def test_mp_lamb_phases_run_on_the_master():
    w16 = nd.array([1.0, 2.0], dtype="float16")
    w32 = w16.astype("float32")
    mean, var = nd.zeros(2), nd.zeros(2)
    g = nd.mp_lamb_update_phase1(w16, nd.array([1.0, -1.0], dtype="float16"), mean, var, w32,
                                 t=1, wd=0.1)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.asnumpy(), [1.0999991, -0.79999906], rtol=1e-6)  # MXNet's
    out = nd.mp_lamb_update_phase2(w16, g, nd.array([2.0]), nd.array([4.0]), w32, lr=0.5,
                                   out=w16)
    assert out is w16 and w16.dtype == np.float16
    np.testing.assert_allclose(w32.asnumpy(), [1 - 0.25 * 1.0999991, 2 + 0.25 * 0.79999906],
                               rtol=1e-6)
    np.testing.assert_allclose(w16.asnumpy(), w32.asnumpy(), rtol=1e-3)


# -- AdamW -----------------------------------------------------------------------------------
@pytest.mark.parametrize("as_array", [False, True])
def test_adamw_update_values_and_skips(as_array):
    rescale = nd.array([2.0]) if as_array else 2.0
    w, m, v = nd.array([1.0]), nd.zeros(1), nd.zeros(1)
    new = nd.contrib.adamw_update(w, nd.array([1.0]), m, v, rescale_grad=rescale, lr=0.1,
                                  eta=1.0, wd=0.1)
    # MXNet 1.9.1 printed these
    np.testing.assert_allclose(new.asnumpy(), [0.58377016], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [0.20000005], rtol=1e-6)
    np.testing.assert_allclose(v.asnumpy(), [0.00399995], rtol=1e-5)
    for skip in (float("nan"), float("inf"), 0.0, nd.array([np.nan])):
        out = nd.array([7.0])
        nd.contrib.adamw_update(w, nd.array([1.0]), m, v, rescale_grad=skip, lr=0.1, eta=1.0,
                                out=out)
        assert out.asscalar() == 7.0 and m.asscalar() == pytest.approx(0.20000005)


@settings(max_examples=6, deadline=None)
@given(shape=SHAPES, seed=st.integers(0, 2**16), clip=st.sampled_from([-1.0, 0.5]))
def test_mp_adamw_update(shape, seed, clip):
    rng = np.random.default_rng(seed)
    w, g, m = (_data(rng, shape) for _ in range(3))
    v = np.abs(_data(rng, shape))
    lr, eta, wd, b1, b2, eps, rescale = 0.01, 0.5, 0.1, 0.9, 0.99, 1e-6, 1.5
    weight, master = nd.array(w, dtype="float16"), nd.array(w.astype(np.float16).astype("f4"))
    mean, var = nd.array(m), nd.array(v)
    nd.contrib.mp_adamw_update(weight, nd.array(g, dtype="float16"), mean, var, master,
                               rescale_grad=nd.array([rescale]), lr=lr, eta=eta, wd=wd,
                               beta1=b1, beta2=b2, epsilon=eps, clip_gradient=clip, out=weight)
    c = _clip(rescale * g.astype(np.float16).astype(np.float32), clip)
    em, ev = b1 * m + (1 - b1) * c, b2 * v + (1 - b2) * c * c
    w0 = w.astype(np.float16).astype(np.float32)
    ew = w0 - eta * (lr * em / (np.sqrt(ev) + eps) + wd * w0)
    np.testing.assert_allclose(master.asnumpy(), ew, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(weight.asnumpy(), master.asnumpy().astype(np.float16))


# -- multi-tensor ----------------------------------------------------------------------------
def test_multi_sgd_and_preloaded():
    rng = np.random.default_rng(3)
    ws = [_data(rng, s) for s in ((3,), (2, 2))]
    gs = [_data(rng, s) for s in ((3,), (2, 2))]
    moms = [_data(rng, s) for s in ((3,), (2, 2))]
    lrs, wds = (0.1, 0.2), (0.0, 0.05)
    expected = [(1 - lr * wd) * w - lr * 0.5 * g for w, g, lr, wd in zip(ws, gs, lrs, wds)]
    got = nd.multi_sgd_update(nd.array(ws[0]), nd.array(gs[0]), nd.array(ws[1]),
                              nd.array(gs[1]), lrs=lrs, wds=wds, rescale_grad=0.5,
                              num_weights=2)
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=1e-6)
    weights = [nd.array(w) for w in ws]
    got = nd.preloaded_multi_sgd_update(weights[0], nd.array(gs[0]), weights[1],
                                        nd.array(gs[1]), nd.array(lrs), nd.array(wds),
                                        rescale_grad=0.5, num_weights=2, out=weights)
    for a, e in zip(weights, expected):
        np.testing.assert_allclose(a.asnumpy(), e, rtol=1e-6)

    states = [nd.array(m) for m in moms]
    data = [x for w, g, m in zip(ws, gs, states) for x in (nd.array(w), nd.array(g), m)]
    got = nd.multi_sgd_mom_update(*data, lrs=lrs, wds=wds, momentum=0.9, num_weights=2)
    for a, m, s, w, g, lr, wd in zip(got, moms, states, ws, gs, lrs, wds):
        new_mom = 0.9 * m - lr * wd * w - lr * g
        np.testing.assert_allclose(s.asnumpy(), new_mom, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(a.asnumpy(), w + new_mom, rtol=1e-5, atol=1e-7)

    states = [nd.array(m) for m in moms]
    data = [x for w, g, m in zip(ws, gs, states) for x in (nd.array(w), nd.array(g), m)]
    got = nd.preloaded_multi_sgd_mom_update(*data, nd.array(lrs), nd.array(wds), momentum=0.9,
                                            num_weights=2)
    for a, m, w, g, lr, wd in zip(got, moms, ws, gs, lrs, wds):
        np.testing.assert_allclose(a.asnumpy(), w + 0.9 * m - lr * wd * w - lr * g, rtol=1e-5,
                                   atol=1e-7)


def test_multi_mp_sgd():
    rng = np.random.default_rng(4)
    ws = [_data(rng, s) for s in ((3,), (2, 2))]
    gs = [_data(rng, s, np.float16) for s in ((3,), (2, 2))]
    lrs, wds = (0.1, 0.2), (0.01, 0.0)
    masters = [nd.array(w) for w in ws]
    data = [x for w, g, m in zip(ws, gs, masters)
            for x in (nd.array(w, dtype="float16"), nd.array(g, dtype="float16"), m)]
    got = nd.multi_mp_sgd_update(*data, lrs=lrs, wds=wds, num_weights=2)
    for a, m, w, g, lr, wd in zip(got, masters, ws, gs, lrs, wds):
        e = (1 - lr * wd) * w - lr * g.astype(np.float32)
        np.testing.assert_allclose(m.asnumpy(), e, rtol=1e-5, atol=1e-7)
        assert a.dtype == np.float16
    masters = [nd.array(w) for w in ws]
    moms = [nd.zeros(w.shape) for w in ws]
    data = [x for w, g, mo, m in zip(ws, gs, moms, masters)
            for x in (nd.array(w, dtype="float16"), nd.array(g, dtype="float16"), mo, m)]
    nd.preloaded_multi_mp_sgd_mom_update(*data, nd.array(lrs), nd.array(wds), momentum=0.5,
                                         num_weights=2)
    nd.multi_mp_sgd_mom_update(*data, lrs=lrs, wds=wds, momentum=0.5, num_weights=2)
    for m, mo, w, g, lr, wd in zip(masters, moms, ws, gs, lrs, wds):
        g32 = g.astype(np.float32)
        m1 = -lr * wd * w - lr * g32
        w1 = w + m1
        m2 = 0.5 * m1 - lr * wd * w1 - lr * g32
        np.testing.assert_allclose(mo.asnumpy(), m2, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m.asnumpy(), w1 + m2, rtol=1e-5, atol=1e-6)


def test_multi_sum_sq_and_multi_lars_as_mxnet():
    # MXNet 1.9.1: squares in float16 (300**2 overflows), sums in float32
    got = nd.multi_sum_sq(nd.array([1, 2, 300], dtype="float16"),
                          nd.array([[1, -1]], dtype="float16"), num_arrays=2)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.asnumpy(), [np.inf, 2.0])
    np.testing.assert_array_equal(nd.multi_sum_sq(nd.array([200, 200], dtype="float16"),
                                                  num_arrays=1).asnumpy(), [80000.0])
    lars = nd.multi_lars(nd.array([0.1, 0.2, 0.3, 0.4]), nd.array([4.0, 0, 4, 4]),
                         nd.array([1.0, 1, 0, 9]), nd.array([0.1, 0.1, 0.1, 0.0]), eta=0.5,
                         eps=0.01, rescale_grad=2.0)
    np.testing.assert_allclose(lars.asnumpy(), [0.04524887, 0.2, 0.3, 0.06655574], rtol=1e-6)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**16), count=st.integers(1, 4))
def test_multi_sum_sq_matches_numpy(seed, count):
    rng = np.random.default_rng(seed)
    arrays = [_data(rng, (int(rng.integers(1, 6)), 3)) for _ in range(count)]
    got = nd.multi_sum_sq(*(nd.array(a) for a in arrays), num_arrays=count)
    np.testing.assert_allclose(got.asnumpy(), [np.sum(a.astype(np.float64)**2) for a in arrays],
                               rtol=1e-5)


def test_multi_adamw_and_lamb_lists():
    rng = np.random.default_rng(5)
    ws = [_data(rng, s) for s in ((3,), (2, 2))]
    gs = [_data(rng, s) for s in ((3,), (2, 2))]
    means, vars_ = [nd.zeros(w.shape) for w in ws], [nd.zeros(w.shape) for w in ws]
    got = nd.contrib.multi_adamw_update([nd.array(w) for w in ws], [nd.array(g) for g in gs],
                                        means, vars_, nd.array([1.0]), lrs=[0.1, 0.2],
                                        wds=[0.0, 0.1], etas=[1.0, 0.5], beta1=0.9, beta2=0.99)
    for a, w, g, lr, wd, eta in zip(got, ws, gs, (0.1, 0.2), (0.0, 0.1), (1.0, 0.5)):
        m, v = 0.1 * g, 0.01 * g * g
        e = w - eta * (lr * m / (np.sqrt(v) + 1e-8) + wd * w)
        np.testing.assert_allclose(a.asnumpy(), e, rtol=1e-5, atol=1e-6)

    means, vars_ = [nd.zeros(w.shape) for w in ws], [nd.zeros(w.shape) for w in ws]
    weights = [nd.array(w) for w in ws]
    nd.contrib.multi_lamb_update(weights, [nd.array(g) for g in gs], means, vars_,
                                 step_count=[1, 2], lrs=[0.1, 0.2], wds=[0.01, 0.0],
                                 out=weights, upper_bound=10.0)
    for a, w, g, t, lr, wd in zip(weights, ws, gs, (1, 2), (0.1, 0.2), (0.01, 0.0)):
        _, _, step = lamb_phase1(w, g, 0 * w, 0 * w, 0.9, 0.999, 1e-6, t, True, wd, 1.0, -1)
        r1, r2 = min(np.linalg.norm(w), 10.0), np.linalg.norm(step)
        np.testing.assert_allclose(a.asnumpy(), w - lr * r1 / r2 * step, rtol=1e-4, atol=1e-5)


def test_multi_mp_lamb_and_internal_names():
    w16 = [nd.array([1.0, 2.0], dtype="float16")]
    w32 = [w16[0].astype("float32")]
    new = nd.contrib.multi_mp_lamb_update(w16, [nd.array([1.0, -1.0], dtype="float16")],
                                          [nd.zeros(2)], [nd.zeros(2)], w32, step_count=[1],
                                          lrs=[0.5], wds=[0.1])
    step = np.array([1.0999991, -0.79999906])
    ratio = np.linalg.norm([1.0, 2.0]) / np.linalg.norm(step)
    np.testing.assert_allclose(w32[0].asnumpy(), [1.0, 2.0] - 0.5 * ratio * step, rtol=1e-5)
    assert new.dtype == np.float16
    for name in ("_multi_adamw_update", "_multi_mp_adamw_update", "_multi_lamb_update",
                 "_multi_mp_lamb_update", "_adamw_update", "_mp_adamw_update"):
        assert callable(getattr(nd._internal, name))
    assert callable(nd.contrib.multi_mp_adamw_update)


# -- AMP -------------------------------------------------------------------------------------
def test_all_finite():
    assert nd.all_finite(nd.array([1.0, np.inf])).asnumpy().tolist() == [0.0]
    assert nd.all_finite(nd.array([1.0, 2.0], dtype="float16")).dtype == np.float32
    out = nd.array([5.0])
    nd.all_finite(nd.array([1.0, 2.0]), init_output=False, out=out)
    assert out.asscalar() == 5.0  # MXNet's: only a failure writes
    nd.all_finite(nd.array([1.0, np.nan]), init_output=False, out=out)
    assert out.asscalar() == 0.0
    assert nd.multi_all_finite(nd.array([1.0]), nd.array([np.nan]),
                               num_arrays=2).asscalar() == 0.0
    assert nd.multi_all_finite(nd.array([1.0]), nd.array([2.0, 3.0]),
                               num_arrays=2).asscalar() == 1.0
    rsp = nd.array([[0.0, 0.0], [np.inf, 1.0]]).tostype("row_sparse")
    assert nd.all_finite(rsp).asscalar() == 0.0


def test_amp_casts_as_mxnet():
    h, f, d, i = (nd.array([1.5], dtype=t) for t in ("float16", "float32", "float64", "int32"))
    assert nd.amp_cast(f, dtype="float16").dtype == np.float16
    assert nd.amp_cast(i, dtype="float16").dtype == np.int32  # only low precision <-> float32
    assert nd.amp_cast(d, dtype="float16").dtype == np.float64
    assert [a.dtype for a in nd.amp_multicast(h, f, i, num_outputs=3)] == [
        np.float32, np.float32, np.int32]
    assert [a.dtype for a in nd.amp_multicast(h, f, d, num_outputs=3, cast_narrow=True)] == [
        np.float16, np.float16, np.float64]
    np.testing.assert_array_equal(nd.amp_multicast(h, f, num_outputs=2)[0].asnumpy(), [1.5])


def test_symbol_forms():
    for name in ("mp_sgd_update", "multi_sgd_update", "multi_sum_sq", "all_finite", "amp_cast",
                 "lamb_update_phase1", "preloaded_multi_sgd_mom_update"):
        assert callable(getattr(mx.sym, name))
    assert callable(mx.sym.contrib.adamw_update) and callable(mx.sym.contrib.mp_adamw_update)
    # MXNet's test_operator.py test_all_finite, and the outputs of multi-output updates
    data, data2 = mx.sym.Variable("data"), mx.sym.Variable("data2")
    finite, inf = nd.array([[0, 0]]), nd.array([[np.inf, np.inf]])
    exe = mx.sym.multi_all_finite(data, data2, num_arrays=2).bind(
        mx.cpu(), {"data": finite, "data2": inf})
    exe.forward(is_train=False)
    assert exe.outputs[0].asnumpy()[0] == 0
    exe = mx.sym.all_finite(data).bind(mx.cpu(), {"data": finite})
    exe.forward(is_train=False)
    assert exe.outputs[0].asnumpy()[0] == 1
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    exe = mx.sym.amp_multicast(x, y, num_outputs=2).bind(
        mx.cpu(), {"x": nd.ones((2,), dtype="float16"), "y": nd.ones((2,))})
    exe.forward()
    assert [o.dtype for o in exe.outputs] == [np.float32, np.float32]
    names = [mx.sym.Variable(n) for n in ("w0", "g0", "w1", "g1")]
    out = mx.sym.multi_sgd_update(*names, lrs=(0.1, 0.2), wds=(0.0, 0.0), num_weights=2)
    assert len(out.list_outputs()) == 2
    exe = out.bind(mx.cpu(), {n: nd.array([1.0]) for n in ("w0", "g0", "w1", "g1")})
    exe.forward()
    assert [o.asscalar() for o in exe.outputs] == pytest.approx([0.9, 0.8])


def test_save_leaves_out_amp_casts(tmp_path):
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    a, b = mx.sym.amp_multicast(mx.sym.amp_cast(x, dtype="float16"), y, num_outputs=2)
    net = a + b
    net.save(str(tmp_path / "kept.json"), remove_amp_cast=False)
    net.save(str(tmp_path / "removed.json"))
    kept = mx.sym.load(str(tmp_path / "kept.json"))
    removed = mx.sym.load(str(tmp_path / "removed.json"))
    ops = [n["op"] for n in __import__("json").loads(removed.tojson())["nodes"]]
    assert "amp_cast" not in ops and "amp_multicast" not in ops
    assert "amp_multicast" in kept.tojson(remove_amp_cast=False)
    assert "amp_multicast" not in kept.tojson()  # MXNet's default
    args = {"x": nd.array([1.5]), "y": nd.array([2.0])}
    exe = removed.bind(mx.cpu(), args)
    exe.forward()
    assert exe.outputs[0].asscalar() == 3.5


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("call, word", [
    (lambda: nd.mp_sgd_update(nd.ones(2, dtype="float16"), nd.ones(2, dtype="float16"),
                              nd.ones(2, dtype="float16"), lr=0.1), "weight32"),
    (lambda: nd.mp_sgd_update(nd.ones(2, dtype="float16"), nd.ones(2, dtype="float16"),
                              nd.ones(3), lr=0.1), "weight32"),
    (lambda: nd.mp_sgd_update(nd.ones(2, dtype="float16"), nd.ones(2, dtype="float16"),
                              nd.ones(2)), "lr"),
    (lambda: nd.lamb_update_phase1(nd.ones(2), nd.ones(2), nd.zeros(2), nd.zeros(2), wd=0.0),
     "t"),
    (lambda: nd.lamb_update_phase2(nd.ones(2), nd.ones(2), nd.ones(2), nd.ones(1), lr=0.1),
     "r1"),
    (lambda: nd.contrib.adamw_update(nd.ones(2), nd.ones(2), nd.zeros(2), nd.zeros(2),
                                     rescale_grad=nd.ones(2), lr=0.1, eta=1.0), "rescale_grad"),
    (lambda: nd.multi_sgd_update(nd.ones(2), nd.ones(2), nd.ones(2), lrs=(0.1,), wds=(0.0,),
                                 num_weights=1), "expected 2 arrays"),
    (lambda: nd.multi_sgd_update(nd.ones(2), nd.ones(2), lrs=(0.1, 0.2), wds=(0.0,),
                                 num_weights=1), "lrs"),
    (lambda: nd.multi_sgd_update(nd.ones(2), nd.ones(3), lrs=(0.1,), wds=(0.0,),
                                 num_weights=1), "shape"),
    (lambda: nd.preloaded_multi_sgd_update(nd.ones(2), nd.ones(2), nd.ones(2), nd.ones(1),
                                           num_weights=1), "lrs"),
    (lambda: nd.multi_sum_sq(nd.ones(2), nd.ones(2, dtype="float16"), num_arrays=2), "dtype"),
    (lambda: nd.multi_lars(nd.ones(2), nd.ones(2), nd.ones(2), nd.ones(2), eta=0.1), "eps"),
    (lambda: nd.all_finite(nd.array([1, 2], dtype="int32")), "floating"),
    (lambda: nd.amp_multicast(nd.ones(2), num_outputs=2), "num_outputs"),
    (lambda: nd.sgd_update(nd.ones(2), nd.ones(2), lr=0.1, bogus=1), "bogus"),
])
def test_bad_input_is_refused(call, word):
    with pytest.raises(mx.MXNetError, match=word):
        call()


def test_a_refused_multi_update_changes_nothing():
    w0, w1 = nd.ones(2), nd.ones(2)
    with pytest.raises(mx.MXNetError, match="out"):
        nd.multi_sgd_update(w0, nd.ones(2), w1, nd.ones(2), lrs=(0.1, 0.1), wds=(0, 0),
                            num_weights=2, out=[w0, nd.ones(3)])
    np.testing.assert_array_equal(w0.asnumpy(), [1, 1])
    with pytest.raises(mx.MXNetError, match="dtype"):
        nd.multi_sgd_mom_update(w0, nd.ones(2), nd.zeros(2), w1, nd.ones(2),
                                nd.zeros(2, dtype="float16"), lrs=(0.1, 0.1), wds=(0, 0),
                                momentum=0.5, num_weights=2, out=[w0, w1])
    np.testing.assert_array_equal(w0.asnumpy(), [1, 1])
    master = nd.ones(2)
    with pytest.raises(mx.MXNetError):
        nd.mp_sgd_update(nd.ones(2, dtype="float16"), nd.ones(2, dtype="float16"), master,
                         lr=0.1, out=nd.ones(3, dtype="float16"))
    np.testing.assert_array_equal(master.asnumpy(), [1, 1])
