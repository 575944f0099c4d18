"""MXNet's linalg ops on dense buffers (kernel ``linalg``, templates/linalg.py): batches of
matrices over the leading axes, each matrix a flat row of the kernel's ``(batch, elements)``
buffers. Operands arrive validated by the front end (ndarray/linalg.py: shapes, dtypes, flags).
The diagonal and triangle positions the gathers and scatters use are metadata built from the
sizes alone (MXNet's packing order)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..device import colocate, contiguous, empty_like, to_host
from ..errors import MXNetError
from .layout import dtype_name, kernel
from .rule import VARIADIC, Rules, StorageRule


def _flat(x: Any, batch: int) -> Any:
    """``x`` as the kernel's ``(batch, elements)`` buffer."""
    return contiguous(x).reshape(batch, x.size // batch if batch else 0)


def _batch(shape: tuple[int, ...]) -> int:
    return math.prod(shape[:-2])


def batch_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of one value per matrix: the leading axes, (1,) for a single matrix (MXNet's
    det, slogdet and sumlogdiag)."""
    return shape[:-2] or (1,)


def _linalg(x: Any, size: int) -> Any:
    return kernel("linalg", (dtype_name(x.dtype),), x, size)


def _layout(transposed: bool, rows: int, cols: int) -> tuple[int, int]:
    """The element strides (of a row index, of a column index) of op(X) for a row-major X of
    ``rows`` x ``cols`` (op(X) = Xᵀ when ``transposed``)."""
    return (1, cols) if transposed else (cols, 1)


def gemm(a: Any, b: Any, c: Any = None, *, transpose_a: bool, transpose_b: bool,
         alpha: float, beta: float = 0.0) -> Any:
    """``alpha * op(a) · op(b) + beta * c`` of each matrix of the batch (``c`` None: gemm2)."""
    m, k = (a.shape[-1], a.shape[-2]) if transpose_a else a.shape[-2:]
    n = b.shape[-2] if transpose_b else b.shape[-1]
    out = empty_like(a, (*a.shape[:-2], m, n), a.dtype)
    if out.size:
        batch = _batch(out.shape)
        a_row, a_col = _layout(transpose_a, *a.shape[-2:])
        b_row, b_col = _layout(transpose_b, *b.shape[-2:])
        run = _linalg(a, out.size * max(k, 1))
        flat_a, flat_b, flat_out = _flat(a, batch), _flat(b, batch), out.reshape(batch, m * n)
        if c is None:
            run.gemm2(flat_a, flat_b, m, n, k, a_row, a_col, b_row, b_col, float(alpha),
                      flat_out)
        else:
            run.gemm(flat_a, flat_b, _flat(c, batch), m, n, k, a_row, a_col, b_row, b_col,
                     float(alpha), float(beta), flat_out)
    return out


def _triangular(function: str, a: Any, b: Any, transpose: bool, rightside: bool, lower: bool,
                alpha: float) -> Any:
    """trsm / trmm: each vector of ``b`` (its columns, or rows when ``rightside``) against the
    matrix M = op(a) (op(a)ᵀ when ``rightside``), whose used triangle follows ``lower``."""
    out = empty_like(b, b.shape, b.dtype)
    if out.size:
        rows, cols = b.shape[-2:]
        size = cols if rightside else rows
        count, stride, step = (rows, 1, cols) if rightside else (cols, cols, 1)
        flipped = bool(transpose) != bool(rightside)
        a_row, a_col = _layout(flipped, size, size)
        batch = _batch(b.shape)
        getattr(_linalg(b, out.size * size), function)(
            _flat(a, batch), _flat(b, batch), size, count, a_row, a_col, stride, step,
            int(bool(lower) != flipped), float(alpha), out.reshape(batch, rows * cols))
    return out


def trsm(a: Any, b: Any, *, transpose: bool, rightside: bool, lower: bool, alpha: float) -> Any:
    """The solution X of ``op(a) X = alpha b`` (``X op(a) = alpha b`` when ``rightside``)."""
    return _triangular("trsm", a, b, transpose, rightside, lower, alpha)


def trmm(a: Any, b: Any, *, transpose: bool, rightside: bool, lower: bool, alpha: float) -> Any:
    """``alpha op(a) b`` (``alpha b op(a)`` when ``rightside``), ``a`` triangular."""
    return _triangular("trmm", a, b, transpose, rightside, lower, alpha)


def _failed(info: Any, op: str, what: str) -> None:
    """Raise ``MXNetError`` naming the first matrix of the batch whose ``info`` is not 0."""
    flags = to_host(info)
    bad = np.flatnonzero(flags)
    if bad.size:
        raise MXNetError(f"{op}: matrix {int(bad[0])} of the batch {what} (info "
                         f"{int(flags[bad[0]])})")


def potrf(a: Any, *, lower: bool = True) -> Any:
    """The Cholesky factor of each matrix (its lower triangle read): L with ``a = L Lᵀ``, or
    the upper U = Lᵀ; raises for a matrix that is not positive definite."""
    n = a.shape[-1]
    out = empty_like(a, a.shape, a.dtype)
    batch = _batch(a.shape)
    if out.size:
        info = empty_like(a, (batch,), np.int64)
        _linalg(a, out.size * n).potrf(_flat(a, batch), n, int(not lower),
                                       out.reshape(batch, n * n), info)
        _failed(info, "potrf", "is not symmetric positive definite (Cholesky failed at that "
                "1-based column)")
    return out


def inverse(a: Any) -> Any:
    """The inverse of each matrix (Gauss-Jordan, partial pivoting); raises for a singular one."""
    n = a.shape[-1]
    out = empty_like(a, a.shape, a.dtype)
    batch = _batch(a.shape)
    if out.size:
        info = empty_like(a, (batch,), np.int64)
        work = empty_like(a, (batch, n * n), a.dtype)
        _linalg(a, out.size * n).inverse(_flat(a, batch), n, work, out.reshape(batch, n * n),
                                         info)
        _failed(info, "inverse", "is singular (MXNet: 'the input matrix is non-convertible')")
    return out


def lu_det(a: Any) -> tuple[Any, Any, Any]:
    """The sign, log absolute value and value of each matrix's determinant (batch shape)."""
    n = a.shape[-1]
    batch = _batch(a.shape)
    sign, logdet, det = (empty_like(a, batch_shape(a.shape), a.dtype) for _ in range(3))
    if batch:
        work = empty_like(a, (batch, n * n), a.dtype)
        _linalg(a, batch * n * n).lu_det(_flat(a, batch), n, work, sign.reshape(batch),
                                         logdet.reshape(batch), det.reshape(batch))
    return sign, logdet, det


def det(a: Any) -> Any:
    """The determinant of each matrix."""
    return lu_det(a)[2]


def slogdet(a: Any) -> tuple[Any, Any]:
    """The sign and log absolute value of each matrix's determinant."""
    sign, logdet, _ = lu_det(a)
    return sign, logdet


def gelqf(a: Any) -> tuple[Any, Any]:
    """Q and L of ``a = L Q`` for each (m, n) matrix, m <= n: Q's rows orthonormal, L lower
    triangular (LAPACK's gelqf + orglq: Householder reflectors, L's diagonal signs theirs)."""
    m, n = a.shape[-2:]
    batch = _batch(a.shape)
    q = empty_like(a, a.shape, a.dtype)
    low = empty_like(a, (*a.shape[:-1], m), a.dtype)
    if q.size:
        run = _linalg(a, q.size * m)
        run.gelqf(_flat(a, batch), m, n, empty_like(a, (batch, m * n), a.dtype),
                  empty_like(a, (batch, m), a.dtype), q.reshape(batch, m * n),
                  low.reshape(batch, m * m))
    return q, low


def syevd(a: Any) -> tuple[Any, Any]:
    """U and the eigenvalues (ascending) of each symmetric matrix (its lower triangle read):
    ``U a = diag(values) U``, U's rows orthonormal, each row's element of largest magnitude
    positive (MXNet's signs), by cyclic Jacobi rotations."""
    n = a.shape[-1]
    batch = _batch(a.shape)
    u = empty_like(a, a.shape, a.dtype)
    values = empty_like(a, a.shape[:-1], a.dtype)
    if u.size:
        run = _linalg(a, u.size * n)
        run.syevd(_flat(a, batch), n, empty_like(a, (batch, n * n), a.dtype),
                  empty_like(a, (batch, n * n), a.dtype), u.reshape(batch, n * n),
                  values.reshape(batch, n))
    return u, values


def diag_positions(n: int, offset: int) -> np.ndarray:
    """Flat positions of diagonal ``offset`` of an n x n matrix (above the main one if > 0)."""
    i = np.arange(n - abs(offset), dtype=np.int64)
    return i * n + i + offset if offset >= 0 else (i - offset) * n + i


def trian_positions(n: int, offset: int, lower: bool) -> np.ndarray:
    """Flat positions of the triangle MXNet's extracttrian packs, in its order: ``offset`` < 0
    the lower one below that diagonal, > 0 the upper one, 0 the one ``lower`` names; a lower
    triangle row by row, an upper one column by column."""
    upper = offset > 0 or (offset == 0 and not lower)
    shift = abs(offset)
    rows = [np.arange(i - shift + 1, dtype=np.int64) for i in range(shift, n)]
    i = np.concatenate([np.full(len(r), row, np.int64) for row, r in zip(range(shift, n), rows)]
                       or [np.zeros(0, np.int64)])
    j = np.concatenate(rows or [np.zeros(0, np.int64)])
    return j * n + i if upper else i * n + j


def extract(a: Any, positions: np.ndarray) -> Any:
    """The elements of each matrix at ``positions`` (a diagonal or a triangle)."""
    batch = _batch(a.shape)
    out = empty_like(a, (*a.shape[:-2], len(positions)), a.dtype)
    if out.size:
        _linalg(a, out.size).gather(_flat(a, batch), colocate(positions, a),
                                    out.reshape(batch, len(positions)))
    return out


def make(x: Any, positions: np.ndarray, n: int) -> Any:
    """n x n matrices, zero but for the last axis of ``x`` at ``positions``."""
    batch = math.prod(x.shape[:-1])
    out = empty_like(x, (*x.shape[:-1], n, n), x.dtype)
    if out.size:
        _linalg(x, out.size).scatter(contiguous(x).reshape(batch, x.shape[-1]),
                                     colocate(positions, x), out.reshape(batch, n * n))
    return out


def extractdiag(a: Any, *, offset: int) -> Any:
    """Diagonal ``offset`` of each matrix."""
    return extract(a, diag_positions(a.shape[-1], offset))


def makediag(x: Any, *, offset: int) -> Any:
    """Square matrices with the last axis of ``x`` on diagonal ``offset``, zero elsewhere."""
    n = x.shape[-1] + abs(offset)
    return make(x, diag_positions(n, offset), n)


def extracttrian(a: Any, *, offset: int, lower: bool) -> Any:
    """The triangle of each matrix, packed (``trian_positions``)."""
    return extract(a, trian_positions(a.shape[-1], offset, lower))


def maketrian(x: Any, *, offset: int, lower: bool, n: int) -> Any:
    """n x n matrices holding the packed triangle ``x``, zero elsewhere."""
    return make(x, trian_positions(n, offset, lower), n)


def khatri_rao(*matrices: Any) -> Any:
    """The column-wise Kronecker product of (rows_i, columns) matrices, the first slowest."""
    result = contiguous(matrices[0])
    for other in matrices[1:]:
        out = empty_like(result, (result.shape[0] * other.shape[0], result.shape[1]),
                         result.dtype)
        if out.size:
            _linalg(result, out.size).khatri_rao(result, contiguous(other), out)
        result = out
    return result


def _dense(op: str, function: Any, arity: int) -> Rules:
    return {(op, ("default",) * arity): StorageRule("default", function)}


STORAGE_RULES: Rules = {
    **_dense("_linalg_gemm", gemm, 3),
    **_dense("_linalg_gemm2", gemm, 2),
    **_dense("_linalg_trsm", trsm, 2),
    **_dense("_linalg_trmm", trmm, 2),
    **_dense("_linalg_potrf", potrf, 1),
    **_dense("_linalg_inverse", inverse, 1),
    **_dense("_linalg_det", det, 1),
    ("_linalg_slogdet", ("default",)): StorageRule(None, slogdet),
    ("_linalg_gelqf", ("default",)): StorageRule(None, gelqf),
    ("_linalg_syevd", ("default",)): StorageRule(None, syevd),
    **_dense("_linalg_extractdiag", extractdiag, 1),
    **_dense("_linalg_makediag", makediag, 1),
    **_dense("_linalg_extracttrian", extracttrian, 1),
    **_dense("_linalg_maketrian", maketrian, 1),
    ("khatri_rao", ("default", VARIADIC)): StorageRule("default", khatri_rao),
}
"""The linalg ops of dense inputs (sparse inputs fall back to dense, as MXNet's);
``_linalg_slogdet``, ``_linalg_gelqf`` and ``_linalg_syevd`` return their two buffers (the front
end wraps and records them)."""
