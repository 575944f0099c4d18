"""libsvm text -> csr: each line of a uint8 buffer parsed in its own ``rows`` block.

A line is ``label[:weight] [qid:q] index:value ...``, tokens separated by spaces, tabs or
``\\r``. ``count`` writes each line's number of colons (a bound on its features: each feature
holds one) as a prefix sum; ``fill`` parses and validates the lines, writes labels, values and
column ids from the line's offset, and per line the features written and an error code (a line
never writes past its bound); ``pack`` moves the features together when a line wrote fewer than
its bound (a ``label:weight`` or a ``qid``). Numbers are parsed as a decimal mantissa of up to 18
significant digits times a power of ten (divided by it for negative exponents, so values of up
to 15 digits are exact in float64)."""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from ..formats import LIBSVM_BAD_FEATURE as BAD_FEATURE
from ..formats import LIBSVM_BAD_LABEL as BAD_LABEL
from ..formats import LIBSVM_BLANK as BLANK
from ..formats import LIBSVM_DIGITS as MAX_DIGITS
from ..formats import LIBSVM_NOT_INCREASING as NOT_INCREASING
from ..formats import LIBSVM_OUT_OF_RANGE as OUT_OF_RANGE
from . import element_bytes
from .scan import offsets

# slots of a line's int64 state
_P, _END, _GO, _ERR, _MANT, _EXP, _NDIG, _SEEN, _DOT, _NEG, _EV, _ENEG, _IDX, _PREV, _POS, _LOOP = range(16)


def _ws(c):
    return T.Or(T.Or(c == 32, c == 9), T.Or(c == 13, c == 10))


def _digit(c):
    return T.And(c >= 48, c <= 57)


def _pow10(e):
    """``10 ** e`` for an int64 ``e >= 0``: exact constants up to ``10 ** 22`` (branches on
    ``e``, which LLVM turns into a table), ``pow`` beyond."""
    power = T.pow(T.float64(10), T.Cast("float64", e))
    for k in range(22, -1, -1):
        power = T.if_then_else(e == T.int64(k), T.float64(10.0**k), power)
    return power


def _skipping(spaces: bool):
    """The macro moving ``st[_P]`` over white space (``spaces``) or over a token."""

    @T.macro
    def skip(B, st):
        st[_GO] = T.int64(1)
        while st[_GO] == T.int64(1):
            if st[_P] < st[_END]:
                if spaces:  # a Python bool: one branch is generated (`== True` miscompiles)
                    if _ws(B[st[_P]]):
                        st[_P] = st[_P] + T.int64(1)
                    else:
                        st[_GO] = T.int64(0)
                elif _ws(B[st[_P]]):
                    st[_GO] = T.int64(0)
                else:
                    st[_P] = st[_P] + T.int64(1)
            else:
                st[_GO] = T.int64(0)

    return skip


_skip_ws = _skipping(True)
_skip_token = _skipping(False)


@T.macro
def _fail(st, code):
    if st[_ERR] == T.int64(0):
        st[_ERR] = T.int64(code)


@T.macro
def _sign(B, st, slot):
    st[slot] = T.int64(0)
    if st[_P] < st[_END]:
        if B[st[_P]] == 45:
            st[slot] = T.int64(1)
            st[_P] = st[_P] + T.int64(1)
        elif B[st[_P]] == 43:
            st[_P] = st[_P] + T.int64(1)


@T.macro
def _mantissa(B, st):
    st[_MANT] = T.int64(0)
    st[_EXP] = T.int64(0)
    st[_NDIG] = T.int64(0)
    st[_SEEN] = T.int64(0)
    st[_DOT] = T.int64(0)
    st[_GO] = T.int64(1)
    while st[_GO] == T.int64(1):
        if st[_P] < st[_END]:
            if _digit(B[st[_P]]):
                st[_SEEN] = st[_SEEN] + T.int64(1)
                if st[_NDIG] < MAX_DIGITS:
                    st[_MANT] = st[_MANT] * T.int64(10) + T.Cast("int64", B[st[_P]]) - T.int64(48)
                    if st[_MANT] > T.int64(0):
                        st[_NDIG] = st[_NDIG] + T.int64(1)
                    st[_EXP] = st[_EXP] - st[_DOT]
                else:
                    st[_EXP] = st[_EXP] + T.int64(1) - st[_DOT]
                st[_P] = st[_P] + T.int64(1)
            elif B[st[_P]] == 46 and st[_DOT] == T.int64(0):
                st[_DOT] = T.int64(1)
                st[_P] = st[_P] + T.int64(1)
            else:
                st[_GO] = T.int64(0)
        else:
            st[_GO] = T.int64(0)


@T.macro
def _exponent(B, st, code):
    st[_EV] = T.int64(0)
    st[_ENEG] = T.int64(0)
    if st[_P] < st[_END]:
        if B[st[_P]] == 101 or B[st[_P]] == 69:
            st[_P] = st[_P] + T.int64(1)
            _sign(B, st, _ENEG)
            st[_SEEN] = T.int64(0)
            st[_GO] = T.int64(1)
            while st[_GO] == T.int64(1):
                if st[_P] < st[_END]:
                    if _digit(B[st[_P]]):
                        if st[_EV] < T.int64(100000):
                            st[_EV] = st[_EV] * T.int64(10) + T.Cast("int64", B[st[_P]]) - T.int64(48)
                        st[_SEEN] = T.int64(1)
                        st[_P] = st[_P] + T.int64(1)
                    else:
                        st[_GO] = T.int64(0)
                else:
                    st[_GO] = T.int64(0)
            if st[_SEEN] == T.int64(0):
                _fail(st, code)


@T.macro
def _number(B, st, fv, code):
    """A decimal number at st[_P] into fv[0]; st[_ERR] = code when there is none."""
    _sign(B, st, _NEG)
    _mantissa(B, st)
    if st[_SEEN] == T.int64(0):
        _fail(st, code)
    _exponent(B, st, code)
    st[_EXP] = st[_EXP] + T.if_then_else(st[_ENEG] == T.int64(1), -st[_EV], st[_EV])
    # fv[2] = 10 ** |exponent|: a table of the exact powers up to 10 ** 22, else pow
    st[_EV] = T.if_then_else(st[_EXP] >= T.int64(0), st[_EXP], -st[_EXP])
    fv[2] = _pow10(st[_EV])
    if st[_MANT] == T.int64(0):
        fv[0] = T.float64(0)
    elif st[_EXP] >= T.int64(0):
        fv[0] = T.Cast("float64", st[_MANT]) * fv[2]
    else:
        fv[0] = T.Cast("float64", st[_MANT]) / fv[2]
    if st[_NEG] == T.int64(1):
        fv[0] = -fv[0]


@T.macro
def _token_ends(B, st, code):
    """The token must end here: at the end of the line or at white space."""
    if st[_P] < st[_END]:
        if not _ws(B[st[_P]]):
            _fail(st, code)


@T.macro
def _index(B, st):
    st[_IDX] = T.int64(0)
    st[_SEEN] = T.int64(0)
    st[_GO] = T.int64(1)
    while st[_GO] == T.int64(1):
        if st[_P] < st[_END]:
            if _digit(B[st[_P]]):
                if st[_SEEN] < MAX_DIGITS:
                    st[_IDX] = st[_IDX] * T.int64(10) + T.Cast("int64", B[st[_P]]) - T.int64(48)
                else:
                    _fail(st, OUT_OF_RANGE)
                if st[_IDX] > T.int64(0):
                    st[_SEEN] = st[_SEEN] + T.int64(1)
                st[_NDIG] = T.int64(1)
                st[_P] = st[_P] + T.int64(1)
            else:
                st[_GO] = T.int64(0)
        else:
            st[_GO] = T.int64(0)


def _line(dtype: str):
    """The macro parsing and writing line ``r`` (its features at ``st[_POS]`` up to ``last``)."""

    @T.macro
    def feature(B, st, fv, cols, last, Data, Idx):
        st[_NDIG] = T.int64(0)
        _index(B, st)
        if st[_NDIG] == T.int64(0):
            _fail(st, BAD_FEATURE)
        if st[_ERR] == T.int64(0):
            if st[_P] < st[_END]:
                if B[st[_P]] == 58:
                    st[_P] = st[_P] + T.int64(1)
                else:
                    _fail(st, BAD_FEATURE)
            else:
                _fail(st, BAD_FEATURE)
        if st[_ERR] == T.int64(0):
            _number(B, st, fv, BAD_FEATURE)
            _token_ends(B, st, BAD_FEATURE)
        if st[_ERR] == T.int64(0):
            if st[_IDX] >= cols:
                _fail(st, OUT_OF_RANGE)
            elif st[_IDX] <= st[_PREV]:
                _fail(st, NOT_INCREASING)
        if st[_ERR] == T.int64(0) and st[_POS] >= last:
            _fail(st, BAD_FEATURE)
        if st[_ERR] == T.int64(0):
            Data[st[_POS]] = T.Cast(dtype, fv[0])
            Idx[st[_POS]] = st[_IDX]
            st[_POS] = st[_POS] + T.int64(1)
            st[_PREV] = st[_IDX]

    @T.macro
    def line(B, begin, end, last, st, fv, cols, L, r, Data, Idx):
        st[_P] = begin
        st[_END] = end
        st[_ERR] = T.int64(0)
        st[_PREV] = T.int64(-1)
        _skip_ws(B, st)
        if st[_P] >= st[_END]:
            st[_ERR] = T.int64(BLANK)
        else:
            _number(B, st, fv, BAD_LABEL)
            fv[1] = fv[0]
            if st[_ERR] == T.int64(0) and st[_P] < st[_END]:
                if B[st[_P]] == 58:  # label:weight, the weight is read and ignored
                    st[_P] = st[_P] + T.int64(1)
                    _number(B, st, fv, BAD_LABEL)
            _token_ends(B, st, BAD_LABEL)
            L[r] = T.Cast(dtype, fv[1])
            st[_LOOP] = T.int64(1)
            while st[_LOOP] == T.int64(1):
                _skip_ws(B, st)
                if st[_P] >= st[_END] or st[_ERR] != T.int64(0):
                    st[_LOOP] = T.int64(0)
                elif B[st[_P]] == 113:  # qid:<n>, ignored
                    _skip_token(B, st)
                else:
                    feature(B, st, fv, cols, last, Data, Idx)

    return line


def libsvm(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``count``: each line's colons, a bound on its features (then offsets in ``indptr``).
    ``fill``: labels, values and column ids, each line's features and error code. ``pack``:
    the features moved together where lines have fewer than their bound."""
    itemsize = element_bytes(dtype)
    line = _line(dtype)

    @T.prim_func(s_tir=True)
    def count(buf: T.handle, begin: T.handle, end: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        nb = T.int64()
        m = T.int64()
        B = T.match_buffer(buf, (nb,), "uint8", align=1)
        Begin = T.match_buffer(begin, (m,), "int64", align=8)
        End = T.match_buffer(end, (m,), "int64", align=8)
        P = T.match_buffer(indptr, (m + 1,), "int64", align=8)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(B[0:nb], Begin[vr], End[vr])
                T.writes(P[vr + 1])
                colons = T.alloc_buffer((1,), "int64", scope="local")
                colons[0] = T.int64(0)
                for p in T.serial(End[vr] - Begin[vr]):
                    colons[0] = colons[0] + T.Cast("int64", B[Begin[vr] + p] == 58)
                P[vr + 1] = colons[0]
        offsets(P, m)

    @T.prim_func(s_tir=True)
    def fill(buf: T.handle, begin: T.handle, end: T.handle, cols: T.int64, indptr: T.handle,
             labels: T.handle, data: T.handle, indices: T.handle, used: T.handle,
             err: T.handle):
        T.func_attr({"tirx.noalias": True})
        nb = T.int64()
        m = T.int64()
        nnz = T.int64()
        B = T.match_buffer(buf, (nb,), "uint8", align=1)
        Begin = T.match_buffer(begin, (m,), "int64", align=8)
        End = T.match_buffer(end, (m,), "int64", align=8)
        P = T.match_buffer(indptr, (m + 1,), "int64", align=8)
        L = T.match_buffer(labels, (m,), dtype, align=itemsize)
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        Used = T.match_buffer(used, (m,), "int64", align=8)
        Err = T.match_buffer(err, (m,), "int64", align=8)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(B[0:nb], Begin[vr], End[vr], P[vr : vr + 2])
                T.writes(L[vr], Data[P[vr] : P[vr + 1]], Idx[P[vr] : P[vr + 1]], Used[vr],
                         Err[vr])
                st = T.alloc_buffer((16,), "int64", scope="local")
                fv = T.alloc_buffer((3,), "float64", scope="local")
                st[_POS] = P[vr]
                line(B, Begin[vr], End[vr], P[vr + 1], st, fv, cols, L, vr, Data, Idx)
                Used[vr] = st[_POS] - P[vr]
                Err[vr] = st[_ERR]

    @T.prim_func(s_tir=True)
    def pack(indptr: T.handle, used: T.handle, data: T.handle, indices: T.handle,
             packed: T.handle, packed_data: T.handle, packed_indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        nnz = T.int64()
        k = T.int64()
        P = T.match_buffer(indptr, (m + 1,), "int64", align=8)
        Used = T.match_buffer(used, (m,), "int64", align=8)
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        Q = T.match_buffer(packed, (m + 1,), "int64", align=8)
        QData = T.match_buffer(packed_data, (k,), dtype, align=itemsize)
        QIdx = T.match_buffer(packed_indices, (k,), "int64", align=8)
        for r in T.serial(m):
            with T.sblock("rows_used"):
                vr = T.axis.spatial(m, r)
                T.reads(Used[vr])
                T.writes(Q[vr + 1])
                Q[vr + 1] = Used[vr]
        offsets(Q, m)
        for r in T.serial(m):
            with T.sblock("rows_move"):
                vr = T.axis.spatial(m, r)
                T.reads(P[vr], Q[vr : vr + 2], Data[P[vr] : P[vr] + Q[vr + 1] - Q[vr]],
                        Idx[P[vr] : P[vr] + Q[vr + 1] - Q[vr]])
                T.writes(QData[Q[vr] : Q[vr + 1]], QIdx[Q[vr] : Q[vr + 1]])
                for j in T.serial(Q[vr + 1] - Q[vr]):
                    QData[Q[vr] + j] = Data[P[vr] + j]
                    QIdx[Q[vr] + j] = Idx[P[vr] + j]

    return {"count": count, "fill": fill, "pack": pack}
