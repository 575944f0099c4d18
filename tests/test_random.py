"""mx.random / mx.nd.random: the Philox generator against its published answers, determinism,
the distributions against scipy.stats (fixed seeds; each test also shows it rejects a wrong
distribution), MXNet's shapes, dtypes and errors."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.cache import get_kernel
from sparsegen.errors import StorageFallbackWarning

M32 = 0xFFFFFFFF
P = 1e-3  # the p-value below which a sample is taken for another distribution


def philox(counter: list[int], key: list[int]) -> list[int]:
    """Philox-4x32-10 as Salmon et al. (SC'11) define it: the test's reference."""
    c, k = list(counter), list(key)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
        k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
    return c


def test_reference_matches_random123_answers():
    assert philox([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox([M32] * 4, [M32, M32]) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]
    assert philox([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0]) \
        == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


@pytest.mark.parametrize("key, c2, c3", [((0, 0), 0, 0), ((0xA4093822, 0x299F31D0), 7, 0x300)])
def test_kernel_bits_are_philox(key, c2, c3):
    n = 70
    keys, src = np.empty(n, np.int64), np.empty(n, np.int64)
    get_kernel("random", ("float32",)).keys(keys, src, 63, *key, c2, c3)
    words = [philox([e, 0, c2, c3], list(key)) for e in range(n)]
    assert keys.tolist() == [((w[0] << 32) | w[1]) >> 1 for w in words]
    assert src.tolist() == list(range(n))


# -- determinism -------------------------------------------------------------------------------
def test_seed_repeats_and_calls_differ():
    mx.random.seed(42)
    a = mx.nd.random.normal(shape=(50,)).asnumpy()
    b = mx.nd.random.normal(shape=(50,)).asnumpy()
    mx.random.seed(42)
    np.testing.assert_array_equal(mx.nd.random.normal(shape=(50,)).asnumpy(), a)
    assert not np.array_equal(a, b)
    mx.random.seed(43)
    assert not np.array_equal(mx.nd.random.normal(shape=(50,)).asnumpy(), a)


def test_element_depends_only_on_its_position():
    """A sample is a function of (seed, call, position): a longer call starts alike."""
    mx.random.seed(7)
    short = mx.nd.random.uniform(shape=(5,)).asnumpy()
    mx.random.seed(7)
    long = mx.nd.random.uniform(shape=(2, 3000)).asnumpy()
    np.testing.assert_array_equal(long.reshape(-1)[:5], short)


def test_same_numbers_on_one_thread():
    """This process runs kernels on TVM_NUM_THREADS=2 threads (conftest); a process on one
    thread draws the same numbers."""
    mx.random.seed(5)
    here = mx.nd.random.gamma(0.7, 2, shape=5000).asnumpy().astype(float).sum().hex()
    script = ("import sparsegen as mx; mx.random.seed(5); "
              "print(mx.nd.random.gamma(0.7, 2, shape=5000).asnumpy().astype(float).sum().hex())")
    env = {**os.environ, "TVM_NUM_THREADS": "1"}
    there = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                           capture_output=True, text=True).stdout.strip()
    assert there == here


def test_seed_of_one_context_leaves_the_others():
    mx.random.seed(3)
    first = mx.nd.random.uniform(shape=4, ctx=mx.cpu(1)).asnumpy()
    mx.random.seed(3)
    mx.nd.random.uniform(shape=4, ctx=mx.cpu(0))  # cpu(0)'s stream moves on
    mx.random.seed(3, ctx=mx.cpu(0))
    again = mx.nd.random.uniform(shape=4, ctx=mx.cpu(0)).asnumpy()
    np.testing.assert_array_equal(again, first)  # every context restarts alike
    mx.random.seed(3, ctx="cpu")
    np.testing.assert_array_equal(mx.nd.random.uniform(shape=4).asnumpy(), first)


def test_gpu_draws_the_cpu_numbers(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    mx.random.seed(11)
    on_cpu = mx.nd.random.normal(1, 2, shape=(3, 40)).asnumpy()
    mx.random.seed(11)
    on_gpu = mx.nd.random.normal(1, 2, shape=(3, 40), ctx=mx.gpu(0))
    assert on_gpu.context == mx.gpu(0)
    np.testing.assert_array_equal(on_gpu.asnumpy(), on_cpu)
    mx.random.seed(11)
    rows = mx.nd.array(np.arange(12).reshape(6, 2), ctx=mx.gpu(0))
    cpu_rows = mx.nd.array(np.arange(12).reshape(6, 2))
    shuffled = mx.nd.random.shuffle(rows).asnumpy()
    mx.random.seed(11)
    np.testing.assert_array_equal(shuffled, mx.nd.random.shuffle(cpu_rows).asnumpy())


# -- distributions -----------------------------------------------------------------------------
def _ks(sample: np.ndarray, right, wrong) -> None:
    """``sample`` passes the KS test against ``right`` and fails it against ``wrong``."""
    assert scipy.stats.kstest(sample, right.cdf).pvalue > P
    assert scipy.stats.kstest(sample, wrong.cdf).pvalue < P


N = 20000


def test_uniform():
    mx.random.seed(1)
    x = mx.nd.random.uniform(-2, 3, shape=(N,)).asnumpy()
    assert x.min() >= -2 and x.max() < 3
    _ks(x.astype(np.float64), scipy.stats.uniform(-2, 5), scipy.stats.uniform(-2, 5.1))


def test_normal_and_randn():
    mx.random.seed(2)
    x = mx.nd.random.normal(1.5, 2.0, shape=(100, 200)).asnumpy().reshape(-1)
    _ks(x.astype(np.float64), scipy.stats.norm(1.5, 2.0), scipy.stats.norm(1.5, 2.1))
    y = mx.nd.random.randn(N, loc=-1, scale=0.5).asnumpy()
    _ks(y.astype(np.float64), scipy.stats.norm(-1, 0.5), scipy.stats.norm(-1.02, 0.5))


def test_exponential():
    mx.random.seed(3)
    x = mx.nd.random.exponential(2.0, shape=(N,)).asnumpy().astype(np.float64)
    assert x.min() > 0
    _ks(x, scipy.stats.expon(scale=2.0), scipy.stats.expon(scale=2.1))


@pytest.mark.parametrize("alpha, beta", [(0.3, 1.0), (1.0, 2.0), (4.5, 0.5)])
def test_gamma(alpha, beta):
    mx.random.seed(4)
    x = mx.nd.random.gamma(alpha, beta, shape=(N,)).asnumpy().astype(np.float64)
    _ks(x, scipy.stats.gamma(alpha, scale=beta), scipy.stats.gamma(alpha * 1.05, scale=beta))


def _chisquare(values: np.ndarray, pmf: np.ndarray) -> float:
    """The chi-square p-value of integer ``values`` against ``pmf`` over 0..len(pmf)-1, the
    bins of expected count below 5 merged into their neighbours."""
    observed = np.bincount(values.astype(np.int64), minlength=len(pmf)).astype(np.float64)
    assert len(observed) == len(pmf), "a value outside the support"
    expected = pmf / pmf.sum() * values.size
    obs_bins, exp_bins, o, e = [], [], 0.0, 0.0
    for ob, ex in zip(observed, expected):
        o, e = o + ob, e + ex
        if e >= 5:
            obs_bins.append(o), exp_bins.append(e)
            o = e = 0.0
    obs_bins[-1] += o
    exp_bins[-1] += e
    return scipy.stats.chisquare(obs_bins, exp_bins).pvalue


@pytest.mark.parametrize("lam", [0.0, 0.7, 5.0, 11.9, 12.0, 60.0, 3000.0])
def test_poisson(lam):
    """Both methods (below and from lam = 12), against the pmf, and not against lam * 1.03."""
    mx.random.seed(5)
    x = mx.nd.random.poisson(lam, shape=(N,)).asnumpy()
    assert x.dtype == np.float32 and np.all(x == np.round(x)) and x.min() >= 0
    if lam == 0:
        assert np.all(x == 0)
        return
    support = np.arange(int(lam + 12 * np.sqrt(lam) + 20))
    pmf = scipy.stats.poisson.pmf(support, lam)
    assert _chisquare(x, pmf) > P
    assert _chisquare(x, scipy.stats.poisson.pmf(support, lam * 1.03)) < P


@pytest.mark.parametrize("draw, pmf, wrong", [
    (lambda: mx.nd.random.negative_binomial(3, 0.4, shape=N),
     scipy.stats.nbinom(3, 0.4).pmf, scipy.stats.nbinom(3, 0.39).pmf),
    (lambda: mx.nd.random.negative_binomial(0.5, 0.9, shape=N),
     scipy.stats.nbinom(0.5, 0.9).pmf, scipy.stats.nbinom(0.5, 0.88).pmf),
    (lambda: mx.nd.random.generalized_negative_binomial(20, 0.25, shape=N),  # n = 1/alpha
     scipy.stats.nbinom(4, 1 / 6).pmf, scipy.stats.nbinom(4, 1 / 6.2).pmf),
    (lambda: mx.nd.random.generalized_negative_binomial(5, 0, shape=N),  # alpha 0: Poisson
     scipy.stats.poisson(5).pmf, scipy.stats.poisson(5.15).pmf),
])
def test_negative_binomials(draw, pmf, wrong):
    mx.random.seed(12)
    x = draw().asnumpy()
    assert np.all(x == np.round(x)) and x.min() >= 0
    support = np.arange(int(x.max()) + 40)
    assert _chisquare(x, pmf(support)) > P
    assert _chisquare(x, wrong(support)) < P


def test_randint():
    mx.random.seed(6)
    x = mx.nd.random.randint(-3, 7, shape=(N,))
    assert x.dtype == np.int32
    values = x.asnumpy() + 3
    assert _chisquare(values, np.ones(10)) > P
    assert _chisquare(values, np.arange(1, 11, dtype=np.float64) ** 0.1) < P
    wide = mx.nd.random.randint(-2**63, 2**63 - 1, shape=(1000,), dtype="int64").asnumpy()
    assert wide.dtype == np.int64 and (wide < 0).mean() > 0.4 and (wide > 0).mean() > 0.4


def test_multinomial():
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]], np.float32)
    mx.random.seed(7)
    ids, logp = mx.nd.random.multinomial(mx.nd.array(probs), shape=N // 2, get_prob=True)
    assert ids.shape == (2, N // 2) and ids.dtype == np.int32 and logp.dtype == np.float32
    ids = ids.asnumpy()
    for row in range(2):
        assert _chisquare(ids[row], probs[row]) > P
    assert _chisquare(ids[0], np.array([0.12, 0.58, 0.3])) < P
    assert not np.any(ids[1] == 1)  # probability zero
    np.testing.assert_allclose(logp.asnumpy(), np.log(probs[np.arange(2)[:, None], ids]),
                               rtol=1e-6)


def test_shuffle_permutes_rows_uniformly():
    data = mx.nd.array([[0, 0], [1, 1], [2, 2]])
    mx.random.seed(8)
    orders = [tuple(mx.nd.random.shuffle(data).asnumpy()[:, 0]) for _ in range(1200)]
    perms = sorted(set(orders))
    assert len(perms) == 6
    counts = np.array([orders.count(p) for p in perms], np.float64)
    assert scipy.stats.chisquare(counts).pvalue > P
    big = np.arange(5000 * 3, dtype=np.float32).reshape(5000, 3)
    out = mx.nd.random.shuffle(mx.nd.array(big)).asnumpy()
    assert not np.array_equal(out, big)
    np.testing.assert_array_equal(out[np.argsort(out[:, 0])], big)  # rows stay whole


# -- MXNet's interface: shapes, dtypes, arrays of parameters, out, errors ----------------------
def test_defaults_as_mxnet():
    x = mx.nd.random.uniform()
    assert x.shape == (1,) and x.dtype == np.float32 and x.context == mx.cpu(0)
    assert mx.nd.random.multinomial(mx.nd.array([0.5, 0.5])).shape == (1,)
    assert mx.nd.random.multinomial(mx.nd.array([[0.5, 0.5]] * 3)).shape == (3,)
    assert mx.random.uniform is mx.nd.random.uniform and mx.random.shuffle is mx.nd.random.shuffle
    assert mx.nd.random.normal(shape=(2, 3), ctx=mx.cpu(1)).context == mx.cpu(1)
    assert mx.nd.random.randn(2, 3).shape == (2, 3)


def test_operator_names_in_mx_nd():
    """MXNet's operator forms: (params, shape, ctx, dtype, out), numbers only."""
    mx.random.seed(10)
    x = mx.nd.random_uniform(2, 3, (4, 5), mx.cpu(1), "float64")
    assert x.shape == (4, 5) and x.context == mx.cpu(1) and x.dtype == np.float64
    mx.random.seed(10)
    np.testing.assert_array_equal(
        mx.nd.random.uniform(2, 3, (4, 5), "float64", mx.cpu(1)).asnumpy(), x.asnumpy())
    assert mx.nd.uniform is mx.nd.random_uniform and mx.nd.normal is mx.nd.random_normal
    assert mx.nd.shuffle is mx.nd.random.shuffle
    mx.random.seed(10)
    rate = mx.nd.random_exponential(4.0, shape=(N,)).asnumpy().astype(np.float64)
    _ks(rate, scipy.stats.expon(scale=0.25), scipy.stats.expon(scale=0.26))
    for op in (mx.nd.random_normal, mx.nd.random_gamma, mx.nd.random_poisson):
        assert op(shape=3).shape == (3,)
    assert mx.nd.random_randint(0, 4, shape=2).dtype == np.int32
    with pytest.raises(TypeError):
        mx.nd.random_uniform(mx.nd.zeros(1), mx.nd.ones(1))


def test_dtypes():
    assert mx.nd.random.uniform(shape=3, dtype="float64").dtype == np.float64
    x = mx.nd.random.normal(shape=3, out=mx.nd.zeros(3, dtype="float64"))
    assert x.dtype == np.float64
    assert mx.nd.random.multinomial(mx.nd.array([0.2, 0.8]), dtype="float32").dtype == np.float32
    for bad in ("int32", "bool"):
        with pytest.raises(mx.MXNetError):
            mx.nd.random.uniform(shape=3, dtype=bad)
    with pytest.raises(mx.MXNetError):
        mx.nd.random.randint(0, 5, shape=3, dtype="float32")
    with pytest.raises(mx.MXNetError):
        mx.nd.random.multinomial(mx.nd.array([0.2, 0.8]), dtype="int64")


def test_array_parameters():
    low = mx.nd.array([0, 10, -5])
    high = mx.nd.array([1, 20, -4])
    mx.random.seed(9)
    x = mx.nd.random.uniform(low, high, shape=(400,))
    assert x.shape == (3, 400) and x.dtype == np.float32
    x = x.asnumpy()
    for row, (lo, hi) in enumerate([(0, 1), (10, 20), (-5, -4)]):
        assert lo <= x[row].min() and x[row].max() < hi and x[row].mean() == pytest.approx(
            (lo + hi) / 2, abs=(hi - lo) * 0.1)
    lam = mx.nd.array([[1.0, 50.0]], dtype="float64")
    y = mx.nd.random.poisson(lam, shape=2000)
    assert y.shape == (1, 2, 2000) and y.dtype == np.float32  # MXNet: float32 by default
    np.testing.assert_allclose(y.asnumpy().mean(axis=-1), [[1.0, 50.0]], rtol=0.1)
    assert mx.nd.random.gamma(mx.nd.array([2.0]), mx.nd.array([3.0])).shape == (1,)


def test_out():
    out = mx.nd.zeros((4, 2))
    assert mx.nd.random.uniform(5, 6, out=out) is out
    assert out.asnumpy().min() >= 5
    with pytest.raises(mx.MXNetError):
        mx.nd.random.uniform(0, 1, shape=3, out=mx.nd.zeros(4))


@pytest.mark.parametrize("fn", [mx.nd.random.uniform, mx.nd.random.normal, mx.nd.random.gamma])
def test_out_of_another_storage_type(fn):
    """MXNet's test_sparse_nd_random: a row_sparse out holds the numbers a dense out gets."""
    dense, rsp = mx.nd.zeros((3, 4)), mx.nd.zeros((3, 4), stype="row_sparse")
    mx.random.seed(0)
    fn(shape=(3, 4), out=dense)
    mx.random.seed(0)
    assert fn(shape=(3, 4), out=rsp) is rsp and rsp.stype == "row_sparse"
    np.testing.assert_array_equal(rsp.asnumpy(), dense.asnumpy())


@pytest.mark.parametrize("call, error", [
    (lambda: mx.nd.random.uniform(1, 0, shape=2), ValueError),
    (lambda: mx.nd.random.normal(0, -1, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.exponential(0, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.gamma(-1, 1, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.gamma(1, 0, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.poisson(-1, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.poisson(float("nan"), shape=2), mx.MXNetError),
    (lambda: mx.nd.random.negative_binomial(0, 0.5, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.negative_binomial(1, 0, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.negative_binomial(1, 1.5, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.generalized_negative_binomial(-1, 1, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.generalized_negative_binomial(1, -1, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.randint(5, 5, shape=2), ValueError),
    (lambda: mx.nd.random.randint(0.5, 5, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.randint(0, 2**31, shape=2), mx.MXNetError),
    (lambda: mx.nd.random.uniform("a", 1), TypeError),
    (lambda: mx.nd.random.uniform(mx.nd.array([0]), 1), TypeError),
    (lambda: mx.nd.random.uniform(mx.nd.array([0]), mx.nd.array([1, 2])), ValueError),
    (lambda: mx.nd.random.uniform(0, 1, shape=3, foo=1), mx.MXNetError),
    (lambda: mx.nd.random.uniform(0, 1, shape=()), ValueError),
    (lambda: mx.nd.random.randn(), ValueError),
    (lambda: mx.nd.random.uniform(0, 1, shape=-1), mx.MXNetError),
    (lambda: mx.nd.random.shuffle(mx.nd.array(5)), mx.MXNetError),
    (lambda: mx.nd.random.multinomial(mx.nd.zeros((2, 0))), ValueError),
    (lambda: mx.nd.random.multinomial(mx.nd.array([1, 0], dtype="int32")), mx.MXNetError),
    (lambda: mx.random.seed(1.5), ValueError),
])
def test_errors(call, error):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, mx.MXNetError)


def test_shuffle_sparse_falls_back_and_empty():
    dense = np.array([[1, 0], [0, 0], [0, 3]], np.float32)
    with pytest.warns(StorageFallbackWarning):
        out = mx.nd.random.shuffle(mx.nd.array(dense).tostype("csr"))
    assert out.stype == "default"
    np.testing.assert_array_equal(np.sort(out.asnumpy(), axis=0), np.sort(dense, axis=0))
    assert mx.nd.random.shuffle(mx.nd.zeros((0, 4))).shape == (0, 4)


@settings(max_examples=25)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3).map(tuple),
       low=st.floats(-1e3, 1e3), width=st.floats(0, 1e3),
       dtype=st.sampled_from(["float32", "float64"]))
def test_uniform_shapes_and_bounds(shape, low, width, dtype):
    x = mx.nd.random.uniform(low, low + width, shape=shape, dtype=dtype)
    assert x.shape == shape and x.dtype == np.dtype(dtype) and x.stype == "default"
    values = x.asnumpy()
    bound = np.dtype(dtype).type
    assert np.all(values >= bound(low)) and np.all(values <= bound(low + width))
