"""The dense ``NDArray`` (MXNet's NDArray on a context), base class of the sparse arrays."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .. import tape
from ..context import Context
from ..device import DeviceArray, device_of, host_copy, place, to_host
from ..errors import InvalidIndex, InvalidType, InvalidValue, SparsegenError
from ..formats import check_dtype
from ..ops.rule import STYPES
from .values import user_values


_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
"""MXNet's storage type ids (its C API's), by name."""
_STORAGE_TYPE_ID_TO_STR = {code: name for name, code in _STORAGE_TYPE_STR_TO_ID.items()}
"""MXNet's storage type names, by id."""
py_slice = slice
"""Python's ``slice`` (MXNet's module defines an op named ``slice``, so test files import the
builtin under this name)."""


class _Above:
    """The modules above this one that NDArray's methods run, installed by the package.

    Conversions and operators (``x.tostype``, ``x + y``, ``x.sum()``, ``x[1:3]``) are
    implemented by sibling modules (``storage``, ``dispatch``, ``elemwise``, ``reduce``, ...)
    that build on NDArray: they import this module, so this module cannot import them (an
    import cycle, hidden or not). The package ``sparsegen.ndarray``, which imports them all,
    hands them over with ``install`` right after its imports; Python runs the package before
    any of its modules, so the methods find them wherever an array can be made. A method reads
    one attribute (``_above.elemwise.add``); a call before ``install`` raises."""

    def __getattr__(self, name: str) -> Any:  # only reached for a module not installed
        raise SparsegenError(f"NDArray's methods run sparsegen.ndarray.{name}, which the package "
                             "sparsegen.ndarray installs when it is imported (import sparsegen)")


_above = _Above()


def install(**modules: Any) -> None:
    """Hand NDArray's methods the modules they run, by name (``nd``: the package's own
    functions, ``zeros``, ``zeros_like``, ``ones_like``); ``sparsegen.ndarray`` calls it."""
    vars(_above).update(modules)


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


def is_full_slice(key: Any) -> bool:
    """Whether ``key`` is ``[:]`` (or ``[...]``), the only assignment key sparse arrays take."""
    return key is Ellipsis or (
        isinstance(key, slice) and key.start is None and key.stop is None and key.step is None
    )


_INT64 = np.iinfo(np.int64)


def _index_array(part: Any, key: Any) -> np.ndarray:
    """An array index (list, numpy, NDArray values) as int64 ids: integral floats are accepted
    (MXNet's default dtype is float32), fractions, nan and booleans are not."""
    ids = np.asarray(part)
    if ids.dtype.kind == "b":
        raise InvalidIndex(
            f"boolean index {_short(part)}{_where(key)}: MXNet 1.x reads booleans as the "
            "ids 0 and 1, numpy as a mask; pass ids (np.flatnonzero(mask)) to say which"
        )
    if ids.size == 0:
        return ids.astype(np.int64)
    if ids.dtype.kind == "f":
        if not np.all(np.isfinite(ids) & (np.floor(ids) == ids)):
            raise InvalidIndex(f"index {_short(part)}{_where(key)} holds non-integer values")
    elif ids.dtype.kind not in "iu":
        raise InvalidIndex(f"index {_short(part)}{_where(key)} must hold integers")
    if ids.max() > _INT64.max or ids.min() < _INT64.min:
        raise InvalidIndex(f"index {_short(part)}{_where(key)} is out of range of int64")
    return ids.astype(np.int64)


def _short(value: Any) -> str:
    text = repr(value.asnumpy() if isinstance(value, NDArray) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def _where(key: Any) -> str:
    """`` in key (...)`` for a tuple key, whose entries the messages name one at a time."""
    return f" in key {_short(key)}" if isinstance(key, tuple) else ""


def _key_part(part: Any, key: Any) -> Any:
    """One entry of an indexing key as numpy takes it, or the error MXNet 1.9.1 raises."""
    if part is None or part is Ellipsis or isinstance(part, slice):
        return part
    if isinstance(part, (bool, np.bool_)):
        return _index_array(part, key)  # raises: booleans are ambiguous
    if isinstance(part, numbers.Integral):
        if not _INT64.min <= part <= _INT64.max:
            raise InvalidIndex(f"index {part}{_where(key)} is out of bounds")
        return int(part)
    if isinstance(part, NDArray):
        return _index_array(part.asnumpy(), key)
    if isinstance(part, (list, np.ndarray)):
        return _index_array(part, key)
    raise InvalidValue(
        f"NDArray does not support indexing with key {_short(part)} of type "
        f"{type(part).__name__}; use ints, slices, None, ... or integer arrays"
    )


def numpy_key(key: Any) -> tuple[Any, ...]:
    """An indexing key checked and converted for numpy, as a tuple ending in ``...`` (so that a
    key of ints selects a 0-d view, not a numpy scalar)."""
    parts = key if isinstance(key, tuple) else (key,)
    converted = tuple(_key_part(part, key) for part in parts)
    if not any(part is Ellipsis for part in converted):
        converted += (Ellipsis,)
    return converted


def reshaped(shape: tuple[int, ...], spec: tuple[Any, ...],
             reverse: bool = False) -> tuple[int, ...]:
    """The shape ``reshape(spec)`` gives an array of ``shape``, with MXNet's special values:
    0 copies a dimension, -1 infers one, -2 copies the rest, -3 merges two, -4 splits one."""
    def fail(why: str) -> InvalidValue:
        return InvalidValue(f"cannot reshape an array of shape {shape} to {spec}: {why}")

    if any(not isinstance(d, numbers.Integral) or isinstance(d, (bool, np.bool_)) for d in spec):
        raise fail("shape must hold ints")
    source, wanted = list(shape), [int(d) for d in spec]
    if reverse:
        if -3 in wanted or -4 in wanted:
            raise fail("reverse=True takes only the special values 0, -1 and -2")
        source.reverse()
        wanted.reverse()
    out: list[int] = []
    i = j = 0
    infer = None
    while j < len(wanted):
        d = wanted[j]
        if d > 0:
            out.append(d)
            i += 1
        elif d in (0, -3) and i + (d == -3) >= len(source):  # -1 may outnumber them
            raise fail(f"the value {d} at position {j} has no input dimension to refer to")
        elif d == 0:
            out.append(source[i])
            i += 1
        elif d == -1:
            if infer is not None:
                raise fail("only one dimension can be -1")
            infer = len(out)
            out.append(-1)
            i += 1
        elif d == -2:
            out.extend(source[i:])
            i = len(source)
        elif d == -3:
            out.append(source[i] * source[i + 1])
            i += 2
        elif d == -4:
            if j + 2 >= len(wanted) or i >= len(source):
                raise fail("-4 needs the two dimensions to split into after it")
            a, b = wanted[j + 1], wanted[j + 2]
            if a == -1 and b == -1 or min(a, b) < -1 or 0 in (a, b):
                raise fail(f"-4 splits into two positive sizes (one may be -1), got {a}, {b}")
            a = source[i] // b if a == -1 else a
            b = source[i] // a if b == -1 else b
            if a * b != source[i]:
                raise fail(f"-4 cannot split {source[i]} into {a} x {b}")
            out += [a, b]
            i += 1
            j += 2
        else:
            raise fail(f"{d} is not a size or one of MXNet's special values 0, -1, -2, -3, -4")
        j += 1
    total = math.prod(shape)
    if infer is not None:
        known = math.prod(d for k, d in enumerate(out) if k != infer)
        if known == 0 or total % known:
            raise fail(f"-1 cannot be inferred ({total} elements, {known} in the other dimensions)")
        out[infer] = total // known
    if math.prod(out) != total:
        raise fail(f"{math.prod(out)} elements in {tuple(out)}, the array has {total}")
    return tuple(reversed(out)) if reverse else tuple(out)


class NDArray:
    """A dense n-dimensional array on a context, as ``mxnet.nd.NDArray``.

    CPU arrays keep their values in a numpy buffer that kernels read and write in place through
    DLPack; GPU arrays keep them in GPU memory (``sparsegen.device.DeviceArray``) and run the
    CUDA kernels. ``asnumpy()`` returns a host copy, as in MXNet.
    """

    __array_priority__ = 1000.0
    stype = "default"
    _entry: Any = None  # (autograd node, output position) of a recorded result
    _grad: Any = None  # the gradient buffer attach_grad made
    _grad_req = "null"
    _fresh_grad = False  # a backward pass wrote the gradient since the last update read it

    def __init__(self, storage: Any, ctx: Context) -> None:
        self._storage = place(storage, device_of(ctx))  # moved into the context's memory
        self._ctx = ctx

    # -- attributes -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return tuple(self._storage.shape)

    @property
    def dtype(self) -> type:
        """The element type as a numpy scalar type (``numpy.float32``), as MXNet returns it."""
        return self._storage.dtype.type

    @property
    def size(self) -> int:
        """The number of elements of the (dense) array, as an exact Python int."""
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def context(self) -> Context:
        """The device the array lives on."""
        return self._ctx

    ctx = context

    def __len__(self) -> int:
        if not self.shape:
            raise InvalidType("len() of a 0-d NDArray")
        return self.shape[0]

    __hash__ = object.__hash__  # identity, as MXNet: ``==`` is elementwise, not equality

    def __bool__(self) -> bool:
        """The truth of the one element (``if x:``); an empty array is false and more elements
        raise, as MXNet."""
        if self.size == 1:
            return bool(self.asscalar())
        if self.size == 0:
            return False
        raise InvalidValue(f"The truth value of an NDArray with multiple elements is ambiguous "
                           f"(shape {self.shape}).")

    def __repr__(self) -> str:
        return f"\n{self.asnumpy()}\n<{type(self).__name__} {_shape_text(self.shape)} @{self._ctx}>"

    # -- conversion -------------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the values."""
        return host_copy(self._storage)

    def asscalar(self) -> Any:
        """The single value of a one-element array."""
        if self.size != 1:
            raise InvalidValue(f"asscalar needs an array of one element, got shape {self.shape}")
        return self.asnumpy().reshape(())[()]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        values = to_host(self._storage)
        if copy is True and values is self._storage:
            values = values.copy()
        return values if dtype is None else values.astype(dtype, copy=False)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._storage.__dlpack__(**kwargs)

    def to_dlpack_for_read(self) -> Any:
        """A DLPack capsule over this array's memory, as MXNet's (DLPack 1.0, writable, so
        that ``from_dlpack`` of it shares the memory as MXNet's does)."""
        return self.__dlpack__(max_version=(1, 0))

    def to_dlpack_for_write(self) -> Any:
        """A DLPack capsule over this array's memory, to be written through, as MXNet's."""
        return self.__dlpack__(max_version=(1, 0))

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._storage.__dlpack_device__()

    def tostype(self, stype: str) -> "NDArray":
        """This array in storage ``stype`` (``default``, ``row_sparse`` or ``csr``)."""
        return _above.dispatch.cast_storage(self, stype)

    def astype(self, dtype: Any, copy: bool = True) -> "NDArray":
        """This array with elements cast to ``dtype`` (same storage type)."""
        if dtype is None:  # MXNet reads None as float32, numpy as float64: neither is obvious
            raise SparsegenError("astype: dtype must be given (for example 'float32'), got None")
        target = check_dtype(dtype, "dtype")
        if not copy and target == self._storage.dtype:
            return self
        return _above.storage.with_dtype(self, target)

    # -- copies -----------------------------------------------------------------------------
    def copy(self) -> "NDArray":
        """A deep copy (same storage type, dtype and context)."""
        return self.copyto(self._ctx)

    def copyto(self, other: "NDArray | Context") -> "NDArray":
        """Copy into ``other`` (it keeps its storage type) or to a new array on context ``other``."""
        if isinstance(other, Context):
            from ..context import resolve

            ctx = resolve(other)
            copy = _above.storage.wrap(place(self._storage, device_of(ctx), fresh=True), ctx)
            tape.record("_copyto", [self], copy)  # differentiable, as MXNet's cross-device copy
            return copy
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto: other must be an NDArray or a Context, got "
                            f"{type(other).__name__}")
        if other.shape != self.shape:
            raise SparsegenError(
                f"copyto: cannot copy an array of shape {self.shape} into one of shape "
                f"{other.shape} (other must have this array's shape; its dtype may differ)"
            )
        if other is not self:
            _above.storage.assign(other, self)
        return other

    def as_in_context(self, context: Context) -> "NDArray":
        """This array if it is on ``context``, else a copy on it."""
        if not isinstance(context, Context):
            raise InvalidType(
                f"as_in_context: context must be a Context such as mx.cpu() or mx.gpu(0), "
                f"got {type(context).__name__} {context!r}"
            )
        return self if context == self._ctx else self.copyto(context)

    def __setitem__(self, key: Any, value: Any) -> None:
        tape.check_inplace("__setitem__", (self, value))
        if not isinstance(value, NDArray):
            try:
                value = user_values(value, self._storage.dtype, "value")
            except InvalidType as err:
                raise InvalidType(f"cannot assign {type(value).__name__} to x[{_short(key)}]: "
                                  f"{err}") from None
        if is_full_slice(key) or not self._storage.flags.writeable:
            _above.storage.assign(self, value)  # or raises the read-only error
            return
        index = numpy_key(key)
        source = value.asnumpy() if isinstance(value, NDArray) else value
        values = to_host(self._storage)  # a GPU array's values make a round trip through the host
        try:
            values[index] = source  # numpy writes nothing when this raises
        except (TypeError, ValueError) as err:
            error = InvalidType if isinstance(err, TypeError) else InvalidValue
            raise error(
                f"cannot assign {type(value).__name__} of shape {np.shape(source)} to "
                f"x[{_short(key)}] of an array of shape {self.shape}: {err}"
            ) from None
        if isinstance(self._storage, DeviceArray):
            self._storage.copy_from(values)

    def __getitem__(self, key: Any) -> "NDArray":
        """``x[key]``: a view when the selection is one contiguous block (ints and slices on the
        leading axes, as MXNet's views), else a copy (steps, inner axes, integer arrays)."""
        index = numpy_key(key)
        if _above.slicing.is_basic(index):  # ints, slices, None, ...: a strided view
            return _above.slicing.getitem(self, index)
        values = to_host(self._storage)
        result = values[index]
        if not (result.flags.c_contiguous and np.may_share_memory(result, values)):
            result = np.array(result, order="C")
        array = NDArray(result, self._ctx)  # on a GPU, a copy
        tape.record("_getitem_advanced", (self,), array, {"key": index})
        return array

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key: Any, shape: Any) -> bool:
        """Whether the slices ``slc_key`` pick one contiguous block of an array of ``shape``
        (so that ``x[slc_key]`` is a view), as MXNet's helper its tests call."""
        return _above.slicing.picks_one_block(tuple(slc_key), tuple(shape))

    def reshape(self, *shape: Any, **kwargs: Any) -> "NDArray":
        """A dense view with a new shape, with MXNet's special values (``-1`` infers one
        dimension, ``0`` copies one, ``-2`` copies the rest, ``-3`` merges two, ``-4`` splits
        one); ``reverse=True`` reads them from the right."""
        reverse = bool(kwargs.pop("reverse", False))
        if "shape" in kwargs:
            if shape:
                raise InvalidType("reshape takes the shape positionally or as shape=, not both")
            shape = (kwargs.pop("shape"),)
        if kwargs:
            raise InvalidType(f"reshape got unexpected keyword arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        result = NDArray(self._storage.reshape(reshaped(self.shape, shape, reverse)), self._ctx)
        tape.record("reshape", (self,), result, gradient=_reshaped_back)
        return result

    # -- autograd --------------------------------------------------------------------------
    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Make the array a variable of ``mx.autograd``: a zero gradient buffer (of storage
        ``stype``, by default the array's own) that ``backward`` writes (``grad_req='write'``)
        or adds to (``'add'``); ``'null'`` takes no gradient."""
        if grad_req not in tape.GRAD_REQS:
            raise InvalidValue(f"attach_grad: grad_req must be one of {tape.GRAD_REQS}, got "
                               f"{grad_req!r}")
        zeros = _above.nd.zeros
        self._grad = zeros(self.shape, ctx=self._ctx, dtype=self.dtype, stype=stype or self.stype)
        self._grad_req = grad_req
        self._entry = None  # a recorded result becomes a variable: its history is cut

    @property
    def grad(self) -> "NDArray | None":
        """The gradient buffer of a variable (``attach_grad``), or None."""
        return self._grad

    def backward(self, out_grad: "NDArray | None" = None, retain_graph: bool = False,
                 train_mode: bool = True) -> None:
        """The gradients of this array (weighted by ``out_grad``) into its variables' ``grad``,
        as ``mxnet.autograd.backward([self], [out_grad])``."""
        # mx.autograd builds on the front end: its pass is reached through the tape below both
        tape.backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)

    def detach(self) -> "NDArray":
        """The same values outside the recorded graph (no gradient flows through it)."""
        return _above.storage.wrap(self._storage, self._ctx)

    # -- synchronisation (CPU kernels are synchronous, GPU kernels run in stream order) --------
    def wait_to_read(self) -> None:
        """Block until the kernels writing this array have finished (GPU arrays wait for their
        GPU; CPU kernels are synchronous)."""
        if self._ctx.device_type == "gpu":
            from ..device import synchronize

            synchronize(self._ctx.device_id)

    wait_to_write = wait_to_read

    # -- arithmetic (sparsegen/ndarray/elemwise.py; storage rules as MXNet's) -------------------
    def __add__(self, other: Any) -> "NDArray":
        return _above.elemwise.add(self, other)

    def __radd__(self, other: Any) -> "NDArray":
        return _above.elemwise.add(other, self)

    def __sub__(self, other: Any) -> "NDArray":
        return _above.elemwise.subtract(self, other)

    def __rsub__(self, other: Any) -> "NDArray":
        return _above.elemwise.subtract(other, self)

    def __mul__(self, other: Any) -> "NDArray":
        return _above.elemwise.multiply(self, other)

    def __rmul__(self, other: Any) -> "NDArray":
        return _above.elemwise.multiply(other, self)

    def __truediv__(self, other: Any) -> "NDArray":
        return _above.elemwise.divide(self, other)

    def __rtruediv__(self, other: Any) -> "NDArray":
        return _above.elemwise.divide(other, self)

    def __neg__(self) -> "NDArray":
        return _above.elemwise.UNARY_OPS["negative"](self)

    def __iadd__(self, other: Any) -> "NDArray":
        return _above.elemwise.inplace("add", self, other)

    def __isub__(self, other: Any) -> "NDArray":
        return _above.elemwise.inplace("sub", self, other)

    def __imul__(self, other: Any) -> "NDArray":
        return _above.elemwise.inplace("mul", self, other)

    def __itruediv__(self, other: Any) -> "NDArray":
        return _above.elemwise.inplace("div", self, other)

    # -- comparisons (sparsegen/ndarray/compare.py): 1 / 0 in the dtype, elementwise ----------
    def __eq__(self, other: Any) -> "NDArray":  # type: ignore[override]
        return _above.compare.equal(self, other)

    def __ne__(self, other: Any) -> "NDArray":  # type: ignore[override]
        return _above.compare.not_equal(self, other)

    def __gt__(self, other: Any) -> "NDArray":
        return _above.compare.greater(self, other)

    def __ge__(self, other: Any) -> "NDArray":
        return _above.compare.greater_equal(self, other)

    def __lt__(self, other: Any) -> "NDArray":
        return _above.compare.lesser(self, other)

    def __le__(self, other: Any) -> "NDArray":
        return _above.compare.lesser_equal(self, other)

    # -- persistence (sparsegen/ndarray/persist.py) ------------------------------------------
    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        """Pickle as MXNet does: the array in the NDArray file format (from any context; it
        comes back on that GPU when there is one, else on the CPU)."""
        persist = _above.persist
        return persist.unpickle, (persist.dumps(self),)

    def __getstate__(self) -> dict[str, bytearray]:
        """``{'handle': the array's bytes}``, MXNet's pickled state."""
        return _above.persist.state(self)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Become the array of ``state`` (``__getstate__``'s, from MXNet or sparsegen; a GPU
        array comes back on the CPU when there is no GPU)."""
        loaded = _above.persist.from_state(state)
        self._storage, self._ctx = loaded._storage, loaded._ctx
    # -- nn: indexing, neural-network and sorting ops (sparsegen/ndarray/{indexing,nn,sort}.py) --
    def take(self, indices: "NDArray", axis: int = 0, mode: str = "clip",
             **kwargs: Any) -> "NDArray":
        """``mx.nd.take(self, indices, axis, mode)``."""
        return _above.indexing.take(self, indices, axis, mode, **kwargs)

    def pick(self, index: "NDArray", axis: Any = -1, keepdims: bool = False, mode: str = "clip",
             **kwargs: Any) -> "NDArray":
        """``mx.nd.pick(self, index, axis, keepdims, mode)``."""
        return _above.indexing.pick(self, index, axis, keepdims, mode, **kwargs)

    def one_hot(self, depth: int, on_value: float = 1.0, off_value: float = 0.0,
                dtype: Any = "float32", **kwargs: Any) -> "NDArray":
        """``mx.nd.one_hot(self, depth, on_value, off_value, dtype)``."""
        return _above.indexing.one_hot(self, depth, on_value, off_value, dtype, **kwargs)

    def softmax(self, axis: int = -1, temperature: float | None = None, **kwargs: Any) -> "NDArray":
        """``mx.nd.softmax(self, axis, temperature)``."""
        return _above.nn.softmax(self, axis, temperature, **kwargs)

    def log_softmax(self, axis: int = -1, temperature: float | None = None,
                    **kwargs: Any) -> "NDArray":
        """``mx.nd.log_softmax(self, axis, temperature)``."""
        return _above.nn.log_softmax(self, axis, temperature, **kwargs)

    def softmin(self, axis: int = -1, temperature: float | None = None, **kwargs: Any) -> "NDArray":
        """``mx.nd.softmin(self, axis, temperature)``."""
        return _above.nn.softmin(self, axis, temperature, **kwargs)

    def sort(self, axis: Any = -1, is_ascend: bool = True, **kwargs: Any) -> "NDArray":
        """``mx.nd.sort(self, axis, is_ascend)``."""
        return _above.sort.sort(self, axis, is_ascend, **kwargs)

    def argsort(self, axis: Any = -1, is_ascend: bool = True, dtype: Any = "float32",
                **kwargs: Any) -> "NDArray":
        """``mx.nd.argsort(self, axis, is_ascend, dtype)``."""
        return _above.sort.argsort(self, axis, is_ascend, dtype, **kwargs)

    def topk(self, axis: Any = -1, k: int = 1, ret_typ: str = "indices", is_ascend: bool = False,
             dtype: Any = "float32", **kwargs: Any) -> Any:
        """``mx.nd.topk(self, axis, k, ret_typ, is_ascend, dtype)``."""
        return _above.sort.topk(self, axis, k, ret_typ, is_ascend, dtype, **kwargs)

    def clip(self, a_min: Any, a_max: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.clip(self, a_min, a_max)``."""
        return _above.elemwise.clip(self, a_min, a_max, **kwargs)

    def relu(self, **kwargs: Any) -> "NDArray":
        """``mx.nd.relu(self)``."""
        return _above.elemwise.UNARY_OPS["relu"](self, **kwargs)

    def sigmoid(self, **kwargs: Any) -> "NDArray":
        """``mx.nd.sigmoid(self)``."""
        return _above.elemwise.UNARY_OPS["sigmoid"](self, **kwargs)

    def tanh(self, **kwargs: Any) -> "NDArray":
        """``mx.nd.tanh(self)``."""
        return _above.elemwise.UNARY_OPS["tanh"](self, **kwargs)
    # -- shape, slicing and creation (sparsegen/ndarray/shape.py, slicing.py) --
    @property
    def T(self) -> "NDArray":  # noqa: N802 - MXNet's name
        """The array with its dimensions reversed (a copy)."""
        return _above.shape.transpose(self)

    def transpose(self, *axes: Any, **kwargs: Any) -> "NDArray":
        """The array with its dimensions permuted (``x.transpose((1, 0))``, ``x.transpose(1, 0)``
        or ``axes=``), as ``mx.nd.transpose``."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)) or axes == ():
            return _above.shape.transpose(self, *axes, **kwargs)
        return _above.shape.transpose(self, axes, **kwargs)

    def expand_dims(self, axis: Any, inplace: bool = False, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.expand_dims``; ``inplace``: a view of this (dense) array, as MXNet's."""
        if inplace:
            return self.reshape(_above.shape.expand_dims_shape(self, axis))
        return _above.shape.expand_dims(self, axis, **kwargs)

    def squeeze(self, axis: Any = None, inplace: bool = False, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.squeeze``; ``inplace``: a view of this (dense) array, as MXNet's."""
        if inplace:
            return self.reshape(_above.shape.squeeze_shape(self, axis))
        return _above.shape.squeeze(self, axis, **kwargs)

    def flatten(self, inplace: bool = False, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.flatten``; ``inplace``: a view of this (dense) array, as MXNet's."""
        if inplace:
            return self.reshape(_above.shape.flatten_shape(self))
        return _above.shape.flatten(self, **kwargs)

    def swapaxes(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.swapaxes``."""
        return _above.shape.swapaxes(self, *args, **kwargs)

    def flip(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.flip``."""
        return _above.shape.flip(self, *args, **kwargs)

    def tile(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.tile``."""
        return _above.shape.tile(self, *args, **kwargs)

    def repeat(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.repeat``."""
        return _above.shape.repeat(self, *args, **kwargs)

    def pad(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.pad``."""
        return _above.shape.pad(self, *args, **kwargs)

    def depth_to_space(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.depth_to_space``."""
        return _above.shape.depth_to_space(self, *args, **kwargs)

    def space_to_depth(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.space_to_depth``."""
        return _above.shape.space_to_depth(self, *args, **kwargs)

    def broadcast_to(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.broadcast_to``."""
        return _above.shape.broadcast_to(self, *args, **kwargs)

    def broadcast_like(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.broadcast_like``."""
        return _above.shape.broadcast_like(self, *args, **kwargs)

    def reshape_like(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.reshape_like``."""
        return _above.shape.reshape_like(self, *args, **kwargs)

    def shape_array(self) -> "NDArray":
        """See ``mx.nd.shape_array``."""
        return _above.shape.shape_array(self)

    def size_array(self) -> "NDArray":
        """See ``mx.nd.size_array``."""
        return _above.shape.size_array(self)

    def split_v2(self, *args: Any, **kwargs: Any) -> Any:
        """See ``mx.nd.split_v2``."""
        return _above.slicing.split_v2(self, *args, **kwargs)

    def argmax_channel(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.argmax_channel``."""
        return _above.reduce.argmax_channel(self, *args, **kwargs)

    def broadcast_axes(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.broadcast_axes``."""
        return _above.shape.broadcast_axes(self, *args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        """See ``mx.nd.split``."""
        return _above.slicing.split(self, *args, **kwargs)

    def slice(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.slice``."""
        return _above.slicing.slice(self, *args, **kwargs)

    def slice_axis(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.slice_axis``."""
        return _above.slicing.slice_axis(self, *args, **kwargs)

    def slice_like(self, *args: Any, **kwargs: Any) -> "NDArray":
        """See ``mx.nd.slice_like``."""
        return _above.slicing.slice_like(self, *args, **kwargs)
    # -- reduce (sparsegen/ndarray/reduce.py; arguments as mx.nd.<name>) ----------------------
    def sum(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.sum(self, ...)``."""
        return _above.reduce.sum(self, *args, **kwargs)

    def mean(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.mean(self, ...)``."""
        return _above.reduce.mean(self, *args, **kwargs)

    def prod(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.prod(self, ...)``."""
        return _above.reduce.prod(self, *args, **kwargs)

    def nansum(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.nansum(self, ...)``."""
        return _above.reduce.nansum(self, *args, **kwargs)

    def nanprod(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.nanprod(self, ...)``."""
        return _above.reduce.nanprod(self, *args, **kwargs)

    def max(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.max(self, ...)``."""
        return _above.reduce.max(self, *args, **kwargs)

    def min(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.min(self, ...)``."""
        return _above.reduce.min(self, *args, **kwargs)

    def norm(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.norm(self, ...)``."""
        return _above.reduce.norm(self, *args, **kwargs)

    def argmax(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.argmax(self, ...)``."""
        return _above.reduce.argmax(self, *args, **kwargs)

    def argmin(self, *args: Any, **kwargs: Any) -> "NDArray":
        """``mx.nd.argmin(self, ...)``."""
        return _above.reduce.argmin(self, *args, **kwargs)

    # -- utils: MXNet's NDArray odds and ends (issue 13) --------------------------------------
    @property
    def __numpy_dtype__(self) -> np.dtype:
        """The dtype ``np.dtype(x)`` reads (numpy >= 2.4; ``x.dtype`` is a scalar type, as MXNet's,
        which numpy 2 no longer converts)."""
        return self._storage.dtype

    def __iter__(self) -> Any:
        """The sub-arrays along the first axis, ``x[0]``, ``x[1]``, ... (as iterating MXNet's
        NDArray); a 0-d array raises ``TypeError``, as numpy."""
        if not self.shape:
            raise InvalidType("iteration over a 0-d NDArray")
        return (self[i] for i in range(self.shape[0]))

    def zeros_like(self) -> "NDArray":
        """``mx.nd.zeros_like(self)``: zeros of this shape, dtype, context and storage type."""
        return _above.nd.zeros_like(self)

    def ones_like(self) -> "NDArray":
        """``mx.nd.ones_like(self)``: a dense array of ones of this shape, dtype and context."""
        return _above.nd.ones_like(self)

    # -- arith --
    def __pow__(self, other: Any) -> "NDArray":
        return _above.arith.power(self, other)

    def __rpow__(self, other: Any) -> "NDArray":
        return _above.arith.power(other, self)

    def __mod__(self, other: Any) -> "NDArray":
        return _above.arith.modulo(self, other)

    def __rmod__(self, other: Any) -> "NDArray":
        return _above.arith.modulo(other, self)


@tape.differentiable
def _reshaped_back(node: Any, out_grads: list[Any]) -> tuple[Any]:
    """The gradient of a reshape: the output gradient in the input's shape."""
    return (out_grads[0].tostype("default").reshape(node.inputs[0].shape),)


def _fluent(name: str) -> Any:
    """The NDArray method ``x.<name>(...)``: ``mx.nd.<name>(x, ...)`` of ``ndarray/elemwise``."""

    def method(self: NDArray, *args: Any, **kwargs: Any) -> NDArray:
        return getattr(_above.elemwise, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``mx.nd.{name}(self, ...)``."
    return method


_UNARY_METHODS = (
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "ceil", "cos",
    "cosh", "degrees", "exp", "expm1", "fix", "floor", "log", "log10", "log1p", "log2",
    "radians", "rcbrt", "reciprocal", "rint", "round", "rsqrt", "sign", "sin", "sinh", "sqrt",
    "square", "tan", "trunc",
)
"""MXNet's NDArray methods that are unary elementwise ops (``x.sqrt()``, ...)."""
for _name in _UNARY_METHODS:
    setattr(NDArray, _name, _fluent(_name))
NDArray.__abs__ = NDArray.abs  # abs(x), as MXNet's
