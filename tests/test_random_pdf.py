"""MXNet's random_pdf_* densities against scipy.stats, their gradients against finite
differences of scipy's log densities, and the samplers around them: ``*_like``, ``mx.sym.random``
with Symbol parameters, multinomial's log-probability gradient, rand_zipfian, batch_take."""

import math

import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx

nd = mx.nd

# name: (parameter names, their ranges, scipy log density of (x, *params), sample range, discrete)
DENSITIES = {
    "normal": (("mu", "sigma"), ((-2, 2), (0.5, 3)),
               lambda x, m, s: ss.norm.logpdf(x, m, s), (-4, 4), False),
    "uniform": (("low", "high"), ((-3, -1), (1, 3)),
                lambda x, lo, hi: np.log(1 / (hi - lo)) + 0 * x, (-0.9, 0.9), False),
    "gamma": (("alpha", "beta"), ((0.5, 3), (0.5, 2)),
              lambda x, a, b: ss.gamma.logpdf(x, a, scale=1 / b), (0.1, 5), False),
    "exponential": (("lam",), ((0.5, 3),), lambda x, lam: ss.expon.logpdf(x, scale=1 / lam),
                    (0.1, 4), False),
    "poisson": (("lam",), ((0.5, 6),), lambda x, lam: ss.poisson.logpmf(x, lam), (0, 9), True),
    "negative_binomial": (("k", "p"), ((1, 5), (0.2, 0.8)),
                          lambda x, k, p: ss.nbinom.logpmf(x, k, p), (0, 9), True),
    "generalized_negative_binomial": (
        ("mu", "alpha"), ((0.5, 4), (0.2, 2)),
        lambda x, mu, a: ss.nbinom.logpmf(x, 1 / a, 1 / (1 + mu * a)), (0, 9), True),
}


def _draw(name, lead, trail, seed, dtype="float64"):
    names, ranges, _, (lo, hi), discrete = DENSITIES[name]
    rng = np.random.default_rng(seed)
    params = [rng.uniform(a, b, size=lead).astype(dtype) for a, b in ranges]
    x = rng.uniform(lo, hi, size=(*lead, *trail))
    return (np.floor(x) if discrete else x).astype(dtype), params


def _spread(p, ndim):
    return p.reshape(p.shape + (1,) * (ndim - p.ndim))


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(DENSITIES)), st.lists(st.integers(1, 3), min_size=1, max_size=2),
       st.lists(st.integers(1, 4), max_size=2), st.booleans(), st.integers(0, 2**31))
def test_densities_are_scipys(name, lead, trail, is_log, seed):
    names, _, logpdf, _, _ = DENSITIES[name]
    x, params = _draw(name, tuple(lead), tuple(trail), seed)
    want = logpdf(x, *(_spread(p, x.ndim) for p in params))
    got = getattr(nd, f"random_pdf_{name}")(nd.array(x, dtype="float64"),
                                            *(nd.array(p, dtype="float64") for p in params),
                                            is_log=is_log)
    assert got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(got.asnumpy(), want if is_log else np.exp(want), rtol=1e-9,
                               atol=1e-12)


@pytest.mark.parametrize("name", sorted(DENSITIES))
def test_gradients_are_finite_differences_of_scipys_log_density(name):
    names, _, logpdf, _, discrete = DENSITIES[name]
    x, params = _draw(name, (2, 2), (3,), 7)
    arrays = [nd.array(a, dtype="float64") for a in (x, *params)]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        out = getattr(nd, f"random_pdf_{name}")(*arrays, is_log=True)
    out.backward()
    eps = 1e-6
    for k, value in enumerate([x, *params]):
        if k == 0 and discrete:  # counts take no gradient, as MXNet's
            np.testing.assert_array_equal(arrays[0].grad.asnumpy(), 0)
            continue
        numeric = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            shifted = [v.copy() for v in (x, *params)]
            shifted[k][i] += eps
            up = logpdf(shifted[0], *(_spread(p, x.ndim) for p in shifted[1:])).sum()
            shifted[k][i] -= 2 * eps
            down = logpdf(shifted[0], *(_spread(p, x.ndim) for p in shifted[1:])).sum()
            numeric[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(arrays[k].grad.asnumpy(), numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name}: gradient of input {k}")


def test_dirichlet_density_gradient_and_single_vector():
    rng = np.random.default_rng(3)
    alpha = rng.uniform(0.5, 2, size=(2, 3))
    x = rng.dirichlet([1, 1, 1], size=(2, 4))
    want = np.array([[ss.dirichlet.logpdf(x[i, j], alpha[i]) for j in range(4)]
                     for i in range(2)])
    xs, al = nd.array(x, dtype="float64"), nd.array(alpha, dtype="float64")
    al.attach_grad()
    with mx.autograd.record():
        got = nd.random_pdf_dirichlet(xs, al, is_log=True)
    got.backward()
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-9)
    # d/d alpha_k of sum_j log p(x_j) = sum_j [log x_jk + psi(sum alpha) - psi(alpha_k)]
    from scipy.special import digamma
    grad = (np.log(x).sum(1) + 4 * (digamma(alpha.sum(1, keepdims=True)) - digamma(alpha)))
    np.testing.assert_allclose(al.grad.asnumpy(), grad, rtol=1e-5)
    one = nd.random_pdf_dirichlet(nd.array([0.2, 0.8]), nd.array([1.0, 2.0]))
    assert one.shape == (1,)
    np.testing.assert_allclose(one.asnumpy(), [ss.dirichlet.pdf([0.2, 0.8], [1, 2])], rtol=1e-6)


def test_float32_and_out():
    x, (mu, sigma) = _draw("normal", (3,), (5,), 1, "float32")
    out = nd.zeros((3, 5))
    got = nd.random_pdf_normal(nd.array(x), nd.array(mu), nd.array(sigma), out=out)
    assert got is out and out.dtype == np.float32
    want = ss.norm.pdf(x, mu[:, None], sigma[:, None])
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: nd.random_pdf_normal(nd.ones((2, 3)), nd.ones((2,)), nd.ones((3,))),
     r"one shape, got mu \(2,\), sigma \(3,\)"),
    (lambda: nd.random_pdf_normal(nd.ones((2, 3)), nd.ones((3,)), nd.ones((3,))),
     r"\(3,\) must be the leading axes of sample's \(2, 3\)"),
    (lambda: nd.random_pdf_exponential(nd.ones((2,)), nd.ones((2, 1))), "leading axes"),
    (lambda: nd.random_pdf_dirichlet(nd.ones((2, 3)), nd.ones((2, 2))), "and its last axis"),
    (lambda: nd.random_pdf_poisson([1, 2], nd.ones((2,))), "sample"),
])
def test_bad_shapes_are_refused_naming_them(call, message):
    with pytest.raises(mx.MXNetError, match=message):
        call()


def test_symbolic_densities_bind_and_differentiate():
    x, (mu, sigma) = _draw("normal", (2,), (3,), 5)
    sym = mx.sym.random_pdf_normal(mx.sym.var("x"), mx.sym.var("mu"), mx.sym.var("sigma"),
                                   is_log=True)
    assert sym.infer_shape(x=(2, 3), mu=(2,), sigma=(2,))[1] == [(2, 3)]
    assert "_random_pdf_normal" in sym.tojson()  # MXNet's op name
    args = {"x": nd.array(x), "mu": nd.array(mu), "sigma": nd.array(sigma)}
    grads = {k: nd.zeros(v.shape) for k, v in args.items()}
    exe = sym.bind(mx.cpu(), args=args, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    np.testing.assert_allclose(out.asnumpy(), ss.norm.logpdf(x, mu[:, None], sigma[:, None]),
                               rtol=1e-5)
    exe.backward(nd.ones((2, 3)))
    np.testing.assert_allclose(grads["mu"].asnumpy(),
                               ((x - mu[:, None]) / sigma[:, None] ** 2).sum(1), rtol=1e-4)


def test_like_samplers_take_datas_shape_dtype_and_context():
    data = nd.zeros((400, 50), dtype="float64", ctx=mx.cpu(1))
    for name, kwargs, mean in [("uniform", {"low": 2, "high": 4}, 3.0),
                               ("normal", {"loc": -1, "scale": 2}, -1.0),
                               ("gamma", {"alpha": 2, "beta": 3}, 6.0),
                               ("exponential", {"lam": 4}, 0.25),
                               ("poisson", {"lam": 3}, 3.0),
                               ("negative_binomial", {"k": 3, "p": 0.5}, 3.0),
                               ("generalized_negative_binomial", {"mu": 2, "alpha": 0.5}, 2.0)]:
        got = getattr(nd.random, f"{name}_like")(data, **kwargs)
        assert got.shape == data.shape and got.dtype == np.float64
        assert got.context == data.context
        assert abs(got.asnumpy().mean() - mean) < 0.1 * max(1.0, mean), name
    with pytest.raises(mx.MXNetError, match="unknown argument"):
        nd.random.uniform_like(data, lo=1)
    with pytest.raises(mx.MXNetError, match="lam"):
        nd.random.exponential_like(data, lam=0)


def test_symbolic_samplers_take_symbol_parameters():
    loc, scale = mx.sym.var("loc"), mx.sym.var("scale")
    draws = mx.sym.random.normal(loc, scale, shape=(2000,))
    assert draws.infer_shape(loc=(3,), scale=(3,))[1] == [(3, 2000)]
    got = draws.eval(loc=nd.array([-5.0, 0.0, 5.0]), scale=nd.array([0.1, 1.0, 2.0]))[0]
    np.testing.assert_allclose(got.asnumpy().mean(1), [-5, 0, 5], atol=0.15)
    np.testing.assert_allclose(got.asnumpy().std(1), [0.1, 1, 2], rtol=0.1)
    assert "_sample_normal" in draws.tojson()
    numbers = mx.sym.random.uniform(1, 2, shape=(3, 4))
    assert numbers.infer_shape()[1] == [(3, 4)] and "_random_uniform" in numbers.tojson()
    assert mx.sym.random.randn(2, 5, loc=loc, scale=scale).infer_shape(loc=(3,))[1] == [(3, 2, 5)]
    like = mx.sym.random.poisson_like(mx.sym.var("d"), lam=2)
    assert like.infer_shape(d=(4, 6))[1] == [(4, 6)]


def test_multinomial_log_probability_gradient_is_mxnets():
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    x = nd.array(p)
    x.attach_grad()
    with mx.autograd.record():
        ids, logp = nd.random.multinomial(x, shape=300, get_prob=True)
        (logp * 5).backward()
    ids = ids.asnumpy()
    np.testing.assert_allclose(logp.asnumpy(), np.log(np.take_along_axis(p, ids, 1)),
                               rtol=1e-6)
    want = np.zeros_like(p)
    for i in range(2):
        for j in ids[i]:
            want[i, j] += 5 / p[i, j]
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("dtype, categories", [("uint8", 257), ("float16", 2**11 + 2)])
def test_multinomial_refuses_ids_its_dtype_cannot_hold(dtype, categories):
    with pytest.raises(mx.MXNetError, match=f"{dtype} cannot hold the outcome ids"):
        nd.random.multinomial(nd.ones((categories,)) / categories, dtype=dtype)
    assert np.dtype(nd.random.multinomial(nd.ones((categories - 1,)), dtype=dtype).dtype) == dtype


def test_rand_zipfian_counts_are_the_log_uniform_formula():
    true = nd.array([0, 3, 19], dtype="int32")
    sampled, count_true, count_sampled = nd.contrib.rand_zipfian(true, 500, 20)
    s = sampled.asnumpy()
    assert sampled.dtype == np.int64 and s.shape == (500,) and s.min() >= 0 and s.max() < 20

    def expected(c, draws=500):
        return np.log((c + 2.0) / (c + 1.0)) / math.log(21) * draws

    np.testing.assert_allclose(count_true.asnumpy(), expected(np.array([0, 3, 19])))
    np.testing.assert_allclose(count_sampled.asnumpy(), expected(s))
    freq = np.bincount(s, minlength=20) / 500
    np.testing.assert_allclose(freq[:3], expected(np.arange(3)) / 500, atol=0.06)
    outs = mx.sym.contrib.rand_zipfian(mx.sym.var("t"), 50, 20)
    exe = mx.sym.Group(list(outs)).bind(mx.cpu(), {"t": true})
    got = exe.forward()
    np.testing.assert_allclose(got[1].asnumpy(), expected(np.array([0, 3, 19]), 50))
    np.testing.assert_allclose(got[2].asnumpy(), expected(got[0].asnumpy().astype(float), 50))
    with pytest.raises(mx.MXNetError, match="range_max"):
        nd.contrib.rand_zipfian(true, 5, 0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 5), st.integers(1, 6), st.booleans(), st.integers(0, 2**31))
def test_batch_take_is_numpys_clipped_pick(rows, cols, three_d, seed):
    rng = np.random.default_rng(seed)
    shape = (rows, 2, cols) if three_d else (rows, cols)
    a = rng.standard_normal(shape).astype(np.float32)
    lines = a.reshape(-1, cols)
    ids = rng.integers(-2, cols + 2, size=(lines.shape[0],)).astype(np.int32)
    want = lines[np.arange(len(ids)), np.clip(ids, 0, cols - 1)]
    index_shape = (rows, 2) if three_d else (rows,)
    got = nd.batch_take(nd.array(a), nd.array(ids.reshape(index_shape), dtype="int32"))
    assert got.shape == index_shape
    np.testing.assert_array_equal(got.asnumpy(), want.reshape(index_shape))


def test_batch_take_refuses_mismatched_counts_and_takes_out():
    with pytest.raises(mx.MXNetError, match=r"a of shape \(2, 3, 4\) must hold one row"):
        nd.batch_take(nd.ones((2, 3, 4)), nd.array([0, 1], dtype="int32"))
    out = nd.zeros((2,))
    got = nd.batch_take(nd.array([[1, 2], [3, 4]]), nd.array([1, 0], dtype="int32"), out=out)
    assert got is out
    np.testing.assert_array_equal(out.asnumpy(), [2, 3])
    sym = mx.sym.batch_take(mx.sym.var("a"), mx.sym.var("i"))
    got = sym.eval(a=nd.array([[1, 2], [3, 4]]), i=nd.array([0, 1], dtype="int32"))[0]
    np.testing.assert_array_equal(got.asnumpy(), [1, 4])


def test_contrib_autograd_is_mxnets_first_interface():
    from sparsegen.contrib import autograd as old

    def f(a, b):
        return (a * b + a).sum()

    a, b = nd.array([1.0, 2.0]), nd.array([3.0, 5.0])
    grads, loss = old.grad_and_loss(f)(a, b)
    np.testing.assert_array_equal(grads[0].asnumpy(), [4, 6])  # b + 1
    np.testing.assert_array_equal(grads[1].asnumpy(), [1, 2])  # a
    assert float(loss.asscalar()) == 1 * 3 + 1 + 2 * 5 + 2
    only_b = old.grad(f, argnum=1)(a, b)
    np.testing.assert_array_equal(only_b[0].asnumpy(), [1, 2])
    x, dx = nd.array([2.0]), nd.zeros((1,))
    old.mark_variables([x], [dx])
    with old.train_section():
        y = x * x
        with old.test_section():
            assert not mx.autograd.is_recording()
        assert mx.autograd.is_recording() and mx.autograd.is_training()
    old.compute_gradient([y])
    assert not mx.autograd.is_recording()
    np.testing.assert_array_equal(dx.asnumpy(), [4])
    with pytest.raises(mx.MXNetError, match="list or tuple"):
        old.backward(y)
    with pytest.raises(mx.MXNetError, match="argument 0"):
        old.grad(f)([1.0], b)
