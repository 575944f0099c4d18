"""LibSVMIter: files written here, parsed against a plain-Python oracle parser and scipy,
MXNet 1.9.1's round-robin batches and byte partitions, and errors that name file and line."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx


def oracle_parse(text: str, cols: int):
    """(labels, scipy csr) of libsvm text: blank lines skipped, ``label[:weight]``, ``qid:``
    tokens ignored, ``index:value`` features (float32 of Python's float)."""
    labels, rows = [], []
    for line in text.split("\n"):
        tokens = line.replace("\t", " ").replace("\r", " ").split()
        if not tokens:
            continue
        labels.append(float(tokens[0].split(":")[0]))
        rows.append([(int(t.split(":")[0]), float(t.split(":")[1]))
                     for t in tokens[1:] if not t.startswith("q")])
    indptr = np.cumsum([0] + [len(r) for r in rows])
    indices = np.array([i for r in rows for i, _ in r], np.int64)
    values = np.array([v for r in rows for _, v in r], np.float32)
    return (np.array(labels, np.float32),
            scipy.sparse.csr_matrix((values, indices, indptr), shape=(len(rows), cols)))


def oracle_batches(n: int, bs: int, epochs: int):
    """Row ids and pad of each batch: a stream over the rows that wraps round, each epoch
    starting where the last one's borrowed rows ended (MXNet 1.9.1's round_batch)."""
    start, out = 0, []
    for _ in range(epochs):
        epoch, pos = [], start
        while pos < n:
            epoch.append(([(pos + k) % n for k in range(bs)], max(0, pos + bs - n)))
            pos += bs
        start = pos % n if n else 0
        out.append(epoch)
    return out


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return str(path)


def _number(draw_float: float, style: int) -> str:
    return [repr(draw_float), f"{draw_float:.3e}", f"{draw_float:g}", f"{draw_float:+.4f}"][style]


@st.composite
def libsvm_text(draw):
    """A libsvm file with the edge cases: blank and white-space lines, trailing spaces, tabs,
    CRLF, lines without features, label weights, qid tokens, several number spellings."""
    cols = draw(st.integers(1, 40))
    lines = []
    for _ in range(draw(st.integers(1, 25))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "\t", "\r"])))
            continue
        ids = sorted(draw(st.sets(st.integers(0, cols - 1), max_size=min(cols, 8))))
        values = [draw(st.floats(-1e6, 1e6, allow_nan=False, width=32)) for _ in ids]
        label = _number(draw(st.floats(-100, 100, width=32)), draw(st.integers(0, 3)))
        head = label + (":0.5" if draw(st.booleans()) else "")
        head += " qid:7" if draw(st.integers(0, 5)) == 0 else ""
        sep = draw(st.sampled_from([" ", "  ", "\t"]))
        feats = [f"{i}:{_number(v, draw(st.integers(0, 3)))}" for i, v in zip(ids, values)]
        lines.append(sep.join([head] + feats) + draw(st.sampled_from(["", " ", "  \t", "\r"])))
    return cols, "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


@settings(max_examples=40)
@given(case=libsvm_text(), bs=st.integers(1, 7))
def test_batches_match_the_oracle(tmp_path_factory, case, bs):
    cols, text = case
    labels, matrix = oracle_parse(text, cols)
    path = _write(tmp_path_factory.mktemp("svm"), "d.t", text)
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(cols,), batch_size=bs)
    assert it.provide_data[0].shape == (bs, cols) and it.provide_label[0].shape == (bs,)
    dense = matrix.toarray()
    for epoch in oracle_batches(len(labels), bs, 3):
        batches = list(it)
        assert len(batches) == len(epoch)
        for (ids, pad), batch in zip(epoch, batches):
            data = batch.data[0]
            assert data.stype == "csr" and batch.pad == pad
            assert batch.index.dtype == np.uint64 and batch.index.tolist() == ids
            data.check_format()
            np.testing.assert_allclose(data.asnumpy(), dense[ids], rtol=1e-6)
            np.testing.assert_allclose(batch.label[0].asnumpy(), labels[ids], rtol=1e-6)
        it.reset()


def test_mxnet_example_with_label_file(tmp_path):
    data = _write(tmp_path, "data.t", "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n")
    label = _write(tmp_path, "label.t", "1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n")
    it = mx.io.LibSVMIter(data_libsvm=data, label_libsvm=label, data_shape=(3,),
                          label_shape=(3,), batch_size=3)
    assert it.provide_label[0].shape == (3, 3)
    first = [[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2]]
    second = [[0, 0, -1.2], [0.5, 0, 1.2], [0, 0, 0]]
    batches = list(it)
    assert [b.pad for b in batches] == [0, 2]
    for b, want in zip(batches, (first, second)):
        np.testing.assert_allclose(b.data[0].asnumpy(), want, rtol=1e-6)
    assert batches[1].label[0].stype == "csr"
    np.testing.assert_allclose(batches[1].label[0].asnumpy(), [[0, 1, -1.2], [0, 0, 0],
                                                               [0.125, 0, 0]], rtol=1e-6)
    it.reset()
    np.testing.assert_allclose(it.next().data[0].asnumpy(), first[2:] + second[:2], rtol=1e-6)
    assert it.getdata().shape == (3, 3) and it.getpad() == 1


def test_huge_columns_and_exact_values(tmp_path):
    big = 10**15
    text = (f"1 0:0.1 {big - 1}:3.14159265358979 \n"
            "0 5:1e-45 6:3.4e38 7:-0 8:0.000000000000000000001234\n"
            "2 1:123456789012345678901234 2:.5 3:5. 4:1E+2\n")
    labels, matrix = oracle_parse(text, big)
    path = _write(tmp_path, "h.t", text)
    batch = mx.io.LibSVMIter(data_libsvm=path, data_shape=(big,), batch_size=3).next()
    got = batch.data[0].asscipy()
    np.testing.assert_array_equal(got.indptr, matrix.indptr)
    np.testing.assert_array_equal(got.indices, matrix.indices)
    np.testing.assert_array_equal(got.data, matrix.data)  # exact for these spellings
    assert math.copysign(1, got.data[3]) == 1.0 or got.data[3] == 0
    np.testing.assert_array_equal(batch.label[0].asnumpy(), labels)


@pytest.mark.parametrize("text, line, reason", [
    ("1 0:1\n2 -1:3\n", 2, "not 'index:value'"),
    ("1 0:1\n\n2 1:3 3:1\n", 3, "not below the number of columns 3"),
    ("1 0:1\n2 x:3\n", 2, "not 'index:value'"),
    ("1 0:1\n2 1:abc\n", 2, "not 'index:value'"),
    ("1 0:1\n2 1\n", 2, "not 'index:value'"),
    ("1 0:1\n2 1:2:3\n", 2, "not 'index:value'"),
    ("1 2:1 1:2\n", 1, "must increase"),
    ("1 1:1 1:2\n", 1, "must increase"),
    ("1,2 0:1\n", 1, "label is not a number"),
    ("abc 0:1\n", 1, "label is not a number"),
    ("1 0:1\n1 1234567890123456789012:1\n", 2, "not below"),
])
def test_bad_lines_name_file_and_line(tmp_path, text, line, reason):
    path = _write(tmp_path, "bad.t", text)
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(3,), batch_size=2)
    with pytest.raises(mx.MXNetError, match=reason) as error:
        list(it)  # a batch parses its lines: the one holding the bad line raises
    assert f"{path}, line {line}:" in str(error.value)


def test_bad_arguments(tmp_path):
    path = _write(tmp_path, "d.t", "1 0:1\n")
    with pytest.raises(mx.MXNetError, match="cannot find"):
        mx.io.LibSVMIter(data_libsvm=str(tmp_path / "nope.t"), data_shape=(3,), batch_size=1)
    for kwargs in ({"data_shape": (3, 2)}, {"data_shape": (0,)}, {"batch_size": 0},
                   {"num_parts": 2, "part_index": 2}, {"num_parts": 0}):
        args = {"data_libsvm": path, "data_shape": (3,), "batch_size": 1, **kwargs}
        with pytest.raises(ValueError):
            mx.io.LibSVMIter(**args)
    label = _write(tmp_path, "l.t", "1 0:1\n2 0:1\n")
    with pytest.raises(ValueError, match="rows"):
        mx.io.LibSVMIter(data_libsvm=path, data_shape=(3,), label_libsvm=label,
                         label_shape=(1,), batch_size=1)
    empty = _write(tmp_path, "e.t", "\n\n")
    assert list(mx.io.LibSVMIter(data_libsvm=empty, data_shape=(3,), batch_size=2)) == []


def oracle_parts(text: bytes, parts: int) -> list[list[int]]:
    """Line numbers of each part: byte ranges of ceil(size / parts) bytes, each begun after
    the first newline at or after its offset (dmlc's InputSplit, which MXNet uses)."""
    step = -(-len(text) // parts)

    def start(k: int) -> int:
        if k == 0:
            return 0
        newline = text.find(b"\n", min(step * k, len(text)))
        return len(text) if newline < 0 else newline + 1

    bounds = [start(k) for k in range(parts)] + [len(text)]
    line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == 10 and i + 1 < len(text)]
    return [[n for n, s in enumerate(line_starts) if bounds[k] <= s < bounds[k + 1]]
            for k in range(parts)]


def test_parts_as_mxnet(tmp_path):
    lines = [f"{i} " + " ".join(f"{j}:1" for j in range(i % 4)) for i in range(10)]
    text = "\n".join(lines) + "\n"
    path = _write(tmp_path, "p.t", text)
    # recorded from MXNet 1.9.1 (mx.io.LibSVMIter with num_parts=4 on this file)
    assert oracle_parts(text.encode(), 4) == [[0, 1, 2, 3], [4, 5], [6, 7], [8, 9]]
    for parts in (1, 2, 3, 4, 7):
        got = [[int(b.label[0].asnumpy()[0]) for b in
                mx.io.LibSVMIter(data_libsvm=path, data_shape=(4,), batch_size=1,
                                 num_parts=parts, part_index=k)] for k in range(parts)]
        assert got == oracle_parts(text.encode(), parts)


def test_lines_with_fewer_features_than_colons(tmp_path):
    # label:weight and qid: hold colons, so those lines fill fewer slots than count bounds
    path = _write(tmp_path, "w.t", "1:2 qid:3 0:1 2:5\n0 1:7\n3:0.5\n2 qid:1\n")
    batch = mx.io.LibSVMIter(data_libsvm=path, data_shape=(3,), batch_size=4).next()
    data = batch.data[0]
    np.testing.assert_array_equal(data.indptr.asnumpy(), [0, 2, 3, 3, 3])
    np.testing.assert_array_equal(data.indices.asnumpy(), [0, 2, 1])
    np.testing.assert_array_equal(data.data.asnumpy(), np.float32([1, 5, 7]))
    np.testing.assert_array_equal(batch.label[0].asnumpy(), np.float32([1, 0, 3, 2]))


def test_parser_state_on_the_stack():
    # TVM serves "local" scratch buffers on the CPU from its workspace pool (heap), where
    # LLVM cannot keep a parser's state in registers: the CPU schedule makes them stack arrays
    import tvm
    import tvm_ffi
    from tvm import tirx
    from tvm.script import tirx as T

    from sparsegen.schedules.cpu import ROWS
    from sparsegen.target import host_cpu

    @T.prim_func(s_tir=True)
    def runs(a: T.handle, b: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        A = T.match_buffer(a, (m,), "int64")
        B = T.match_buffer(b, (m,), "int64")
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(A[vr])
                T.writes(B[vr])
                st = T.alloc_buffer((2,), "int64", scope="local")
                st[0] = T.int64(0)
                st[1] = T.int64(1)
                for _ in T.serial(A[vr]):
                    st[0] = st[0] + st[1]
                    st[1] = st[1] * T.int64(2)
                B[vr] = st[0]

    mod = ROWS.apply(tvm.IRModule({"runs": runs}), {"parallel": True, "chunk": 8, "lanes": 16})
    scopes = []
    tvm_ffi.structural_walk(mod, [(tirx.Var, lambda v: scopes.append(v.ty.storage_scope)
                                   if tirx.buffer.is_buffer_var(v) else None)])
    assert "global" in scopes and "local" not in scopes
    target = host_cpu().to_tvm()
    with target:
        executable = tvm.compile(mod, target=target)
    a = np.arange(40, dtype=np.int64) % 7
    b = np.empty_like(a)
    executable["runs"](a, b)
    np.testing.assert_array_equal(b, 2**a - 1)
