"""``mx.nd.dot`` and ``mx.nd.sparse.dot``: products of dense, csr and row_sparse arrays."""

from __future__ import annotations

import numpy as np

from ..errors import SparsegenError
from ..ops.dot import output_shape
from ..params import flag
from .dispatch import check_out, invoke
from .ndarray import STYPES, NDArray

DTYPES = ("float32", "float64", "uint8", "int8", "int32", "int64")
"""Element dtypes dot accepts: MXNet's float32/float64 on CPU, and integers (exact, wrapping as
numpy does). float16 is refused as MXNet refuses it on CPU: its sums would round every step."""


def dot(lhs: NDArray, rhs: NDArray, transpose_a: bool = False, transpose_b: bool = False,
        forward_stype: str | None = None, out: NDArray | None = None) -> NDArray:
    """``op(lhs) · op(rhs)`` where ``op`` transposes when its flag is set, as ``mxnet.nd.dot``.

    Output storage follows MXNet 1.9.1 on CPU: csr·dense and csr·row_sparse give dense,
    csrᵀ·dense and csrᵀ·row_sparse give row_sparse (the columns that hold entries), dense·csr
    and dense·csrᵀ give csr, dense·dense gives dense; ``forward_stype`` asks for another
    storage type. Other combinations run densely with a ``StorageFallbackWarning``. Dense
    operands may have any rank (the reduced axis is the last of lhs and the first of rhs, or
    the other end when transposed); a csr operand needs a 2-D partner, as in MXNet. ``out``
    must have the product's shape and dtype; any storage type (the result is converted to it).
    """
    for name, array in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(array, NDArray):
            raise SparsegenError(f"dot: {name} must be an NDArray, got {type(array).__name__}")
    if forward_stype is not None and forward_stype not in STYPES:
        raise SparsegenError(
            f"dot: forward_stype must be None or one of {STYPES}, got {forward_stype!r}"
        )
    dtype = np.dtype(lhs.dtype)
    if np.dtype(rhs.dtype) != dtype:
        raise SparsegenError(
            f"dot: lhs and rhs must have one dtype, got {dtype.name} and {np.dtype(rhs.dtype).name}"
        )
    if dtype.name not in DTYPES:
        raise SparsegenError(
            f"dot does not support {dtype.name} (MXNet on CPU supports float32 and float64; "
            f"sparsegen supports {', '.join(DTYPES)}): cast with .astype('float32')"
        )
    transpose_a = flag(transpose_a, "dot: transpose_a")
    transpose_b = flag(transpose_b, "dot: transpose_b")
    shape = output_shape(lhs.shape, rhs.shape, transpose_a, transpose_b)
    if "csr" in (lhs.stype, rhs.stype) and (lhs.ndim != 2 or rhs.ndim != 2):
        raise SparsegenError(
            f"dot with a csr operand needs 2-D operands (as in MXNet), got lhs {lhs.stype} "
            f"{lhs.shape} and rhs {rhs.stype} {rhs.shape}"
        )
    check_out("dot", out, shape, dtype, lhs.context)  # before any work (deliver checks again)
    op = ("dot" + "_transpose_a" * transpose_a + "_transpose_b" * transpose_b
          + ("" if forward_stype is None else f"->{forward_stype}"))
    return invoke(op, (lhs, rhs), out=out, transpose_a=transpose_a, transpose_b=transpose_b)
