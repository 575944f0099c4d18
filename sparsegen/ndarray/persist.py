"""``mx.nd.save`` / ``mx.nd.load``: lists and dicts of arrays in MXNet 1.9.1's binary NDArray
file format, so files move both ways between MXNet and sparsegen.

The format (little-endian, as MXNet writes it on every machine it runs on):

- file: ``uint64 0x112`` (list magic), ``uint64 0`` (reserved), ``uint64`` array count, the
  arrays, ``uint64`` name count (0 for a list, else one per array), each name as ``uint64``
  byte length + UTF-8 bytes;
- array (version 2, what MXNet 1.x saves): ``uint32 0xF993FAC9``, ``int32`` storage type
  (0 dense, 1 row_sparse, 2 csr); for sparse arrays the storage shape (the stored values'
  shape); the shape; the context (``int32`` device type 1 cpu / 2 gpu / 3 cpu_pinned, ``int32``
  device id); ``int32`` dtype flag (0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8,
  6 int64); for sparse arrays each index array's ``int32`` dtype flag and shape (row_sparse:
  the row ids; csr: indptr, then column ids); the values, then each index array, raw. A shape is
  ``int32`` ndim + ``ndim`` ``int64`` dims; ndim 0 marks an empty (none) array, which ends
  there.
- version 3 (``0xF993FACA``, dense, 0-d arrays too): what MXNet saves, and loads only, under
  its numpy shape semantics (``mx.np_shape(True)``), as the other versions only outside them;
- loaded too: version 1 (``0xF993FAC8``: dense, no storage type) and the older layout whose
  first word is the ndim (``uint32`` dims).

Parsing is I/O: numpy reads the raw buffers, and the arrays are built (and validated) as any
user data is.
"""

from __future__ import annotations

import os
import struct
from typing import Any

import numpy as np

from ..context import Context
from ..device import host_copy, num_gpus
from ..errors import InvalidType, InvalidValue, SparsegenError
from ..formats import CSR, RowSparse, csr, row_sparse
from ..util import is_np_shape
from .ndarray import _STORAGE_TYPE_STR_TO_ID, NDArray
from .storage import wrap

LIST_MAGIC = 0x112
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
_FLAGS = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8",
          6: "int64"}
_FLAG_OF = {np.dtype(name): flag for flag, name in _FLAGS.items()}
_STYPE_OF = {name: code for name, code in _STORAGE_TYPE_STR_TO_ID.items() if code >= 0}
_STYPES = {code: name for name, code in _STYPE_OF.items()}
_DEVICES = Context.devtype2str


# -- writing ------------------------------------------------------------------------------------
def _shape_bytes(shape: tuple[int, ...]) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _array_bytes(array: NDArray) -> bytes:
    """One array in the version-2 layout, or (under numpy shape semantics, as MXNet's) the
    version-3 one: dense arrays only, 0-d ones too."""
    numpy_shapes = is_np_shape()
    if array.ndim == 0 and not numpy_shapes:
        raise InvalidValue("save: MXNet 1.x's NDArray file format has no 0-d arrays outside "
                           "numpy shape semantics; reshape the array to (1,) first, or save "
                           "inside mx.np_shape(True)")
    if numpy_shapes and array.stype != "default":
        raise InvalidValue(f"save: under numpy shape semantics MXNet's format holds dense "
                           f"arrays only, got a {array.stype} array (save it outside "
                           "mx.np_shape(True))")
    storage = host_copy(array._storage)
    values = storage.data if isinstance(storage, (RowSparse, CSR)) else storage
    aux = {RowSparse: lambda s: [s.indices], CSR: lambda s: [s.indptr, s.indices]}.get(
        type(storage), lambda s: [])(storage)
    ctx = array.context
    magic = V3_MAGIC if numpy_shapes else V2_MAGIC
    parts = [struct.pack("<Ii", magic, _STYPE_OF[array.stype])]
    if aux:
        parts.append(_shape_bytes(values.shape))
    parts += [_shape_bytes(array.shape),
              struct.pack("<iii", ctx.device_typeid, ctx.device_id,
                          _FLAG_OF[values.dtype])]
    parts += [struct.pack("<i", _FLAG_OF[a.dtype]) + _shape_bytes(a.shape) for a in aux]
    parts += [np.ascontiguousarray(b, b.dtype.newbyteorder("<")).tobytes()
              for b in (values, *aux)]
    return b"".join(parts)


def _entries(data: Any) -> tuple[list[NDArray], list[str]]:
    """The arrays and names (none for a list) ``save`` writes, checked as MXNet does."""
    if isinstance(data, NDArray):
        return [data], []
    if isinstance(data, dict):
        if not all(isinstance(k, str) for k in data) or not all(
                isinstance(v, NDArray) for v in data.values()):
            raise InvalidType("save only accepts a dict of str -> NDArray or a list of NDArray")
        return list(data.values()), list(data)
    if isinstance(data, list):
        if not all(isinstance(v, NDArray) for v in data):
            raise InvalidType("save only accepts a dict of str -> NDArray or a list of NDArray")
        return data, []
    raise InvalidValue("save: data must be an NDArray, a dict of str -> NDArray or a list of "
                       f"NDArrays, got {type(data).__name__}")


def dumps(data: Any) -> bytes:
    """The bytes ``save`` writes for ``data`` (an NDArray, list or dict of str -> NDArray)."""
    arrays, names = _entries(data)
    encoded = [name.encode("utf-8") for name in names]
    return b"".join([
        struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays)),
        *(_array_bytes(a) for a in arrays),
        struct.pack("<Q", len(encoded)),
        *(struct.pack("<Q", len(e)) + e for e in encoded),
    ])


def _path(fname: Any, function: str) -> str:
    if not isinstance(fname, (str, os.PathLike)):
        raise InvalidType(f"{function}: fname must be a string (a path), got "
                          f"{type(fname).__name__}")
    return os.fspath(fname)


def save(fname: Any, data: Any) -> None:
    """Write ``data`` (an NDArray, a list of them, or a dict of str -> NDArray; dense,
    row_sparse and csr) to file ``fname`` in MXNet 1.9.1's NDArray format, as
    ``mx.nd.save``."""
    path = _path(fname, "save")
    content = dumps(data)
    try:
        with open(path, "wb") as f:
            f.write(content)
    except OSError as error:
        raise SparsegenError(f"save: cannot write {path!r}: {error.strerror or error}") from None


# -- reading ------------------------------------------------------------------------------------
class _Reader:
    """A cursor over the bytes of one file; running past the end raises naming the file."""

    def __init__(self, buf: bytes, name: str) -> None:
        self.buf, self.name, self.at = buf, name, 0

    def fail(self, what: str) -> SparsegenError:
        return SparsegenError(f"load: {self.name} is not an MXNet NDArray file: {what} "
                              f"(at byte {self.at} of {len(self.buf)})")

    def take(self, size: int, what: str) -> memoryview:
        if size < 0 or self.at + size > len(self.buf):
            raise self.fail(f"truncated in {what}")
        view = memoryview(self.buf)[self.at:self.at + size]
        self.at += size
        return view

    def ints(self, fmt: str, what: str) -> tuple[int, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))

    def shape(self, what: str, dim: str = "q") -> tuple[int, ...]:
        (ndim,) = self.ints("i", what)
        if ndim < 0 or ndim > 32:
            raise self.fail(f"{what} has {ndim} dimensions")
        dims = self.ints(f"{ndim}{dim}", what)
        if any(d < 0 for d in dims):
            raise self.fail(f"{what} {dims} has a negative (unknown) dimension")
        return dims

    def buffer(self, dtype: np.dtype, shape: tuple[int, ...], what: str) -> np.ndarray:
        count = int(np.prod(shape, dtype=object))
        raw = self.take(count * dtype.itemsize, what)
        return np.frombuffer(raw, dtype.newbyteorder("<"), count).astype(dtype).reshape(shape)

    def dtype(self, what: str) -> np.dtype:
        (flag,) = self.ints("i", what)
        if flag not in _FLAGS:
            raise self.fail(f"{what} has dtype flag {flag}, which sparsegen has no arrays for "
                            f"(it reads {sorted(_FLAGS.items())})")
        return np.dtype(_FLAGS[flag])


def _context(reader: _Reader) -> Context:
    """The context an array was saved from, as the context it loads on: a GPU when there is
    one of that id, else the CPU (as MXNet)."""
    device_type, device_id = reader.ints("ii", "context")
    if device_type not in _DEVICES or device_id < 0:
        raise reader.fail(f"context ({device_type}, {device_id}) is not a device")
    if _DEVICES[device_type] == "gpu" and device_id < num_gpus():
        return Context("gpu", device_id)
    return Context("cpu", 0)


def _dense(reader: _Reader, shape: tuple[int, ...]) -> NDArray:
    ctx = _context(reader)
    values = reader.buffer(reader.dtype("dtype"), shape, "values")
    return wrap(values, ctx)


def _sparse(reader: _Reader, stype: str) -> NDArray:
    """A row_sparse or csr array (version 2): storage shape, shape, context, dtypes, buffers."""
    stored = reader.shape("storage shape")
    shape = reader.shape("shape")
    if not shape:
        raise reader.fail("an empty (none) sparse array, which sparsegen has no array for")
    ctx = _context(reader)
    dtype = reader.dtype("dtype")
    aux = [(reader.dtype("index dtype"), reader.shape("index shape"))
           for _ in range(1 if stype == "row_sparse" else 2)]
    values = reader.buffer(dtype, stored, "values")
    index = [reader.buffer(t, s, "indices") for t, s in aux]
    try:
        storage = (row_sparse(values, index[0], shape) if stype == "row_sparse"
                   else csr(values, index[1], index[0], shape))
    except SparsegenError as error:
        raise reader.fail(f"its {stype} array is invalid: {error}") from None
    return wrap(storage, ctx)


def _array(reader: _Reader) -> NDArray:
    """One array of any version."""
    (magic,) = reader.ints("I", "array header")
    if (magic == V3_MAGIC) != is_np_shape():  # MXNet's rule: a file's shapes mean what they did
        raise reader.fail(
            "it was saved under numpy shape semantics: load it inside mx.np_shape(True)"
            if magic == V3_MAGIC else "it was saved without numpy shape semantics: load it "
            "outside mx.np_shape(True)")
    if magic in (V2_MAGIC, V3_MAGIC):
        (code,) = reader.ints("i", "storage type")
        if code not in _STYPES or (magic == V3_MAGIC and code != 0):
            raise reader.fail(f"storage type {code} is not dense, row_sparse or csr")
        if code != 0:
            return _sparse(reader, _STYPES[code])
        shape = reader.shape("shape")
    elif magic == V1_MAGIC:
        shape = reader.shape("shape")
    elif magic <= 32:  # the oldest layout: the header is the ndim, dims are uint32
        shape = reader.ints(f"{magic}I", "shape")
    else:
        raise reader.fail(f"array header {magic:#x} is no NDArray magic number")
    if not shape and magic != V3_MAGIC:
        raise reader.fail("it holds an empty (none) array, which sparsegen has no array for")
    return _dense(reader, shape)


def loads(buf: bytes, name: str = "<buffer>") -> list[NDArray] | dict[str, NDArray]:
    """The arrays of an NDArray file's bytes: a list, or a dict when the file names them."""
    reader = _Reader(bytes(buf), name)
    header, _reserved, count = reader.ints("QQQ", "file header")
    if header != LIST_MAGIC:
        raise reader.fail(f"file header {header:#x} is not {LIST_MAGIC:#x}")
    if count > len(reader.buf):
        raise reader.fail(f"it claims {count} arrays")
    arrays = [_array(reader) for _ in range(count)]
    (named,) = reader.ints("Q", "name count")
    if named not in (0, count):
        raise reader.fail(f"{named} names for {count} arrays")
    names = []
    for _ in range(named):
        (size,) = reader.ints("Q", "name length")
        try:
            names.append(bytes(reader.take(size, "name")).decode("utf-8"))
        except UnicodeDecodeError:
            raise reader.fail("a name is not UTF-8") from None
    return dict(zip(names, arrays)) if names else arrays


def load(fname: Any) -> list[NDArray] | dict[str, NDArray]:
    """The arrays in file ``fname`` (MXNet 1.9.1's NDArray format, from ``mx.nd.save`` of
    MXNet or sparsegen): a list, or a dict of str -> NDArray when they were saved by name, as
    ``mx.nd.load``. A file that is not one raises ``MXNetError`` naming it."""
    path = _path(fname, "load")
    try:
        with open(path, "rb") as f:
            content = f.read()
    except OSError as error:
        raise SparsegenError(f"load: cannot read {path!r}: {error.strerror or error}") from None
    return loads(content, repr(path))


def load_frombuffer(buf: Any) -> list[NDArray] | dict[str, NDArray]:
    """The arrays in ``buf`` (the bytes of an NDArray file), as ``mx.nd.load_frombuffer``."""
    if not isinstance(buf, (bytes, bytearray, memoryview, str)):
        raise InvalidType(f"load_frombuffer: buf must be bytes, got {type(buf).__name__}")
    return loads(buf.encode("latin-1") if isinstance(buf, str) else buf)


def state(array: NDArray) -> dict[str, bytearray]:
    """``array.__getstate__()`` as MXNet's: ``{'handle': the array's bytes}`` (one array in the
    file format, no file header)."""
    return {"handle": bytearray(_array_bytes(array))}


def from_state(state: Any) -> NDArray:
    """The array of an ``__getstate__`` dict (MXNet's or sparsegen's)."""
    if not isinstance(state, dict) or not isinstance(state.get("handle"),
                                                     (bytes, bytearray, memoryview)):
        raise InvalidValue(f"NDArray.__setstate__: state must be a dict with the array's bytes "
                           f"under 'handle' (what __getstate__ gives), got {type(state).__name__}")
    return _array(_Reader(bytes(state["handle"]), "<NDArray state>"))


def unpickle(buf: bytes) -> NDArray:
    """The one array of ``dumps(array)`` (what ``pickle`` stores for an NDArray)."""
    (array,) = loads(buf, "<pickled NDArray>")
    return array


__all__ = ["load", "load_frombuffer", "save"]
