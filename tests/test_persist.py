"""mx.nd.save / load / load_frombuffer in MXNet 1.9.1's NDArray file format: files MXNet wrote
(tests/data, recorded by tests/data/record_ndarray_files.py) load to the values MXNet saved and
are written back byte for byte; round trips of every storage type and dtype; bad files raise
MXNetError naming the file; pickle."""

from __future__ import annotations

import copy
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.ndarray.persist import dumps

DATA = Path(__file__).parent / "data"
DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64")


@pytest.fixture(scope="module")
def expected():
    with np.load(DATA / "mxnet_files.npz") as f:
        return dict(f)


def _parts(array) -> dict[str, np.ndarray]:
    """An array's buffers as numpy (no kernel runs: sparse arrays are read part by part)."""
    if array.stype == "default":
        return {"values": array.asnumpy()}
    parts = {"data": array.data.asnumpy(), "indices": array.indices.asnumpy()}
    if array.stype == "csr":
        parts["indptr"] = array.indptr.asnumpy()
    return parts


def _dense_of(array) -> np.ndarray:
    """The dense values of an array, assembled on the host from its parts."""
    parts = _parts(array)
    if array.stype == "default":
        return parts["values"]
    out = np.zeros(array.shape, parts["data"].dtype)
    if array.stype == "row_sparse":
        out[parts["indices"]] = parts["data"]
    else:
        rows = np.repeat(np.arange(array.shape[0]), np.diff(parts["indptr"]))
        out[rows, parts["indices"]] = parts["data"]
    return out


def test_loads_a_dict_mxnet_wrote(expected):
    loaded = mx.nd.load(str(DATA / "mxnet_dict.params"))
    assert list(loaded) == ["dense32", "dense64", "int32", "rsp", "csr", "rsp_empty"]
    stypes = {"rsp": "row_sparse", "csr": "csr", "rsp_empty": "row_sparse"}
    for name, array in loaded.items():
        want = expected[f"dict_{name}"]
        assert array.stype == stypes.get(name, "default")
        assert array.dtype == want.dtype and array.shape == want.shape
        assert array.context == mx.cpu(0)
        np.testing.assert_array_equal(_dense_of(array), want)
    np.testing.assert_array_equal(loaded["rsp"].indices.asnumpy(), expected["dict_rsp_indices"])
    np.testing.assert_array_equal(loaded["csr"].indptr.asnumpy(), expected["dict_csr_indptr"])
    assert loaded["rsp_empty"].data.shape == (0, 2)


def test_loads_a_list_mxnet_wrote(expected):
    loaded = mx.nd.load(DATA / "mxnet_list.params")
    assert isinstance(loaded, list) and len(loaded) == 5
    for i, array in enumerate(loaded):
        want = expected[f"list_{i}"]
        assert array.dtype == want.dtype and array.shape == want.shape
        np.testing.assert_array_equal(_dense_of(array), want)
    assert loaded[4].stype == "csr"


@pytest.mark.parametrize("name", ["mxnet_dict.params", "mxnet_list.params"])
def test_writes_what_mxnet_wrote(name, tmp_path):
    """Saving what was loaded gives MXNet's file byte for byte (so MXNet reads ours)."""
    raw = (DATA / name).read_bytes()
    loaded = mx.nd.load_frombuffer(raw)
    assert dumps(loaded) == raw
    mx.nd.save(tmp_path / "again.params", loaded)
    assert (tmp_path / "again.params").read_bytes() == raw


def test_layout_of_one_dense_array():
    """The documented layout, written out by hand."""
    array = mx.nd.array([[1, 2, 3]], dtype="int32")
    want = (struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<Ii", 0xF993FAC9, 0)
            + struct.pack("<iqq", 2, 1, 3) + struct.pack("<iii", 1, 0, 4)
            + np.array([1, 2, 3], "<i4").tobytes() + struct.pack("<Q", 0))
    assert dumps(array) == want
    assert dumps([array]) == want
    v1 = (struct.pack("<QQQ", 0x112, 0, 1) + struct.pack("<I", 0xF993FAC8)
          + struct.pack("<iqq", 2, 1, 3) + struct.pack("<iii", 1, 0, 4)
          + np.array([1, 2, 3], "<i4").tobytes() + struct.pack("<Q", 0))
    (old,) = mx.nd.load_frombuffer(v1)  # version 1: no storage type
    np.testing.assert_array_equal(old.asnumpy(), [[1, 2, 3]])


@st.composite
def arrays(draw):
    """An array of any storage type and dtype, empty and zero-stored-row cases included."""
    stype = draw(st.sampled_from(["default", "row_sparse", "csr"]))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rows, cols = draw(st.integers(0, 5)), draw(st.integers(0 if stype == "default" else 1, 4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal((rows, cols)) * 50).astype(dtype)
    if stype == "default":
        shape = draw(st.sampled_from([(rows, cols), (rows * cols,), (rows, 1, cols)]))
        return mx.nd.array(values.reshape(shape), dtype=dtype)
    keep = rng.random(rows) < draw(st.sampled_from([0.0, 0.5, 1.0]))
    if stype == "row_sparse":
        ids = np.flatnonzero(keep)
        return mx.nd.sparse.row_sparse_array((values[ids], ids), shape=(rows, cols), dtype=dtype)
    mask = rng.random((rows, cols)) < 0.5
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))])
    return mx.nd.sparse.csr_matrix((values[mask], np.nonzero(mask)[1], indptr),
                                   shape=(rows, cols), dtype=dtype)


def _same(a, b) -> None:
    assert (type(a), a.stype, a.shape, a.dtype, a.context) == (
        type(b), b.stype, b.shape, b.dtype, b.context)
    for (name, x), (_, y) in zip(_parts(a).items(), _parts(b).items()):
        assert x.dtype == y.dtype and x.shape == y.shape, name
        np.testing.assert_array_equal(x, y)


@settings(max_examples=60)
@given(items=st.lists(arrays(), max_size=4), named=st.booleans())
def test_round_trip(items, named, tmp_path_factory):
    path = tmp_path_factory.mktemp("rt") / "x.params"
    data = {f"w{i}_é": a for i, a in enumerate(items)} if named else items
    mx.nd.save(str(path), data)
    loaded = mx.nd.load(str(path))
    if named and items:
        assert list(loaded) == list(data)
        for key in data:
            _same(loaded[key], data[key])
    else:
        assert loaded == [] if not items else isinstance(loaded, list)
        for a, b in zip(loaded, items):
            _same(a, b)
    assert mx.nd.load_frombuffer(path.read_bytes()).__class__ is loaded.__class__


def test_one_array_saves_as_a_list(tmp_path):
    mx.nd.save(tmp_path / "one", mx.nd.ones((2, 2)))
    (back,) = mx.nd.load(tmp_path / "one")
    np.testing.assert_array_equal(back.asnumpy(), np.ones((2, 2)))


def _sample_file() -> bytes:
    return (DATA / "mxnet_dict.params").read_bytes()


def test_every_truncation_raises_naming_the_file(tmp_path):
    raw = _sample_file()
    path = tmp_path / "cut.params"
    for size in range(len(raw)):
        path.write_bytes(raw[:size])
        with pytest.raises(mx.MXNetError, match="cut.params"):
            mx.nd.load(str(path))


def _patched(raw: bytes, offset: int, fmt: str, value: int) -> bytes:
    return raw[:offset] + struct.pack(fmt, value) + raw[offset + struct.calcsize(fmt):]


@pytest.mark.parametrize("offset, fmt, value, message", [
    (0, "<Q", 0x113, "file header"),
    (24, "<I", 0xF993FAD0, "magic"),
    (28, "<i", 7, "storage type"),
    (32, "<i", -1, "dimensions"),
    (16, "<Q", 2**40, "claims"),
])
def test_bad_headers(tmp_path, offset, fmt, value, message):
    path = tmp_path / "bad.params"
    path.write_bytes(_patched(_sample_file(), offset, fmt, value))
    with pytest.raises(mx.MXNetError, match=message) as info:
        mx.nd.load(str(path))
    assert "bad.params" in str(info.value)


def test_bad_contents():
    good = dumps(mx.nd.sparse.csr_matrix(([1.0], [1], [0, 1]), shape=(1, 2)))
    column = good.rfind(struct.pack("<q", 1))  # the csr's one column id, stored last
    with pytest.raises(mx.MXNetError, match="invalid"):
        mx.nd.load_frombuffer(_patched(good, column, "<q", 5))  # out of range
    dense = dumps(mx.nd.array([1.0]))
    flag = 24 + 8 + 12 + 8  # file header, magic and storage type, shape (1,), context
    with pytest.raises(mx.MXNetError, match="dtype flag 12"):
        mx.nd.load_frombuffer(_patched(dense, flag, "<i", 12))  # bfloat16: no arrays for it
    named = dumps({"a": mx.nd.array([1.0])})
    with pytest.raises(mx.MXNetError, match="UTF-8"):
        mx.nd.load_frombuffer(named[:-1] + b"\xff")


def test_argument_errors(tmp_path):
    with pytest.raises(mx.MXNetError, match="no-such"):
        mx.nd.load(str(tmp_path / "no-such"))
    with pytest.raises(TypeError):
        mx.nd.load(3)
    with pytest.raises(TypeError):
        mx.nd.load_frombuffer(3)
    with pytest.raises(ValueError):
        mx.nd.save(tmp_path / "x", (mx.nd.ones(1),))
    with pytest.raises(TypeError):
        mx.nd.save(tmp_path / "x", {1: mx.nd.ones(1)})
    with pytest.raises(TypeError):
        mx.nd.save(tmp_path / "x", [mx.nd.ones(1), np.ones(1)])
    with pytest.raises(ValueError):
        mx.nd.save(tmp_path / "x", mx.nd.array(1.0))  # 0-d: the format has none
    with pytest.raises(mx.MXNetError, match="cannot write"):
        mx.nd.save(tmp_path / "missing-dir" / "x", mx.nd.ones(1))


def test_gpu_arrays_save_load_and_pickle(monkeypatch, tmp_path):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    dense = np.array([[0, 1.5], [0, 0], [2, 0]], np.float32)
    on_gpu = mx.nd.sparse.row_sparse_array((dense[[0, 2]], [0, 2]), shape=(3, 2), ctx=mx.gpu(1))
    mx.nd.save(tmp_path / "g", [on_gpu])
    (back,) = mx.nd.load(tmp_path / "g")
    assert back.context == mx.gpu(1) and back.stype == "row_sparse"
    np.testing.assert_array_equal(_dense_of(back), dense)
    again = pickle.loads(pickle.dumps(on_gpu))
    assert again.context == mx.gpu(1)
    np.testing.assert_array_equal(_dense_of(again), dense)


@pytest.mark.parametrize("make", [
    lambda: mx.nd.array([[1, 2], [3, 4]], dtype="int64"),
    lambda: mx.nd.sparse.csr_matrix(([1.0], [1], [0, 1, 1]), shape=(2, 2)),
    lambda: mx.nd.sparse.row_sparse_array(([[5.0, 0]], [1]), shape=(2, 2), dtype="float64"),
])
def test_pickle_and_deepcopy(make):
    array = make()
    for back in (pickle.loads(pickle.dumps(array)), copy.deepcopy(array)):
        _same(back, array)


def test_numpy_shape_semantics_save_version_3(tmp_path):
    # MXNet 1.9.1's rules (its test_save_load_scalar_zero_size_ndarrays): under np_shape(True)
    # arrays are saved as version 3 (0-d ones too, dense only) and load only under it; files
    # saved outside it load only outside it
    values = [np.arange(6.0).reshape(2, 3), np.zeros((0, 4)), np.float64(7.0)]
    with mx.np_shape(True):
        mx.nd.save(tmp_path / "v3", [mx.nd.array(v, dtype="float64") for v in values])
        loaded = mx.nd.load(tmp_path / "v3")
        with pytest.raises(ValueError, match="dense arrays only"):
            mx.nd.save(tmp_path / "s", mx.nd.sparse.zeros("csr", (2, 2)))
    assert (tmp_path / "v3").read_bytes()[24:28] == struct.pack("<I", 0xF993FACA)
    for got, want in zip(loaded, values):
        assert got.shape == np.shape(want)
        np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(mx.MXNetError, match=r"inside mx.np_shape\(True\)"):
        mx.nd.load(tmp_path / "v3")
    mx.nd.save(tmp_path / "v2", [mx.nd.zeros((2, 0, 1))])
    assert (tmp_path / "v2").read_bytes()[24:28] == struct.pack("<I", 0xF993FAC9)
    assert mx.nd.load(tmp_path / "v2")[0].shape == (2, 0, 1)
    with mx.np_shape(True), pytest.raises(mx.MXNetError, match=r"outside mx.np_shape\(True\)"):
        mx.nd.load(tmp_path / "v2")
