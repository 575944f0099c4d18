"""mx.io: NDArrayIter against a plain-Python oracle of MXNet 1.9.1's batching rules, CSVIter,
DataDesc / DataBatch, ResizeIter and PrefetchingIter, and the iterators' batches on GPU arrays."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx

HANDLES = ("pad", "discard", "roll_over")


def oracle_epochs(n: int, bs: int, handle: str, shuffle: bool, epochs: int, seed: int):
    """Each epoch's batches as (row ids, pad), by MXNet 1.9.1's rules written as a stream.

    The order starts as 0..n-1; with ``shuffle`` every reset (the first at construction) draws
    ``np.random.shuffle(idx)`` and reorders the current order by ``idx``. ``pad``: the last short
    batch is completed cyclically from the start of the order. ``discard``: full batches only.
    ``roll_over``: a short last batch is kept and begins the next epoch (its pad: the rows kept).
    """
    np.random.seed(seed)
    idx, order = list(range(n)), list(range(n))
    leftover: list[int] = []
    result = []
    for _ in range(epochs):
        if shuffle:
            shuffled = np.array(idx)
            np.random.shuffle(shuffled)
            idx = shuffled.tolist()
            order = [order[i] for i in idx]
        stream = (leftover + order) if handle == "roll_over" else list(order)
        kept = len(leftover)
        batches = []
        full = len(stream) // bs
        for b in range(full):
            pad = kept if (handle == "roll_over" and b == 0 and kept) else 0
            batches.append((stream[b * bs : (b + 1) * bs], pad))
        rest = stream[full * bs :]
        if handle == "pad" and rest:
            need = bs - len(rest)
            batches.append((rest + [order[k % n] for k in range(need)], need))
        leftover = rest if handle == "roll_over" else []
        result.append(batches)
    return result


def _epochs(it, epochs: int):
    out = []
    for _ in range(epochs):
        out.append(list(it))
        it.reset()
    return out


@settings(max_examples=60)
@given(n=st.integers(1, 23), bs=st.integers(1, 9), handle=st.sampled_from(HANDLES),
       shuffle=st.booleans(), labelled=st.booleans(), seed=st.integers(0, 2**16))
def test_ndarray_iter_batches_as_mxnet(n, bs, handle, shuffle, labelled, seed):
    data = np.arange(n * 4, dtype=np.float32).reshape(n, 2, 2)
    label = np.arange(n, dtype=np.float32) * 10 if labelled else None
    expected = oracle_epochs(n, bs, handle, shuffle, 3, seed)  # seeds numpy's global generator
    np.random.seed(seed)
    it = mx.io.NDArrayIter(data, label, bs, shuffle=shuffle, last_batch_handle=handle)
    got = _epochs(it, 3)
    for epoch, batches in zip(expected, got):
        assert len(batches) == len(epoch)
        for (ids, pad), batch in zip(epoch, batches):
            assert batch.pad == pad and batch.index is None
            np.testing.assert_array_equal(batch.data[0].asnumpy(), data[ids])
            if labelled:
                np.testing.assert_array_equal(batch.label[0].asnumpy(), label[ids])
            else:
                assert batch.label == []


@settings(max_examples=25)
@given(n=st.integers(1, 17), cols=st.integers(1, 6), bs=st.integers(1, 7),
       shuffle=st.booleans(), density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 99))
def test_ndarray_iter_csr_discard(n, cols, bs, shuffle, density, seed):
    rng = np.random.default_rng(seed)
    dense = (rng.standard_normal((n, cols)) * (rng.random((n, cols)) < density)).astype(np.float32)
    sources = {"csr": mx.nd.sparse.csr_matrix(dense), "scipy": scipy.sparse.csr_matrix(dense),
               "dense": dense}
    expected = oracle_epochs(n, bs, "discard", shuffle, 2, seed)
    np.random.seed(seed)
    it = mx.io.NDArrayIter(sources, mx.nd.sparse.csr_matrix(dense), bs, shuffle=shuffle,
                           last_batch_handle="discard")
    assert [d.name for d in it.provide_data] == ["csr", "dense", "scipy"]
    for epoch, batches in zip(expected, _epochs(it, 2)):
        assert len(batches) == len(epoch) == n // bs
        for (ids, _), batch in zip(epoch, batches):
            stypes = [d.stype for d in batch.data]
            assert stypes == ["csr", "default", "csr"] and batch.label[0].stype == "csr"
            for array in batch.data + batch.label:
                np.testing.assert_array_equal(array.asnumpy(), dense[ids])
            batch.data[0].check_format()


def test_ndarray_iter_names_shapes_and_refusals():
    data = np.zeros((10, 3), np.float64)
    it = mx.io.NDArrayIter([data, data], np.ones(10), 4)
    assert [d.name for d in it.provide_data] == ["_0_data", "_1_data"]
    assert it.provide_data[0].shape == (4, 3) and it.provide_data[0].dtype == np.float32
    assert it.provide_label[0] == ("softmax_label", (4,))
    it = mx.io.NDArrayIter({"x": mx.nd.array(data, dtype="float64")}, batch_size=3,
                           label_name="y", data_name="ignored")
    assert it.provide_data[0].dtype == np.float64 and it.provide_label == []
    csr = mx.nd.sparse.csr_matrix(data)
    for handle in ("pad", "roll_over"):
        with pytest.raises(NotImplementedError):
            mx.io.NDArrayIter({"data": csr}, data, 3, last_batch_handle=handle)
        with pytest.raises(mx.MXNetError):
            mx.io.NDArrayIter(data, scipy.sparse.csr_matrix(data), 3, last_batch_handle=handle)
    for bad in ({"batch_size": 0}, {"batch_size": 2.5}, {"last_batch_handle": "keep"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            mx.io.NDArrayIter(data, **bad)
    with pytest.raises(ValueError, match="rows"):
        mx.io.NDArrayIter({"a": data, "b": data[:5]})
    with pytest.raises(TypeError):
        mx.io.NDArrayIter({"a": object()})
    with pytest.warns(mx.StorageFallbackWarning):
        it = mx.io.NDArrayIter(mx.nd.sparse.row_sparse_array(data), batch_size=4)
    assert it.next().data[0].stype == "default"
    it = mx.io.NDArrayIter(data, batch_size=4)
    with pytest.raises(mx.MXNetError, match="no current batch"):
        it.getdata()


def test_ndarray_iter_corner_case_pad_longer_than_data():
    it = mx.io.NDArrayIter(np.arange(10), batch_size=205, last_batch_handle="pad")
    expected = np.concatenate((np.tile(np.arange(10), 20), np.arange(5)))
    batch = it.next()
    np.testing.assert_array_equal(batch.data[0].asnumpy(), expected)
    assert batch.pad == 195


def test_data_desc_and_batch():
    desc = mx.io.DataDesc("x", (2, 3), "float64", "NTC")
    assert desc == ("x", (2, 3)) and desc.dtype == "float64" and desc.layout == "NTC"
    assert repr(desc) == "DataDesc[x,(2, 3),float64,NTC]"
    assert mx.io.DataDesc.get_batch_axis("TNC") == 1 and mx.io.DataDesc.get_batch_axis(None) == 0
    descs = mx.io.DataDesc.get_list([("a", (1,)), ("b", (2,))], [("a", "int32"), ("b", "uint8")])
    assert [(d.name, d.dtype) for d in descs] == [("a", "int32"), ("b", "uint8")]
    assert mx.io.DataDesc.get_list([("a", (1,))], None)[0].dtype == np.float32
    batch = mx.io.DataBatch(data=[mx.nd.ones((2, 3)), mx.nd.ones((7, 8))],
                            label=[mx.nd.ones((4, 5))])
    assert str(batch) == "DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]"
    assert str(mx.io.DataBatch([mx.nd.ones((2, 3))])).endswith("label shapes: None")
    with pytest.raises(TypeError):
        mx.io.DataBatch(mx.nd.ones((2, 3)))


def _csv(path, rows):
    path.write_text("".join(",".join(str(v) for v in row) + "\n" for row in rows))
    return str(path)


@pytest.mark.parametrize("dtype, value", [("float32", "1.5"),
                                          ("int64", "2147483648")])
def test_csv_iter_values_and_dtypes(tmp_path, dtype, value):
    data = _csv(tmp_path / "d.csv", [[value] * 6 for _ in range(7)])
    label = _csv(tmp_path / "l.csv", [[i] for i in range(7)])
    it = mx.io.CSVIter(data_csv=data, data_shape=(2, 3), label_csv=label, batch_size=3,
                       dtype=dtype)
    assert it.provide_data[0].shape == (3, 2, 3) and it.provide_label[0].shape == (3,)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    for b in batches:
        assert b.data[0].dtype == np.dtype(dtype) and b.label[0].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(b.data[0].asnumpy(),
                                      np.full((3, 2, 3), np.dtype(dtype).type(value)))
    np.testing.assert_array_equal(batches[2].label[0].asnumpy(), [6, 0, 1])


def test_csv_iter_round_batch_as_mxnet(tmp_path):
    # MXNet 1.9.1's CSVIter docstring example: 4 rows, batch_size 3
    rows = [[1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    path = _csv(tmp_path / "d.csv", rows)
    it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=3)
    first = [b.data[0].asnumpy().tolist() for b in it]
    assert first == [rows[0:3], [rows[3], rows[0], rows[1]]]
    it.reset()
    assert [b.data[0].asnumpy().tolist() for b in it] == [[rows[2], rows[3], rows[0]]]
    it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=3, round_batch=False)
    for _ in range(2):
        batches = list(it)
        assert [b.pad for b in batches] == [0, 2] and batches[1].index.tolist() == [3, 1, 2]
        np.testing.assert_array_equal(batches[0].label[0].asnumpy(), np.zeros(3))
        it.reset()
    with pytest.raises(ValueError, match="values a line"):
        mx.io.CSVIter(data_csv=path, data_shape=(4,), batch_size=3)
    with pytest.raises(mx.MXNetError, match="cannot find"):
        mx.io.CSVIter(data_csv=str(tmp_path / "missing.csv"), data_shape=(3,), batch_size=3)


def test_resize_and_prefetching_iters():
    data = np.arange(40, dtype=np.float32).reshape(20, 2)
    resized = mx.io.ResizeIter(mx.io.NDArrayIter(data, batch_size=6), 5)
    got = [b.data[0].asnumpy()[:, 0].tolist() for b in resized]
    assert len(got) == 5 and got[3] == [36.0, 38.0, 0.0, 2.0, 4.0, 6.0]
    assert got[4] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]  # the inner iterator restarted
    resized.reset()
    assert resized.next().data[0].shape == (6, 2) and resized.getpad() == 0
    first = mx.io.NDArrayIter({"data": data}, batch_size=5)
    second = mx.io.NDArrayIter({"data": data * 2}, np.arange(20), batch_size=5)
    pre = mx.io.PrefetchingIter([first, second], rename_data=[{"data": "a"}, {"data": "b"}])
    assert [d.name for d in pre.provide_data] == ["a", "b"] and pre.batch_size == 5
    for _ in range(2):
        batches = list(pre)
        assert len(batches) == 4
        for k, b in enumerate(batches):
            np.testing.assert_array_equal(b.data[0].asnumpy(), data[5 * k : 5 * k + 5])
            np.testing.assert_array_equal(b.data[1].asnumpy(), 2 * data[5 * k : 5 * k + 5])
            np.testing.assert_array_equal(b.label[0].asnumpy(), np.arange(5 * k, 5 * k + 5))
        pre.reset()
    short = mx.io.PrefetchingIter([mx.io.NDArrayIter(data, batch_size=5),
                                   mx.io.NDArrayIter(data[:10], batch_size=5)])
    with pytest.raises(mx.MXNetError, match="numbers of batches|do not match"):
        list(short)


def test_iterators_on_gpu_arrays(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    dense = np.arange(24, dtype=np.float32).reshape(8, 3)
    dense[::3] = 0
    gpu_dense = mx.nd.array(dense, ctx=mx.gpu(0))
    gpu_csr = mx.nd.sparse.csr_matrix(dense, ctx=mx.gpu(0))
    expected = oracle_epochs(8, 3, "discard", True, 1, 3)[0]
    np.random.seed(3)
    it = mx.io.NDArrayIter({"a": gpu_dense, "b": gpu_csr}, batch_size=3, shuffle=True,
                           last_batch_handle="discard")
    batches = list(it)
    for (ids, _), batch in zip(expected, batches):
        for array in batch.data:
            assert array.context == mx.gpu(0)
            np.testing.assert_array_equal(array.asnumpy(), dense[ids])
    assert len(batches) == 2


_EXIT_WHILE_READING = """
import sys, time
import numpy as np
import sparsegen as mx
rng = np.random.default_rng(0)
with open(sys.argv[1], "w") as f:
    for _ in range(4000):
        ids = np.unique(rng.integers(0, 100_000, 30))
        f.write("1 " + " ".join(f"{i}:1" for i in ids) + "\\n")
it = mx.io.PrefetchingIter(mx.io.LibSVMIter(data_libsvm=sys.argv[1], data_shape=(100_000,),
                                            batch_size=500))
for _ in it:
    pass
it.reset()  # its thread parses the next epoch's first batch on the libsvm kernel ...
start = time.perf_counter()
while time.perf_counter() - start < 0.005:  # ... as the interpreter exits
    pass
"""


def test_prefetching_iter_exits_cleanly_while_its_thread_reads(tmp_path):
    # a read still inside a kernel as the interpreter ended aborted the process (SIGABRT: the
    # C++ runtime's 'terminate called without an active exception') in most runs; a stop that
    # arrives during a read must not be lost either (the exit then waits out JOIN_SECONDS)
    import subprocess
    import sys

    from sparsegen.io.wrappers import JOIN_SECONDS

    for run in range(3):
        done = subprocess.run([sys.executable, "-c", _EXIT_WHILE_READING,
                               str(tmp_path / "d.libsvm")], capture_output=True, text=True,
                              timeout=0.8 * JOIN_SECONDS)
        assert done.returncode == 0, f"run {run}: exit status {done.returncode}: {done.stderr}"
