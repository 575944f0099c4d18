"""mx.nd.linalg, mx.sym.linalg and khatri_rao against numpy / scipy, MXNet 1.9.1's values
(recorded by hand from /work/mxvenv: the triangle packing order, the singular cases), central
finite differences for the gradients, and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue, MXNetError

nd = mx.nd
la = mx.nd.linalg
TOL = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-10, atol=1e-10)}

batches = st.sampled_from(((), (1,), (3,), (2, 2), (0,)))
sizes = st.integers(1, 5)
dtypes = st.sampled_from(("float32", "float64"))


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _spd(rng: np.random.Generator, batch: tuple[int, ...], n: int, dtype: str) -> np.ndarray:
    m = rng.standard_normal((*batch, n, n))
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)


def _triangular(rng: np.random.Generator, batch: tuple[int, ...], n: int, lower: bool,
                dtype: str) -> np.ndarray:
    """A well-conditioned triangular matrix with garbage in the other triangle (never read)."""
    m = rng.standard_normal((*batch, n, n)) * 0.3 + 2 * np.eye(n)
    keep = np.tril(m) if lower else np.triu(m)
    garbage = rng.standard_normal((*batch, n, n)) * 50
    return np.where(np.tril(np.ones((n, n)), -1 if not lower else 0).astype(bool) == lower,
                    keep, garbage).astype(dtype)


def _t(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


# -- forward values ---------------------------------------------------------------------------

@given(batch=batches, m=sizes, n=sizes, k=sizes, ta=st.booleans(), tb=st.booleans(),
       dtype=dtypes, seed=st.integers(0, 2**31))
def test_gemm_gemm2(batch, m, n, k, ta, tb, dtype, seed):
    rng = np.random.default_rng(seed)
    a = _random(rng, (*batch, *((k, m) if ta else (m, k))), dtype)
    b = _random(rng, (*batch, *((n, k) if tb else (k, n))), dtype)
    c = _random(rng, (*batch, m, n), dtype)
    opa, opb = (_t(a) if ta else a), (_t(b) if tb else b)
    out = la.gemm(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype), nd.array(c, dtype=dtype),
                  transpose_a=ta, transpose_b=tb, alpha=1.5, beta=-0.5)
    assert out.dtype == np.dtype(dtype) and out.shape == (*batch, m, n)
    np.testing.assert_allclose(out.asnumpy(), 1.5 * opa @ opb - 0.5 * c, **TOL[dtype])
    out2 = la.gemm2(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype), transpose_a=ta,
                    transpose_b=tb, alpha=2.0)
    np.testing.assert_allclose(out2.asnumpy(), 2.0 * opa @ opb, **TOL[dtype])


def test_gemm_mxnet_example_and_axis():
    a, b, c = nd.ones((2, 2)), nd.ones((3, 2)), nd.ones((2, 3))
    np.testing.assert_allclose(la.gemm(a, b, c, transpose_b=True, alpha=2.0, beta=10.0)
                               .asnumpy(), np.full((2, 3), 14.0))
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 2, 5))
    z = rng.standard_normal((3, 2, 5))
    want = np.einsum("ibk,kbj->ibj", x, y)
    got = la.gemm2(nd.array(x, dtype="float64"), nd.array(y, dtype="float64"), axis=0)
    np.testing.assert_allclose(got.asnumpy(), want)
    got = la.gemm(nd.array(x, dtype="float64"), nd.array(y, dtype="float64"),
                  nd.array(z, dtype="float64"), axis=0, beta=2.0)
    np.testing.assert_allclose(got.asnumpy(), want + 2 * z)


def test_gemm_beta_zero_ignores_c():
    out = la.gemm(nd.ones((2, 2)), nd.ones((2, 2)), nd.array(np.full((2, 2), np.nan)), beta=0.0)
    np.testing.assert_allclose(out.asnumpy(), np.full((2, 2), 2.0))


@given(batch=batches, n=sizes, cols=sizes, dtype=dtypes, seed=st.integers(0, 2**31))
def test_trsm_trmm(batch, n, cols, dtype, seed):
    rng = np.random.default_rng(seed)
    for transpose, rightside, lower in itertools.product((False, True), repeat=3):
        a = _triangular(rng, batch, n, lower, dtype)
        tri = np.tril(a) if lower else np.triu(a)
        op = _t(tri) if transpose else tri
        b = _random(rng, (*batch, *((cols, n) if rightside else (n, cols))), dtype)
        kw = dict(transpose=transpose, rightside=rightside, lower=lower, alpha=1.5)
        x = la.trsm(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype), **kw).asnumpy()
        np.testing.assert_allclose(x @ op if rightside else op @ x, 1.5 * b, **TOL[dtype])
        y = la.trmm(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype), **kw).asnumpy()
        np.testing.assert_allclose(y, 1.5 * (b @ op if rightside else op @ b), **TOL[dtype])


def test_trsm_against_scipy():
    rng = np.random.default_rng(3)
    a = _triangular(rng, (), 4, True, "float64")
    b = rng.standard_normal((4, 3))
    want = scipy.linalg.solve_triangular(a, b, lower=True)
    np.testing.assert_allclose(la.trsm(nd.array(a, dtype="float64"),
                                       nd.array(b, dtype="float64")).asnumpy(), want)


@given(batch=batches, n=sizes, dtype=dtypes, seed=st.integers(0, 2**31))
def test_cholesky_family(batch, n, dtype, seed):
    rng = np.random.default_rng(seed)
    s = _spd(rng, batch, n, dtype)
    low = np.linalg.cholesky(s.astype(np.float64))
    x = nd.array(s, dtype=dtype)
    factor = la.potrf(x)
    np.testing.assert_allclose(factor.asnumpy(), low, **TOL[dtype])
    np.testing.assert_allclose(la.potri(factor).asnumpy(), np.linalg.inv(s.astype(np.float64)),
                               rtol=1e-3 if dtype == "float32" else 1e-9, atol=1e-4)
    np.testing.assert_allclose(la.sumlogdiag(x).asnumpy(),
                               np.log(np.diagonal(s, axis1=-2, axis2=-1)).sum(-1), **TOL[dtype])


def test_potrf_reads_the_lower_triangle():
    s = np.array([[4.0, 99.0], [2.0, 5.0]])
    np.testing.assert_allclose(la.potrf(nd.array(s)).asnumpy(),
                               np.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])),
                               rtol=1e-6)


@given(batch=batches, m=sizes, k=sizes, transpose=st.booleans(), dtype=dtypes,
       seed=st.integers(0, 2**31))
def test_syrk(batch, m, k, transpose, dtype, seed):
    a = _random(np.random.default_rng(seed), (*batch, m, k), dtype)
    want = 0.5 * (_t(a) @ a if transpose else a @ _t(a))
    got = la.syrk(nd.array(a, dtype=dtype), transpose=transpose, alpha=0.5)
    np.testing.assert_allclose(got.asnumpy(), want, **TOL[dtype])


@given(batch=batches, n=sizes, dtype=dtypes, seed=st.integers(0, 2**31))
def test_inverse_det_slogdet(batch, n, dtype, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((*batch, n, n)) + 2 * np.eye(n)).astype(dtype)
    wide = a.astype(np.float64)
    x = nd.array(a, dtype=dtype)
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == "float32" else dict(rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(la.inverse(x).asnumpy(), np.linalg.inv(wide), **tol)
    np.testing.assert_allclose(la.det(x).asnumpy(), np.linalg.det(wide), **tol)
    sign, logdet = la.slogdet(x)
    want_sign, want_log = np.linalg.slogdet(wide)
    assert sign.shape == logdet.shape == (batch or (1,))  # MXNet: (1,) for one matrix
    np.testing.assert_array_equal(sign.asnumpy(), want_sign)
    np.testing.assert_allclose(logdet.asnumpy(), want_log, **tol)


def test_singular_and_pivoting_matrices():
    singular = nd.array([[1.0, 2.0], [2.0, 4.0]])
    assert la.det(singular).asnumpy() == 0  # MXNet: -0
    assert la.det(singular).shape == la.sumlogdiag(singular).shape == (1,)  # MXNet's
    sign, logdet = la.slogdet(singular)
    assert sign.asnumpy() == 0 and logdet.asnumpy() == -np.inf  # MXNet: 0 (as -0), -inf
    sign, logdet = la.slogdet(nd.array([[0.0, 1.0], [1.0, 0.0]]))  # needs a row swap
    assert sign.asnumpy() == -1 and logdet.asnumpy() == 0  # MXNet: -1, 0
    np.testing.assert_allclose(la.inverse(nd.array([[0.0, 1.0], [1.0, 0.0]])).asnumpy(),
                               [[0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(la.sumlogdiag(nd.array([[1.0, 0.0], [0.0, -1.0]])).asnumpy(),
                                  [np.nan])  # MXNet: nan


def test_zero_size_matrices():
    assert la.det(nd.ones((0, 0))).asnumpy().tolist() == [1.0]  # numpy's empty product
    assert la.inverse(nd.ones((2, 0, 0))).shape == (2, 0, 0)
    assert la.gemm2(nd.ones((2, 0)), nd.ones((0, 3))).asnumpy().tolist() == [[0.0] * 3] * 2


@given(batch=batches, m=sizes, extra=st.integers(0, 3), dtype=dtypes, seed=st.integers(0, 2**31))
def test_gelqf(batch, m, extra, dtype, seed):
    a = _random(np.random.default_rng(seed), (*batch, m, m + extra), dtype)
    q, low = la.gelqf(nd.array(a, dtype=dtype))
    q, low = q.asnumpy(), low.asnumpy()
    assert q.shape == a.shape and low.shape == (*batch, m, m)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(low @ q, a, **tol)
    np.testing.assert_allclose(q @ _t(q), np.broadcast_to(np.eye(m), (*batch, m, m)), **tol)
    assert not np.triu(low, 1).any()
    # numpy's QR of Aᵀ (LAPACK's Householder, as MXNet's gelqf) gives the same signs
    for index in np.ndindex(*batch):
        qt, rt = np.linalg.qr(a[index].astype(np.float64).T)
        np.testing.assert_allclose(low[index], rt.T, **tol)


def test_gelqf_syevd_mxnet_examples():
    q, low = la.gelqf(nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype="float64"))
    np.testing.assert_allclose(q.asnumpy(), [[-0.26726124, -0.53452248, -0.80178373],
                                             [0.87287156, 0.21821789, -0.43643578]], rtol=1e-7)
    np.testing.assert_allclose(low.asnumpy(), [[-3.74165739, 0.0], [-8.55235974, 1.96396101]],
                               rtol=1e-7)
    u, values = la.syevd(nd.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [2.0, 5.0]]],
                                  dtype="float64"))
    np.testing.assert_allclose(u.asnumpy(), [[[0.89442719, -0.4472136], [0.4472136, 0.89442719]],
                                             [[0.92387953, -0.38268343],
                                              [0.38268343, 0.92387953]]], rtol=1e-7)
    np.testing.assert_allclose(values.asnumpy(), [[0.0, 5.0], [0.17157288, 5.82842712]],
                               rtol=1e-7, atol=1e-12)


@given(batch=batches, n=sizes, dtype=dtypes, seed=st.integers(0, 2**31))
def test_syevd(batch, n, dtype, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((*batch, n, n))
    sym = (m + _t(m)).astype(dtype)
    garbage = np.where(np.triu(np.ones((n, n)), 1).astype(bool), 77.0, sym).astype(dtype)
    u, values = la.syevd(nd.array(garbage, dtype=dtype))  # only the lower triangle is read
    u, values = u.asnumpy(), values.asnumpy()
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(values, np.linalg.eigvalsh(sym.astype(np.float64)), **tol)
    np.testing.assert_allclose(u @ sym, values[..., None] * u, **tol)
    np.testing.assert_allclose(u @ _t(u), np.broadcast_to(np.eye(n), sym.shape), **tol)
    biggest = np.take_along_axis(u, np.abs(u).argmax(-1)[..., None], -1)
    assert (biggest > 0).all()  # MXNet's signs


def test_diagonals_and_triangles_as_mxnet():
    a = nd.array(np.arange(16.0).reshape(4, 4))
    # MXNet 1.9.1's values (mxvenv), packing order included
    cases = [(dict(), [0, 4, 5, 8, 9, 10, 12, 13, 14, 15]), (dict(offset=1), [1, 2, 6, 3, 7, 11]),
             (dict(offset=-1), [4, 8, 9, 12, 13, 14]),
             (dict(lower=False), [0, 1, 5, 2, 6, 10, 3, 7, 11, 15]),
             (dict(offset=-1, lower=False), [4, 8, 9, 12, 13, 14])]
    for kw, want in cases:
        np.testing.assert_array_equal(la.extracttrian(a, **kw).asnumpy(), want)
        n = 4
        back = la.maketrian(nd.array(want), **kw).asnumpy()
        full = np.arange(16.0).reshape(4, 4)
        assert back.shape == (n, n)
        np.testing.assert_array_equal(back[back != 0], full[back != 0])
    np.testing.assert_array_equal(la.maketrian(nd.array([1, 2, 3]), offset=1).asnumpy(),
                                  [[0, 1, 2], [0, 0, 3], [0, 0, 0]])
    np.testing.assert_array_equal(la.maketrian(nd.array([1, 2, 3, 4, 5, 6])).asnumpy(),
                                  [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(la.extractdiag(a, offset=-1).asnumpy(), [4, 9, 14])
    np.testing.assert_array_equal(la.makediag(nd.array([1, 2]), offset=1).asnumpy(),
                                  [[0, 1, 0], [0, 0, 2], [0, 0, 0]])


@given(batch=batches, n=sizes, offset=st.integers(-3, 3), dtype=dtypes,
       seed=st.integers(0, 2**31))
def test_diag_against_numpy(batch, n, offset, dtype, seed):
    if n - abs(offset) <= 0:
        return
    a = _random(np.random.default_rng(seed), (*batch, n, n), dtype)
    d = la.extractdiag(nd.array(a, dtype=dtype), offset=offset).asnumpy()
    np.testing.assert_array_equal(d, np.diagonal(a, offset, -2, -1))
    made = la.makediag(nd.array(d, dtype=dtype), offset=offset).asnumpy()
    want = np.zeros_like(a)
    idx = np.arange(n - abs(offset))
    want[..., idx + max(-offset, 0), idx + max(offset, 0)] = d
    np.testing.assert_array_equal(made, want)
    lower = np.tril_indices(n, min(offset, 0))
    tri = la.extracttrian(nd.array(a, dtype=dtype), offset=min(offset, 0)).asnumpy()
    np.testing.assert_array_equal(tri, a[..., lower[0], lower[1]])  # row-major lower triangle


def test_khatri_rao():
    got = nd.khatri_rao(nd.array([[1, 2], [3, 4]]), nd.array([[1, 2], [3, 4], [5, 6]]))
    np.testing.assert_array_equal(got.asnumpy(), [[1, 4], [3, 8], [5, 12], [3, 8], [9, 16],
                                                  [15, 24]])  # MXNet's docstring and values
    rng = np.random.default_rng(5)
    mats = [rng.standard_normal((r, 3)) for r in (2, 3, 4)]
    want = np.einsum("ic,jc,kc->ijkc", *mats).reshape(24, 3)
    np.testing.assert_allclose(nd.khatri_rao(*(nd.array(m, dtype="float64") for m in mats))
                               .asnumpy(), want)
    np.testing.assert_array_equal(nd.khatri_rao(nd.array([[1, 2]])).asnumpy(), [[1, 2]])


# -- gradients --------------------------------------------------------------------------------

def _check_gradient(function, arrays, perturb=None, eps=1e-6, rtol=1e-5, atol=1e-6):
    """The autograd gradient of sum(w * function(*arrays)) against central differences
    (along ``perturb(i, j)`` directions when given, e.g. symmetric ones)."""
    rng = np.random.default_rng(11)
    xs = [nd.array(a, dtype="float64") for a in arrays]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = function(*xs)
        outs = out if isinstance(out, list) else [out]
        weights = [nd.array(rng.standard_normal(o.shape), dtype="float64") for o in outs]
        loss = sum((o * w).sum() for o, w in zip(outs, weights))
    loss.backward()

    def value(values):
        res = function(*(nd.array(v, dtype="float64") for v in values))
        res = res if isinstance(res, list) else [res]
        return sum(float((r.asnumpy() * w.asnumpy()).sum()) for r, w in zip(res, weights))

    for i, a in enumerate(arrays):
        grad = xs[i].grad.asnumpy()
        for pos in np.ndindex(a.shape):
            direction = np.zeros_like(a)
            direction[pos] = 1.0
            if perturb is not None:
                direction = perturb(direction)
            up = [v + eps * direction if k == i else v for k, v in enumerate(arrays)]
            down = [v - eps * direction if k == i else v for k, v in enumerate(arrays)]
            numeric = (value(up) - value(down)) / (2 * eps)
            np.testing.assert_allclose((grad * direction).sum(), numeric, rtol=rtol, atol=atol,
                                       err_msg=f"input {i} at {pos}")


def test_gemm_gradients():
    rng = np.random.default_rng(1)
    for ta, tb in itertools.product((False, True), repeat=2):
        a = rng.standard_normal((2, 3, 2) if ta else (2, 2, 3))
        b = rng.standard_normal((2, 4, 3) if tb else (2, 3, 4))
        c = rng.standard_normal((2, 2, 4))
        _check_gradient(lambda x, y, z: la.gemm(x, y, z, transpose_a=ta, transpose_b=tb,
                                                alpha=1.5, beta=0.7), [a, b, c])
        _check_gradient(lambda x, y: la.gemm2(x, y, transpose_a=ta, transpose_b=tb, alpha=-2.0),
                        [a, b])


def test_triangular_gradients():
    rng = np.random.default_rng(2)
    for transpose, rightside, lower in itertools.product((False, True), repeat=3):
        a = _triangular(rng, (2,), 3, lower, "float64")
        b = rng.standard_normal((2, 4, 3) if rightside else (2, 3, 4))
        kw = dict(transpose=transpose, rightside=rightside, lower=lower, alpha=1.3)
        _check_gradient(lambda x, y: la.trsm(x, y, **kw), [a, b])
        _check_gradient(lambda x, y: la.trmm(x, y, **kw), [a, b])


def test_cholesky_gradients():
    rng = np.random.default_rng(4)
    s = _spd(rng, (2,), 3, "float64")

    def symmetric(direction):  # potrf reads one triangle: perturb A as a symmetric matrix
        return direction + _t(direction)

    _check_gradient(la.potrf, [s], perturb=symmetric)
    _check_gradient(la.sumlogdiag, [s])
    factor = np.linalg.cholesky(s)
    _check_gradient(la.potri, [factor], perturb=np.tril, rtol=1e-4)
    _check_gradient(lambda x: la.syrk(x, alpha=0.5), [rng.standard_normal((2, 2, 3))])


def test_inverse_det_gradients():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 3, 3)) + 2 * np.eye(3)
    _check_gradient(la.inverse, [a])
    _check_gradient(la.det, [a])
    _check_gradient(la.det, [a[0]])
    _check_gradient(la.sumlogdiag, [np.abs(a[0]) + 1])
    _check_gradient(lambda x: la.slogdet(x)[1], [a])
    _check_gradient(la.slogdet, [a])  # the sign has no gradient


def test_gelqf_syevd_gradients():
    rng = np.random.default_rng(9)
    _check_gradient(la.gelqf, [rng.standard_normal((2, 2, 4))])
    _check_gradient(la.gelqf, [rng.standard_normal((3, 3))])
    m = rng.standard_normal((2, 3, 3))

    def symmetric(direction):  # syevd reads one triangle: perturb A as a symmetric matrix
        return direction + _t(direction)

    _check_gradient(la.syevd, [m + _t(m)], perturb=symmetric, rtol=1e-4)
    _check_gradient(lambda x: la.syevd(x)[1], [m + _t(m)], perturb=symmetric, rtol=1e-4)


def test_diag_trian_khatri_rao_gradients():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 3))
    _check_gradient(lambda x: la.extractdiag(x, offset=1), [a])
    _check_gradient(lambda x: la.makediag(x, offset=-1), [rng.standard_normal((2, 3))])
    _check_gradient(lambda x: la.extracttrian(x, offset=-1), [a])
    _check_gradient(lambda x: la.maketrian(x, lower=False), [rng.standard_normal((2, 6))])
    mats = [rng.standard_normal((r, 2)) for r in (2, 3, 2)]
    _check_gradient(lambda *xs: nd.khatri_rao(*xs), mats)


# -- bad input --------------------------------------------------------------------------------

def test_bad_input():
    sq, rect = nd.ones((2, 2)), nd.ones((2, 3))
    with pytest.raises(MXNetError, match="not symmetric positive definite"):
        la.potrf(nd.array([[1.0, 2.0], [2.0, 1.0]]))  # MXNet: "spotrf failed ... not positive"
    with pytest.raises(MXNetError, match="matrix 1 of the batch"):
        la.potrf(nd.array([np.eye(2), -np.eye(2)]))
    with pytest.raises(MXNetError, match="singular"):
        la.inverse(nd.array([[1.0, 2.0], [2.0, 4.0]]))  # MXNet: "non-convertible"
    for op in (la.potrf, la.inverse, la.det, la.slogdet, la.sumlogdiag, la.extractdiag,
               la.extracttrian, la.potri):
        with pytest.raises(InvalidValue, match="square"):
            op(rect)
    with pytest.raises(InvalidValue, match="at least 2 axes"):
        la.extractdiag(nd.ones((3,)))
    with pytest.raises(InvalidValue, match="incompatible matrix dimensions"):
        la.gemm2(rect, rect)
    with pytest.raises(InvalidValue, match="same shape except"):
        la.gemm2(nd.ones((2, 2, 3)), nd.ones((3, 3, 2)))
    with pytest.raises(InvalidValue, match="C must have the shape"):
        la.gemm(sq, sq, rect)
    with pytest.raises(InvalidType, match="float32 or float64"):
        la.inverse(nd.array([[1, 2], [3, 4]], dtype="int32"))
    with pytest.raises(InvalidType, match="float32 or float64"):
        la.det(nd.array([[1, 2], [3, 4]], dtype="float16"))
    with pytest.raises(InvalidValue, match="illegal offset 2"):
        la.extractdiag(sq, offset=2)
    with pytest.raises(InvalidValue, match="must hold a triangle"):
        la.maketrian(nd.ones((4,)))
    with pytest.raises(InvalidValue, match="does not fit B"):
        la.trsm(nd.ones((3, 3)), rect)
    with pytest.raises(InvalidValue, match="args\\[1\\]"):
        nd.khatri_rao(sq, rect)
    with pytest.raises(InvalidValue, match="no more rows than columns"):
        la.gelqf(nd.ones((3, 2)))
    with pytest.raises(InvalidValue, match="square"):
        la.syevd(rect)
    with pytest.raises(InvalidValue, match="column axis"):
        la.gemm2(sq, sq, axis=-1)
    with pytest.raises(InvalidType, match="A must be an NDArray"):
        la.potrf(np.eye(2))


def test_out_argument():
    out = nd.zeros((2, 2))
    assert la.gemm2(nd.ones((2, 3)), nd.ones((3, 2)), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 3.0))
    sign, logdet = nd.zeros((1,)), nd.zeros((1,))
    la.slogdet(nd.array([[[2.0, 0.0], [0.0, 3.0]]]), out=[sign, logdet])
    np.testing.assert_allclose(logdet.asnumpy(), [np.log(6.0)], rtol=1e-6)
    with pytest.raises(MXNetError, match="out has shape"):
        la.det(nd.ones((2, 2)), out=nd.zeros((3,)))


# -- names and symbols ------------------------------------------------------------------------

def test_names():
    assert nd.linalg_gemm2 is la.gemm2 and nd.linalg_potrf is la.potrf
    assert nd.linalg_gelqf is la.gelqf
    assert nd.op.khatri_rao is nd.khatri_rao
    assert mx.sym.linalg.gemm2(mx.sym.var("a"), mx.sym.var("b")).tojson().count(
        '"_linalg_gemm2"') == 1
    assert '"_linalg_trsm"' in mx.sym.linalg_trsm(mx.sym.var("a"), mx.sym.var("b")).tojson()


def test_symbols_infer_and_run():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    cases = [
        (mx.sym.linalg.gemm2(a, b, transpose_b=True), dict(a=(2, 3, 4), b=(2, 5, 4)), [(2, 3, 5)]),
        (mx.sym.linalg.potrf(a), dict(a=(2, 3, 3)), [(2, 3, 3)]),
        (mx.sym.linalg.inverse(a), dict(a=(3, 3)), [(3, 3)]),
        (mx.sym.linalg.det(a), dict(a=(2, 3, 3)), [(2,)]),
        (mx.sym.linalg.det(a), dict(a=(3, 3)), [(1,)]),
        (mx.sym.linalg.sumlogdiag(a), dict(a=(3, 3)), [(1,)]),
        (mx.sym.linalg.slogdet(a), dict(a=(2, 3, 3)), [(2,), (2,)]),
        (mx.sym.linalg.syrk(a, transpose=True), dict(a=(2, 3, 4)), [(2, 4, 4)]),
        (mx.sym.linalg.extracttrian(a, offset=1), dict(a=(4, 4)), [(6,)]),
        (mx.sym.linalg.maketrian(a, offset=-1), dict(a=(2, 6)), [(2, 4, 4)]),
        (mx.sym.linalg.makediag(a, offset=2), dict(a=(3,)), [(5, 5)]),
        (mx.sym.linalg.trsm(a, b, rightside=True), dict(a=(3, 3), b=(2, 3)), [(2, 3)]),
        (mx.sym.khatri_rao(a, b), dict(a=(2, 3), b=(4, 3)), [(8, 3)]),
        (mx.sym.linalg.gelqf(a), dict(a=(2, 3, 5)), [(2, 3, 5), (2, 3, 3)]),
        (mx.sym.linalg.syevd(a), dict(a=(2, 4, 4)), [(2, 4, 4), (2, 4)]),
    ]
    for sym, shapes, want in cases:
        assert sym.infer_shape(**shapes)[1] == want, sym.tojson()
    assert mx.sym.linalg.slogdet(a, name="sl").list_outputs() == ["sl_output0", "sl_output1"]
    rng = np.random.default_rng(8)
    s = _spd(rng, (2,), 3, "float32")
    ex = mx.sym.linalg.potrf(a).bind(mx.cpu(), {"a": nd.array(s)},
                                     args_grad={"a": nd.zeros((2, 3, 3))})
    np.testing.assert_allclose(ex.forward(is_train=True)[0].asnumpy(), np.linalg.cholesky(s),
                               rtol=1e-5, atol=1e-5)
    ex.backward(nd.ones((2, 3, 3)))
    assert ex.grad_dict["a"].shape == (2, 3, 3)
    loaded = mx.sym.load_json(mx.sym.linalg.gemm(a, b, mx.sym.var("c"), alpha=2.0).tojson())
    out = loaded.eval(a=nd.ones((2, 2)), b=nd.ones((2, 2)), c=nd.ones((2, 2)))[0]
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 5.0))


def test_sparse_input_falls_back():
    x = nd.array(np.eye(3) * 2).tostype("csr")
    with pytest.warns(mx.errors.StorageFallbackWarning if hasattr(mx, "errors") else Warning):
        out = la.inverse(x)
    np.testing.assert_allclose(out.asnumpy(), np.eye(3) / 2)
