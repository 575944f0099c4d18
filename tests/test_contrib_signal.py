"""``mx.nd.contrib``'s signal ops (issue 38): ``fft`` / ``ifft`` against ``numpy.fft``,
``count_sketch`` against a plain Python loop, ``hawkesll`` against MXNet 1.9.1's values recorded by
tests/fixtures/record_hawkesll.py and a Python loop of its recurrence; gradients against central
finite differences and the hand-derived adjoints; bad input; the symbol forms; the GPU path
(``SPARSEGEN_GPU=host``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import autograd
from sparsegen.test_utils import check_numeric_gradient

nd = mx.nd
FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "hawkesll.json").read_text())
TOL = {"float32": 2e-5, "float64": 1e-11}

lengths = st.one_of(st.integers(1, 9), st.sampled_from((16, 32, 64, 100, 128, 129)))
leading = st.lists(st.integers(0, 3), min_size=0, max_size=2).map(tuple)
dtypes = st.sampled_from(("float32", "float64"))


def _complex(z: np.ndarray) -> np.ndarray:
    """Interleaved (real, imaginary) pairs of the last axis as complex numbers."""
    return z[..., 0::2] + 1j * z[..., 1::2]


def _interleaved(c: np.ndarray) -> np.ndarray:
    out = np.empty((*c.shape[:-1], 2 * c.shape[-1]))
    out[..., 0::2], out[..., 1::2] = c.real, c.imag
    return out


# -- fft / ifft ---------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(lead=leading, d=lengths, dtype=dtypes, seed=st.integers(0, 2**31))
def test_fft_is_numpys_transform_interleaved(lead, d, dtype, seed):
    x = np.random.default_rng(seed).standard_normal((*lead, d)).astype(dtype)
    y = nd.contrib.fft(nd.array(x, dtype=dtype))
    assert y.shape == (*lead, 2 * d) and y.dtype == np.dtype(dtype)
    scale = math.sqrt(d) * math.log2(d + 1)
    np.testing.assert_allclose(y.asnumpy(), _interleaved(np.fft.fft(x.astype(np.float64))),
                               rtol=0, atol=TOL[dtype] * 4 * scale)


@settings(max_examples=40, deadline=None)
@given(lead=leading, d=lengths, dtype=dtypes, seed=st.integers(0, 2**31))
def test_ifft_is_the_real_part_of_numpys_inverse_unnormalised(lead, d, dtype, seed):
    z = np.random.default_rng(seed).standard_normal((*lead, 2 * d)).astype(dtype)
    y = nd.contrib.ifft(nd.array(z, dtype=dtype))
    assert y.shape == (*lead, d) and y.dtype == np.dtype(dtype)
    expected = (np.fft.ifft(_complex(z.astype(np.float64))) * d).real
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=0,
                               atol=TOL[dtype] * 4 * math.sqrt(d) * math.log2(d + 1))


def test_fft_and_ifft_values_by_hand_and_round_trip():
    y = nd.contrib.fft(nd.array([[1.0, 2.0, 3.0, 4.0], [1.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(y.asnumpy(), [[10, 0, -2, 2, -2, 0, -2, -2],
                                             [1, 0, 1, 0, 1, 0, 1, 0]], atol=1e-6)
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)  # MXNet's 4-D layout works on any rank
    np.testing.assert_allclose(nd.contrib.ifft(nd.contrib.fft(nd.array(x))).asnumpy(), 3 * x,
                               rtol=1e-5, atol=1e-5)
    assert nd.contrib.fft(nd.zeros((0, 5))).shape == (0, 10)
    assert nd.contrib.ifft(nd.zeros((2, 0))).shape == (2, 0)


@pytest.mark.parametrize("d", [1, 3, 8, 12])
def test_fft_and_ifft_gradients_are_each_others_transform(d):
    rng = np.random.default_rng(d)
    x, g = rng.standard_normal((2, d)), rng.standard_normal((2, 2 * d))
    for f, arg, head, adjoint in ((nd.contrib.fft, x, g, lambda h: (np.fft.ifft(_complex(h)) * d)
                                   .real),
                                  (nd.contrib.ifft, g, x, lambda h: _interleaved(np.fft.fft(h)))):
        a = nd.array(arg, dtype="float64")
        a.attach_grad()
        with autograd.record():
            y = f(a)
        y.backward(nd.array(head, dtype="float64"))
        np.testing.assert_allclose(a.grad.asnumpy(), adjoint(head), atol=1e-10)
    check_numeric_gradient(nd.contrib.fft, [x], numeric_eps=1e-4, rtol=1e-4, dtype=np.float64)
    check_numeric_gradient(nd.contrib.ifft, [g], numeric_eps=1e-4, rtol=1e-4, dtype=np.float64)


def test_fft_and_ifft_refuse_bad_input():
    with pytest.raises(mx.MXNetError, match="ifft: data's last axis .* must be even"):
        nd.contrib.ifft(nd.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match="fft: data must have dtype float32 or float64, got "
                                            "int32"):
        nd.contrib.fft(nd.ones((2, 3), dtype="int32"))
    with pytest.raises(mx.MXNetError, match=r"fft: data must have at least 1 dimension"):
        nd.contrib.fft(nd.ones(()))
    with pytest.raises(mx.MXNetError, match="fft: compute_size must be at least 1, got 0"):
        nd.contrib.fft(nd.ones((2, 3)), compute_size=0)
    with pytest.raises(mx.MXNetError, match="fft: data must be an NDArray, got list"):
        nd.contrib.fft([1.0, 2.0])
    with pytest.raises(mx.MXNetError, match="fft"):
        nd.contrib.fft(nd.ones((2, 3)), out=nd.zeros((2, 3)))


# -- count_sketch -------------------------------------------------------------------------------
def _sketch_loop(x: np.ndarray, h, s, out_dim: int) -> np.ndarray:
    rows = x.reshape(-1, x.shape[-1])
    out = np.zeros((rows.shape[0], out_dim))
    for r in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            out[r, int(h[j])] += s[j] * rows[r, j]
    return out.reshape(*x.shape[:-1], out_dim)


@settings(max_examples=40, deadline=None)
@given(lead=leading, n=st.integers(1, 40), out_dim=st.integers(1, 6), dtype=dtypes,
       seed=st.integers(0, 2**31))
def test_count_sketch_and_its_gradient_are_the_loops(lead, n, out_dim, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*lead, n)).astype(dtype)
    h = rng.integers(0, out_dim, n).astype(dtype)
    s = rng.uniform(-2, 2, n).astype(dtype)
    head = rng.standard_normal((*lead, out_dim)).astype(dtype)
    data = nd.array(x, dtype=dtype)
    data.attach_grad()
    with autograd.record():
        y = nd.contrib.count_sketch(data, nd.array(h[None], dtype=dtype),
                                    nd.array(s[None], dtype=dtype), out_dim=out_dim)
    y.backward(nd.array(head, dtype=dtype))
    assert y.shape == (*lead, out_dim) and y.dtype == np.dtype(dtype)
    np.testing.assert_allclose(y.asnumpy(), _sketch_loop(x, h, s, out_dim), rtol=1e-5,
                               atol=1e-5)
    grad = np.zeros((*lead, n))
    for j in range(n):  # the loop's adjoint: each column reads its bucket back
        grad[..., j] = head[..., int(h[j])] * s[j]
    np.testing.assert_allclose(data.grad.asnumpy(), grad, rtol=1e-6, atol=1e-6)


def test_count_sketch_mxnet_example_and_gradient():
    x = nd.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]])
    h, s = nd.array([[0, 3, 4]]), nd.array([[1, -1, 1]])
    y = nd.contrib.count_sketch(data=x, h=h, s=s, out_dim=5, processing_batch_size=1)
    np.testing.assert_allclose(y.asnumpy(), [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]],
                               rtol=1e-6)
    x.attach_grad()
    head = np.arange(10, dtype=np.float32).reshape(2, 5)
    with autograd.record():
        y = nd.contrib.count_sketch(x, h, s, out_dim=5)
    y.backward(nd.array(head))
    np.testing.assert_allclose(x.grad.asnumpy(), head[:, [0, 3, 4]] * [1, -1, 1])
    rng = np.random.default_rng(3)
    hv, sv = nd.array([[2, 0, 2, 1]]), nd.array([[1, -1, -1, 1]])
    check_numeric_gradient(lambda d: nd.contrib.count_sketch(d, hv, sv, out_dim=3),
                           [rng.standard_normal((3, 4))], numeric_eps=1e-4, rtol=1e-4,
                           dtype=np.float64)


def test_count_sketch_refuses_bad_input():
    x = nd.ones((2, 3))
    with pytest.raises(mx.MXNetError, match=r"count_sketch: h holds 5, outside \[0, 5\)"):
        nd.contrib.count_sketch(x, nd.array([[0, 5, 1]]), nd.ones((1, 3)), out_dim=5)
    with pytest.raises(mx.MXNetError, match=r"count_sketch: h holds -1"):
        nd.contrib.count_sketch(x, nd.array([[0, -1, 1]]), nd.ones((1, 3)), out_dim=5)
    with pytest.raises(mx.MXNetError, match="count_sketch: h must hold integral bucket ids"):
        nd.contrib.count_sketch(x, nd.array([[0, 1.5, 1]]), nd.ones((1, 3)), out_dim=5)
    with pytest.raises(mx.MXNetError, match=r"count_sketch: s must have shape \(3,\) or "
                                            r"\(1, 3\) \(data's last axis\), got \(1, 2\)"):
        nd.contrib.count_sketch(x, nd.array([[0, 1, 1]]), nd.ones((1, 2)), out_dim=5)
    with pytest.raises(mx.MXNetError, match="count_sketch: out_dim must be at least 1, got 0"):
        nd.contrib.count_sketch(x, nd.array([[0, 0, 0]]), nd.ones((1, 3)), out_dim=0)
    with pytest.raises(mx.MXNetError, match="count_sketch: processing_batch_size must be"):
        nd.contrib.count_sketch(x, nd.array([[0, 0, 0]]), nd.ones((1, 3)), out_dim=2,
                                processing_batch_size=0)


# -- hawkesll -----------------------------------------------------------------------------------
def _hawkes_loop(lda, alpha, beta, state, lags, marks, valid, max_time):
    """The log-likelihood and end states, one event at a time (the docstring's definition)."""
    n, k = lda.shape
    ll, out_state = np.zeros(n), np.array(state, dtype=np.float64)
    for i in range(n):
        t, last = 0.0, np.zeros(k)
        j = 0
        while j < valid[i]:
            c = marks[i, j]
            t += lags[i, j]
            d = t - last[c]
            ed = math.exp(-beta[c] * d)
            intensity = lda[i, c] + alpha[c] * beta[c] * out_state[i, c] * ed
            ll[i] += math.log(intensity) - (lda[i, c] * d + alpha[c] * out_state[i, c] * (1 - ed))
            out_state[i, c] = 1 + out_state[i, c] * ed
            last[c] = t
            j += 1
        for c in range(k):
            d = max_time[i] - last[c]
            ed = math.exp(-beta[c] * d)
            ll[i] -= lda[i, c] * d + alpha[c] * out_state[i, c] * (1 - ed)
            out_state[i, c] *= ed
    return ll, out_state


def _hawkes_args(case, dtype=None):
    dtype = dtype or case["dtype"]
    arrays = [nd.array(np.array(case[name], dtype=np.float64), dtype=dtype)
              for name in ("lda", "alpha", "beta", "state", "lags")]
    return [*arrays, nd.array(np.array(case["marks"]), dtype="int32"),
            nd.array(case["valid_length"], dtype=dtype), nd.array(case["max_time"], dtype=dtype)]


@pytest.mark.parametrize("index", range(len(FIXTURES["cases"])))
def test_hawkesll_gives_mxnets_values_and_gradients(index):
    case = FIXTURES["cases"][index]
    rtol = 2e-4 if case["dtype"] == "float32" else 1e-5  # MXNet calls expf / logf in float64 too
    args = _hawkes_args(case)
    for a in args[:3]:
        a.attach_grad()
    with autograd.record():
        ll, out_state = nd.contrib.hawkesll(*args)
    ll.backward(nd.array(case["head"], dtype=case["dtype"]))
    np.testing.assert_allclose(ll.asnumpy(), case["loglik"], rtol=rtol, atol=1e-4)
    np.testing.assert_allclose(out_state.asnumpy(), case["out_state"], rtol=rtol, atol=1e-5)
    for a, name in zip(args, ("grad_lda", "grad_alpha", "grad_beta")):
        np.testing.assert_allclose(a.grad.asnumpy(), case[name], rtol=rtol * 10, atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 4), k=st.integers(1, 4), t=st.integers(0, 7),
       seed=st.integers(0, 2**31))
def test_hawkesll_is_the_loop(n, k, t, seed):
    rng = np.random.default_rng(seed)
    lda, alpha, beta = rng.uniform(0.2, 2, (n, k)), rng.uniform(0.1, 0.9, k), rng.uniform(0.3, 3, k)
    state, lags = rng.uniform(0, 2, (n, k)), rng.uniform(0.01, 2, (n, t))
    marks = rng.integers(0, k, (n, t))
    valid = rng.integers(0, t + 1, n).astype(np.float64)
    max_time = lags.sum(axis=1) + rng.uniform(0, 2, n)
    ll, out_state = nd.contrib.hawkesll(*(nd.array(a, dtype="float64") for a in
                                          (lda, alpha, beta, state, lags)),
                                        nd.array(marks, dtype="int32"),
                                        *(nd.array(a, dtype="float64") for a in (valid, max_time)))
    want_ll, want_state = _hawkes_loop(lda, alpha, beta, state, lags, marks, valid, max_time)
    assert ll.shape == (n,) and out_state.shape == (n, k)
    np.testing.assert_allclose(ll.asnumpy(), want_ll, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out_state.asnumpy(), want_state, rtol=1e-12, atol=1e-12)


def test_hawkesll_gradients_by_finite_differences_both_outputs():
    case = FIXTURES["cases"][3]
    args = _hawkes_args(case, "float64")
    rest = args[4:]

    def both(lda, alpha, beta, state):
        ll, out_state = nd.contrib.hawkesll(lda, alpha, beta, state, *rest)
        return nd.concat(ll.reshape((-1, 1)), out_state, dim=1)

    check_numeric_gradient(both, [a.asnumpy() for a in args[:4]], numeric_eps=1e-6, rtol=1e-5,
                           atol=1e-7, dtype=np.float64)


def test_hawkesll_mxnets_unit_test_values():
    n, t, k = 4, 4, 3
    ll, _ = nd.contrib.hawkesll(
        nd.array([1.5, 2.0, 3.0]).tile((n, 1)), nd.array([0.2, 0.3, 0.4]),
        nd.array([1.0, 2.0, 3.0]), nd.zeros((n, k)),
        nd.array([[6, 7, 8, 9], [1, 2, 3, 4], [3, 4, 5, 6], [8, 9, 10, 11]]),
        nd.zeros((n, t)).astype(np.int32), nd.array([1, 2, 3, 4]), nd.ones((n,)) * 100.0)
    np.testing.assert_allclose(ll.asnumpy(), [-649.79453489, -649.57118596, -649.38025115,
                                              -649.17811484], rtol=1e-6)


def test_hawkesll_refuses_bad_input():
    case = FIXTURES["cases"][1]
    args = _hawkes_args(case)
    bad_marks = nd.array(np.full(args[5].shape, 2), dtype="int32")
    with pytest.raises(mx.MXNetError, match=r"hawkesll: marks holds 2, outside \[0, 2\)"):
        nd.contrib.hawkesll(*args[:5], bad_marks, *args[6:])
    with pytest.raises(mx.MXNetError, match="hawkesll: marks must hold integers"):
        nd.contrib.hawkesll(*args[:5], args[5].astype("float32"), *args[6:])
    with pytest.raises(mx.MXNetError, match="hawkesll: beta has dtype float64, lda float32"):
        nd.contrib.hawkesll(*args[:2], args[2].astype("float64"), *args[3:])
    with pytest.raises(mx.MXNetError, match=r"hawkesll: state must have shape \(3, 2\)"):
        nd.contrib.hawkesll(*args[:3], nd.zeros((3, 3)), *args[4:])
    with pytest.raises(mx.MXNetError, match="hawkesll: valid_length holds 7.0, more events than "
                                            "lags' 6 columns"):
        nd.contrib.hawkesll(*args[:6], nd.array([7, 1, 1]), args[7])
    with pytest.raises(mx.MXNetError, match="hawkesll: out must be a list of two arrays"):
        nd.contrib.hawkesll(*args, out=[nd.zeros((3,))])


def test_hawkesll_writes_out():
    args = _hawkes_args(FIXTURES["cases"][1])
    outs = [nd.zeros((3,)), nd.zeros((3, 2))]
    got = nd.contrib.hawkesll(*args, out=outs)
    assert got[0] is outs[0] and got[1] is outs[1]
    np.testing.assert_allclose(outs[0].asnumpy(), FIXTURES["cases"][1]["loglik"], rtol=2e-4)


# -- symbols and the GPU path -------------------------------------------------------------------
def test_symbol_forms_run_the_same_ops():
    a, h, s = mx.sym.Variable("a"), mx.sym.Variable("h"), mx.sym.Variable("s")
    graph = mx.sym.Group([mx.sym.contrib.fft(a), mx.sym.contrib.ifft(a),
                          mx.sym.contrib.count_sketch(a, h, s, out_dim=3)])
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    spectrum, real, sketch = graph.eval(ctx=mx.cpu(), a=nd.array(x), h=nd.array([[0, 1, 2, 0]]),
                                        s=nd.array([[1, 1, -1, 1]]))
    np.testing.assert_allclose(spectrum.asnumpy(), _interleaved(np.fft.fft(x)), atol=1e-4)
    np.testing.assert_allclose(real.asnumpy(), (np.fft.ifft(_complex(x)) * 2).real, atol=1e-5)
    np.testing.assert_allclose(sketch.asnumpy(), _sketch_loop(x, [0, 1, 2, 0], [1, 1, -1, 1], 3))
    assert "_contrib_fft" in graph.tojson() and "_contrib_count_sketch" in graph.tojson()


def test_on_an_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    ctx = mx.gpu(0)
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    y = nd.contrib.fft(nd.array(x, ctx=ctx))
    assert y.context == ctx
    np.testing.assert_allclose(y.asnumpy(), _interleaved(np.fft.fft(x)), atol=1e-4)
    sketch = nd.contrib.count_sketch(nd.array(x, ctx=ctx), nd.array(np.arange(8) % 3, ctx=ctx),
                                     nd.ones((8,), ctx=ctx), out_dim=3)
    np.testing.assert_allclose(sketch.asnumpy(), _sketch_loop(x, np.arange(8) % 3, np.ones(8), 3),
                               rtol=1e-5)
    case = FIXTURES["cases"][2]
    ll, _ = nd.contrib.hawkesll(*(a.as_in_context(ctx) for a in _hawkes_args(case)))
    assert ll.context == ctx
    np.testing.assert_allclose(ll.asnumpy(), case["loglik"], rtol=1e-5)


def test_symbol_hawkesll_has_two_outputs_int32_marks_and_mxnets_gradients():
    names = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")
    node = mx.sym.contrib.hawkesll(*(mx.sym.Variable(n) for n in names), name="h")
    assert node.list_outputs() == ["h_output", "h_out_state"]
    case = FIXTURES["cases"][1]
    given = dict(zip(names, _hawkes_args(case)))
    shapes = {n: a.shape for n, a in given.items()}
    args, outs, _ = node.infer_shape(lda=shapes["lda"], lags=shapes["lags"])
    assert args == [shapes[n] for n in names] and outs == [(3,), (3, 2)]
    assert node.infer_type(lda="float32")[0][5] is np.int32
    req = {n: "write" if n in ("lda", "alpha", "beta") else "null" for n in names}
    ex = node[0].simple_bind(mx.cpu(), grad_req=req, **shapes)
    ex.forward(is_train=True, **given)
    ex.backward(nd.array(case["head"]))
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), case["loglik"], rtol=2e-4)
    for n in ("lda", "alpha", "beta"):
        np.testing.assert_allclose(ex.grad_dict[n].asnumpy(), case[f"grad_{n}"], rtol=2e-3,
                                   atol=1e-4)
