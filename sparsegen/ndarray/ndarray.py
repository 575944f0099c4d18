"""The dense ``NDArray`` (MXNet's NDArray on a context), base class of the sparse arrays."""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np

from ..context import Context
from ..device import DeviceArray, device_of, host_copy, place, to_host
from ..errors import SparsegenError

STYPES = ("default", "row_sparse", "csr")


_MODULES: dict[str, Any] = {}


def _late(name: str) -> Any:
    """A sibling module that builds on NDArray (conversions, operators), imported on first use:
    importing it at the top would be circular, and a per-call ``import`` costs microseconds."""
    module = _MODULES.get(name)
    if module is None:
        module = _MODULES[name] = importlib.import_module(f"{__package__}.{name}")
    return module


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


def is_full_slice(key: Any) -> bool:
    """Whether ``key`` is ``[:]`` (or ``[...]``), the only assignment key sparse arrays take."""
    return key is Ellipsis or (
        isinstance(key, slice) and key.start is None and key.stop is None and key.step is None
    )


class NDArray:
    """A dense n-dimensional array on a context, as ``mxnet.nd.NDArray``.

    CPU arrays keep their values in a numpy buffer that kernels read and write in place through
    DLPack; GPU arrays keep them in GPU memory (``sparsegen.device.DeviceArray``) and run the
    CUDA kernels. ``asnumpy()`` returns a host copy, as in MXNet.
    """

    __array_priority__ = 1000.0
    stype = "default"

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
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    __hash__ = object.__hash__  # identity, as MXNet: ``==`` is elementwise, not equality

    def __bool__(self) -> bool:
        """The truth of the one element (``if x:``); more or fewer elements raise, as MXNet."""
        if self.size == 1:
            return bool(self.asscalar())
        if self.size == 0:
            raise SparsegenError(f"the truth value of an empty NDArray (shape {self.shape}) is "
                                 "ambiguous")
        raise ValueError(f"The truth value of an NDArray with multiple elements is ambiguous "
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
            raise SparsegenError(f"asscalar needs an array of one element, got shape {self.shape}")
        return self.asnumpy().reshape(())[()]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        values = to_host(self._storage)
        if copy is True and values is self._storage:
            values = values.copy()
        return values if dtype is None else values.astype(dtype, copy=False)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._storage.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._storage.__dlpack_device__()

    def tostype(self, stype: str) -> "NDArray":
        """This array in storage ``stype`` (``default``, ``row_sparse`` or ``csr``)."""
        return _late("storage").cast_storage(self, stype)

    def astype(self, dtype: Any, copy: bool = True) -> "NDArray":
        """This array with elements cast to ``dtype`` (same storage type)."""
        if not copy and np.dtype(dtype) == self._storage.dtype:
            return self
        return _late("storage").with_dtype(self, dtype)

    # -- copies -----------------------------------------------------------------------------
    def copy(self) -> "NDArray":
        """A deep copy (same storage type, dtype and context)."""
        return self.copyto(self._ctx)

    def copyto(self, other: "NDArray | Context") -> "NDArray":
        """Copy into ``other`` (it keeps its storage type) or to a new array on context ``other``."""
        if isinstance(other, Context):
            from ..context import resolve

            ctx = resolve(other)
            return _late("storage").wrap(place(self._storage, device_of(ctx), fresh=True), ctx)
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto: other must be an NDArray or a Context, got "
                            f"{type(other).__name__}")
        if other.shape != self.shape:
            raise SparsegenError(
                f"copyto: cannot copy an array of shape {self.shape} into one of shape "
                f"{other.shape} (other must have this array's shape; its dtype may differ)"
            )
        if other is not self:
            _late("storage").assign(other, self)
        return other

    def as_in_context(self, context: Context) -> "NDArray":
        """This array if it is on ``context``, else a copy on it."""
        return self if context == self._ctx else self.copyto(context)

    def __setitem__(self, key: Any, value: Any) -> None:
        if is_full_slice(key):
            _late("storage").assign(self, value)
        elif not self._storage.flags.writeable:
            _late("storage").assign(self, value)  # raises the read-only error
        else:  # a GPU array's values make a round trip through the host
            values = to_host(self._storage)
            source = value.asnumpy() if isinstance(value, NDArray) else value
            try:
                values[key] = source  # numpy writes nothing when this raises
            except (TypeError, ValueError) as err:
                raise SparsegenError(
                    f"cannot assign {type(value).__name__} of shape {np.shape(source)} to "
                    f"x[{key!r}] of an array of shape {self.shape}: {err}"
                ) from None
            if isinstance(self._storage, DeviceArray):
                self._storage.copy_from(values)

    def __getitem__(self, key: Any) -> "NDArray":
        if isinstance(key, NDArray):
            key = key.asnumpy().astype(np.int64)
        result = to_host(self._storage)[key]
        return NDArray(np.asarray(result), self._ctx)  # a view on the CPU, a copy on a GPU

    def reshape(self, *shape: Any) -> "NDArray":
        """A dense view with a new shape (``-1`` infers one dimension)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return NDArray(self._storage.reshape(shape), self._ctx)

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
        return _late("elemwise").add(self, other)

    def __radd__(self, other: Any) -> "NDArray":
        return _late("elemwise").add(other, self)

    def __sub__(self, other: Any) -> "NDArray":
        return _late("elemwise").subtract(self, other)

    def __rsub__(self, other: Any) -> "NDArray":
        return _late("elemwise").subtract(other, self)

    def __mul__(self, other: Any) -> "NDArray":
        return _late("elemwise").multiply(self, other)

    def __rmul__(self, other: Any) -> "NDArray":
        return _late("elemwise").multiply(other, self)

    def __truediv__(self, other: Any) -> "NDArray":
        return _late("elemwise").divide(self, other)

    def __rtruediv__(self, other: Any) -> "NDArray":
        return _late("elemwise").divide(other, self)

    def __neg__(self) -> "NDArray":
        return _late("elemwise").UNARY_OPS["negative"](self)

    def __iadd__(self, other: Any) -> "NDArray":
        return _late("elemwise").inplace("add", self, other)

    def __isub__(self, other: Any) -> "NDArray":
        return _late("elemwise").inplace("sub", self, other)

    def __imul__(self, other: Any) -> "NDArray":
        return _late("elemwise").inplace("mul", self, other)

    def __itruediv__(self, other: Any) -> "NDArray":
        return _late("elemwise").inplace("div", self, other)

    # -- comparisons (sparsegen/ndarray/compare.py): 1 / 0 in the dtype, elementwise ----------
    def __eq__(self, other: Any) -> "NDArray":  # type: ignore[override]
        return _late("compare").equal(self, other)

    def __ne__(self, other: Any) -> "NDArray":  # type: ignore[override]
        return _late("compare").not_equal(self, other)

    def __gt__(self, other: Any) -> "NDArray":
        return _late("compare").greater(self, other)

    def __ge__(self, other: Any) -> "NDArray":
        return _late("compare").greater_equal(self, other)

    def __lt__(self, other: Any) -> "NDArray":
        return _late("compare").lesser(self, other)

    def __le__(self, other: Any) -> "NDArray":
        return _late("compare").lesser_equal(self, other)
