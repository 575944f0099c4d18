"""``mx.io.MNISTIter`` on idx files written here, against numpy (MXNet 1.9.1's behaviour:
pixels / 256, whole batches only, byte-range parts), and its refusals."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue, SparsegenError


def write_idx(folder, pixels: np.ndarray, labels: np.ndarray) -> tuple[str, str]:
    image, label = folder / "images", folder / "labels"
    image.write_bytes(struct.pack(">iiii", 2051, *pixels.shape) + pixels.tobytes())
    label.write_bytes(struct.pack(">ii", 2049, labels.size) + labels.tobytes())
    return str(image), str(label)


@settings(max_examples=15, deadline=None)
@given(count=st.integers(0, 9), rows=st.integers(1, 4), cols=st.integers(1, 3),
       batch_size=st.integers(1, 4), flat=st.booleans(), num_parts=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_batches_against_numpy(tmp_path_factory, count: int, rows: int, cols: int,
                               batch_size: int, flat: bool, num_parts: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (count, rows, cols), dtype=np.uint8)
    labels = rng.integers(0, 10, count, dtype=np.uint8)
    image, label = write_idx(tmp_path_factory.mktemp("mnist"), pixels, labels)
    part_index = seed % num_parts
    start, end = int(count / num_parts * part_index), int(count / num_parts * (part_index + 1))
    shape = (rows * cols,) if flat else (1, rows, cols)
    want_x = pixels[start:end].reshape(-1, *shape).astype(np.float32) / 256
    want_y = labels[start:end].astype(np.float32)
    it = mx.io.MNISTIter(image=image, label=label, batch_size=batch_size, shuffle=False,
                         flat=flat, silent=True, num_parts=num_parts, part_index=part_index)
    assert it.provide_data[0].shape == (batch_size, *shape)
    assert it.provide_label[0].shape == (batch_size,)
    for _ in range(2):  # two epochs, the same batches
        batches = list(it)
        assert len(batches) == (end - start) // batch_size
        for i, batch in enumerate(batches):
            rows_of = slice(i * batch_size, (i + 1) * batch_size)
            np.testing.assert_array_equal(batch.data[0].asnumpy(), want_x[rows_of])
            np.testing.assert_array_equal(batch.label[0].asnumpy(), want_y[rows_of])
            assert batch.pad == 0
        it.reset()
    shuffled = mx.io.MNISTIter(image=image, label=label, batch_size=1, flat=True, silent=True,
                               seed=seed, num_parts=num_parts, part_index=part_index)
    got = [(b.data[0].asnumpy().tobytes(), float(b.label[0].asnumpy()[0])) for b in shuffled]
    want = [(want_x[i].reshape(1, -1).tobytes(), float(want_y[i])) for i in range(end - start)]
    assert sorted(got) == sorted(want)  # each image keeps its label


def test_log_line(tmp_path, capsys) -> None:
    image, label = write_idx(tmp_path, np.zeros((5, 2, 2), np.uint8), np.zeros(5, np.uint8))
    mx.io.MNISTIter(image=image, label=label, batch_size=2)
    mx.io.MNISTIter(image=image, label=label, batch_size=2, flat=True, shuffle=False)
    assert capsys.readouterr().err.splitlines() == [
        "MNISTIter: load 5 images, shuffle=1, shape=[2,1,2,2]",
        "MNISTIter: load 5 images, shuffle=0, shape=(2,4)"]


def test_refusals(tmp_path) -> None:
    image, label = write_idx(tmp_path, np.zeros((3, 2, 2), np.uint8), np.zeros(3, np.uint8))
    with pytest.raises(SparsegenError, match="cannot find the file 'nope'"):
        mx.io.MNISTIter(image="nope", label=label)
    with pytest.raises(InvalidValue, match="not an idx file of images"):
        mx.io.MNISTIter(image=label, label=label)
    with pytest.raises(InvalidValue, match="part_index"):
        mx.io.MNISTIter(image=image, label=label, num_parts=2, part_index=2)
    with pytest.raises(InvalidValue, match="batch_size"):
        mx.io.MNISTIter(image=image, label=label, batch_size=0)
    short = tmp_path / "short"
    short.write_bytes(struct.pack(">ii", 2049, 2) + b"\x01\x02")
    with pytest.raises(InvalidValue, match="holds 3 images, .* 2 labels"):
        mx.io.MNISTIter(image=image, label=str(short), silent=True)
    cut = tmp_path / "cut"
    cut.write_bytes(struct.pack(">iiii", 2051, 3, 2, 2) + b"\x00" * 5)
    with pytest.raises(InvalidValue, match="header says 3 items of 4 bytes"):
        mx.io.MNISTIter(image=str(cut), label=label, silent=True)
    it = mx.io.MNISTIter(image=image, label=label, batch_size=2, silent=True)
    with pytest.raises(InvalidValue, match="no current batch"):
        it.getdata()


def test_get_mnist_iterator(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    pixels = np.arange(6 * 2 * 2, dtype=np.uint8).reshape(6, 2, 2)
    for prefix in ("train", "t10k"):
        image, label = write_idx(tmp_path, pixels, np.arange(6, dtype=np.uint8))
        (tmp_path / image).rename(tmp_path / "data" / f"{prefix}-images-idx3-ubyte")
        (tmp_path / label).rename(tmp_path / "data" / f"{prefix}-labels-idx1-ubyte")
    train, val = mx.test_utils.get_mnist_iterator(3, (4,))
    assert train.provide_data[0].shape == (3, 4) and val.provide_label[0].shape == (3,)
    assert sorted(float(y) for b in val for y in b.label[0].asnumpy()) == list(range(6))
    train, _ = mx.test_utils.get_mnist_iterator(2, (1, 2, 2))
    assert train.provide_data[0].shape == (2, 1, 2, 2)
