"""Gradients of ``mx.nd.linalg``'s kernel ops and ``khatri_rao`` (MXNet's backward formulas).

Each is written with the linalg ops themselves; an output the gradient needs (the factor, the
solution, the inverse) is computed again from the inputs. A triangular operand's gradient is
kept to the triangle the op reads (the rest of the matrix does not change the result). potri,
syrk and sumlogdiag are composed of these ops, so they need no rule of their own.
"""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ndarray.dispatch import densified
from ...tape import Node
from .registry import gradient

la = nd.linalg


def _t(x: Any) -> Any:
    """Each matrix of ``x`` transposed."""
    return nd.swapaxes(x, x.ndim - 2, x.ndim - 1)


def _triangle(x: Any, lower: bool) -> Any:
    """``x`` with zeros outside its ``lower`` (or upper) triangle, the diagonal kept."""
    return la.maketrian(la.extracttrian(x, lower=lower), lower=lower)


def _copy_lower_up(x: Any) -> Any:
    """``x``'s lower triangle mirrored onto its upper one (MXNet's copyLTU)."""
    strict = la.maketrian(la.extracttrian(x, offset=-1), offset=-1)
    return la.maketrian(la.extracttrian(x)) + _t(strict)


def _per_matrix(scale: Any, x: Any) -> Any:
    """``x`` with each matrix multiplied by its batch element of ``scale``."""
    return nd.broadcast_mul(scale.reshape((*x.shape[:-2], 1, 1)), x)


@gradient("_linalg_gemm", "_linalg_gemm2")
def _gemm(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    a, b = node.inputs[:2]
    p = node.params
    ta, tb, alpha = p["transpose_a"], p["transpose_b"], p["alpha"]
    g = densified(out_grads[0])
    grad_a = grad_b = None
    if node.wanted[0]:  # d op(A) = alpha g op(B)ᵀ
        grad_a = (la.gemm2(b, g, transpose_a=tb, transpose_b=True, alpha=alpha) if ta
                  else la.gemm2(g, b, transpose_b=not tb, alpha=alpha))
    if node.wanted[1]:  # d op(B) = alpha op(A)ᵀ g
        grad_b = (la.gemm2(g, a, transpose_a=True, transpose_b=ta, alpha=alpha) if tb
                  else la.gemm2(a, g, transpose_a=not ta, alpha=alpha))
    if len(node.inputs) == 2:
        return grad_a, grad_b
    return grad_a, grad_b, g * p["beta"] if node.wanted[2] else None


@gradient("_linalg_potrf")
def _potrf(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """``dA = 0.5 L⁻ᵀ copyLTU(Lᵀ tril(dL)) L⁻¹`` (symmetric; copyLTU mirrors the lower
    triangle onto the upper one), as MXNet's."""
    a = node.inputs[0]
    factor = la.potrf(a)
    y = la.trmm(factor, _triangle(densified(out_grads[0]), True), transpose=True)
    y = la.trsm(factor, _copy_lower_up(y), transpose=True)
    return (la.trsm(factor, y, rightside=True, alpha=0.5),)


def _triangular_args(node: Node) -> tuple[Any, Any, bool, bool, bool, float]:
    a, b = node.inputs
    p = node.params
    return a, b, p["transpose"], p["rightside"], p["lower"], p["alpha"]


@gradient("_linalg_trsm")
def _trsm(node: Node, out_grads: list[Any]) -> tuple[Any, Any]:
    a, b, transpose, rightside, lower, alpha = _triangular_args(node)
    g = densified(out_grads[0])
    x = la.trsm(a, b, transpose=transpose, rightside=rightside, lower=lower, alpha=alpha)
    y = la.trsm(a, g, transpose=not transpose, rightside=rightside, lower=lower)
    grad_a = None
    if node.wanted[0]:  # d op(A) = -op(A)⁻ᵀ g Xᵀ (left), -Xᵀ g op(A)⁻ᵀ (right)
        if rightside:
            d_op = (la.gemm2(y, x, transpose_a=True, alpha=-1.0) if transpose
                    else la.gemm2(x, y, transpose_a=True, alpha=-1.0))
        else:
            d_op = (la.gemm2(x, y, transpose_b=True, alpha=-1.0) if transpose
                    else la.gemm2(y, x, transpose_b=True, alpha=-1.0))
        grad_a = _triangle(d_op, lower)
    return grad_a, y * alpha if node.wanted[1] else None


@gradient("_linalg_trmm")
def _trmm(node: Node, out_grads: list[Any]) -> tuple[Any, Any]:
    a, b, transpose, rightside, lower, alpha = _triangular_args(node)
    g = densified(out_grads[0])
    grad_a = grad_b = None
    if node.wanted[0]:  # d op(A) = alpha g Bᵀ (left), alpha Bᵀ g (right)
        if rightside:
            d_op = (la.gemm2(g, b, transpose_a=True, alpha=alpha) if transpose
                    else la.gemm2(b, g, transpose_a=True, alpha=alpha))
        else:
            d_op = (la.gemm2(b, g, transpose_b=True, alpha=alpha) if transpose
                    else la.gemm2(g, b, transpose_b=True, alpha=alpha))
        grad_a = _triangle(d_op, lower)
    if node.wanted[1]:  # alpha op(A)ᵀ g (left), alpha g op(A)ᵀ (right)
        grad_b = la.trmm(a, g, transpose=not transpose, rightside=rightside, lower=lower,
                         alpha=alpha)
    return grad_a, grad_b


@gradient("_linalg_inverse")
def _inverse(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """``dA = -A⁻ᵀ g A⁻ᵀ``."""
    inv = la.inverse(node.inputs[0])
    g = densified(out_grads[0])
    return (la.gemm2(la.gemm2(inv, g, transpose_a=True), inv, transpose_b=True, alpha=-1.0),)


@gradient("_linalg_det")
def _det(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """``dA = g det(A) A⁻ᵀ``."""
    a = node.inputs[0]
    scale = densified(out_grads[0]) * la.det(a)
    return (_per_matrix(scale, _t(la.inverse(a))),)


@gradient("_linalg_slogdet")
def _slogdet(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """``dA = g_logabsdet A⁻ᵀ`` (the sign has no gradient)."""
    a = node.inputs[0]
    return (_per_matrix(densified(out_grads[1]), _t(la.inverse(a))),)


@gradient("_linalg_gelqf")
def _gelqf(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """``dA = L⁻ᵀ (dQ + copyLTU(M) Q)``, ``M = Lᵀ dL - dQ Qᵀ``, as MXNet's."""
    q, low = la.gelqf(node.inputs[0])
    dq, dl = (densified(g) for g in out_grads)
    m = la.gemm2(low, dl, transpose_a=True) - la.gemm2(dq, q, transpose_b=True)
    x = dq + la.gemm2(_copy_lower_up(m), q)
    return (la.trsm(low, x, transpose=True),)


@gradient("_linalg_syevd")
def _syevd(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """``dA = Uᵀ (diag(dL) + F ∘ (U dUᵀ)) U``, symmetrised, ``F[i, j] = 1 / (L[j] - L[i])``
    off the diagonal and 0 on it (distinct eigenvalues, as MXNet's)."""
    a = node.inputs[0]
    u, values = la.syevd(a)
    du, dl = (densified(g) for g in out_grads)
    n = a.shape[-1]
    gaps = nd.broadcast_sub(values.reshape((*values.shape[:-1], 1, n)),
                            values.reshape((*values.shape, 1)))
    eye = nd.eye(n, dtype=a.dtype, ctx=a.context).reshape((1,) * (a.ndim - 2) + (n, n))
    f = nd.broadcast_sub(1.0 / nd.broadcast_add(gaps, eye), eye)
    inner = la.makediag(dl) + f * la.gemm2(u, du, transpose_b=True)
    grad = la.gemm2(la.gemm2(u, inner, transpose_a=True), u)
    return ((grad + _t(grad)) * 0.5,)


@gradient("_linalg_extractdiag")
def _extractdiag(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (la.makediag(densified(out_grads[0]), offset=node.params["offset"]),)


@gradient("_linalg_makediag")
def _makediag(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (la.extractdiag(densified(out_grads[0]), offset=node.params["offset"]),)


@gradient("_linalg_extracttrian")
def _extracttrian(node: Node, out_grads: list[Any]) -> tuple[Any]:
    p = node.params
    return (la.maketrian(densified(out_grads[0]), offset=p["offset"], lower=p["lower"]),)


@gradient("_linalg_maketrian")
def _maketrian(node: Node, out_grads: list[Any]) -> tuple[Any]:
    p = node.params
    return (la.extracttrian(densified(out_grads[0]), offset=p["offset"], lower=p["lower"]),)


@gradient("khatri_rao")
def _khatri_rao(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    """Input t's gradient: the output gradient, as (rows_0, ..., rows_k-1, columns), times every
    other input along its own axis, summed over the other inputs' axes."""
    inputs = node.inputs
    columns = inputs[0].shape[1]
    g = densified(out_grads[0]).reshape((*(x.shape[0] for x in inputs), columns))
    grads = []
    for t, wanted in enumerate(node.wanted):
        if not wanted:
            grads.append(None)
            continue
        product = g
        for s, x in enumerate(inputs):
            if s != t:
                shape = [1] * len(inputs) + [columns]
                shape[s] = x.shape[0]
                product = nd.broadcast_mul(product, densified(x).reshape(tuple(shape)))
        others = tuple(s for s in range(len(inputs)) if s != t)
        grads.append(nd.sum(product, axis=others) if others else product)
    return tuple(grads)
