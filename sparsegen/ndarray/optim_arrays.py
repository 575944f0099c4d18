"""The arrays an optimizer update takes (weight, gradient, states): their checks, and states
that store every row. The operator-level updates and the optimizer classes share them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import shared_memory
from ..device import colocate, may_share_memory
from ..errors import SparsegenError
from ..formats import INDEX_DTYPE, RowSparse
from ..ops.optim import values
from .ndarray import NDArray
from .storage import convert

FLOAT_DTYPES = ("float16", "float32", "float64")
"""Weight dtypes the optimizers update (MXNet's optimizer operators take real types only)."""

_STORAGES = ("default", "row_sparse")
ANY_STORAGE = ("default", "row_sparse", "csr")
"""Storage types an update takes (csr ones through dense copies, MXNet's fallback)."""


def _buffer(array: NDArray) -> Any:
    """The values an update reads or writes of an array's storage."""
    return values(array._storage)


def check_kinds(arrays: tuple[tuple[str, Any], ...],
                 stypes: tuple[str, ...] = _STORAGES) -> None:
    """Raise unless each named array (``(name, array)`` pairs) is an NDArray of one of
    ``stypes``."""
    for what, array in arrays:
        if not isinstance(array, NDArray):
            raise SparsegenError(f"{what} must be an NDArray, got {type(array).__name__}")
        if array.stype not in stypes:
            raise SparsegenError(
                f"{what} must have {' or '.join(stypes)} storage, got {array.stype}"
            )


def check_weight(weight: Any, every_row: bool = True) -> None:
    """Raise unless ``weight`` is an array an optimizer can update; ``create_state`` passes
    ``every_row=False`` (a row_sparse weight may get its rows before its first update, and a
    csr weight is updated through a dense copy, MXNet's fallback)."""
    check_kinds((("weight", weight),), _STORAGES if every_row else ANY_STORAGE)
    dtype = weight._storage.dtype
    if dtype.kind != "f":  # float16/32/64: the only floating dtypes an NDArray can hold
        raise SparsegenError(
            f"weight: optimizers update floating-point weights ({', '.join(FLOAT_DTYPES)}), "
            f"got {dtype.name}"
        )
    if weight.ndim == 0:
        raise SparsegenError("weight must have at least 1 dimension, got shape ()")
    stored = _buffer(weight).shape[0]
    if every_row and weight.stype == "row_sparse" and stored != weight.shape[0]:
        raise SparsegenError(
            f"weight: a row_sparse weight must store every row (as MXNet requires); it stores "
            f"{stored} of {weight.shape[0]} rows"
        )


def check_arrays(weight: Any, grad: Any, states: tuple[Any, ...], row_states: int = 0) -> None:
    """Raise unless weight, grad and states can be updated together (nothing is written); the
    last ``row_states`` states are an update rule's row states: dense, one value per row."""
    check_weight(weight)
    check_kinds((("grad", grad), *((f"state {i}", s) for i, s in enumerate(states))))
    dtype = weight._storage.dtype
    first_row = len(states) - row_states
    for i, array in enumerate(states[first_row:], first_row):
        if array.stype != "default":
            raise SparsegenError(f"state {i} (a row state) must be dense, got {array.stype}")
    shaped = (("grad", grad, weight.shape),
              *((f"state {i}", s, weight.shape if i < first_row else weight.shape[:1])
                for i, s in enumerate(states)))
    for what, array, shape in shaped:
        if array.shape != shape:
            # a row_sparse grad's row ids are in range of its own shape (the format guarantees
            # it), so equal shapes keep every kernel write inside the weight
            raise SparsegenError(
                f"{what} has shape {array.shape}, the weight has shape {weight.shape}"
                + (f" (a row state has shape {shape})" if shape != weight.shape else "")
            )
        if array._storage.dtype != dtype:
            raise SparsegenError(
                f"{what} has dtype {array._storage.dtype.name}, the weight has dtype {dtype.name}"
            )
        if not shared_memory(array.context, weight.context):
            raise SparsegenError(f"{what} is on {array.context}, the weight is on {weight.context}")
    for what, array in (("weight", weight), *((f"state {i}", s) for i, s in enumerate(states))):
        if not _buffer(array).flags.c_contiguous:  # updated in place: no copy can stand in
            raise SparsegenError(f"{what} must be C-contiguous to be updated in place (a view "
                                 f"with strides {_buffer(array).strides} is not)")
    written = [_buffer(weight), *(_buffer(s) for s in states)]
    for i, a in enumerate(written):
        for b in (*written[i + 1:], _buffer(grad)):
            if may_share_memory(a, b):
                raise SparsegenError("weight, grad and states must not share memory")


def every_row(storage: Any) -> Any:
    """A row_sparse state's storage with every row (zeros where it stored none), as MXNet gives
    it; a new storage, so that the state changes only once the update has run."""
    if isinstance(storage, RowSparse) and storage.data.shape[0] != storage.shape[0]:
        dense = convert(storage, "row_sparse", "default")
        ids = colocate(np.arange(storage.shape[0], dtype=INDEX_DTYPE), dense)
        return RowSparse(dense, ids, storage.shape)
    return storage
