"""Embedding and take of a row_sparse weight on the ``nn_gather.take_rsp`` kernel (no dense
fallback), their row_sparse gradients, and ``gluon.contrib.nn.SparseEmbedding`` trained by a
``Trainer``: values against numpy oracles, hand-computed lazy updates, the same model with a
dense ``nn.Embedding(sparse_grad=True)``, and facts recorded from MXNet 1.9.1
(tests/fixtures/rsp_embedding.json, written by tests/fixtures/record_rsp_embedding.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import needs_cuda
import sparsegen as mx
from gluon_init import initialize
from sparsegen import autograd, gluon
from sparsegen.device import DeviceArray
from sparsegen.errors import InvalidIndex, StorageFallbackWarning
from sparsegen.ndarray import dispatch

nd = mx.nd
FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "rsp_embedding.json")
                     .read_text())

# A dense fallback warns once per (op, storage types) and process: the fixture below forgets
# earlier warnings, and this mark turns the fallback warning into a failure.
pytestmark = pytest.mark.filterwarnings("error::sparsegen.errors.StorageFallbackWarning")


@pytest.fixture(autouse=True)
def _fresh_fallback_warnings(monkeypatch):
    monkeypatch.setattr(dispatch, "_WARNED", set())


@st.composite
def _weights(draw, max_rows: int = 30, max_cols: int = 6):
    """(dense oracle, stored row ids, dtype, rng) of a row_sparse weight: a drawn share of rows
    stored (none, some, all), values holding NaN, inf and -0.0 now and then."""
    dtype = np.dtype(draw(st.sampled_from(("float16", "float32", "float64"))))
    rows = draw(st.one_of(st.integers(1, max_rows), st.just(4099)))
    cols = draw(st.sampled_from((1, 1, 2, 5, max_cols)))
    density = draw(st.sampled_from((0.0, 0.2, 0.6, 1.0)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    stored = np.flatnonzero(rng.random(rows) < density)
    dense = np.zeros((rows, cols), dtype)
    values = rng.standard_normal((stored.size, cols)).astype(dtype)
    if draw(st.booleans()):
        special = np.array([np.nan, np.inf, -np.inf, -0.0], dtype)
        values.flat[rng.integers(0, values.size, size=min(values.size, 3))] = rng.choice(special)
    dense[stored] = values
    return dense, stored, dtype, rng


def _rsp(dense: np.ndarray, stored: np.ndarray, ctx=None) -> nd.sparse.RowSparseNDArray:
    return nd.sparse.row_sparse_array((dense[stored], stored), shape=dense.shape,
                                      dtype=dense.dtype, ctx=ctx)


def _ids(rng: np.random.Generator, rows: int, shape: tuple[int, ...], id_dtype: str) -> np.ndarray:
    """Ids in ``[0, rows)``; float ones with fractions (MXNet truncates them)."""
    ids = rng.integers(0, rows, size=shape)
    if np.dtype(id_dtype).kind == "f":
        return (ids + rng.choice([0.0, 0.25, 0.75], size=shape)).clip(0, rows - 0.5).astype(
            id_dtype)
    return ids.astype(id_dtype)


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal values, NaN where NaN, and the sign of every zero."""
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


_ID_SHAPES = st.sampled_from(((0,), (1,), (7,), (3, 4), (2, 0, 3), (2, 2, 2), (700,)))
_ID_DTYPES = st.sampled_from(("float32", "float64", "int32", "int64"))


# -- forward ---------------------------------------------------------------------------------
@settings(max_examples=30)
@given(_weights(), _ID_SHAPES, _ID_DTYPES)
def test_embedding_of_row_sparse_weight_matches_numpy(weight, id_shape, id_dtype):
    dense, stored, dtype, rng = weight
    ids = _ids(rng, dense.shape[0], id_shape, id_dtype)
    got = nd.Embedding(nd.array(ids, dtype=id_dtype), _rsp(dense, stored), *dense.shape)
    want = dense[np.trunc(ids).astype(np.int64)]
    assert got.stype == "default" and got.dtype == dtype and got.shape == (*id_shape,
                                                                            dense.shape[1])
    _same(got.asnumpy(), want)


@settings(max_examples=30)
@given(_weights(), _ID_SHAPES, st.sampled_from(("clip", "wrap", "raise")), _ID_DTYPES)
def test_take_of_row_sparse_rows_matches_numpy(weight, id_shape, mode, id_dtype):
    dense, stored, dtype, rng = weight
    rows = dense.shape[0]
    if mode == "raise":
        ids = _ids(rng, rows, id_shape, id_dtype)
    else:
        ids = rng.integers(-2 * rows - 1, 2 * rows + 2, size=id_shape).astype(id_dtype)
    got = nd.take(_rsp(dense, stored), nd.array(ids, dtype=id_dtype), mode=mode)
    want = np.take(dense, np.trunc(ids).astype(np.int64), axis=0,
                   mode="clip" if mode == "raise" else mode)
    assert got.stype == "default" and got.dtype == dtype and got.shape == want.shape
    _same(got.asnumpy(), want)


@pytest.mark.parametrize("stored", [[], [0, 1, 2, 3], [2]], ids=["none", "all", "one"])
def test_embedding_edge_weights(stored):
    dense = np.zeros((4, 1), np.float32)
    dense[stored, 0] = np.array([5.0, -0.0, np.nan, 7.0])[: len(stored)]
    ids = np.array([[3, 2], [0, 1]], np.float32)
    got = nd.Embedding(nd.array(ids), _rsp(dense, np.array(stored, np.int64)), 4, 1)
    _same(got.asnumpy(), dense[ids.astype(np.int64)])
    empty = nd.Embedding(nd.zeros((0, 3)), _rsp(dense, np.array(stored, np.int64)), 4, 1)
    assert empty.shape == (0, 3, 1)


@settings(max_examples=20)
@given(st.integers(1, 12), st.sampled_from((-1, 0, 1, 7)),
       st.sampled_from(("low", "high", "nan", "inf", "-inf")), st.sampled_from((0.0, 0.5, 1.0)))
def test_ids_outside_the_weight_raise_naming_them(rows, position, bad, density):
    """MXNet 1.9.1 checks a row_sparse weight's ids (``SparseEmbedding input contains data out
    of bound``) whatever rows it stores: sparsegen raises ``InvalidIndex`` with the id."""
    stored = np.flatnonzero(np.random.default_rng(rows).random(rows) < density)
    w = _rsp(np.ones((rows, 2), np.float32), stored)
    ids = np.zeros(8, np.float32)
    ids[position] = {"low": -1 - rows, "high": rows, "nan": np.nan, "inf": np.inf,
                     "-inf": -np.inf}[bad]
    match = "nan or inf" if bad in ("nan", "inf", "-inf") else (
        f"index {int(ids[position])} at position {position % 8} is out of bounds")
    with pytest.raises(InvalidIndex, match=match):
        nd.Embedding(nd.array(ids), w, rows, 2)
    with pytest.raises(InvalidIndex, match=match):
        nd.take(w, nd.array(ids), mode="raise")


def test_forward_matches_mxnet_fixture():
    fx = FIXTURE
    dense = np.array(fx["weight"], np.float32)
    stored = np.array(fx["stored"], np.int64)
    kept = np.zeros_like(dense)
    kept[stored] = dense[stored]
    w = _rsp(kept, stored)
    got = nd.Embedding(nd.array(fx["forward_ids"]), w, fx["rows"], fx["cols"])
    assert got.stype == fx["forward"]["stype"]
    np.testing.assert_allclose(got.asnumpy(), fx["forward"]["values"], rtol=1e-6)
    for name, ids in fx["bad_ids"].items():
        assert fx["forward"]["errors"][name] == "MXNetError"
        if name in ("-0.5", "7.5"):  # sparsegen checks truncated ids (docs/mxnet-differences.md)
            row = int(np.trunc(ids[0]))
            np.testing.assert_array_equal(nd.Embedding(nd.array(ids), w, fx["rows"],
                                                       fx["cols"]).asnumpy(), kept[[row]])
            continue
        with pytest.raises(mx.MXNetError):
            nd.Embedding(nd.array(ids), w, fx["rows"], fx["cols"])


@pytest.mark.parametrize("stored", [[], [1, 3], [0, 1, 2, 3]])
def test_take_of_row_sparse_rows_with_trailing_axes(stored):
    dense = np.zeros((4, 3, 2), np.float64)
    dense[stored] = np.arange(6.0).reshape(3, 2) - 2.5
    w = nd.sparse.row_sparse_array((dense[stored], np.array(stored, np.int64)), shape=(4, 3, 2))
    ids = [[3, 1], [0, 9]]
    got = nd.take(w, nd.array(ids), mode="wrap")
    assert got.shape == (2, 2, 3, 2)
    np.testing.assert_array_equal(got.asnumpy(), np.take(dense, ids, axis=0, mode="wrap"))


def test_take_along_another_axis_still_falls_back():
    w = _rsp(np.arange(6, dtype=np.float32).reshape(3, 2), np.array([0, 2]))
    with pytest.warns(StorageFallbackWarning):
        got = nd.take(w, nd.array([1]), axis=1)
    np.testing.assert_array_equal(got.asnumpy(), [[1.0], [0.0], [5.0]])


# -- gradients -------------------------------------------------------------------------------
@settings(max_examples=25)
@given(_weights(max_rows=20), _ID_SHAPES, st.sampled_from(("float32", "int64")),
       st.sampled_from(("Embedding", "take")))
def test_gradient_is_row_sparse_and_matches_numpy(weight, id_shape, id_dtype, op):
    dense, stored, dtype, rng = weight
    # take's gradient has no float16 and no empty ids yet (s7-grads brings the latter)
    assume(op == "Embedding" or (dtype != np.float16 and 0 not in id_shape))
    dense = np.nan_to_num(dense, posinf=1.0, neginf=-1.0)  # values do not reach the gradient
    rows, cols = dense.shape
    ids = _ids(rng, rows, id_shape, id_dtype)
    head = rng.standard_normal((*id_shape, cols)).astype(dtype)
    w = _rsp(dense, stored)
    w.attach_grad(stype="row_sparse")
    with autograd.record():
        if op == "Embedding":
            out = nd.Embedding(nd.array(ids, dtype=id_dtype), w, rows, cols, sparse_grad=True)
        else:
            out = nd.take(w, nd.array(ids, dtype=id_dtype))
    out.backward(nd.array(head, dtype=dtype))
    flat = np.trunc(ids).astype(np.int64).reshape(-1)
    want = np.zeros((rows, cols), np.float64)
    np.add.at(want, flat, head.reshape(-1, cols).astype(np.float64))
    grad = w.grad
    assert grad.stype == "row_sparse" and grad.dtype == dtype
    np.testing.assert_array_equal(grad.indices.asnumpy(), np.unique(flat))
    tol = 1e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(grad.asnumpy().astype(np.float64), want, rtol=tol, atol=tol)


# -- Gluon -----------------------------------------------------------------------------------
def _loss(out):
    return (0.5 * out * out + out).sum()


def _sparse_model(weight: np.ndarray, optimizer: str, params: dict):
    emb = gluon.contrib.nn.SparseEmbedding(*weight.shape)
    initialize(emb.collect_params(), {emb.weight.name: weight})
    return emb, gluon.Trainer(emb.collect_params(), optimizer, dict(params))


def _whole(emb, trainer) -> np.ndarray:
    return emb.weight.row_sparse_data(nd.arange(emb.weight.shape[0])).asnumpy()


def _step(emb, trainer, batch) -> nd.NDArray:
    ids = nd.array(batch)
    with autograd.record():
        out = emb(ids)
        loss = _loss(out)
    loss.backward()
    trainer.step(len(batch))
    return out


@pytest.mark.parametrize("name", sorted(FIXTURE["training"]))
def test_sparse_embedding_trainer_matches_mxnet(name):
    fx, spec = FIXTURE, FIXTURE["trainers"][name]
    emb, trainer = _sparse_model(np.array(fx["weight"], np.float32), spec["optimizer"],
                                 spec["params"])
    for batch, want in zip(fx["batches"], fx["training"][name]):
        ids = nd.array(batch)
        with autograd.record():
            out = emb(ids)
            loss = _loss(out)
        loss.backward()
        grad = emb.weight.grad()
        assert (out.stype, grad.stype) == (want["out_stype"], want["grad_stype"])
        assert emb.weight.row_sparse_data(ids).indices.asnumpy().tolist() == want["pulled"]
        assert grad.indices.asnumpy().tolist() == want["grad_indices"]
        np.testing.assert_allclose(grad.data.asnumpy(), want["grad_data"], rtol=1e-5, atol=1e-6)
        trainer.step(len(batch))
        np.testing.assert_allclose(_whole(emb, trainer), want["weight"], rtol=1e-5, atol=1e-6)


def test_one_step_is_the_hand_computed_lazy_sgd_update():
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((10, 4)).astype(np.float32)
    lr, wd = 0.3, 0.2
    emb, trainer = _sparse_model(w0, "sgd", {"learning_rate": lr, "wd": wd})
    batch = [[7, 2, 7], [0, 2, 2]]
    _step(emb, trainer, batch)
    grad = np.zeros_like(w0, dtype=np.float64)
    for i in np.array(batch).reshape(-1):
        grad[i] += w0[i] + 1.0  # d/dw of 0.5 w² + w, once per lookup
    want = w0.astype(np.float64).copy()
    rows = [0, 2, 7]
    want[rows] -= lr * (grad[rows] / len(batch) + wd * w0[rows])
    np.testing.assert_allclose(_whole(emb, trainer), want, rtol=1e-5, atol=1e-6)
    untouched = [r for r in range(10) if r not in rows]
    np.testing.assert_array_equal(_whole(emb, trainer)[untouched], w0[untouched])


@settings(max_examples=8)
@given(st.sampled_from((("sgd", {"learning_rate": 0.2, "momentum": 0.9, "wd": 0.01}),
                        ("sgd", {"learning_rate": 0.2}),
                        ("adam", {"learning_rate": 0.05, "wd": 0.01}))),
       st.integers(1, 40), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_sparse_embedding_trains_as_dense_embedding_with_sparse_grad(spec, rows, cols, seed):
    optimizer, params = spec
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((rows, cols)).astype(np.float32)
    emb, trainer = _sparse_model(w0, optimizer, params)
    dense = gluon.nn.Embedding(rows, cols, sparse_grad=True)
    initialize(dense.collect_params(), {dense.weight.name: w0})
    dense_trainer = gluon.Trainer(dense.collect_params(), optimizer, dict(params))
    for _ in range(5):
        batch = rng.integers(0, rows, size=(int(rng.integers(1, 4)), 3)).tolist()
        out = _step(emb, trainer, batch)
        dense_out = _step(dense, dense_trainer, batch)
        np.testing.assert_allclose(out.asnumpy(), dense_out.asnumpy(), rtol=1e-5, atol=1e-6)
    assert dense.weight.grad().stype == emb.weight.grad().stype == "row_sparse"
    np.testing.assert_allclose(_whole(emb, trainer), dense.weight.data().asnumpy(), rtol=1e-5,
                               atol=1e-6)


# -- GPU -------------------------------------------------------------------------------------
@pytest.fixture(params=["host", "cuda"])
def gpu(request, monkeypatch):
    """``mx.gpu(0)`` emulated in host memory, or a real CUDA GPU (that run needs one)."""
    monkeypatch.setenv("SPARSEGEN_GPU", request.param)
    if request.param == "cuda":
        needs_cuda.gpu()
    return mx.gpu(0)


def test_row_sparse_embedding_on_the_gpu(gpu):
    dense = np.zeros((6, 3), np.float32)
    stored = np.array([1, 4])
    dense[stored] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    w = _rsp(dense, stored, ctx=gpu)
    ids = nd.array([[4, 0], [1, 4]], ctx=gpu)
    w.attach_grad(stype="row_sparse")
    with autograd.record():
        out = nd.Embedding(ids, w, 6, 3, sparse_grad=True)
    out.backward()
    assert out.context == gpu and isinstance(out._storage, DeviceArray)
    np.testing.assert_array_equal(out.asnumpy(), dense[[[4, 0], [1, 4]]])
    np.testing.assert_array_equal(w.grad.indices.asnumpy(), [0, 1, 4])
    np.testing.assert_array_equal(w.grad.data.asnumpy(), [[1.0] * 3, [1.0] * 3, [2.0] * 3])
    np.testing.assert_array_equal(nd.take(w, nd.array([9, 1], ctx=gpu)).asnumpy(),
                                  dense[[5, 1]])
    cube = nd.array(np.arange(24.0).reshape(4, 3, 2), ctx=gpu).tostype("row_sparse")
    np.testing.assert_array_equal(nd.take(cube, nd.array([3, 0], ctx=gpu)).asnumpy(),
                                  np.arange(24.0).reshape(4, 3, 2)[[3, 0]])
    with pytest.raises(InvalidIndex):
        nd.Embedding(nd.array([6], ctx=gpu), w, 6, 3)
