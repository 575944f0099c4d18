"""The data helpers of ``mx.test_utils`` (MXNet 1.9.1's names and signatures): ``download``,
``download_model``, ``get_mnist``, ``get_mnist_iterator``, ``get_mnist_pkl``, ``get_mnist_ubyte``,
``get_zip_data``,
``get_bz2_data``, and ``DummyIter`` (one batch repeated).

Nothing is downloaded (sparsegen runs offline): a file already in place is used, as MXNet's
helpers use it without downloading again, and a missing one raises ``DataMissing`` naming the
URL and the path to put it at. Archives are unpacked as MXNet unpacks them, each output
written atomically (a killed extraction leaves no partial file)."""

from __future__ import annotations

import bz2
import gzip
import logging
import os
import shutil
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .errors import SparsegenError
from .files import write_atomically

MNIST_URL = "http://data.mxnet.io/data/mnist/"
"""Where MXNet's ``get_mnist`` downloads the four MNIST files."""


class DataMissing(SparsegenError, FileNotFoundError):
    """A data file that would be downloaded is not in place (sparsegen downloads nothing)."""


def download(url: str, fname: str | None = None, dirname: str | None = None,
             overwrite: bool = False, retries: int = 5) -> str:
    """The path of ``url``'s file (``fname``, default the URL's last part, under ``dirname``),
    as ``mx.test_utils.download``: used when it exists (``overwrite=False``); else raises
    ``DataMissing`` naming the URL and the path (no download: put the file there)."""
    fname = url.split("/")[-1] if fname is None else fname
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname):
        logging.info("%s exists, skipping download", fname)
        return fname
    raise DataMissing(f"download: sparsegen does not download; fetch {url} and put it at "
                      f"{os.path.abspath(fname)}" + (" (overwrite=True asked for a fresh copy)"
                                                     if overwrite else ""))


def _mnist(label_url: str, image_url: str) -> tuple[np.ndarray, np.ndarray]:
    """(labels, images) of one MNIST split: int8 labels, float32 images in [0, 1] of shape
    (n, 1, 28, 28), as MXNet's."""
    with gzip.open(download(label_url)) as labels_file:
        struct.unpack(">II", labels_file.read(8))
        labels = np.frombuffer(labels_file.read(), dtype=np.int8)
    with gzip.open(download(image_url), "rb") as images_file:
        _, _, rows, cols = struct.unpack(">IIII", images_file.read(16))
        images = np.frombuffer(images_file.read(), dtype=np.uint8)
    images = images.reshape(len(labels), 1, rows, cols).astype(np.float32) / 255
    return labels, images


def get_mnist() -> dict[str, np.ndarray]:
    """MNIST as numpy arrays (``train_data``, ``train_label``, ``test_data``, ``test_label``)
    from the four gzip files of ``MNIST_URL`` in the working directory, as MXNet's."""
    train_label, train_data = _mnist(MNIST_URL + "train-labels-idx1-ubyte.gz",
                                     MNIST_URL + "train-images-idx3-ubyte.gz")
    test_label, test_data = _mnist(MNIST_URL + "t10k-labels-idx1-ubyte.gz",
                                   MNIST_URL + "t10k-images-idx3-ubyte.gz")
    return {"train_data": train_data, "train_label": train_label, "test_data": test_data,
            "test_label": test_label}


def get_mnist_pkl() -> None:
    """``data/mnist.pkl.gz`` in place (MXNet downloads it)."""
    download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _extract_zip(archive: str, directory: str) -> None:
    """Every member of the zip ``archive`` written (atomically) under ``directory``."""
    root = Path(directory).resolve()
    with zipfile.ZipFile(archive) as zipped:
        for member in zipped.infolist():
            target = (root / member.filename).resolve()
            if root not in target.parents and target != root:
                raise SparsegenError(f"{archive}: member {member.filename!r} would be written "
                                     f"outside {directory}")
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)

            def write(tmp: Path, name: str = member.filename) -> None:
                with zipped.open(name) as source, open(tmp, "wb") as out:
                    shutil.copyfileobj(source, out)

            write_atomically(target, write)


def get_mnist_ubyte() -> None:
    """The four MNIST ubyte files in ``data/``, unpacked from ``data/mnist.zip`` when missing,
    as MXNet's."""
    names = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
             "t10k-labels-idx1-ubyte")
    os.makedirs("data", exist_ok=True)
    if not all(os.path.exists(os.path.join("data", n)) for n in names):
        _extract_zip(download("http://data.mxnet.io/mxnet/data/mnist.zip", dirname="data"),
                     "data")


def get_zip_data(data_dir: str, url: str, data_origin_name: str) -> None:
    """The zip ``data_origin_name`` (under ``data_dir``, from ``url``) unpacked into
    ``data_dir`` unless it is already there, as MXNet's (MovieLens in its examples)."""
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(archive):
        download(url, dirname=data_dir)
        _extract_zip(archive, data_dir)


def get_bz2_data(data_dir: str, data_name: str, url: str, data_origin_name: str) -> None:
    """``data_dir/data_name`` decompressed from the bz2 ``data_dir/data_origin_name`` (from
    ``url``) unless it is there, the archive removed after, as MXNet's (the libsvm datasets of
    its sparse examples)."""
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = download(url, fname=data_origin_name, dirname=data_dir)

    def write(tmp: Path) -> None:
        with bz2.open(archive, "rb") as source, open(tmp, "wb") as out:
            shutil.copyfileobj(source, out)

    write_atomically(Path(target), write)
    os.remove(archive)


MODEL_URL = "http://data.mxnet.io/models/"
"""Where MXNet's ``download_model`` fetches its models from."""

MODELS = {name: (f"{MODEL_URL}imagenet/{path}-symbol.json",
                 f"{MODEL_URL}imagenet/{path}-0000.params")
          for name, path in (("imagenet1k-resnet-18", "resnet/18-layers/resnet-18"),
                             ("imagenet1k-resnet-34", "resnet/34-layers/resnet-34"),
                             ("imagenet1k-resnet-50", "resnet/50-layers/resnet-50"),
                             ("imagenet1k-resnet-101", "resnet/101-layers/resnet-101"),
                             ("imagenet1k-resnet-152", "resnet/152-layers/resnet-152"))}
"""Some of the models ``download_model`` knows by name: (symbol URL, parameters URL)."""


def download_model(model_name: str, dst_dir: str = "./",
                   meta_info: dict[str, dict[str, str]] | None = None) -> tuple[str | None, int]:
    """``(dst_dir/model_name, 0)`` once ``<model_name>-symbol.json`` and
    ``<model_name>-0000.params`` are in ``dst_dir`` (``download`` of the URLs ``meta_info``, a
    dict name -> {'symbol': url, 'params': url}, or MXNet's table gives; a missing file raises
    ``DataMissing``, nothing is fetched); ``(None, 0)`` for a model neither knows."""
    known = {n: {"symbol": s, "params": p} for n, (s, p) in MODELS.items()}
    meta = dict(meta_info if meta_info is not None else known).get(model_name)
    if meta is None:
        return None, 0
    prefix = os.path.join(dst_dir, model_name)
    for key, suffix in (("symbol", "-symbol.json"), ("params", "-0000.params")):
        if key not in meta:
            raise SparsegenError(f"download_model: meta_info[{model_name!r}] has no {key!r} URL")
        download(meta[key], prefix + suffix)
    return prefix, 0


def get_mnist_iterator(batch_size: int, input_shape: Any, num_parts: int = 1,
                       part_index: int = 0) -> tuple[Any, Any]:
    """MNIST's training and validation ``mx.io.MNISTIter`` over the ubyte files in ``data/``
    (``get_mnist_ubyte``), flat unless ``input_shape`` has three axes, as MXNet's."""
    from .io import MNISTIter

    get_mnist_ubyte()
    common = {"input_shape": input_shape, "batch_size": batch_size,
              "flat": len(input_shape) != 3, "num_parts": num_parts, "part_index": part_index}
    return (MNISTIter(image="data/train-images-idx3-ubyte", label="data/train-labels-idx1-ubyte",
                      shuffle=True, **common),
            MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte",
                      **common))


def _data_iter_base() -> type:
    from .io import DataIter  # mx.io is imported on first use
    return DataIter


class DummyIter(_data_iter_base()):  # type: ignore[misc]
    """An iterator that returns the first batch of ``real_iter`` for ever (speed tests), as
    ``mx.test_utils.DummyIter``; it has ``real_iter``'s ``provide_data``, ``provide_label`` and
    ``batch_size``."""

    def __init__(self, real_iter: Any) -> None:
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(real_iter)

    def __iter__(self) -> "DummyIter":
        return self

    def next(self) -> Any:
        """The first batch of the real iterator, again (never ``StopIteration``)."""
        return self.the_batch


__all__ = ["DataMissing", "DummyIter", "download", "download_model", "get_bz2_data",
           "get_mnist", "get_mnist_iterator", "get_mnist_pkl", "get_mnist_ubyte", "get_zip_data"]
