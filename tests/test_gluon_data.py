"""mx.gluon.data and mx.gluon.utils: datasets, samplers and DataLoader batches (dense and csr)
against numpy / scipy rows and hand-computed orders; split_and_load and clip_global_norm
against numpy."""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import gluon
from sparsegen.gluon.data import (ArrayDataset, BatchSampler, DataLoader, RandomSampler,
                                  SequentialSampler, SimpleDataset, default_batchify_fn)

MODES = ("keep", "discard", "rollover")


def expected_batches(order: list[int], batch_size: int, last_batch: str) -> list[list[int]]:
    """The id lists of one pass over ``order`` (no rows carried in), by hand."""
    full = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    if full and len(full[-1]) < batch_size and last_batch != "keep":
        full.pop()
    return full


def scipy_csr(rows: int, cols: int, seed: int) -> scipy.sparse.csr_matrix:
    """A float32 csr matrix with about a third of its entries stored and row 1 empty."""
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((rows, cols)).astype(np.float32)
    dense[rng.random((rows, cols)) < 0.65] = 0
    if rows > 1:
        dense[1] = 0
    return scipy.sparse.csr_matrix(dense)


# -- samplers ----------------------------------------------------------------------------------
@settings(max_examples=40)
@given(st.integers(0, 23), st.integers(1, 7), st.sampled_from(MODES))
def test_batch_sampler_passes(length, batch_size, last_batch):
    sampler = BatchSampler(SequentialSampler(length), batch_size, last_batch)
    first = expected_batches(list(range(length)), batch_size, last_batch)
    assert len(sampler) == len(first) and list(sampler) == first
    left = length % batch_size if last_batch == "rollover" else 0
    carried = list(range(length - left, length)) + list(range(length))
    second = expected_batches(carried, batch_size, last_batch)
    assert len(sampler) == len(second) and list(sampler) == second


def test_sequential_sampler_start_and_bad_arguments():
    assert list(SequentialSampler(3, start=4)) == [4, 5, 6]
    with pytest.raises(mx.MXNetError, match="length"):
        SequentialSampler(-1)
    with pytest.raises(ValueError, match="last_batch.*'pad'"):
        BatchSampler(SequentialSampler(4), 2, "pad")
    with pytest.raises(mx.MXNetError, match="batch_size"):
        BatchSampler(SequentialSampler(4), 0)


def test_random_sampler_follows_mx_random_seed():
    mx.random.seed(11)
    np.random.seed(0)
    first = list(RandomSampler(20))
    second = list(RandomSampler(20))
    mx.random.seed(11)
    np.random.seed(1)  # numpy's global state plays no part
    assert list(RandomSampler(20)) == first
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != second  # a new order each pass (equal with probability 1/20!)
    assert list(RandomSampler(0)) == [] and list(RandomSampler(1)) == [0]


# -- datasets ----------------------------------------------------------------------------------
def test_dataset_views():
    data = SimpleDataset(list(range(10)))
    assert list(data.filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert list(data.take(4)) == [0, 1, 2, 3] and len(data.take(None)) == 10
    assert list(data.take(99)) == list(range(10))
    assert list(data.transform(lambda x: x * x)) == [x * x for x in range(10)]
    assert list(data.transform(lambda x: -x, lazy=False)) == [-x for x in range(10)]
    assert list(data.sample(SequentialSampler(3, 5))) == [5, 6, 7]
    pairs = ArrayDataset(list(range(4)), list("abcd"))
    assert list(pairs.transform_first(lambda x: x + 10)) == [(10, "a"), (11, "b"), (12, "c"),
                                                            (13, "d")]
    assert list(pairs.transform(lambda x, y: y * x)) == ["", "b", "cc", "ddd"]
    with pytest.raises(TypeError, match="Sampler"):
        data.sample([1, 2])


@settings(max_examples=25)
@given(st.integers(0, 17), st.integers(1, 6))
def test_shards_cover_the_dataset(length, num_shards):
    data = SimpleDataset(list(range(length)))
    shards = [list(data.shard(num_shards, i)) for i in range(num_shards)]
    assert sum(shards, []) == list(range(length))
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    assert [len(s) for s in shards] == sorted((len(s) for s in shards), reverse=True)


def test_shard_and_array_dataset_errors():
    data = SimpleDataset([1, 2, 3])
    with pytest.raises(ValueError, match="index must be below num_shards = 2, got 2"):
        data.shard(2, 2)
    with pytest.raises(mx.MXNetError, match="num_shards"):
        data.shard(0, 0)
    with pytest.raises(ValueError, match="array 0 has length 3, array 1 has 2"):
        ArrayDataset(np.zeros((3, 2)), [1, 2])
    with pytest.raises(mx.MXNetError, match="at least one array"):
        ArrayDataset()


def test_array_dataset_samples_as_mxnet():
    """A 1-D NDArray reads as numpy (numpy scalar samples); a csr sample is a (1, n) csr row."""
    matrix = scipy_csr(3, 4, 0)
    data = ArrayDataset(mx.nd.sparse.csr_matrix(matrix), mx.nd.array([5, 6, 7]),
                        mx.nd.array(np.arange(6).reshape(3, 2)))
    row, label, dense = data[2]
    assert isinstance(row, mx.nd.sparse.CSRNDArray) and row.shape == (1, 4)
    np.testing.assert_array_equal(row.asnumpy(), matrix[2].toarray())
    assert type(label) is np.float32 and label == 7
    np.testing.assert_array_equal(dense.asnumpy(), [4, 5])


# -- DataLoader --------------------------------------------------------------------------------
@settings(max_examples=20)
@given(st.integers(1, 13), st.integers(1, 5), st.sampled_from(MODES))
def test_loader_dense_batches(length, batch_size, last_batch):
    features = np.arange(length * 3, dtype=np.float32).reshape(length, 3) - 7.5
    labels = list(range(100, 100 + length))
    loader = DataLoader(ArrayDataset(mx.nd.array(features), labels), batch_size,
                        last_batch=last_batch)
    want = expected_batches(list(range(length)), batch_size, last_batch)
    assert len(loader) == len(want)
    got = list(loader)
    assert len(got) == len(want)
    for (x, y), ids in zip(got, want):
        np.testing.assert_array_equal(x.asnumpy(), features[ids])
        assert y.dtype == np.int64 and y.asnumpy().tolist() == [100 + i for i in ids]


@settings(max_examples=12)
@given(st.integers(1, 9), st.integers(1, 4), st.integers(0, 3))
def test_loader_csr_batches_are_scipy_rows(rows, batch_size, seed):
    matrix = scipy_csr(rows, 5, seed)
    csr = mx.nd.sparse.csr_matrix(matrix)
    # ArrayDataset takes a batch's rows at once; a batchify_fn given is called with the samples
    for loader in (DataLoader(ArrayDataset(csr), batch_size),
                   DataLoader(ArrayDataset(csr), batch_size, batchify_fn=default_batchify_fn)):
        got = list(loader)
        for batch, ids in zip(got, expected_batches(list(range(rows)), batch_size, "keep")):
            assert isinstance(batch, mx.nd.sparse.CSRNDArray) and batch.shape == (len(ids), 5)
            want = matrix[ids]
            np.testing.assert_array_equal(batch.indptr.asnumpy(), want.indptr)
            np.testing.assert_array_equal(batch.indices.asnumpy(), want.indices)
            np.testing.assert_array_equal(batch.data.asnumpy(), want.data)


def test_loader_shuffle_is_seeded_permutation():
    data = ArrayDataset(mx.nd.array(np.arange(22, dtype=np.float32).reshape(11, 2)),
                        np.arange(11))
    mx.random.seed(5)
    epochs = [[(x.asnumpy(), y.asnumpy()) for x, y in DataLoader(data, 4, shuffle=True)]
              for _ in range(2)]
    mx.random.seed(5)
    again = [(x.asnumpy(), y.asnumpy()) for x, y in DataLoader(data, 4, shuffle=True)]
    order = np.concatenate([y for _, y in epochs[0]])
    assert sorted(order.tolist()) == list(range(11))
    for (x, y), (x2, y2) in zip(epochs[0], again):
        np.testing.assert_array_equal(x, np.stack([2 * y, 2 * y + 1], axis=1))
        np.testing.assert_array_equal(y, y2)
        np.testing.assert_array_equal(x, x2)
    assert not np.array_equal(order, np.concatenate([y for _, y in epochs[1]]))


def test_loader_rollover_carries_to_next_epoch():
    loader = DataLoader(SimpleDataset(list(range(7))), 3, last_batch="rollover")
    assert [b.asnumpy().tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    assert len(loader) == 2  # 1 carried + 7
    assert [b.asnumpy().tolist() for b in loader] == [[6, 0, 1], [2, 3, 4]]


def test_loader_samplers_batchify_and_pinning():
    data = SimpleDataset([(np.float64(i) / 2, i) for i in range(5)])
    loader = DataLoader(data, batch_sampler=[[4, 0], [2]], pin_memory=True)
    (halves, ints), (half, one) = list(loader)
    assert halves.dtype == np.float64 and halves.asnumpy().tolist() == [2.0, 0.0]
    assert ints.dtype == np.int64 and ints.asnumpy().tolist() == [4, 0]
    assert halves.context == mx.cpu_pinned(0) and one.asnumpy().tolist() == [2]
    reversed_loader = DataLoader(data, 2, sampler=[3, 1, 0], batchify_fn=lambda s: s)
    assert list(reversed_loader) == [[data[3], data[1]], [data[0]]]
    threads = DataLoader(np.arange(5), 5, num_workers=2, thread_pool=True, prefetch=3)
    assert [b.asnumpy().tolist() for b in threads] == [[0, 1, 2, 3, 4]]


def test_loader_argument_errors():
    data = np.arange(4)
    for kwargs, match in [({}, "batch_size must be specified"),
                          ({"batch_size": 2, "shuffle": True, "sampler": [0]}, "shuffle"),
                          ({"batch_size": 2, "batch_sampler": [[0]]}, "batch_sampler"),
                          ({"batch_size": 2, "last_batch": "pad"}, "last_batch"),
                          ({"batch_size": 2, "timeout": 0}, "timeout")]:
        with pytest.raises(mx.MXNetError, match=match):
            DataLoader(data, **kwargs)
    with pytest.raises(ValueError):
        DataLoader(data)


def test_loader_on_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    matrix = scipy_csr(5, 3, 1)
    dense = np.arange(10, dtype=np.float32).reshape(5, 2)
    data = ArrayDataset(mx.nd.sparse.csr_matrix(matrix, ctx=mx.gpu(0)),
                        mx.nd.array(dense, ctx=mx.gpu(0)))
    for (rows, x), ids in zip(DataLoader(data, 3), ([0, 1, 2], [3, 4])):
        assert rows.context == mx.gpu(0) and x.context == mx.gpu(0)
        np.testing.assert_array_equal(rows.asnumpy(), matrix[ids].toarray())
        np.testing.assert_array_equal(x.asnumpy(), dense[ids])
    parts = gluon.utils.split_and_load(mx.nd.array(dense), [mx.gpu(0), mx.gpu(1)],
                                       even_split=False)
    assert [p.context for p in parts] == [mx.gpu(0), mx.gpu(1)]
    np.testing.assert_array_equal(parts[1].asnumpy(), dense[3:])


# -- gluon.utils -------------------------------------------------------------------------------
@settings(max_examples=20)
@given(st.integers(0, 9), st.integers(1, 5), st.sampled_from([0, 1, -1]))
def test_split_and_load_matches_array_split(size, num, axis):
    values = np.arange(size * 2 * 3, dtype=np.float32).reshape(size, 2, 3)
    values = np.moveaxis(values, 0, axis)
    ctxs = [mx.cpu(i) for i in range(num)]
    if size % num:
        with pytest.raises(ValueError, match="cannot be evenly split"):
            gluon.utils.split_and_load(mx.nd.array(values), ctxs, batch_axis=axis)
    parts = gluon.utils.split_and_load(values, ctxs, batch_axis=axis, even_split=False)
    want = np.array_split(values, num, axis=axis)
    assert [p.context for p in parts] == ctxs
    for part, expect in zip(parts, want):
        assert part.shape == expect.shape
        np.testing.assert_array_equal(part.asnumpy(), expect)


def test_split_data_csr_and_errors():
    matrix = scipy_csr(5, 3, 2)
    parts = gluon.utils.split_data(mx.nd.sparse.csr_matrix(matrix), 2, even_split=False)
    assert [p.stype for p in parts] == ["csr", "csr"]
    np.testing.assert_array_equal(parts[0].asnumpy(), matrix[:3].toarray())
    np.testing.assert_array_equal(parts[1].asnumpy(), matrix[3:].toarray())
    x = mx.nd.ones((4, 2))
    with pytest.raises(mx.MXNetError, match="num_slice"):
        gluon.utils.split_data(x, 0)
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        gluon.utils.split_data(x, 2, batch_axis=2)
    with pytest.raises(ValueError, match="ctx_list"):
        gluon.utils.split_and_load(x, [])


def test_clip_global_norm_against_numpy():
    rng = np.random.default_rng(3)
    dense = rng.standard_normal((3, 4)).astype(np.float32)
    vector = rng.standard_normal(5).astype(np.float32)
    matrix = scipy_csr(4, 3, 3)
    rsp = np.zeros((4, 2), np.float32)
    rsp[[0, 3]] = [[1.5, -2], [0.5, 3]]
    total = np.sqrt(sum(float(np.sum(np.square(a, dtype=np.float64)))
                        for a in (dense, vector, matrix.toarray(), rsp)))
    arrays = [mx.nd.array(dense), mx.nd.array(vector), mx.nd.sparse.csr_matrix(matrix),
              mx.nd.array(rsp).tostype("row_sparse")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no storage fallback: sparse arrays stay sparse
        got = gluon.utils.clip_global_norm(arrays, 2.0)
    assert isinstance(got, np.float32) and got == pytest.approx(total, rel=1e-5)  # as MXNet
    scale = 2.0 / (total + 1e-8)
    for array, want in zip(arrays, (dense, vector, matrix.toarray(), rsp)):
        np.testing.assert_allclose(array.asnumpy(), want * scale, rtol=1e-5)
    assert [a.stype for a in arrays] == ["default", "default", "csr", "row_sparse"]
    small = mx.nd.array([0.3, -0.4])
    norm = gluon.utils.clip_global_norm([small], 1.0, check_isfinite=False)
    assert isinstance(norm, mx.nd.NDArray) and norm.shape == (1,)
    np.testing.assert_allclose(norm.asnumpy(), [0.5], rtol=1e-6)
    np.testing.assert_allclose(small.asnumpy(), [0.3, -0.4], rtol=1e-6)  # under max_norm: kept


def test_clip_global_norm_warns_and_refuses():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert np.isinf(gluon.utils.clip_global_norm([mx.nd.array([np.inf, 1])], 1.0))
    assert any("nan or inf" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="non-empty list"):
        gluon.utils.clip_global_norm([], 1.0)


def test_check_sha1_and_download(tmp_path):
    path = tmp_path / "blob"
    path.write_bytes(b"sparse" * 1000)
    assert gluon.utils.check_sha1(str(path), hashlib.sha1(b"sparse" * 1000).hexdigest())
    assert not gluon.utils.check_sha1(str(path), "0" * 40)
    with pytest.raises(mx.MXNetError, match="does not download"):
        gluon.utils.download("https://example.com/x.params")
