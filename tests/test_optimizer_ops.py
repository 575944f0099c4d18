"""Operator-level optimizer updates (``mx.nd.sgd_update`` ... ``nag_mom_update``,
``mx.nd.sparse.adagrad_update``): values against a numpy reference of MXNet 1.9.1's documented
update equations, lazy / standard choice, ``out=`` semantics, storage fallbacks, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import StorageFallbackWarning
from test_gpu import gpu  # noqa: F401 - the fixture: emulated (host) and real CUDA GPUs

# -- the reference ------------------------------------------------------------------------------
# One step of each operator on the rows it updates, from the equations of MXNet's operator
# documentation: float32 arithmetic, hyper-parameters rounded to float32 (MXNet's operator
# parameters are C floats), clip bounds <= 0 meaning no clipping.

F = np.float32


def _clip(x, bound):
    return x if bound <= 0 else np.clip(x, -F(bound), F(bound))


def _step(op, w, g, states, p):
    """(new weight, new states) of ``op`` for float32 rows ``w``, ``g`` and ``states``."""
    h = {k: F(v) for k, v in p.items()}
    lr, wd, rg = h["lr"], h.get("wd", F(0)), h.get("rescale_grad", F(1))
    cg = p.get("clip_gradient", -1)
    one = F(1)
    if op == "sgd_update":
        return (one - lr * wd) * w - lr * _clip(rg * g, cg), []
    if op == "sgd_mom_update":
        mom = h["momentum"] * states[0] - lr * wd * w - lr * _clip(rg * g, cg)
        return w + mom, [mom]
    if op == "adam_update":
        r = _clip(rg * g + wd * w, cg)
        mean = h["beta1"] * states[0] + (one - h["beta1"]) * r
        var = h["beta2"] * states[1] + (one - h["beta2"]) * r * r
        return w - lr * mean / (np.sqrt(var) + h["epsilon"]), [mean, var]
    if op == "ftrl_update":
        r = _clip(rg * g, cg)
        z = states[0] + r - (np.sqrt(states[1] + r * r) - np.sqrt(states[1])) * w / lr
        n = states[1] + r * r
        new = (np.sign(z) * h["lamda1"] - z) / ((h["beta"] + np.sqrt(n)) / lr + wd)
        return np.where(np.abs(z) > h["lamda1"], new, F(0)).astype(F), [z, n]
    if op == "adagrad_update":
        r = _clip(rg * g, cg)
        hist = states[0] + r * r
        return w - lr * r / np.sqrt(hist + h["epsilon"]), [hist]
    if op in ("rmsprop_update", "rmspropalex_update"):
        r = _clip(rg * g + wd * w, cg)
        n = (one - h["gamma1"]) * r * r + h["gamma1"] * states[0]
        if op == "rmsprop_update":
            return _clip(w - lr * r / np.sqrt(n + h["epsilon"]), p.get("clip_weights", -1)), [n]
        mean = (one - h["gamma1"]) * r + h["gamma1"] * states[1]
        delta = h["gamma2"] * states[2] - lr * r / np.sqrt(n - mean * mean + h["epsilon"])
        return _clip(w + delta, p.get("clip_weights", -1)), [n, mean, delta]
    if op == "signsgd_update":
        return (one - lr * wd) * w - lr * np.sign(g), []
    if op == "signum_update":
        mom = h["momentum"] * states[0] - (one - h["momentum"]) * (wd * w + _clip(rg * g, cg))
        return (one - lr * h.get("wd_lh", F(0))) * w + lr * np.sign(mom), [mom]
    assert op == "nag_mom_update"
    r = _clip(rg * g, cg) + wd * w
    mom = h["momentum"] * states[0] - lr * r
    return w + h["momentum"] * mom - lr * r, [mom]


def _expected(op, w, g, states, p, rows):
    """Weight and states after ``op`` updates ``rows`` (every other row unchanged)."""
    w, states = w.copy(), [s.copy() for s in states]
    nw, ns = _step(op, w[rows], g[rows], [s[rows] for s in states], p)
    w[rows] = nw
    for s, new in zip(states, ns):
        s[rows] = new
    return w, states


STATES = {"sgd_update": 0, "sgd_mom_update": 1, "adam_update": 2, "ftrl_update": 2,
          "adagrad_update": 1, "rmsprop_update": 1, "rmspropalex_update": 3,
          "signsgd_update": 0, "signum_update": 1, "nag_mom_update": 1}
LAZY_UPDATE = ("sgd_update", "sgd_mom_update", "adam_update")  # take lazy_update
DENSE_ONLY = ("rmsprop_update", "rmspropalex_update", "signsgd_update", "signum_update",
              "nag_mom_update")  # MXNet has no row_sparse kernel: a sparse grad falls back


def _params(op, draw):
    p = {"lr": draw(st.sampled_from([0.1, 0.5])),
         "rescale_grad": draw(st.sampled_from([1.0, 0.7])),
         "clip_gradient": draw(st.sampled_from([-1.0, 0.4]))}
    if op != "adagrad_update":
        p["wd"] = draw(st.sampled_from([0.0, 0.05]))
    extra = {"sgd_mom_update": {"momentum": 0.9}, "nag_mom_update": {"momentum": 0.8},
             "signum_update": {"momentum": 0.9, "wd_lh": draw(st.sampled_from([0.0, 0.02]))},
             "adam_update": {"beta1": 0.8, "beta2": 0.9, "epsilon": 1e-3},
             "ftrl_update": {"lamda1": 0.05, "beta": 1.0}, "adagrad_update": {"epsilon": 1e-3},
             "rmsprop_update": {"gamma1": 0.9, "epsilon": 1e-3,
                                "clip_weights": draw(st.sampled_from([-1.0, 1.5]))},
             "rmspropalex_update": {"gamma1": 0.9, "gamma2": 0.8, "epsilon": 1e-3,
                                    "clip_weights": draw(st.sampled_from([-1.0, 1.5]))}}
    p.update(extra.get(op, {}))
    return p


def _function(op):
    return mx.nd.sparse.adagrad_update if op == "adagrad_update" else getattr(mx.nd, op)


@st.composite
def cases(draw, ops=tuple(STATES)):
    op = draw(st.sampled_from(ops))
    n, d = draw(st.integers(1, 7)), draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    w = rng.uniform(-2, 2, (n, d)).astype(F)
    g = rng.uniform(-2, 2, (n, d)).astype(F)
    mask = rng.random(n) < draw(st.sampled_from([0.0, 0.4, 1.0]))
    g[~mask] = 0
    states = [rng.uniform(-1, 1, (n, d)).astype(F) for _ in range(STATES[op])]
    squares = {"adam_update": 1, "ftrl_update": 1, "adagrad_update": 0, "rmsprop_update": 0,
               "rmspropalex_update": 0}  # the state of accumulated squares (var, n, history)
    if op in squares:
        states[squares[op]] = np.abs(states[squares[op]]) + F(2)  # rmspropalex: n > g*g
    grad_stype = "row_sparse" if op == "adagrad_update" else draw(
        st.sampled_from(["default", "row_sparse"]))
    return {"op": op, "w": w, "g": g, "mask": mask, "states": states, "p": _params(op, draw),
            "weight_stype": draw(st.sampled_from(["default", "row_sparse"])),
            "state_stype": draw(st.sampled_from(["default", "row_sparse"])),
            "grad_stype": grad_stype, "lazy_update": draw(st.booleans())}


def _grad(case):
    g = case["g"]
    if case["grad_stype"] == "default":
        return mx.nd.array(g)
    rows = np.flatnonzero(case["mask"])
    return mx.nd.sparse.row_sparse_array((g[rows], rows), shape=g.shape)


def _lazy(case):
    """MXNet's rule: which rows a row_sparse gradient updates."""
    op, ws, ss = case["op"], case["weight_stype"], case["state_stype"]
    if case["grad_stype"] != "row_sparse" or op in DENSE_ONLY:
        return False
    if op == "adagrad_update":
        return True
    if op == "ftrl_update":
        return ws == ss == "row_sparse"
    return case["lazy_update"] and (STATES[op] == 0 or ws == ss)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_updates_match_the_reference(case):
    op, p = case["op"], dict(case["p"])
    weight = mx.nd.array(case["w"]).tostype(case["weight_stype"])
    states = [mx.nd.array(s).tostype(case["state_stype"]) for s in case["states"]]
    if op in LAZY_UPDATE:
        p["lazy_update"] = case["lazy_update"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StorageFallbackWarning)
        result = _function(op)(weight, _grad(case), *states, out=weight, **p)
    rows = case["mask"] if _lazy(case) else np.ones(len(case["w"]), bool)
    want_w, want_s = _expected(op, case["w"], case["g"], case["states"], case["p"], rows)
    assert result is weight and weight.stype == case["weight_stype"]
    np.testing.assert_allclose(weight.asnumpy(), want_w, rtol=2e-5, atol=2e-6)
    for state, want in zip(states, want_s):
        assert state.stype == case["state_stype"]
        np.testing.assert_allclose(state.asnumpy(), want, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("op", ["sgd_mom_update", "rmsprop_update"])
def test_out_none_returns_a_new_weight_and_updates_the_states(op):
    w, g = np.full((3, 2), 1.0, F), np.full((3, 2), 2.0, F)
    weight, state = mx.nd.array(w), mx.nd.array(np.full((3, 2), 0.5, F))
    p = ({"lr": 0.1, "momentum": 0.9} if op == "sgd_mom_update"
         else {"lr": 0.1, "gamma1": 0.9, "epsilon": 1e-8})
    result = getattr(mx.nd, op)(weight, mx.nd.array(g), state, **p)
    want_w, want_s = _expected(op, w, g, [np.full((3, 2), 0.5, F)], p, slice(None))
    assert result is not weight
    np.testing.assert_array_equal(weight.asnumpy(), w)  # MXNet: the weight is an input only
    np.testing.assert_allclose(result.asnumpy(), want_w, rtol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), want_s[0], rtol=1e-6)
    other = mx.nd.zeros((3, 2)).tostype("row_sparse")
    assert mx.nd.sgd_update(weight, mx.nd.array(g), lr=0.5, out=other) is other
    assert other.stype == "row_sparse"
    np.testing.assert_allclose(other.asnumpy(), w - 0.5 * g)


def test_sparse_namespace_has_mxnets_aliases():
    for name in ("sgd_update", "sgd_mom_update", "adam_update", "ftrl_update"):
        assert getattr(mx.nd.sparse, name) is getattr(mx.nd, name)
    assert not hasattr(mx.nd, "adagrad_update")  # as MXNet: sparse only


def test_nag_momentum_uses_the_weight_before_the_step():
    # MXNet writes the weight first and reads it back for the momentum's weight decay when
    # out=weight; sparsegen uses the weight before the step either way (as MXNet with out=None)
    w, g, m = np.full((1, 1), 2.0, F), np.full((1, 1), 1.0, F), np.full((1, 1), 0.5, F)
    weight, mom = mx.nd.array(w), mx.nd.array(m)
    mx.nd.nag_mom_update(weight, mx.nd.array(g), mom, lr=0.1, momentum=0.9, wd=0.5, out=weight)
    step = 0.1 * (1.0 + 0.5 * 2.0)
    np.testing.assert_allclose(mom.asnumpy(), [[0.9 * 0.5 - step]], rtol=1e-6)
    np.testing.assert_allclose(weight.asnumpy(), [[2.0 + 0.9 * (0.45 - step) - step]], rtol=1e-6)


def _fallback(call):
    """``call()`` and whether it warned of a storage fallback (once per op and storage types
    per process: a test calling this takes the ``fresh_warnings`` fixture)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, any(issubclass(w.category, StorageFallbackWarning) for w in caught)


def test_csr_arrays_fall_back_to_dense_as_mxnet(fresh_warnings):
    g = np.array([[0, 2.0], [0, 0], [1.0, 0]], F)
    weight = mx.nd.array(np.ones((3, 2), F)).tostype("csr")
    result, warned = _fallback(lambda: mx.nd.sgd_update(weight, mx.nd.array(g).tostype("csr"),
                                                        lr=0.5, wd=0.1, out=weight))
    assert warned and result is weight and weight.stype == "csr"
    np.testing.assert_allclose(weight.asnumpy(), 0.95 - 0.5 * g, rtol=1e-6)
    weight = mx.nd.ones((3, 2))
    mom = mx.nd.zeros((3, 2)).tostype("csr")
    _, warned = _fallback(lambda: mx.nd.sgd_mom_update(weight, mx.nd.array(g), mom, lr=1.0,
                                                       momentum=0.5, out=weight))
    assert warned and mom.stype == "csr"
    np.testing.assert_allclose(mom.asnumpy(), -g)
    np.testing.assert_allclose(weight.asnumpy(), 1 - g)


def test_row_sparse_grad_of_a_dense_only_op_warns_and_updates_every_row(fresh_warnings):
    grad = mx.nd.sparse.row_sparse_array((np.ones((1, 2), F), [1]), shape=(3, 2))
    weight = mx.nd.ones((3, 2))
    _, warned = _fallback(lambda: mx.nd.signsgd_update(weight, grad, lr=0.5, wd=0.2, out=weight))
    assert warned
    np.testing.assert_allclose(weight.asnumpy(), [[0.9, 0.9], [0.4, 0.4], [0.9, 0.9]])
    _, warned = _fallback(lambda: mx.nd.sgd_update(weight, grad, lr=0.5, out=weight))
    assert not warned  # sgd has a row_sparse kernel


def test_nan_gradients_pass_through_without_clipping():
    weight = mx.nd.ones((1, 2))
    mx.nd.sgd_update(weight, mx.nd.array([[np.nan, np.inf]]), lr=1.0, out=weight)
    got = weight.asnumpy()
    assert np.isnan(got[0, 0]) and got[0, 1] == -np.inf
    weight = mx.nd.ones((1, 2))
    mx.nd.signsgd_update(weight, mx.nd.array([[np.nan, -0.0]]), lr=1.0, out=weight)
    np.testing.assert_array_equal(weight.asnumpy(), [[1.0, 1.0]])  # sign(nan) = sign(-0) = 0


@pytest.mark.parametrize("call, message", [
    (lambda w, g, s: mx.nd.sgd_update(w, g), "Required parameter lr"),
    (lambda w, g, s: mx.nd.sgd_update(w, g, lr=0.1, foo=1), "Cannot find argument 'foo'"),
    (lambda w, g, s: mx.nd.adam_update(w, g, s, s.copy(), lr="x"), "lr must be a real"),
    (lambda w, g, s: mx.nd.ftrl_update(w, g, s, s.copy(), lr=0.0), "lr must be > 0"),
    (lambda w, g, s: mx.nd.sparse.adagrad_update(w, g, s, lr=0.1), "must be a row_sparse"),
    (lambda w, g, s: mx.nd.sparse.adagrad_update(w, g.tostype("row_sparse"), s, lr=0.1,
                                                 wd=0.1), "wd must be 0"),
    (lambda w, g, s: mx.nd.rmsprop_update(w, g, mx.nd.zeros((3, 3)), lr=0.1),
     "state 0 has shape"),
    (lambda w, g, s: mx.nd.signum_update(w, g, w, lr=0.1, out=w), "share memory"),
    (lambda w, g, s: mx.nd.sgd_mom_update(w, g, s, lr=0.1, lazy_update=2), "lazy_update"),
    (lambda w, g, s: mx.nd.sgd_update(np.ones((3, 2)), g, lr=0.1), "weight must be an NDArray"),
    (lambda w, g, s: mx.nd.sgd_mom_update(w, g, s, lr=0.1, out=mx.nd.zeros((2, 2))),
     "out has shape"),
])
def test_bad_input_raises_and_writes_nothing(call, message):
    weight, grad, state = mx.nd.ones((3, 2)), mx.nd.ones((3, 2)), mx.nd.ones((3, 2))
    with pytest.raises(mx.MXNetError, match=message):
        call(weight, grad, state)
    np.testing.assert_array_equal(weight.asnumpy(), 1.0)
    np.testing.assert_array_equal(state.asnumpy(), 1.0)


def test_updates_on_gpu_arrays(gpu):
    w, g = np.linspace(-1, 1, 6, dtype=F).reshape(3, 2), np.full((3, 2), 0.5, F)
    weight = mx.nd.array(w, ctx=gpu)
    n = mx.nd.array(np.ones((3, 2), F), ctx=gpu)
    mx.nd.rmsprop_update(weight, mx.nd.array(g, ctx=gpu), n, lr=0.1, gamma1=0.9, out=weight)
    want_w, want_s = _expected("rmsprop_update", w, g, [np.ones((3, 2), F)],
                               {"lr": 0.1, "gamma1": 0.9, "epsilon": 1e-8}, slice(None))
    assert weight.context == gpu
    np.testing.assert_allclose(weight.asnumpy(), want_w, rtol=1e-6)
    np.testing.assert_allclose(n.asnumpy(), want_s[0], rtol=1e-6)
    grad = mx.nd.sparse.row_sparse_array((g[:1], [2]), shape=(3, 2), ctx=gpu)
    mean, var = (mx.nd.zeros((3, 2), ctx=gpu).tostype("row_sparse") for _ in range(2))
    weight = mx.nd.array(w, ctx=gpu).tostype("row_sparse")
    mx.nd.sparse.adam_update(weight, grad, mean, var, lr=0.1, out=weight)
    want_w, _ = _expected("adam_update", w, np.vstack([np.zeros((2, 2), F), g[:1]]),
                          [np.zeros((3, 2), F)] * 2,
                          {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}, [2])
    np.testing.assert_allclose(weight.asnumpy(), want_w, rtol=1e-6)
