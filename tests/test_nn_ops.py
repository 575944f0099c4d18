"""Indexing and neural-network ops (take, pick, gather_nd, scatter_nd, one_hot, Embedding,
FullyConnected, Activation, softmax, log_softmax, cast) against numpy / scipy oracles, with
MXNet 1.9.1's storage types, dtypes, shapes and errors."""

import warnings

import numpy as np
import pytest
import scipy.sparse
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidIndex, InvalidType, InvalidValue, StorageFallbackWarning

nd = mx.nd


def _ids(values) -> np.ndarray:
    """MXNet's reading of float ids: truncated toward zero."""
    return np.trunc(np.asarray(values, dtype=np.float64)).astype(np.int64)


@st.composite
def _array_axis(draw, max_ndim=3, max_dim=5):
    ndim = draw(st.integers(1, max_ndim))
    shape = tuple(draw(st.lists(st.integers(1, max_dim), min_size=ndim, max_size=ndim)))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return x, draw(st.integers(-ndim, ndim - 1)), seed


# -- take ----------------------------------------------------------------------------------------
@settings(max_examples=30)
@given(_array_axis(), st.sampled_from(["clip", "wrap"]), st.integers(0, 2),
       st.sampled_from(["float32", "int64"]))
def test_take_matches_numpy(case, mode, id_ndim, id_dtype):
    x, axis, seed = case
    rng = np.random.default_rng(seed)
    n = x.shape[axis]
    ids = rng.integers(-2 * n - 1, 2 * n + 2, size=(3,) * id_ndim).astype(id_dtype)
    if id_dtype == "float32":
        ids = ids + rng.choice([0.0, 0.4, -0.4], size=ids.shape).astype(np.float32)
    got = nd.take(nd.array(x), nd.array(ids, dtype=id_dtype), axis=axis, mode=mode)
    want = np.take(x, _ids(ids), axis=axis, mode=mode)
    assert got.stype == "default" and got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_take_raise_mode_checks_every_id():
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(nd.take(x, nd.array([1, 0]), mode="raise").asnumpy(),
                                  [[4, 5, 6], [1, 2, 3]])
    for bad in ([0, 2], [-1], [np.nan], [np.inf]):  # MXNet raises for negative ids too
        with pytest.raises(InvalidIndex):
            nd.take(x, nd.array(bad), mode="raise")
    with pytest.raises(IndexError, match="index 5 at position 1"):
        x.take(nd.array([0, 5], dtype="int64"), mode="raise")


def test_take_int_data_empty_ids_and_errors():
    x = nd.array(np.arange(6).reshape(2, 3), dtype="int32")
    got = nd.take(x, nd.array([2.9, -0.5]), axis=1)  # truncated: 2 and 0
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.asnumpy(), [[2, 0], [5, 3]])
    assert nd.take(x, nd.array(np.zeros(0))).shape == (0, 3)
    with pytest.raises(InvalidValue, match="axis 2"):
        nd.take(x, nd.array([0]), axis=2)
    with pytest.raises(InvalidValue, match="mode"):
        nd.take(x, nd.array([0]), mode="foo")
    with pytest.raises(InvalidIndex, match="size 0"):
        nd.take(nd.zeros((0, 3)), nd.array([0]))
    with pytest.raises(InvalidType, match="indices"):
        nd.take(x, [0])


@settings(max_examples=20)
@given(st.integers(1, 12), st.integers(1, 6), st.sampled_from([0.0, 0.3, 1.0]),
       st.sampled_from(["clip", "wrap"]), st.integers(0, 2**32 - 1))
def test_csr_take_keeps_csr(rows, cols, density, mode, seed):
    rng = np.random.default_rng(seed)
    matrix = scipy.sparse.random(rows, cols, density=density, format="csr", dtype=np.float32,
                                 random_state=seed)
    ids = rng.integers(-rows - 2, 2 * rows + 2, size=rng.integers(0, 8))
    got = nd.take(nd.sparse.csr_matrix(matrix), nd.array(ids), mode=mode)
    want = np.take(matrix.toarray(), ids, axis=0, mode=mode)
    assert got.stype == "csr" and got.shape == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want)
    rebuilt = scipy.sparse.csr_matrix((got.data.asnumpy(), got.indices.asnumpy(),
                                       got.indptr.asnumpy()), shape=got.shape)
    assert rebuilt.has_sorted_indices and rebuilt.nnz == np.count_nonzero(want)


def test_csr_take_elsewhere_falls_back_to_dense(fresh_warnings):
    dense = np.array([[1, 0, 2], [0, 3, 0]], np.float32)
    c = nd.array(dense).tostype("csr")
    with pytest.warns(StorageFallbackWarning):
        got = nd.take(c, nd.array([2, 0]), axis=1)
    assert got.stype == "default"
    np.testing.assert_array_equal(got.asnumpy(), dense[:, [2, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StorageFallbackWarning)
        with pytest.raises(InvalidIndex):
            nd.take(c, nd.array([2]), mode="raise")
        assert nd.take(c, nd.array([1]), mode="raise").stype == "default"


# -- pick, gather_nd, scatter_nd, one_hot ----------------------------------------------------------
@settings(max_examples=25)
@given(_array_axis(), st.sampled_from(["clip", "wrap"]), st.booleans())
def test_pick_matches_numpy(case, mode, keepdims):
    x, axis, seed = case
    axis %= x.ndim
    n = x.shape[axis]
    shape = x.shape[:axis] + x.shape[axis + 1:]
    ids = np.random.default_rng(seed).integers(-n - 2, 2 * n + 1, size=shape).astype(np.float32)
    fixed = np.clip(ids, 0, n - 1) if mode == "clip" else np.mod(ids, n)
    want = np.take_along_axis(x, np.expand_dims(fixed.astype(np.int64), axis), axis)
    got = nd.pick(nd.array(x), nd.array(ids), axis=axis, keepdims=keepdims, mode=mode)
    np.testing.assert_array_equal(got.asnumpy(), want if keepdims else want.squeeze(axis))
    kept = nd.pick(nd.array(x), nd.array(np.expand_dims(ids, axis)), axis=axis, mode=mode)
    np.testing.assert_array_equal(kept.asnumpy(), want.squeeze(axis))


def test_pick_errors():
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(InvalidValue, match="axis=None"):
        nd.pick(x, nd.array([0, 1]), axis=None)
    with pytest.raises(InvalidValue, match="mode"):
        nd.pick(x, nd.array([0, 1]), mode="raise")  # MXNet's pick has no raise mode
    with pytest.raises(InvalidValue, match="index has shape"):
        nd.pick(x, nd.array([0, 1, 2]))


@settings(max_examples=25)
@given(st.integers(1, 3), st.integers(0, 2), st.integers(0, 6), st.integers(0, 2**32 - 1))
def test_gather_nd_and_scatter_nd_match_numpy(m, rest, entries, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, size=m + rest))
    x = rng.standard_normal(shape).astype(np.float32)
    ids = np.stack([rng.integers(-d, d, size=entries) for d in shape[:m]])
    want = x[tuple(ids)]
    got = nd.gather_nd(nd.array(x), nd.array(ids))
    np.testing.assert_array_equal(got.asnumpy(), want)
    data = rng.standard_normal(want.shape).astype(np.float32)
    scattered = nd.scatter_nd(nd.array(data), nd.array(ids), shape=shape).asnumpy()
    expected = np.zeros(shape, np.float32)
    for y in range(entries):  # serially: the last of repeated ids wins, as MXNet on CPU
        expected[tuple(ids[:, y])] = data[y]
    np.testing.assert_array_equal(scattered, expected)


def test_nd_ids_out_of_range_raise():
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(nd.gather_nd(x, nd.array([[-1], [0]])).asnumpy(), [4])
    for bad in ([[2], [0]], [[0], [-4]], [[np.nan], [0]]):
        with pytest.raises(IndexError):
            nd.gather_nd(x, nd.array(bad))
        with pytest.raises(IndexError):  # MXNet writes out of bounds here
            nd.scatter_nd(nd.array([1.0]), nd.array(bad), shape=(2, 3))
    with pytest.raises(InvalidValue, match="at least 2 dimensions"):
        nd.gather_nd(x, nd.array([1, 0]))
    with pytest.raises(InvalidValue, match="address 3 axes"):
        nd.gather_nd(x, nd.array([[1], [2], [0]]))
    with pytest.raises(InvalidValue, match="need data of shape"):
        nd.scatter_nd(nd.array([1.0, 2.0]), nd.array([[1]]), shape=(2,))


def test_one_hot_matches_numpy():
    ids = np.array([[1, 0], [2, 5], [-1, 1.7]], np.float32)
    got = nd.one_hot(nd.array(ids), 3, on_value=8, off_value=-1, dtype="int32")
    fixed = _ids(ids)
    want = np.where(fixed[..., None] == np.arange(3), 8, -1)
    assert got.dtype == np.int32 and got.shape == (3, 2, 3)
    np.testing.assert_array_equal(got.asnumpy(), want)
    method = nd.array([1, 0]).one_hot(2, on_value=2.5)
    assert method.dtype == np.float32
    np.testing.assert_array_equal(method.asnumpy(), [[0, 2.5], [2.5, 0]])
    assert nd.one_hot(nd.array([1]), 0).shape == (1, 0)
    with pytest.raises(mx.MXNetError, match="depth"):
        nd.one_hot(nd.array([1]), -1)


# -- Embedding, FullyConnected ---------------------------------------------------------------------
def test_embedding_clips_ids_as_mxnet(fresh_warnings):
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    ids = np.array([[0, 3], [5, -1], [2.5, np.nan]], np.float32)
    for sparse_grad in (False, True):
        got = nd.Embedding(nd.array(ids), nd.array(w), input_dim=4, output_dim=3,
                           sparse_grad=sparse_grad)
        want = w[np.clip(_ids(np.nan_to_num(ids)), 0, 3)]
        assert got.shape == (3, 2, 3) and got.dtype == np.float32
        np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(InvalidValue, match="weight has shape"):
        nd.Embedding(nd.array([0]), nd.array(w), input_dim=5, output_dim=3)
    rsp = nd.Embedding(nd.array([1]), nd.array(w).tostype("row_sparse"), 4, 3)
    np.testing.assert_array_equal(rsp.asnumpy(), w[[1]])


@settings(max_examples=15)
@given(st.integers(0, 9), st.integers(1, 7), st.integers(1, 5), st.sampled_from([0.0, 0.4, 1.0]),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_fully_connected_dense_and_csr(batch, k, hidden, density, no_bias, seed):
    rng = np.random.default_rng(seed)
    x = scipy.sparse.random(batch, k, density=density, format="csr", dtype=np.float32,
                            random_state=seed)
    w = rng.standard_normal((hidden, k)).astype(np.float32)
    b = rng.standard_normal(hidden).astype(np.float32)
    want = x.toarray() @ w.T + (0 if no_bias else b)
    bias = None if no_bias else nd.array(b)
    for data in (nd.array(x.toarray()), nd.sparse.csr_matrix(x)):
        got = nd.FullyConnected(data, nd.array(w), bias, num_hidden=hidden, no_bias=no_bias)
        assert got.stype == "default" and got.shape == (batch, hidden)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_fully_connected_flatten_and_errors():
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    w, b = np.ones((5, 12)), np.arange(5.0)
    got = nd.FullyConnected(nd.array(x, dtype="float64"), nd.array(w, dtype="float64"),
                            nd.array(b, dtype="float64"), num_hidden=5)
    np.testing.assert_allclose(got.asnumpy(), x.reshape(2, 12) @ w.T + b)
    flat = nd.FullyConnected(nd.array(x), nd.ones((5, 4)), num_hidden=5, no_bias=True,
                             flatten=False)
    np.testing.assert_allclose(flat.asnumpy(), x @ np.ones((4, 5)))
    data, weight, bias = nd.ones((2, 4)), nd.ones((3, 4)), nd.ones(3)
    with pytest.raises(mx.MXNetError, match="no_bias=True takes no bias"):
        nd.FullyConnected(data, weight, bias, num_hidden=3, no_bias=True)
    with pytest.raises(mx.MXNetError, match="takes a bias"):
        nd.FullyConnected(data, weight, num_hidden=3)
    with pytest.raises(InvalidValue, match="need weight"):
        nd.FullyConnected(data, weight, bias, num_hidden=4)
    with pytest.raises(InvalidType, match="floating point"):
        nd.FullyConnected(data.astype("int32"), weight.astype("int32"), bias.astype("int32"),
                          num_hidden=3)
    with pytest.raises(InvalidType, match="one dtype"):
        nd.FullyConnected(data.astype("float64"), weight, bias, num_hidden=3)


# -- Activation, softmax, cast, clip --------------------------------------------------------------
_ACTIVATIONS = {
    "relu": lambda x: np.where(x > 0, x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20)))),
    "softsign": lambda x: x / (1 + np.abs(x)),
}


@pytest.mark.parametrize("act_type", sorted(_ACTIVATIONS))
def test_activation_matches_numpy(act_type):
    x = np.array([[-30, -2, -0.0, 0.0, 0.5, 19.9, 25, 88]], np.float32)
    got = nd.Activation(nd.array(x), act_type=act_type)
    np.testing.assert_allclose(got.asnumpy(), _ACTIVATIONS[act_type](x.astype(np.float64)),
                               rtol=1e-6, atol=1e-7)
    with warnings.catch_warnings():  # warned once per (op, storage types), as MXNet logs it
        warnings.simplefilter("ignore", StorageFallbackWarning)
        sparse = nd.Activation(nd.array(x).tostype("csr"), act_type=act_type)
    assert sparse.stype == "default"
    np.testing.assert_array_equal(sparse.asnumpy(), got.asnumpy())


def test_activation_errors_and_methods():
    with pytest.raises(InvalidValue, match="act_type"):
        nd.Activation(nd.ones(2), act_type="mish")
    with pytest.raises(InvalidType, match="floating point"):
        nd.Activation(nd.ones(2, dtype="int32"), act_type="relu")
    x = nd.array([-1.0, 2.0])
    np.testing.assert_array_equal(x.relu().asnumpy(), [0, 2])
    np.testing.assert_allclose(x.sigmoid().asnumpy(), 1 / (1 + np.exp([1.0, -2.0])), rtol=1e-6)
    np.testing.assert_allclose(x.tanh().asnumpy(), np.tanh([-1.0, 2.0]), rtol=1e-6)


@settings(max_examples=25)
@given(_array_axis(max_dim=7), st.sampled_from([1.0, 0.5, -2.0]), st.booleans())
def test_softmax_matches_scipy(case, temperature, log):
    x, axis, _ = case
    op = nd.log_softmax if log else nd.softmax
    oracle = scipy.special.log_softmax if log else scipy.special.softmax
    got = op(nd.array(x), axis=axis, temperature=temperature)
    want = oracle(x.astype(np.float64) / temperature, axis=axis)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-5, atol=1e-6)


def test_softmax_edges():
    x = np.array([[1, 2, 3], [4, 5, np.nan], [1000, 0, -np.inf]], np.float32)
    got = nd.softmax(nd.array(x)).asnumpy()
    np.testing.assert_allclose(got[0], scipy.special.softmax([1, 2, 3]), rtol=1e-6)
    assert np.isnan(got[1]).all()  # a line holding nan is nan throughout
    np.testing.assert_array_equal(got[2], [1, 0, 0])
    np.testing.assert_array_equal(nd.log_softmax(nd.array(x[2:])).asnumpy(),
                                  [[0, -1000, -np.inf]])
    wide = nd.array([1.0, 2.0]).softmax(dtype="float64")
    assert wide.dtype == np.float64
    np.testing.assert_allclose(wide.asnumpy(), scipy.special.softmax([1.0, 2.0]), rtol=1e-15)
    half = nd.softmax(nd.array([1, 2], dtype="float16"))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.asnumpy(), scipy.special.softmax([1.0, 2.0]), rtol=1e-3)
    assert nd.softmax(nd.zeros((2, 0))).shape == (2, 0)
    with pytest.raises(InvalidType, match="floating point"):
        nd.softmax(nd.ones(2, dtype="int32"))
    with pytest.raises(InvalidValue, match="axis 1"):
        nd.softmax(nd.ones(2), axis=1)
    with pytest.raises(InvalidValue, match="use_length"):
        nd.softmax(nd.ones((1, 2)), use_length=True, length=nd.array([1]))


def test_cast_as_mxnet():
    x = np.array([[1.7, -2.5, 300], [np.nan, 0.0, -7.9]], np.float32)
    for dtype, want in (("int32", [[1, -2, 300], [0, 0, -7]]),
                        ("uint8", [[1, 254, 44], [0, 0, 249]]),
                        ("float64", x.astype(np.float64))):
        got = nd.cast(nd.array(x), dtype=dtype)
        assert got.dtype == np.dtype(dtype) and got.stype == "default"
        np.testing.assert_array_equal(got.asnumpy(), want)
    assert nd.Cast is nd.cast
    with pytest.warns(StorageFallbackWarning):
        dense = nd.cast(nd.array([[1.0, 0.0]]).tostype("csr"), dtype="float64")
    assert dense.stype == "default" and dense.dtype == np.float64  # MXNet's cast is dense
    with pytest.raises(InvalidValue, match="dtype is required"):
        nd.cast(nd.ones(1), None)


def test_clip_method_keeps_sparse_storage_as_mxnet():
    dense = np.array([[1, 0, -3]], np.float32)
    for stype in ("csr", "row_sparse"):
        kept = nd.array(dense).tostype(stype).clip(-1, 2)
        assert kept.stype == stype
        np.testing.assert_array_equal(kept.asnumpy(), np.clip(dense, -1, 2))
        shifted = nd.array(dense).tostype(stype).clip(1, 2)  # MXNet raises; dense here
        assert shifted.stype == "default"
        np.testing.assert_array_equal(shifted.asnumpy(), np.clip(dense, 1, 2))


# -- on an emulated GPU ---------------------------------------------------------------------------
def check_nn_on_gpu(ctx) -> None:
    """Every nn kernel on ``ctx`` (also called by tests/test_gpu.py's kernel-family check)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    a = nd.array(x, ctx=ctx)
    ids = nd.array([3, -1, 9], ctx=ctx)
    results = {
        "take": (nd.take(a, ids), np.take(x, [3, 0, 4], axis=0)),
        "take raise": (nd.take(a, nd.array([1, 2], ctx=ctx), mode="raise"), x[[1, 2]]),
        "csr take": (nd.take(a.tostype("csr"), ids, mode="wrap"), x[[3, 4, 4]]),
        "pick": (nd.pick(a, nd.array([0, 1, 2, 3, 9], ctx=ctx)), x[range(5), [0, 1, 2, 3, 3]]),
        "gather_nd": (nd.gather_nd(a, nd.array([[1, 4], [0, -1]], ctx=ctx)), x[[1, 4], [0, 3]]),
        "scatter_nd": (nd.scatter_nd(nd.array([1.0, 2.0], ctx=ctx),
                                     nd.array([[1, 0]], ctx=ctx), shape=(3,)), [2.0, 1.0, 0]),
        "one_hot": (nd.one_hot(nd.array([1, 0], ctx=ctx), 2), np.eye(2)[[1, 0]]),
        "FullyConnected csr": (nd.FullyConnected(a.tostype("csr"), a, nd.ones(5, ctx=ctx),
                                                 num_hidden=5), x @ x.T + 1),
        "softrelu": (nd.Activation(a, act_type="softrelu"), np.log1p(np.exp(x))),
        "softmax": (nd.softmax(a, axis=0), scipy.special.softmax(x, axis=0)),
        "argsort": (nd.argsort(a, axis=0), np.argsort(x, axis=0, kind="stable")),
        "topk mask": (nd.topk(a, k=2, ret_typ="mask"),
                      (np.argsort(np.argsort(-x, axis=1), axis=1) < 2)),
        "cast": (nd.cast(a, "int32"), np.trunc(x)),
    }
    for name, (got, want) in results.items():
        assert got.context == ctx, name
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6, err_msg=name)
    with pytest.raises(InvalidIndex):
        nd.gather_nd(a, nd.array([[5], [0]], ctx=ctx))


def test_nn_ops_on_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    check_nn_on_gpu(mx.gpu(0))


def test_fully_connected_takes_a_bias_column_as_mxnet():
    rng = np.random.default_rng(3)
    d, w, b = (rng.random(s, dtype=np.float32) for s in ((5, 10), (8, 10), (8, 1)))
    got = mx.nd.sparse.FullyConnected(mx.nd.array(d).tostype("csr"), mx.nd.array(w),
                                      num_hidden=8, bias=mx.nd.array(b))
    np.testing.assert_allclose(got.asnumpy(), d @ w.T + b[:, 0], rtol=1e-5)
    with warnings.catch_warnings():  # a row_sparse weight falls back to dense (as MXNet)
        warnings.simplefilter("ignore", StorageFallbackWarning)
        got = mx.nd.sparse.FullyConnected(mx.nd.array(d), mx.nd.array(w).tostype("row_sparse"),
                                          num_hidden=8, bias=mx.nd.array(b).tostype("row_sparse"))
    np.testing.assert_allclose(got.asnumpy(), d @ w.T + b[:, 0], rtol=1e-5)  # MXNet's test_sparse_fc
    with pytest.raises(mx.MXNetError):
        mx.nd.FullyConnected(mx.nd.array(d), mx.nd.array(w), mx.nd.ones((1, 8)), num_hidden=8)
