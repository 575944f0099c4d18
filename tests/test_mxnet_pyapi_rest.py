"""The last pure-Python names of MXNet 1.9.1's API (issue 38): ``mx.nd.utils``, ``mx.io.io``,
``mx.io.utils``, ``mx.io.MXDataIter`` and ``mx.operator``'s registry queries. Oracles: numpy and
scipy, literals MXNet 1.9.1 returned (/work/mxvenv/bin/python, quoted where used) and MXNet's
recorded census (tests/fixtures/mxnet_census.json)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.io.io import DataIter, MXDataIter
from sparsegen.io.utils import (_getdata_by_idx, _has_instance, _init_data,
                                _slice_along_batch_axis)
from sparsegen.mxnet_operators import MXNET_OPERATORS
from sparsegen.operator import (OperatorArguments, get_all_registered_operators,
                                get_operator_arguments)
from test_mxnet_census import has_operator

CENSUS = json.loads((Path(__file__).resolve().parent / "fixtures" / "mxnet_census.json")
                    .read_text())

# -- mx.nd.utils ---------------------------------------------------------------------------


def test_nd_utils_is_mxnets_module_of_the_same_functions():
    utils = mx.nd.utils
    assert sorted(utils.__all__) == sorted(CENSUS["namespaces"]["mxnet.ndarray.utils"])
    for name in utils.__all__:  # MXNet: mx.nd.<name> is mx.nd.utils.<name> for all six
        assert getattr(utils, name) is getattr(mx.nd, name), name
    import sparsegen.ndarray.utils as module
    assert module is utils


@settings(max_examples=10, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(["float32", "float64", "int32", "int64", "uint8"]),
       stype=st.sampled_from(["default", "row_sparse", "csr"]))
def test_nd_utils_zeros_and_empty_against_numpy(shape, dtype, stype):
    if stype == "csr" and len(shape) != 2:
        shape = (*shape, 2)[:2] if len(shape) < 2 else shape[:2]
    for make in (mx.nd.utils.zeros, mx.nd.utils.empty):
        made = make(shape, ctx=mx.cpu(), dtype=dtype, stype=stype)
        assert made.stype == stype and made.shape == shape and made.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(made.asnumpy(), np.zeros(shape, dtype))


def test_nd_utils_array_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((4, 3)).astype(np.float32)
    rows = np.where(rng.random((5, 2)) < 0.5, 0, rng.standard_normal((5, 2))).astype(np.float32)
    csr = scipy.sparse.random(3, 6, density=0.4, random_state=1, format="csr")
    arrays = {"d": mx.nd.utils.array(dense),
              "r": mx.nd.utils.array(mx.nd.sparse.row_sparse_array(rows)),
              "c": mx.nd.utils.array(csr)}
    assert [arrays[k].stype for k in "drc"] == ["default", "row_sparse", "csr"]
    path = str(tmp_path / "arrays")
    mx.nd.utils.save(path, arrays)
    for loaded in (mx.nd.utils.load(path),
                   mx.nd.utils.load_frombuffer(Path(path).read_bytes())):
        assert sorted(loaded) == ["c", "d", "r"]
        np.testing.assert_array_equal(loaded["d"].asnumpy(), dense)
        np.testing.assert_array_equal(loaded["r"].asnumpy(), rows)
        np.testing.assert_allclose(loaded["c"].asnumpy(), csr.toarray().astype(np.float32))
        assert loaded["r"].stype == "row_sparse" and loaded["c"].stype == "csr"
    mx.nd.utils.save(path, [arrays["d"]])
    (alone,) = mx.nd.utils.load(path)
    np.testing.assert_array_equal(alone.asnumpy(), dense)


def test_nd_utils_bad_input():
    with pytest.raises(TypeError, match="fname"):  # MXNet: TypeError
        mx.nd.utils.load(3)
    with pytest.raises(ValueError, match="data"):  # MXNet: ValueError
        mx.nd.utils.save("/tmp/never-written", 3)
    with pytest.raises(TypeError, match="buf"):  # MXNet: TypeError
        mx.nd.utils.load_frombuffer(3)
    with pytest.raises(mx.MXNetError):
        mx.nd.utils.load_frombuffer(b"not an NDArray file")
    with pytest.raises(mx.MXNetError, match="stype|storage"):
        mx.nd.utils.zeros((2, 2), stype="dense")
    with pytest.raises(mx.MXNetError):
        mx.nd.utils.empty((-1, 2))


# -- mx.io.io, mx.io.utils -----------------------------------------------------------------


def test_io_modules_have_mxnets_names():
    assert mx.io.io is __import__("sparsegen.io.io", fromlist=["io"])
    listed = set(CENSUS["namespaces"]["mxnet.io"]) - {"io", "utils"}
    for name in listed - {n for n in listed if n.startswith("Image")}:  # images: out of scope
        assert getattr(mx.io.io, name) is getattr(mx.io, name), name
    for name in ("_init_data", "_has_instance", "_getdata_by_idx", "_slice_along_batch_axis"):
        assert getattr(mx.io.utils, name) is getattr(mx.io.io, name), name
    assert mx.io._init_data is _init_data  # MXNet's mx.io imports it too


def test_init_data_names_as_mxnet():
    one = _init_data(np.arange(3), False, "data")
    assert [n for n, _ in one] == ["data"]  # MXNet: [('data', ...)]
    np.testing.assert_array_equal(one[0][1].asnumpy(), np.arange(3, dtype=np.float32))
    two = _init_data([mx.nd.array([1, 2]), mx.nd.array([3])], False, "data")
    assert [n for n, _ in two] == ["_0_data", "_1_data"]  # MXNet: _0_data, _1_data
    named = _init_data({"b": [1, 2], "a": [3.0]}, False, "data")
    assert [n for n, _ in named] == ["a", "b"]  # MXNet: sorted by name, lists made arrays
    np.testing.assert_array_equal(named[1][1].asnumpy(), [1, 2])
    assert _init_data(None, True, "label") == []
    csr = _init_data(scipy.sparse.csr_matrix(np.eye(3)), False, "data")
    assert csr[0][1].stype == "csr"
    with pytest.raises(ValueError, match="data"):
        _init_data(None, False, "data")
    with pytest.raises(ValueError, match="at least one"):
        _init_data([], False, "data")
    with pytest.raises(TypeError, match="'a'"):  # MXNet: TypeError naming the source
        _init_data({"a": object()}, False, "data")


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 9), cols=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_getdata_by_idx_against_numpy(rows, cols, seed):
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((rows, cols)).astype(np.float32)
    dense[rng.random(rows) < 0.4] = 0
    csr = scipy.sparse.csr_matrix(dense)
    idx = rng.permutation(rows)
    data = _init_data({"d": dense, "c": csr, "r": mx.nd.array(dense).tostype("row_sparse")},
                      False, "data")
    taken = dict(_getdata_by_idx(data, idx))
    np.testing.assert_array_equal(taken["d"].asnumpy(), dense[idx])
    np.testing.assert_array_equal(taken["c"].asnumpy(), csr[idx].toarray())
    np.testing.assert_array_equal(taken["r"].asnumpy(), dense[idx])
    assert (taken["d"].stype, taken["c"].stype, taken["r"].stype) == ("default", "csr", "default")
    assert _has_instance(data, mx.nd.sparse.CSRNDArray)
    assert not _has_instance(_init_data(dense, False, "data"), mx.nd.sparse.CSRNDArray)


def test_getdata_by_idx_bad_input():
    data = _init_data(np.ones((3, 2)), False, "data")
    with pytest.raises(IndexError, match="'data' has 3 rows"):
        _getdata_by_idx(data, [0, 3])
    with pytest.raises(IndexError):
        _getdata_by_idx(data, [-1])
    with pytest.raises(ValueError, match="idx"):
        _getdata_by_idx(data, [[0, 1]])
    with pytest.raises(ValueError, match="idx"):
        _getdata_by_idx(data, [0.5])


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       data=st.data())
def test_slice_along_batch_axis_against_numpy(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    begin = data.draw(st.integers(0, shape[axis] - 1))
    end = data.draw(st.integers(begin + 1, shape[axis]))
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    got = _slice_along_batch_axis(mx.nd.array(values), slice(begin, end), axis)
    want = values[(slice(None),) * axis + (slice(begin, end),)]
    np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(TypeError, match="slice"):
        _slice_along_batch_axis(mx.nd.array(values), (begin, end), axis)


# -- MXDataIter ----------------------------------------------------------------------------


def _idx_files(folder: Path, pixels: np.ndarray, labels: np.ndarray) -> tuple[str, str]:
    image, label = folder / "images", folder / "labels"
    image.write_bytes(struct.pack(">iiii", 2051, *pixels.shape) + pixels.tobytes())
    label.write_bytes(struct.pack(">ii", 2049, labels.size) + labels.tobytes())
    return str(image), str(label)


def test_native_readers_are_mxdataiters_of_one_array(tmp_path):
    # MXNet: isinstance(mx.io.CSVIter(...), mx.io.MXDataIter) is True, getdata() an NDArray
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.savetxt(tmp_path / "d.csv", values, delimiter=",")
    pixels = np.arange(2 * 2 * 3, dtype=np.uint8).reshape(2, 2, 3)
    image, label = _idx_files(tmp_path, pixels, np.array([3, 7], np.uint8))
    svm = tmp_path / "d.libsvm"
    svm.write_text("1 0:1.5 2:2\n0 1:3\n")
    readers = (mx.io.CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(2,), batch_size=2),
               mx.io.MNISTIter(image=image, label=label, batch_size=2, shuffle=False,
                               silent=True),
               mx.io.LibSVMIter(data_libsvm=str(svm), data_shape=(3,), batch_size=2))
    wants = (values[:2], pixels.reshape(2, 1, 2, 3) / np.float32(256),
             np.array([[1.5, 0, 2], [0, 3, 0]], np.float32))
    for reader, want in zip(readers, wants):
        assert isinstance(reader, MXDataIter) and isinstance(reader, DataIter)
        assert reader.iter_next()
        data = reader.getdata()
        assert isinstance(data, mx.nd.NDArray), type(reader).__name__
        np.testing.assert_array_equal(data.asnumpy(), want)
        assert isinstance(reader.getlabel(), mx.nd.NDArray)
    np.testing.assert_array_equal(readers[1].getlabel().asnumpy(), [3, 7])


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(1, 9), batch_size=st.integers(1, 4),
       handle=st.sampled_from(["pad", "discard"]))
def test_mxdataiter_wraps_an_iterator_against_numpy(rows, batch_size, handle):
    values = np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)
    labels = np.arange(rows, dtype=np.float32) * 10
    inner = mx.io.NDArrayIter(values, labels, batch_size, last_batch_handle=handle)
    if handle == "discard" and rows < batch_size:
        with pytest.raises(StopIteration):  # MXNet reads the first batch at construction
            MXDataIter(inner)
        return
    it = MXDataIter(inner, data_name="x", label_name="y")
    assert [(d.name, d.shape) for d in it.provide_data] == [("x", (batch_size, 2))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("y", (batch_size,))]
    assert it.batch_size == batch_size
    count = rows // batch_size if handle == "discard" else -(-rows // batch_size)
    order = np.arange(count * batch_size) % rows  # 'pad' wraps round to the start
    for _ in range(2):  # two epochs, the same batches
        batches = list(it)
        assert len(batches) == count
        for i, batch in enumerate(batches):
            ids = order[i * batch_size:(i + 1) * batch_size]
            np.testing.assert_array_equal(batch.data[0].asnumpy(), values[ids])
            np.testing.assert_array_equal(batch.label[0].asnumpy(), labels[ids])
            assert len(batch.data) == len(batch.label) == 1
        it.reset()
    assert it.iter_next()  # the first batch, through the get* methods
    np.testing.assert_array_equal(it.getdata().asnumpy(), values[order[:batch_size]])
    np.testing.assert_array_equal(it.getlabel().asnumpy(), labels[order[:batch_size]])
    assert it.getpad() == max(0, batch_size - rows) and it.getindex() is None


def test_mxdataiter_without_label_and_bad_handle():
    it = MXDataIter(mx.io.NDArrayIter(np.ones((4, 3)), batch_size=2))
    assert it.provide_label == [] and it.getlabel() is None
    assert [b.label for b in it] == [[], []]
    for bad in (3, "handle", None):
        with pytest.raises(TypeError, match="handle must be a DataIter"):
            MXDataIter(bad)


# -- mx.operator's registry queries --------------------------------------------------------


def test_registered_operators_are_mxnets_that_sparsegen_serves():
    assert list(MXNET_OPERATORS) == sorted(CENSUS["operators"])  # the two recordings agree
    names = get_all_registered_operators()
    assert isinstance(names, list) and names == sorted(names)
    assert set(names) == {op for op in CENSUS["operators"] if has_operator(op)}
    for name in ("Activation", "dot", "_sparse_retain", "concat", "Concat", "Custom",
                 "_contrib_index_copy", "sgd_update", "_plus_scalar"):
        assert name in names, name
    assert "RNN" in names and "CTCLoss" not in names  # CTC: issue 39


# what MXNet 1.9.1 returns: get_operator_arguments(op) at /work/mxvenv/bin/python
MXNET_ARGUMENTS = {
    "Activation": OperatorArguments(2, ["data", "act_type"], [
        "NDArray-or-Symbol", "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]),
    "elemwise_add": OperatorArguments(2, ["lhs", "rhs"],
                                      ["NDArray-or-Symbol", "NDArray-or-Symbol"]),
    "relu": OperatorArguments(1, ["data"], ["NDArray-or-Symbol"]),
    "add_n": OperatorArguments(1, ["args"], ["NDArray-or-Symbol[]"]),
    "cast_storage": OperatorArguments(2, ["data", "stype"], [
        "NDArray-or-Symbol", "{'csr', 'default', 'row_sparse'}, required"]),
    "LeakyReLU": OperatorArguments(6, [
        "data", "gamma", "act_type", "slope", "lower_bound", "upper_bound"], [
        "NDArray-or-Symbol", "NDArray-or-Symbol",
        "{'elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu'},optional, default='leaky'",
        "float, optional, default=0.25", "float, optional, default=0.125",
        "float, optional, default=0.333999991"]),
    "_contrib_index_copy": OperatorArguments(3, ["old_tensor", "index_vector", "new_tensor"],
                                             ["NDArray-or-Symbol"] * 3),
}
MXNET_NAMES = {
    "dot": ["lhs", "rhs", "transpose_a", "transpose_b", "forward_stype"],
    "FullyConnected": ["data", "weight", "bias", "num_hidden", "no_bias", "flatten"],
    "sgd_update": ["weight", "grad", "lr", "wd", "rescale_grad", "clip_gradient", "lazy_update"],
    "adam_update": ["weight", "grad", "mean", "var", "lr", "beta1", "beta2", "epsilon", "wd",
                    "rescale_grad", "clip_gradient", "lazy_update"],
    "Embedding": ["data", "weight", "input_dim", "output_dim", "dtype", "sparse_grad"],
    "_sparse_retain": ["data", "indices"],
}
MXNET_TYPES = {  # arguments whose type sparsegen writes as MXNet does
    ("dot", "transpose_a"): "boolean, optional, default=0",
    ("FullyConnected", "flatten"): "boolean, optional, default=1",
    ("adam_update", "beta1"): "float, optional, default=0.899999976",
    ("adam_update", "beta2"): "float, optional, default=0.999000013",
    ("adam_update", "epsilon"): "float, optional, default=9.99999994e-09",
    ("adam_update", "clip_gradient"): "float, optional, default=-1",
    ("Embedding", "input_dim"): "int, required",
    ("take", "axis"): "int, optional, default='0'",
    ("norm", "ord"): "int, optional, default='2'",
    ("Concat", "dim"): "int, optional, default='1'",
    ("transpose", "data"): "NDArray-or-Symbol",
}


@pytest.mark.parametrize("op", sorted(MXNET_ARGUMENTS))
def test_operator_arguments_as_mxnet_gives_them(op):
    got = get_operator_arguments(op)
    assert isinstance(got, OperatorArguments) and isinstance(got, tuple)
    assert got == MXNET_ARGUMENTS[op]


def test_operator_argument_names_and_types_as_mxnet():
    for op, names in MXNET_NAMES.items():
        got = get_operator_arguments(op)
        assert got.names == names and got.narg == len(names) == len(got.types), op
    for (op, name), want in MXNET_TYPES.items():
        got = get_operator_arguments(op)
        assert got.types[got.names.index(name)] == want, (op, name)


def test_every_served_operator_has_arguments():
    for op in get_all_registered_operators():
        got = get_operator_arguments(op)
        assert got.narg == len(got.names) == len(got.types), op
        assert not {"out", "name", "attr"} & set(got.names), op
        kinds = [t.startswith("NDArray-or-Symbol") for t in got.types]
        assert kinds == sorted(kinds, reverse=True), op  # array inputs first, as MXNet's


def test_operator_queries_bad_input():
    with pytest.raises(ValueError, match="'nonexistent' is not registered"):
        get_operator_arguments("nonexistent")  # MXNet: Operator nonexistent is not registered
    with pytest.raises(mx.MXNetError):
        get_operator_arguments("nonexistent")
    with pytest.raises(NotImplementedError, match="'CTCLoss' is not in sparsegen"):
        get_operator_arguments("CTCLoss")
    with pytest.raises(TypeError, match="op_name must be a string"):
        get_operator_arguments(None)
    assert mx.operator.get_operator_arguments is get_operator_arguments
    assert mx.operator.OperatorArguments._fields == ("narg", "names", "types")
