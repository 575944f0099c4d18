"""``mx.nd.linalg`` (MXNet 1.9.1's linear-algebra ops) and ``mx.nd.khatri_rao``.

Every op works on the trailing two axes of its operands (a batch of matrices over the leading
axes; gemm / gemm2 take the row axis from ``axis``), in float32 or float64 as MXNet's. gemm,
gemm2, trsm, trmm, potrf, inverse, det, slogdet, gelqf, syevd, the diagonal and triangle ops and
khatri_rao run the ``linalg`` kernel (sparsegen/ops/linalg.py); potri, syrk and sumlogdiag are
composed of them (and of log and sum), so their gradients are those ops' gradients. Results are
dense; sparse inputs fall back to dense with the storage-fallback warning.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import tape
from ..errors import InvalidType, InvalidValue
from ..ops.linalg import batch_shape
from ..params import flag, integer, real
from .creation import eye
from .dispatch import check_out, deliver, densified, invoke
from .indexing import array_arg, axis_arg
from .ndarray import NDArray

__all__ = ["det", "extractdiag", "extracttrian", "gelqf", "gemm", "gemm2", "inverse",
           "makediag", "maketrian", "potrf", "potri", "slogdet", "sumlogdiag", "syevd", "syrk",
           "trmm", "trsm"]

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _operand(value: Any, name: str, op: str, low: int = 2, square: bool = False) -> NDArray:
    """``value`` checked: an NDArray of float32 / float64 with at least ``low`` axes (its
    trailing two square when ``square``)."""
    array = array_arg(value, name, op)
    if np.dtype(array.dtype) not in _DTYPES:
        raise InvalidType(f"{op}: {name} must be float32 or float64 (as MXNet's linalg), got "
                          f"{np.dtype(array.dtype).name}")
    if array.ndim < low:
        raise InvalidValue(f"{op}: {name} must have at least {low} axes (a tensor of "
                           f"{'matrices' if low == 2 else 'vectors'}), got shape {array.shape}")
    if square and array.shape[-1] != array.shape[-2]:
        raise InvalidValue(f"{op}: {name} must be a tensor of square matrices, got shape "
                           f"{array.shape}")
    return array


def _same_batch(op: str, arrays: dict[str, NDArray], axis: int = -2) -> None:
    """Raise unless the arrays share dtype, number of axes and batch axes (all but the row
    ``axis`` and the last)."""
    (first, a), *rest = arrays.items()

    def batch(shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(d for i, d in enumerate(shape) if i not in (axis % len(shape),
                                                                 len(shape) - 1))

    for name, b in rest:
        if b.dtype != a.dtype:
            raise InvalidType(f"{op}: {first} and {name} must have one dtype, got "
                              f"{np.dtype(a.dtype).name} and {np.dtype(b.dtype).name}")
        if b.ndim != a.ndim or batch(b.shape) != batch(a.shape):
            raise InvalidValue(f"{op}: {first} {a.shape} and {name} {b.shape} must have the same "
                               "shape except on the row and column axes")


def _alpha(value: Any, op: str, name: str = "alpha") -> float:
    return real(value, f"{op}: {name}")


def _matrix_axis(axis: Any, ndim: int, op: str) -> int:
    """The row axis of gemm / gemm2 (MXNet's ``axis``), any axis but the last."""
    found = axis_arg(axis, ndim, op)
    if found == ndim - 1:
        raise InvalidValue(f"{op}: axis {axis} is the column axis; the row axis must be "
                           "another one")
    return found


def _product(op: str, arrays: dict[str, NDArray], transpose_a: bool, transpose_b: bool,
             axis: int, out: NDArray | None, **params: Any) -> NDArray:
    """gemm / gemm2 of checked operands: shapes checked, the row axis moved to -2 and back."""
    a, b = arrays["A"], arrays["B"]
    if axis != a.ndim - 2:
        moved = {k: v.swapaxes(axis, a.ndim - 2) for k, v in arrays.items()}
        result = _product(op, moved, transpose_a, transpose_b, a.ndim - 2, None, **params)
        result = result.swapaxes(axis, a.ndim - 2)
        if out is None:
            return result
        check_out(op, out, result.shape, result.dtype, result.context)
        out[:] = result
        return out
    m, k = (a.shape[-1], a.shape[-2]) if transpose_a else a.shape[-2:]
    k2, n = (b.shape[-1], b.shape[-2]) if transpose_b else b.shape[-2:]
    if k != k2:
        raise InvalidValue(f"{op}: incompatible matrix dimensions for multiplication: op(A) is "
                           f"{m} x {k} (A {a.shape}, transpose_a={transpose_a}), op(B) is "
                           f"{k2} x {n} (B {b.shape}, transpose_b={transpose_b})")
    shape = (*a.shape[:-2], m, n)
    if "C" in arrays and arrays["C"].shape != shape:
        raise InvalidValue(f"{op}: C must have the shape of op(A) · op(B), {shape}, got "
                           f"{arrays['C'].shape}")
    check_out(op, out, shape, a.dtype, a.context)
    return invoke(f"_linalg_{op}", tuple(arrays.values()), out=out, transpose_a=transpose_a,
                  transpose_b=transpose_b, **params)


def gemm(A: NDArray | None = None, B: NDArray | None = None,  # noqa: N803 - MXNet's names
         C: NDArray | None = None, transpose_a: bool = False, transpose_b: bool = False,
         alpha: float = 1.0, beta: float = 1.0, axis: int = -2, out: NDArray | None = None,
         name: str | None = None) -> NDArray:
    """``alpha * op(A) · op(B) + beta * C`` of each matrix of the batch, as MXNet's
    ``linalg.gemm`` (rows on ``axis``, columns on the last axis)."""
    arrays = {key: _operand(v, key, "gemm") for key, v in (("A", A), ("B", B), ("C", C))}
    axis = _matrix_axis(axis, arrays["A"].ndim, "gemm")
    _same_batch("gemm", arrays, axis)
    return _product("gemm", arrays, flag(transpose_a, "gemm: transpose_a"),
                    flag(transpose_b, "gemm: transpose_b"), axis, out,
                    alpha=_alpha(alpha, "gemm"), beta=_alpha(beta, "gemm", "beta"))


def gemm2(A: NDArray | None = None, B: NDArray | None = None,  # noqa: N803 - MXNet's names
          transpose_a: bool = False, transpose_b: bool = False, alpha: float = 1.0,
          axis: int = -2, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """``alpha * op(A) · op(B)`` of each matrix of the batch, as MXNet's ``linalg.gemm2``."""
    arrays = {key: _operand(v, key, "gemm2") for key, v in (("A", A), ("B", B))}
    axis = _matrix_axis(axis, arrays["A"].ndim, "gemm2")
    _same_batch("gemm2", arrays, axis)
    return _product("gemm2", arrays, flag(transpose_a, "gemm2: transpose_a"),
                    flag(transpose_b, "gemm2: transpose_b"), axis, out,
                    alpha=_alpha(alpha, "gemm2"))


def _triangular(op: str, A: Any, B: Any, transpose: Any, rightside: Any, lower: Any,  # noqa: N803
                alpha: Any, out: NDArray | None) -> NDArray:
    a = _operand(A, "A", op, square=True)
    b = _operand(B, "B", op)
    _same_batch(op, {"A": a, "B": b})
    rightside = flag(rightside, f"{op}: rightside")
    size = b.shape[-1] if rightside else b.shape[-2]
    if a.shape[-1] != size:
        raise InvalidValue(f"{op}: A {a.shape} does not fit B {b.shape} (rightside="
                           f"{rightside}: A's order must equal B's "
                           f"{'columns' if rightside else 'rows'}, {size})")
    check_out(op, out, b.shape, b.dtype, b.context)
    return invoke(f"_linalg_{op}", (a, b), out=out, transpose=flag(transpose, f"{op}: transpose"),
                  rightside=rightside, lower=flag(lower, f"{op}: lower"),
                  alpha=_alpha(alpha, op))


def trsm(A: NDArray | None = None, B: NDArray | None = None,  # noqa: N803 - MXNet's names
         transpose: bool = False, rightside: bool = False, lower: bool = True,
         alpha: float = 1.0, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """The solution X of ``op(A) X = alpha B`` (``X op(A) = alpha B`` when ``rightside``), A
    triangular (only its ``lower`` or upper triangle read), as MXNet's ``linalg.trsm``."""
    return _triangular("trsm", A, B, transpose, rightside, lower, alpha, out)


def trmm(A: NDArray | None = None, B: NDArray | None = None,  # noqa: N803 - MXNet's names
         transpose: bool = False, rightside: bool = False, lower: bool = True,
         alpha: float = 1.0, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """``alpha op(A) B`` (``alpha B op(A)`` when ``rightside``), A triangular (only its
    ``lower`` or upper triangle read), as MXNet's ``linalg.trmm``."""
    return _triangular("trmm", A, B, transpose, rightside, lower, alpha, out)


def _square_op(op: str, A: Any, out: NDArray | None, batch_only: bool = False) -> NDArray:
    a = _operand(A, "A", op, square=True)
    check_out(op, out, batch_shape(a.shape) if batch_only else a.shape, a.dtype, a.context)
    return invoke(f"_linalg_{op}", (a,), out=out)


def potrf(A: NDArray | None = None, out: NDArray | None = None,  # noqa: N803 - MXNet's name
          name: str | None = None) -> NDArray:
    """The lower Cholesky factor L (``A = L Lᵀ``, A's lower triangle read) of each symmetric
    positive definite matrix, as MXNet's ``linalg.potrf``; raises for any other matrix."""
    return _square_op("potrf", A, out)


def inverse(A: NDArray | None = None, out: NDArray | None = None,  # noqa: N803 - MXNet's name
            name: str | None = None) -> NDArray:
    """The inverse of each square matrix, as MXNet's ``linalg.inverse``; raises for a singular
    one."""
    return _square_op("inverse", A, out)


def det(A: NDArray | None = None, out: NDArray | None = None,  # noqa: N803 - MXNet's name
        name: str | None = None) -> NDArray:
    """The determinant of each square matrix (batch shape; (1,) for one matrix), as MXNet's
    ``linalg.det``."""
    return _square_op("det", A, out, batch_only=True)


def _two_outputs(op: str, a: NDArray, out: Any, shapes: tuple[tuple[int, ...], ...]) -> list:
    """Run ``_linalg_<op>`` (two results of ``shapes``) on the checked ``a``: the two arrays,
    written into ``out`` (a list of two) when given, recorded as one node."""
    a = densified(a)
    outs = [None, None] if out is None else list(out)
    if len(outs) != 2:
        raise InvalidValue(f"{op}: out must be a list of two arrays, got {len(outs)}")
    for o, shape in zip(outs, shapes):
        check_out(op, o, shape, a.dtype, a.context)
    results = invoke(f"_linalg_{op}", (a,))
    both = [deliver(op, r, "default", a.context, (a,), o) for r, o in zip(results, outs)]
    tape.record(f"_linalg_{op}", (a,), both, {})
    return both


def slogdet(A: NDArray | None = None, out: Any = None,  # noqa: N803 - MXNet's name
            name: str | None = None) -> list[NDArray]:
    """[sign, log |det|] of each square matrix, as MXNet's ``linalg.slogdet`` (sign 0 and
    log -inf for a singular matrix); ``out``: a list of two arrays to write."""
    a = _operand(A, "A", "slogdet", square=True)
    return _two_outputs("slogdet", a, out, (batch_shape(a.shape),) * 2)


def gelqf(A: NDArray | None = None, out: Any = None,  # noqa: N803 - MXNet's name
          name: str | None = None) -> list[NDArray]:
    """[Q, L] of the LQ factorisation ``A = L Q`` of each (m, n) matrix, m <= n (Q's rows
    orthonormal, L lower triangular; LAPACK's Householder signs), as MXNet's ``linalg.gelqf``."""
    a = _operand(A, "A", "gelqf")
    m, n = a.shape[-2:]
    if m > n:
        raise InvalidValue(f"gelqf: A must have no more rows than columns, got shape {a.shape}")
    return _two_outputs("gelqf", a, out, (a.shape, (*a.shape[:-1], m)))


def syevd(A: NDArray | None = None, out: Any = None,  # noqa: N803 - MXNet's name
          name: str | None = None) -> list[NDArray]:
    """[U, L] of each symmetric matrix (its lower triangle read): ``U A = diag(L) U``, U's
    rows orthonormal eigenvectors (each one's largest-magnitude element positive), L ascending,
    as MXNet's ``linalg.syevd``."""
    a = _operand(A, "A", "syevd", square=True)
    return _two_outputs("syevd", a, out, (a.shape, a.shape[:-1]))


def potri(A: NDArray | None = None, out: NDArray | None = None,  # noqa: N803 - MXNet's name
          name: str | None = None) -> NDArray:
    """``(L Lᵀ)⁻¹`` from the Cholesky factor L of each matrix (its lower triangle read), as
    MXNet's ``linalg.potri``: ``L⁻¹`` by trsm, then ``L⁻ᵀ L⁻¹`` by gemm2."""
    a = _operand(A, "A", "potri", square=True)
    n = a.shape[-1]
    if not a.size:  # an empty batch (broadcast_to reads a 0 as "keep this axis")
        return gemm2(a, a, transpose_a=True, out=out)
    identity = eye(n, dtype=a.dtype, ctx=a.context).reshape((1,) * (a.ndim - 2) + (n, n))
    inv = trsm(a, identity.broadcast_to(a.shape))
    return gemm2(inv, inv, transpose_a=True, out=out)


def syrk(A: NDArray | None = None, transpose: bool = False,  # noqa: N803 - MXNet's name
         alpha: float = 1.0, out: NDArray | None = None, name: str | None = None) -> NDArray:
    """``alpha A Aᵀ`` (``alpha Aᵀ A`` when ``transpose``) of each matrix, as MXNet's
    ``linalg.syrk`` (gemm2 of A with itself)."""
    a = _operand(A, "A", "syrk")
    transpose = flag(transpose, "syrk: transpose")
    return gemm2(a, a, transpose_a=transpose, transpose_b=not transpose,
                 alpha=_alpha(alpha, "syrk"), out=out)


def sumlogdiag(A: NDArray | None = None, out: NDArray | None = None,  # noqa: N803
               name: str | None = None) -> NDArray:
    """The sum of the logs of each square matrix's diagonal (batch shape; (1,) for one
    matrix), as MXNet's ``linalg.sumlogdiag`` (nan for a negative diagonal element)."""
    from .elemwise import log
    from .reduce import sum as total

    a = _operand(A, "A", "sumlogdiag", square=True)
    return total(log(extractdiag(a)), axis=-1, keepdims=a.ndim == 2, out=out)  # 2-D: (1,)


def _offset(offset: Any, op: str, n: int) -> int:
    offset = integer(offset, f"{op}: offset", low=-(2**62))
    if n - abs(offset) <= 0:
        raise InvalidValue(f"{op}: illegal offset {offset} for diag/trian extraction of "
                           f"matrices of dimension {n}")
    return offset


def extractdiag(A: NDArray | None = None, offset: int = 0,  # noqa: N803 - MXNet's name
                out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Diagonal ``offset`` (> 0 above the main one) of each square matrix, as MXNet's
    ``linalg.extractdiag``."""
    a = _operand(A, "A", "extractdiag", square=True)
    offset = _offset(offset, "extractdiag", a.shape[-1])
    check_out("extractdiag", out, (*a.shape[:-2], a.shape[-1] - abs(offset)), a.dtype,
              a.context)
    return invoke("_linalg_extractdiag", (a,), out=out, offset=offset)


def makediag(A: NDArray | None = None, offset: int = 0,  # noqa: N803 - MXNet's name
             out: NDArray | None = None, name: str | None = None) -> NDArray:
    """Square matrices with the vectors of the last axis of A on diagonal ``offset``, zero
    elsewhere, as MXNet's ``linalg.makediag``."""
    a = _operand(A, "A", "makediag", low=1)
    offset = integer(offset, "makediag: offset", low=-(2**62))
    n = a.shape[-1] + abs(offset)
    check_out("makediag", out, (*a.shape[:-1], n, n), a.dtype, a.context)
    return invoke("_linalg_makediag", (a,), out=out, offset=offset)


def extracttrian(A: NDArray | None = None, offset: int = 0,  # noqa: N803 - MXNet's name
                 lower: bool = True, out: NDArray | None = None,
                 name: str | None = None) -> NDArray:
    """The triangle of each square matrix as a vector, as MXNet's ``linalg.extracttrian``:
    ``offset`` < 0 the part below that diagonal, > 0 above it, 0 the ``lower`` or upper one
    (a lower triangle row by row, an upper one column by column)."""
    a = _operand(A, "A", "extracttrian", square=True)
    n = a.shape[-1]
    offset = _offset(offset, "extracttrian", n)
    lower = flag(lower, "extracttrian: lower")
    m = n - abs(offset)
    check_out("extracttrian", out, (*a.shape[:-2], m * (m + 1) // 2), a.dtype, a.context)
    return invoke("_linalg_extracttrian", (a,), out=out, offset=offset, lower=lower)


def maketrian(A: NDArray | None = None, offset: int = 0,  # noqa: N803 - MXNet's name
              lower: bool = True, out: NDArray | None = None,
              name: str | None = None) -> NDArray:
    """Square matrices holding the packed triangles of the last axis of A (extracttrian's
    order), zero elsewhere, as MXNet's ``linalg.maketrian``."""
    a = _operand(A, "A", "maketrian", low=1)
    offset = integer(offset, "maketrian: offset", low=-(2**62))
    lower = flag(lower, "maketrian: lower")
    length = a.shape[-1]
    m = (math.isqrt(8 * length + 1) - 1) // 2
    if m * (m + 1) // 2 != length:
        raise InvalidValue(f"maketrian: the last axis of A ({length}) must hold a triangle, "
                           "m * (m + 1) / 2 elements for some m")
    n = m + abs(offset)
    check_out("maketrian", out, (*a.shape[:-1], n, n), a.dtype, a.context)
    return invoke("_linalg_maketrian", (a,), out=out, offset=offset, lower=lower, n=n)


def khatri_rao(*args: NDArray, out: NDArray | None = None,
               name: str | None = None) -> NDArray:
    """The column-wise Kronecker product of matrices with one column count, as MXNet's
    ``khatri_rao`` (rows: the first matrix's slowest)."""
    if not args:
        raise InvalidValue("khatri_rao: at least one matrix is required")
    arrays = [_operand(a, f"args[{i}]", "khatri_rao") for i, a in enumerate(args)]
    for i, a in enumerate(arrays):
        if a.ndim != 2 or a.shape[1] != arrays[0].shape[1] or a.dtype != arrays[0].dtype:
            raise InvalidValue(f"khatri_rao: args[{i}] of shape {a.shape} and dtype "
                               f"{np.dtype(a.dtype).name} must be a matrix of "
                               f"{arrays[0].shape[1]} columns and dtype "
                               f"{np.dtype(arrays[0].dtype).name}, as args[0]")
    shape = (math.prod(a.shape[0] for a in arrays), arrays[0].shape[1])
    check_out("khatri_rao", out, shape, arrays[0].dtype, arrays[0].context)
    return invoke("khatri_rao", tuple(arrays), out=out)
