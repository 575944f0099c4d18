"""Shape rules of ``mx.sym.linalg``'s ops and ``khatri_rao`` (``infer.SHAPE_RULES`` merges
them): output shapes from the input shapes and attributes alone, as MXNet's, so that no op
runs on zeros to see (potrf and inverse refuse zero matrices)."""

from __future__ import annotations

import math

from ..errors import InvalidValue
from .shape_types import Answer, Params, Shape, ShapeRule


def _product(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """gemm / gemm2: op(A) · op(B) with rows on ``axis``; gemm's C has the output's shape."""
    a, b = shapes[:2]
    if a is None or b is None:
        return shapes, shapes[2] if len(shapes) == 3 else None
    axis = int(p.get("axis", -2)) % len(a)
    m = a[-1] if p.get("transpose_a") else a[axis]
    n = b[axis] if p.get("transpose_b") else b[-1]
    out = tuple(m if i == axis else n if i == len(a) - 1 else d for i, d in enumerate(a))
    if len(shapes) == 3 and shapes[2] is not None and shapes[2] != out:
        raise InvalidValue(f"infer_shape: gemm's C has shape {shapes[2]}, op(A) · op(B) {out}")
    return (shapes[:2] + [out]) if len(shapes) == 3 else shapes, out


def _second(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """trsm / trmm: the output has B's shape."""
    return shapes, shapes[1]


def _first(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    return shapes, shapes[0]


def _batch(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """det, sumlogdiag: one value per matrix ((1,) for a single matrix, as MXNet's)."""
    return shapes, None if shapes[0] is None else shapes[0][:-2] or (1,)


def _slogdet(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    out = None if shapes[0] is None else shapes[0][:-2] or (1,)
    return shapes, [out, out]


def _gelqf(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    a = shapes[0]
    return shapes, [a, None if a is None else (*a[:-1], a[-2])]


def _syevd(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    a = shapes[0]
    return shapes, [a, None if a is None else a[:-1]]


def _syrk(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    a = shapes[0]
    if a is None:
        return shapes, None
    n = a[-1] if p.get("transpose") else a[-2]
    return shapes, (*a[:-2], n, n)


def _extract(trian: bool) -> ShapeRule:
    def rule(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
        a = shapes[0]
        if a is None:
            return shapes, None
        m = a[-1] - abs(int(p.get("offset", 0)))
        return shapes, (*a[:-2], m * (m + 1) // 2 if trian else m)
    return rule


def _make(trian: bool) -> ShapeRule:
    def rule(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
        a = shapes[0]
        if a is None:
            return shapes, None
        m = (math.isqrt(8 * a[-1] + 1) - 1) // 2 if trian else a[-1]
        n = m + abs(int(p.get("offset", 0)))
        return shapes, (*a[:-1], n, n)
    return rule


def _khatri_rao(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    if None in shapes:
        return shapes, None
    return shapes, (math.prod(s[0] for s in shapes), shapes[0][1])


LINALG_SHAPE_RULES: dict[str, ShapeRule] = {
    "_linalg_gemm": _product, "_linalg_gemm2": _product, "_linalg_trsm": _second,
    "_linalg_trmm": _second, "_linalg_potrf": _first, "_linalg_potri": _first,
    "_linalg_inverse": _first, "_linalg_det": _batch, "_linalg_sumlogdiag": _batch,
    "_linalg_slogdet": _slogdet, "_linalg_syrk": _syrk, "_linalg_gelqf": _gelqf,
    "_linalg_syevd": _syevd,
    "_linalg_extractdiag": _extract(False), "_linalg_extracttrian": _extract(True),
    "_linalg_makediag": _make(False), "_linalg_maketrian": _make(True),
    "khatri_rao": _khatri_rao,
}
"""Shape rule by op name."""
