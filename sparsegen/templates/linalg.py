"""Linear algebra on batches of small dense matrices (kernel ``linalg``): MXNet's ``linalg`` ops.

Every matrix argument is a flat ``(batch, elements)`` buffer; the host passes how a matrix is
laid out in it (the element stride of a row and of a column), so one function serves a matrix
and its transpose, and a left-side and a right-side triangular system (a right-side system is
the left-side system of the transposed matrices). A ``rows`` block is one independent piece of
work: an output row of a product, one right-hand side of a triangular solve, or a whole matrix
for the sequential factorisations (Cholesky, LU with partial pivoting, Gauss-Jordan inversion).
Sums run in the element dtype, in index order. Every element index is kept within its row of
the buffer, and a block whose buffers are empty does nothing, so no scalar argument of a direct
kernel call (``sparsegen.kernels``) reads or writes out of bounds.

- ``gemm`` / ``gemm2``: ``out = alpha * op(a) · op(b) (+ beta * c)``, ``out`` (m, n) row-major.
- ``potrf``: the Cholesky factor of each matrix (its lower triangle read), lower or upper
  (``upper``: the transpose written), the other triangle zero; ``info`` is 0, or the 1-based
  column at which the matrix was found not positive definite.
- ``trsm`` / ``trmm``: for each of ``count`` vectors ``x`` (element ``i`` at ``step * v + i *
  stride``) solve ``M y = alpha x`` / compute ``y = alpha M x`` with ``M[i, k] = a[i * a_row + k
  * a_col]`` triangular (``lower``: below the diagonal, else above; the other triangle unread).
- ``lu_det``: sign, log of the absolute value and the determinant by LU with partial pivoting in
  ``work`` (sign 0, log -inf and determinant 0 for a singular matrix).
- ``inverse``: Gauss-Jordan with partial pivoting (``work`` holds the reduced copy); ``info``
  is 1 for a singular matrix.
- ``gather`` / ``scatter``: elements of each matrix at host-built positions (diagonals and
  triangles), and their inverse into a zeroed matrix.
- ``khatri_rao``: the column-wise Kronecker product of two matrices.
"""

from __future__ import annotations

import tvm
from tvm import tirx
from tvm.script import tirx as T

from . import element_bytes


def _in(index, buffer):
    """``index`` within a row of the 2-D ``buffer``: no scalar a direct kernel call passes (a
    stride, an order) reads or writes outside a buffer, whatever its value (blocks whose buffers
    are empty do nothing)."""
    return T.max(T.min(index, buffer.shape[1] - T.int64(1)), T.int64(0))


def _get(buffer, row, index):
    """``buffer[row, index]``, the index kept within the row (``_in``)."""
    return buffer[row, _in(index, buffer)]


def _products(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``gemm`` (with ``c``) and ``gemm2``: one output row per block."""
    elem = element_bytes(dtype)
    zero = tirx.const(0, dtype)

    @T.macro
    def row(A, B, Out, acc, vr, m, n, k, a_row, a_col, b_row, b_col):
        for j in T.serial(n):
            acc[0] = zero
            for kk in T.serial(k):
                acc[0] = acc[0] + (_get(A, vr // m, vr % m * a_row + kk * a_col)
                                   * _get(B, vr // m, kk * b_row + j * b_col))
            Out[vr // m, _in(vr % m * n + j, Out)] = acc[0]

    @T.prim_func(s_tir=True)
    def gemm(a: T.handle, b: T.handle, c: T.handle, m: T.int64, n: T.int64, k: T.int64,
             a_row: T.int64, a_col: T.int64, b_row: T.int64, b_col: T.int64, alpha: T.float64,
             beta: T.float64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, sa, sb, so = T.int64(), T.int64(), T.int64(), T.int64()
        A = T.match_buffer(a, (bat, sa), dtype, align=elem)
        B = T.match_buffer(b, (bat, sb), dtype, align=elem)
        C = T.match_buffer(c, (bat, so), dtype, align=elem)
        Out = T.match_buffer(out, (bat, so), dtype, align=elem)
        for r in T.serial(bat * m):
            with T.sblock("rows"):
                vr = T.axis.spatial(bat * m, r)
                T.reads(A[vr // m, 0:sa], B[vr // m, 0:sb], C[vr // m, 0:so])
                T.writes(Out[vr // m, 0:so])
                acc = T.alloc_buffer((1,), dtype, scope="local")
                if (k == 0 or (sa > 0 and sb > 0)) and so > 0:
                    row(A, B, Out, acc, vr, m, n, k, a_row, a_col, b_row, b_col)
                    for j in T.serial(n):
                        if beta == T.float64(0):
                            Out[vr // m, _in(vr % m * n + j, Out)] = (
                                T.Cast(dtype, alpha) * _get(Out, vr // m, vr % m * n + j))
                        else:
                            Out[vr // m, _in(vr % m * n + j, Out)] = (
                                T.Cast(dtype, alpha) * _get(Out, vr // m, vr % m * n + j)
                                + T.Cast(dtype, beta) * _get(C, vr // m, vr % m * n + j))

    @T.prim_func(s_tir=True)
    def gemm2(a: T.handle, b: T.handle, m: T.int64, n: T.int64, k: T.int64, a_row: T.int64,
              a_col: T.int64, b_row: T.int64, b_col: T.int64, alpha: T.float64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, sa, sb, so = T.int64(), T.int64(), T.int64(), T.int64()
        A = T.match_buffer(a, (bat, sa), dtype, align=elem)
        B = T.match_buffer(b, (bat, sb), dtype, align=elem)
        Out = T.match_buffer(out, (bat, so), dtype, align=elem)
        for r in T.serial(bat * m):
            with T.sblock("rows"):
                vr = T.axis.spatial(bat * m, r)
                T.reads(A[vr // m, 0:sa], B[vr // m, 0:sb])
                T.writes(Out[vr // m, 0:so])
                acc = T.alloc_buffer((1,), dtype, scope="local")
                if (k == 0 or (sa > 0 and sb > 0)) and so > 0:
                    row(A, B, Out, acc, vr, m, n, k, a_row, a_col, b_row, b_col)
                    for j in T.serial(n):
                        Out[vr // m, _in(vr % m * n + j, Out)] = (
                            T.Cast(dtype, alpha) * _get(Out, vr // m, vr % m * n + j))

    return {"gemm": gemm, "gemm2": gemm2}


def _triangular(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``trsm`` and ``trmm``: one vector of the right-hand side per block."""
    elem = element_bytes(dtype)
    zero = tirx.const(0, dtype)

    @T.prim_func(s_tir=True)
    def trsm(a: T.handle, x: T.handle, m: T.int64, count: T.int64, a_row: T.int64,
             a_col: T.int64, stride: T.int64, step: T.int64, lower: T.int64, alpha: T.float64,
             out: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, sa, sx = T.int64(), T.int64(), T.int64()
        A = T.match_buffer(a, (bat, sa), dtype, align=elem)
        X = T.match_buffer(x, (bat, sx), dtype, align=elem)
        Out = T.match_buffer(out, (bat, sx), dtype, align=elem)
        for r in T.serial(bat * count):
            with T.sblock("rows"):
                vr = T.axis.spatial(bat * count, r)
                T.reads(A[vr // count, 0:sa], X[vr // count, 0:sx], Out[vr // count, 0:sx])
                T.writes(Out[vr // count, 0:sx])
                acc = T.alloc_buffer((1,), dtype, scope="local")
                at = T.alloc_buffer((4,), "int64", scope="local")  # matrix, vector start, i, k
                at[0] = vr // count
                at[1] = vr % count * step
                if sa > 0 and sx > 0:
                    for t in T.serial(m):
                        at[2] = T.if_then_else(lower != 0, t, m - 1 - t)
                        acc[0] = T.Cast(dtype, alpha) * _get(X, at[0], at[1] + at[2] * stride)
                        for kk in T.serial(t):
                            at[3] = T.if_then_else(lower != 0, kk, m - 1 - kk)
                            acc[0] = acc[0] - (_get(A, at[0], at[2] * a_row + at[3] * a_col)
                                               * _get(Out, at[0], at[1] + at[3] * stride))
                        Out[at[0], _in(at[1] + at[2] * stride, Out)] = (
                            acc[0] / _get(A, at[0], at[2] * a_row + at[2] * a_col))

    @T.prim_func(s_tir=True)
    def trmm(a: T.handle, x: T.handle, m: T.int64, count: T.int64, a_row: T.int64,
             a_col: T.int64, stride: T.int64, step: T.int64, lower: T.int64, alpha: T.float64,
             out: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, sa, sx = T.int64(), T.int64(), T.int64()
        A = T.match_buffer(a, (bat, sa), dtype, align=elem)
        X = T.match_buffer(x, (bat, sx), dtype, align=elem)
        Out = T.match_buffer(out, (bat, sx), dtype, align=elem)
        for r in T.serial(bat * count):
            with T.sblock("rows"):
                vr = T.axis.spatial(bat * count, r)
                T.reads(A[vr // count, 0:sa], X[vr // count, 0:sx])
                T.writes(Out[vr // count, 0:sx])
                acc = T.alloc_buffer((1,), dtype, scope="local")
                at = T.alloc_buffer((3,), "int64", scope="local")  # matrix, vector start, k
                at[0] = vr // count
                at[1] = vr % count * step
                if sa > 0 and sx > 0:
                    for i in T.serial(m):
                        acc[0] = zero
                        for kk in T.serial(T.if_then_else(lower != 0, i + 1, m - i)):
                            at[2] = T.if_then_else(lower != 0, kk, i + kk)
                            acc[0] = acc[0] + (_get(A, at[0], i * a_row + at[2] * a_col)
                                               * _get(X, at[0], at[1] + at[2] * stride))
                        Out[at[0], _in(at[1] + i * stride, Out)] = T.Cast(dtype, alpha) * acc[0]

    return {"trsm": trsm, "trmm": trmm}


def _factorisations(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``potrf``, ``lu_det`` and ``inverse``: one matrix per block."""
    elem = element_bytes(dtype)
    zero = tirx.const(0, dtype)
    one = tirx.const(1, dtype)

    @T.prim_func(s_tir=True)
    def potrf(a: T.handle, n: T.int64, upper: T.int64, out: T.handle, info: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, s = T.int64(), T.int64()
        A = T.match_buffer(a, (bat, s), dtype, align=elem)
        Out = T.match_buffer(out, (bat, s), dtype, align=elem)
        Info = T.match_buffer(info, (bat,), "int64")
        for r in T.serial(bat):
            with T.sblock("rows"):
                vb = T.axis.spatial(bat, r)
                T.reads(A[vb, 0:s], Out[vb, 0:s])
                T.writes(Out[vb, 0:s], Info[vb])
                acc = T.alloc_buffer((1,), dtype, scope="local")
                Info[vb] = T.int64(0)
                if s > 0:
                    for j in T.serial(n):
                        acc[0] = _get(A, vb, j * n + j)
                        for kk in T.serial(j):
                            acc[0] = acc[0] - _get(Out, vb, j * n + kk) * _get(Out, vb, j * n + kk)
                        if not acc[0] > zero:
                            if Info[vb] == T.int64(0):
                                Info[vb] = j + 1
                        Out[vb, _in(j * n + j, Out)] = T.sqrt(acc[0])
                        for i in T.serial(n - j - 1):
                            acc[0] = _get(A, vb, (j + 1 + i) * n + j)
                            for kk in T.serial(j):
                                acc[0] = acc[0] - (_get(Out, vb, (j + 1 + i) * n + kk)
                                                   * _get(Out, vb, j * n + kk))
                            Out[vb, _in((j + 1 + i) * n + j, Out)] = (
                                acc[0] / _get(Out, vb, j * n + j))
                            Out[vb, _in(j * n + j + 1 + i, Out)] = zero
                    if upper != 0:
                        for i in T.serial(n):
                            for j in T.serial(i):
                                Out[vb, _in(j * n + i, Out)] = _get(Out, vb, i * n + j)
                                Out[vb, _in(i * n + j, Out)] = zero

    @T.macro
    def pivot(W, vb, n, col, at):
        """``at[0]``: the row at or below ``col`` with the largest magnitude in column ``col``."""
        at[0] = col
        for i in T.serial(n - col - 1):
            if T.abs(_get(W, vb, (col + 1 + i) * n + col)) > T.abs(_get(W, vb, at[0] * n + col)):
                at[0] = col + 1 + i

    @T.macro
    def swap_rows(W, vb, n, p, q, tmp):
        for j in T.serial(n):
            tmp[0] = _get(W, vb, p * n + j)
            W[vb, _in(p * n + j, W)] = _get(W, vb, q * n + j)
            W[vb, _in(q * n + j, W)] = tmp[0]

    @T.prim_func(s_tir=True)
    def lu_det(a: T.handle, n: T.int64, work: T.handle, sign: T.handle, logdet: T.handle,
               det: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, s = T.int64(), T.int64()
        A = T.match_buffer(a, (bat, s), dtype, align=elem)
        W = T.match_buffer(work, (bat, s), dtype, align=elem)
        Sign = T.match_buffer(sign, (bat,), dtype, align=elem)
        Log = T.match_buffer(logdet, (bat,), dtype, align=elem)
        Det = T.match_buffer(det, (bat,), dtype, align=elem)
        for r in T.serial(bat):
            with T.sblock("rows"):
                vb = T.axis.spatial(bat, r)
                T.reads(A[vb, 0:s], W[vb, 0:s])
                T.writes(W[vb, 0:s], Sign[vb], Log[vb], Det[vb])
                at = T.alloc_buffer((1,), "int64", scope="local")
                tmp = T.alloc_buffer((1,), dtype, scope="local")
                Sign[vb] = one
                Log[vb] = zero
                if s > 0:
                    for e in T.serial(n * n):
                        W[vb, _in(e, W)] = _get(A, vb, e)
                    for col in T.serial(n):
                        pivot(W, vb, n, col, at)
                        if at[0] != col:
                            swap_rows(W, vb, n, at[0], col, tmp)
                            Sign[vb] = -Sign[vb]
                        if _get(W, vb, col * n + col) == zero:
                            Sign[vb] = zero
                        else:
                            if _get(W, vb, col * n + col) < zero:
                                Sign[vb] = -Sign[vb]
                            Log[vb] = Log[vb] + T.log(T.abs(_get(W, vb, col * n + col)))
                            for i in T.serial(n - col - 1):
                                tmp[0] = (_get(W, vb, (col + 1 + i) * n + col)
                                          / _get(W, vb, col * n + col))
                                for j in T.serial(n - col):
                                    W[vb, _in((col + 1 + i) * n + col + j, W)] = (
                                        _get(W, vb, (col + 1 + i) * n + col + j)
                                        - tmp[0] * _get(W, vb, col * n + col + j))
                if Sign[vb] == zero:
                    Log[vb] = T.log(zero)
                    Det[vb] = zero
                else:
                    Det[vb] = Sign[vb] * T.exp(Log[vb])

    @T.prim_func(s_tir=True)
    def inverse(a: T.handle, n: T.int64, work: T.handle, out: T.handle, info: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, s = T.int64(), T.int64()
        A = T.match_buffer(a, (bat, s), dtype, align=elem)
        W = T.match_buffer(work, (bat, s), dtype, align=elem)
        Out = T.match_buffer(out, (bat, s), dtype, align=elem)
        Info = T.match_buffer(info, (bat,), "int64")
        for r in T.serial(bat):
            with T.sblock("rows"):
                vb = T.axis.spatial(bat, r)
                T.reads(A[vb, 0:s], W[vb, 0:s], Out[vb, 0:s])
                T.writes(W[vb, 0:s], Out[vb, 0:s], Info[vb])
                at = T.alloc_buffer((1,), "int64", scope="local")
                tmp = T.alloc_buffer((1,), dtype, scope="local")
                Info[vb] = T.int64(0)
                if s > 0:
                    for e in T.serial(n * n):
                        W[vb, _in(e, W)] = _get(A, vb, e)
                        Out[vb, _in(e, Out)] = T.Select(e // n == e % n, one, zero)
                    for col in T.serial(n):
                        pivot(W, vb, n, col, at)
                        if at[0] != col:
                            swap_rows(W, vb, n, at[0], col, tmp)
                            swap_rows(Out, vb, n, at[0], col, tmp)
                        if _get(W, vb, col * n + col) == zero:
                            Info[vb] = T.int64(1)
                        else:
                            tmp[0] = one / _get(W, vb, col * n + col)
                            for j in T.serial(n):
                                W[vb, _in(col * n + j, W)] = _get(W, vb, col * n + j) * tmp[0]
                                Out[vb, _in(col * n + j, Out)] = _get(Out, vb, col * n + j) * tmp[0]
                            for i in T.serial(n):
                                if i != col:
                                    tmp[0] = _get(W, vb, i * n + col)
                                    for j in T.serial(n):
                                        W[vb, _in(i * n + j, W)] = (_get(W, vb, i * n + j)
                                                                    - tmp[0]
                                                                    * _get(W, vb, col * n + j))
                                        Out[vb, _in(i * n + j, Out)] = (_get(Out, vb, i * n + j)
                                                              - tmp[0] * _get(Out, vb, col * n + j))

    return {"potrf": potrf, "lu_det": lu_det, "inverse": inverse}


JACOBI_SWEEPS = 60
"""The most cyclic Jacobi sweeps syevd runs per matrix (it stops as soon as the off-diagonal
part is negligible: a handful of sweeps for the small matrices these kernels serve)."""


def _decompositions(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``gelqf`` (Householder LQ, as LAPACK's gelqf + orglq) and ``syevd`` (cyclic Jacobi):
    one matrix per block."""
    elem = element_bytes(dtype)
    zero = tirx.const(0, dtype)
    one = tirx.const(1, dtype)
    tiny = tirx.const(1e-30 if dtype == "float64" else 1e-14, dtype)  # (relative precision)^2

    @T.macro
    def reflect(M, vb, r, W, i, n, tau):
        """Row ``r`` of ``M`` times the reflector ``I - tau v vᵀ`` (v: 1, then row ``i`` of
        ``W`` past column ``i``)."""
        tau[1] = _get(M, vb, r * n + i)
        for j in T.serial(n - i - 1):
            tau[1] = tau[1] + _get(M, vb, r * n + i + 1 + j) * _get(W, vb, i * n + i + 1 + j)
        tau[1] = tau[0] * tau[1]
        M[vb, _in(r * n + i, M)] = _get(M, vb, r * n + i) - tau[1]
        for j in T.serial(n - i - 1):
            M[vb, _in(r * n + i + 1 + j, M)] = (_get(M, vb, r * n + i + 1 + j)
                                                - tau[1] * _get(W, vb, i * n + i + 1 + j))

    @T.prim_func(s_tir=True)
    def gelqf(a: T.handle, m: T.int64, n: T.int64, work: T.handle, taus: T.handle,
              q: T.handle, l: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, s, st, sl = T.int64(), T.int64(), T.int64(), T.int64()
        A = T.match_buffer(a, (bat, s), dtype, align=elem)
        W = T.match_buffer(work, (bat, s), dtype, align=elem)
        Tau = T.match_buffer(taus, (bat, st), dtype, align=elem)
        Q = T.match_buffer(q, (bat, s), dtype, align=elem)
        L = T.match_buffer(l, (bat, sl), dtype, align=elem)
        for r in T.serial(bat):
            with T.sblock("rows"):
                vb = T.axis.spatial(bat, r)
                T.reads(A[vb, 0:s], W[vb, 0:s], Tau[vb, 0:st], Q[vb, 0:s])
                T.writes(W[vb, 0:s], Tau[vb, 0:st], Q[vb, 0:s], L[vb, 0:sl])
                tau = T.alloc_buffer((2,), dtype, scope="local")  # tau, a row's product
                acc = T.alloc_buffer((2,), dtype, scope="local")  # alpha, squared norm
                if s > 0 and st > 0 and sl > 0:
                    for e in T.serial(m * n):
                        W[vb, _in(e, W)] = _get(A, vb, e)
                    for i in T.serial(m):  # dlarfg on row i, then the rows below it
                        acc[0] = _get(W, vb, i * n + i)
                        acc[1] = zero
                        for j in T.serial(n - i - 1):
                            acc[1] = acc[1] + (_get(W, vb, i * n + i + 1 + j)
                                               * _get(W, vb, i * n + i + 1 + j))
                        if acc[1] == zero:
                            tau[0] = zero
                        else:
                            tau[1] = T.sqrt(acc[0] * acc[0] + acc[1])
                            tau[1] = T.if_then_else(acc[0] >= zero, -tau[1], tau[1])  # beta
                            tau[0] = (tau[1] - acc[0]) / tau[1]
                            for j in T.serial(n - i - 1):
                                W[vb, _in(i * n + i + 1 + j, W)] = (
                                    _get(W, vb, i * n + i + 1 + j) / (acc[0] - tau[1]))
                            W[vb, _in(i * n + i, W)] = tau[1]
                        Tau[vb, _in(i, Tau)] = tau[0]
                        for rr in T.serial(m - i - 1):
                            reflect(W, vb, i + 1 + rr, W, i, n, tau)
                    for e in T.serial(m * m):
                        L[vb, _in(e, L)] = T.if_then_else(e % m <= e // m,
                                                          _get(W, vb, e // m * n + e % m), zero)
                    for e in T.serial(m * n):
                        Q[vb, _in(e, Q)] = T.if_then_else(e // n == e % n, one, zero)
                    for t in T.serial(m):  # Q = [I 0] H(m-1) ... H(0)
                        tau[0] = _get(Tau, vb, m - 1 - t)
                        for rr in T.serial(m):
                            reflect(Q, vb, rr, W, m - 1 - t, n, tau)

    @T.macro
    def rotate(M, vb, n, k, p, q, c, sn, columns):
        """Elements ``p`` and ``q`` of row (or ``columns``: column) ``k`` of ``M`` rotated."""
        if columns:
            c[1] = _get(M, vb, k * n + p)
            M[vb, _in(k * n + p, M)] = c[0] * c[1] - sn[0] * _get(M, vb, k * n + q)
            M[vb, _in(k * n + q, M)] = sn[0] * c[1] + c[0] * _get(M, vb, k * n + q)
        else:
            c[1] = _get(M, vb, p * n + k)
            M[vb, _in(p * n + k, M)] = c[0] * c[1] - sn[0] * _get(M, vb, q * n + k)
            M[vb, _in(q * n + k, M)] = sn[0] * c[1] + c[0] * _get(M, vb, q * n + k)

    @T.prim_func(s_tir=True)
    def syevd(a: T.handle, n: T.int64, work: T.handle, vectors: T.handle, u: T.handle,
              values: T.handle):
        T.func_attr({"tirx.noalias": True})
        bat, s, sv = T.int64(), T.int64(), T.int64()
        A = T.match_buffer(a, (bat, s), dtype, align=elem)
        W = T.match_buffer(work, (bat, s), dtype, align=elem)
        V = T.match_buffer(vectors, (bat, s), dtype, align=elem)
        U = T.match_buffer(u, (bat, s), dtype, align=elem)
        Lam = T.match_buffer(values, (bat, sv), dtype, align=elem)
        for r in T.serial(bat):
            with T.sblock("rows"):
                vb = T.axis.spatial(bat, r)
                T.reads(A[vb, 0:s], W[vb, 0:s], V[vb, 0:s], U[vb, 0:s], Lam[vb, 0:sv])
                T.writes(W[vb, 0:s], V[vb, 0:s], U[vb, 0:s], Lam[vb, 0:sv])
                c = T.alloc_buffer((2,), dtype, scope="local")  # cosine, a saved element
                sn = T.alloc_buffer((3,), dtype, scope="local")  # sine, theta / t, the norm
                off = T.alloc_buffer((1,), dtype, scope="local")
                at = T.alloc_buffer((1,), "int64", scope="local")
                if s > 0 and sv > 0:
                    sn[2] = zero
                    for e in T.serial(n * n):  # the symmetric matrix of A's lower triangle
                        W[vb, _in(e, W)] = _get(A, vb, T.max(e // n, e % n) * n
                                                + T.min(e // n, e % n))
                        V[vb, _in(e, V)] = T.if_then_else(e // n == e % n, one, zero)
                        sn[2] = sn[2] + _get(W, vb, e) * _get(W, vb, e)
                    for sweep in T.serial(JACOBI_SWEEPS):
                        off[0] = zero
                        for e in T.serial(n * n):
                            if e // n < e % n:
                                off[0] = off[0] + _get(W, vb, e) * _get(W, vb, e)
                        if off[0] > tiny * sn[2]:
                            for p in T.serial(n):
                                for qq in T.serial(n - p - 1):
                                    if _get(W, vb, p * n + p + 1 + qq) != zero:
                                        sn[1] = (_get(W, vb, (p + 1 + qq) * n + p + 1 + qq)
                                                 - _get(W, vb, p * n + p)) / (
                                            2 * _get(W, vb, p * n + p + 1 + qq))
                                        sn[1] = T.if_then_else(sn[1] >= zero, one, -one) / (
                                            T.abs(sn[1]) + T.sqrt(sn[1] * sn[1] + one))
                                        c[0] = one / T.sqrt(sn[1] * sn[1] + one)
                                        sn[0] = sn[1] * c[0]
                                        for k in T.serial(n):
                                            rotate(W, vb, n, k, p, p + 1 + qq, c, sn, True)
                                        for k in T.serial(n):
                                            rotate(W, vb, n, k, p, p + 1 + qq, c, sn, False)
                                        for k in T.serial(n):
                                            rotate(V, vb, n, k, p, p + 1 + qq, c, sn, True)
                    for i in T.serial(n):  # ascending: the smallest eigenvalue left, row i
                        at[0] = i
                        for j in T.serial(n - i - 1):
                            if _get(W, vb, (i + 1 + j) * (n + 1)) < _get(W, vb, at[0] * (n + 1)):
                                at[0] = i + 1 + j
                        Lam[vb, _in(i, Lam)] = _get(W, vb, at[0] * (n + 1))
                        W[vb, _in(at[0] * (n + 1), W)] = _get(W, vb, i * (n + 1))
                        W[vb, _in(i * (n + 1), W)] = Lam[vb, _in(i, Lam)]
                        for k in T.serial(n):
                            c[1] = _get(V, vb, k * n + at[0])
                            V[vb, _in(k * n + at[0], V)] = _get(V, vb, k * n + i)
                            V[vb, _in(k * n + i, V)] = c[1]
                        at[0] = 0  # the element of largest magnitude made positive
                        for k in T.serial(n):
                            if T.abs(_get(V, vb, k * n + i)) > T.abs(_get(V, vb, at[0] * n + i)):
                                at[0] = k
                        c[1] = T.if_then_else(_get(V, vb, at[0] * n + i) < zero, -one, one)
                        for k in T.serial(n):
                            U[vb, _in(i * n + k, U)] = c[1] * _get(V, vb, k * n + i)

    return {"gelqf": gelqf, "syevd": syevd}


def _moves(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``gather``, ``scatter`` (one matrix per block) and ``khatri_rao`` (one output row)."""
    elem = element_bytes(dtype)
    zero = tirx.const(0, dtype)

    def positions(scatter: bool) -> tvm.tirx.PrimFunc:
        """``out[b, i] = x[b, at[i]]``, or (``scatter``) ``out[b]`` zero but ``out[b, at[i]] =
        x[b, i]``: ``x`` / ``out`` are the whole matrices (s elements) or the picked ones (k)."""

        @T.prim_func(s_tir=True)
        def func(x: T.handle, at: T.handle, out: T.handle):
            T.func_attr({"tirx.noalias": True})
            bat, s, k = T.int64(), T.int64(), T.int64()
            X = T.match_buffer(x, (bat, k if scatter else s), dtype, align=elem)
            At = T.match_buffer(at, (k,), "int64")
            Out = T.match_buffer(out, (bat, s if scatter else k), dtype, align=elem)
            for r in T.serial(bat):
                with T.sblock("rows"):
                    vb = T.axis.spatial(bat, r)
                    T.reads(X[vb, 0:X.shape[1]], At[0:k])
                    T.writes(Out[vb, 0:Out.shape[1]])
                    if scatter:
                        for e in T.serial(s):
                            Out[vb, e] = zero
                        for i in T.serial(k):
                            Out[vb, At[i]] = X[vb, i]
                    else:
                        for i in T.serial(k):
                            Out[vb, i] = X[vb, At[i]]

        return func

    @T.prim_func(s_tir=True)
    def khatri_rao(a: T.handle, b: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m, n, c = T.int64(), T.int64(), T.int64()
        A = T.match_buffer(a, (m, c), dtype, align=elem)
        B = T.match_buffer(b, (n, c), dtype, align=elem)
        Out = T.match_buffer(out, (m * n, c), dtype, align=elem)
        for r in T.serial(m * n):
            with T.sblock("rows"):
                vr = T.axis.spatial(m * n, r)
                T.reads(A[vr // n, 0:c], B[vr % n, 0:c])
                T.writes(Out[vr, 0:c])
                for j in T.serial(c):
                    Out[vr, j] = A[vr // n, j] * B[vr % n, j]

    return {"gather": positions(False), "scatter": positions(True), "khatri_rao": khatri_rao}


def linalg(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every function of the ``linalg`` kernel for ``dtype`` (module docstring)."""
    return {**_products(dtype), **_triangular(dtype), **_factorisations(dtype),
            **_decompositions(dtype), **_moves(dtype)}
