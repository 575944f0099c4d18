"""Optimizer updates (MXNet 1.9.1's sgd, sgd_mom, adam, adagrad, ftrl operators), in place.

Each family has up to three functions over a weight of ``n`` rows of ``d`` elements
(AdaGrad has no ``std``: with a row_sparse gradient MXNet's AdaGrad is always lazy):

- ``lazy``: only the rows in ``grad_indices``, parallel over gradient rows (they are unique,
  so no two tasks write one row). Each gradient row says which weight and state rows it
  updates (``ahead``: they sit at random ids), so a schedule can prefetch those of later rows.
- ``std``: every weight row, the gradient rows merged in by one sorted walk (a row without a
  gradient row updates with ``g = 0``, so weight decay and momentum reach it), parallel over
  spans of ``MERGE_SPAN`` weight rows that each find their first gradient row by binary search.
- ``dense``: every row, with a dense gradient.

Each element reads its gradient once and writes the weight and its states in the same pass: no
temporaries. Hyperparameters are ``float32`` kernel parameters (MXNet's operator parameters are
C floats), so one binary serves every value and every shape. Arithmetic runs in float32 (float64
for float64 weights); float16 values are widened, updated, and rounded once when stored.
A clip bound of ``+inf`` disables clipping (``NaN`` gradients then pass through, as in MXNet).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .columns import ahead, cols, position

MERGE_SPAN = 64
"""Weight rows per task of the ``std`` functions (each task starts with one binary search)."""

SgdHyper = namedtuple("SgdHyper", "lr wd rescale_grad clip_gradient")
SgdMomHyper = namedtuple("SgdMomHyper", "lr momentum wd rescale_grad clip_gradient")
AdamHyper = namedtuple("AdamHyper", "lr beta1 beta2 epsilon wd rescale_grad clip_gradient")
AdaGradHyper = namedtuple("AdaGradHyper", "lr epsilon wd rescale_grad clip_gradient")
FtrlHyper = namedtuple("FtrlHyper", "lr lamda1 beta wd rescale_grad clip_gradient")


def _compute_type(dtype: str) -> str:
    return "float64" if dtype == "float64" else "float32"


def _clip(x: Any, bound: Any) -> Any:
    """MXNet's ``clip::Map``: values beyond ``±bound`` become the bound; NaN passes."""
    return T.Select(x > bound, bound, T.Select(x < -bound, -bound, x))


def _sign(x: Any, ct: str) -> Any:
    """MXNet's ``sign::Map``: 1, -1, or 0."""
    one = tvm.tirx.const(1, ct)
    return T.Select(x > 0, one, T.Select(x < 0, -one, tvm.tirx.const(0, ct)))


def _loops(dtype: str, step: Any) -> tuple[Any, Any, Any]:
    """The ``lazy``, ``std`` and ``dense`` row loops around an element update.

    ``step(arrays, h, r, j, g)`` updates element ``(r, j)`` of the weight and states ``arrays``
    (one to three buffers) with hyperparameters ``h`` and gradient value ``g`` (already in the
    compute type). Column loops are those of templates/columns.py; each row of ``lazy`` is a
    gather entry whose rows are ``ahead``.
    """
    ct = _compute_type(dtype)
    zero = tvm.tirx.const(0, ct)
    span = MERGE_SPAN
    at = position()

    @T.macro
    def grad_step(arrays, hyper, row, gbuf, grow, j):
        step(arrays, hyper, row, j, T.Cast(ct, gbuf[grow, j]))

    @T.macro
    def zero_step(arrays, hyper, row, j):
        step(arrays, hyper, row, j, zero)

    @T.macro
    def grad_cols(arrays, hyper, row, gbuf, grow, width):
        cols.each(width, grad_step, arrays, hyper, row, gbuf, grow)

    @T.macro
    def zero_cols(arrays, hyper, row, width):
        cols.each(width, zero_step, arrays, hyper, row)

    @T.macro
    def lazy_rows(arrays, hyper, gbuf, ibuf, kk, width):
        for i in T.serial(kk):
            with T.sblock("rows"):
                vi = T.axis.spatial(kk, i)
                T.reads(gbuf[vi, 0:width], ibuf[0:kk],
                        *[a[ibuf[vi], 0:width] for a in arrays])
                T.writes(*[a[ibuf[vi], 0:width] for a in arrays])
                cols.gather(ahead(at, kk, [(a, ibuf[at], True) for a in arrays] + [(gbuf, at, False)]),
                            vi, grad_cols, arrays, hyper, ibuf[vi], gbuf, vi, width)

    @T.macro
    def merged_rows(arrays, hyper, gbuf, ibuf, kk, nn, width):
        for c in T.serial((nn + span - 1) // span):
            with T.sblock("rows"):
                vc = T.axis.spatial((nn + span - 1) // span, c)
                T.reads(gbuf[0:kk, 0:width], ibuf[0:kk],
                        *[a[vc * span : vc * span + span, 0:width] for a in arrays])
                T.writes(*[a[vc * span : vc * span + span, 0:width] for a in arrays])
                # at[0]: the first gradient row at or after this span's first row, then the
                # cursor of the walk; at[1]: binary-search bound, then "this row has a gradient"
                at = T.alloc_buffer((2,), "int64", scope="local")
                at[0] = T.int64(0)
                at[1] = kk
                while at[0] < at[1]:
                    if ibuf[(at[0] + at[1]) // 2] < vc * span:
                        at[0] = (at[0] + at[1]) // 2 + 1
                    else:
                        at[1] = (at[0] + at[1]) // 2
                for q in T.serial(T.min(T.int64(span), nn - vc * span)):
                    at[1] = T.int64(0)
                    if at[0] < kk:
                        if ibuf[at[0]] == vc * span + q:
                            at[1] = T.int64(1)
                    if at[1] == T.int64(1):
                        grad_cols(arrays, hyper, vc * span + q, gbuf, at[0], width)
                        at[0] = at[0] + T.int64(1)
                    else:
                        zero_cols(arrays, hyper, vc * span + q, width)

    @T.macro
    def dense_rows(arrays, hyper, gbuf, nn, width):
        for i in T.serial(nn):
            with T.sblock("rows"):
                vi = T.axis.spatial(nn, i)
                T.reads(gbuf[vi, 0:width], *[a[vi, 0:width] for a in arrays])
                T.writes(*[a[vi, 0:width] for a in arrays])
                grad_cols(arrays, hyper, vi, gbuf, vi, width)

    return lazy_rows, merged_rows, dense_rows


def sgd(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)`` (MXNet's sgd_update)."""
    itemsize = element_bytes(dtype)
    ct = _compute_type(dtype)

    def up(x: Any) -> Any:
        return T.Cast(ct, x)

    @T.macro
    def step(a, h, r, j, g):
        a[0][r, j] = T.Cast(dtype, (up(1) - h.lr * h.wd) * up(a[0][r, j])
                            - h.lr * _clip(h.rescale_grad * g, h.clip_gradient))

    lazy_rows, merged_rows, dense_rows = _loops(dtype, step)

    @T.prim_func(s_tir=True)
    def lazy(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, lr: T.float32,
             wd: T.float32, rescale_grad: T.float32, clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        lazy_rows((W,), SgdHyper(up(lr), up(wd), up(rescale_grad), up(clip_gradient)), G, I, k, d)

    @T.prim_func(s_tir=True)
    def std(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, lr: T.float32,
            wd: T.float32, rescale_grad: T.float32, clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        merged_rows((W,), SgdHyper(up(lr), up(wd), up(rescale_grad), up(clip_gradient)),
                    G, I, k, n, d)

    @T.prim_func(s_tir=True)
    def dense(weight: T.handle, grad: T.handle, lr: T.float32, wd: T.float32,
              rescale_grad: T.float32, clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad, (n, d), dtype, align=itemsize)
        dense_rows((W,), SgdHyper(up(lr), up(wd), up(rescale_grad), up(clip_gradient)), G, n, d)

    return {"lazy": lazy, "std": std, "dense": dense}


def sgd_mom(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); weight += mom``
    (MXNet's sgd_mom_update: the momentum state holds the negative step)."""
    itemsize = element_bytes(dtype)
    ct = _compute_type(dtype)

    def up(x: Any) -> Any:
        return T.Cast(ct, x)

    @T.macro
    def step(a, h, r, j, g):
        a[1][r, j] = T.Cast(dtype, h.momentum * up(a[1][r, j]) - h.lr * h.wd * up(a[0][r, j])
                            - h.lr * _clip(h.rescale_grad * g, h.clip_gradient))
        a[0][r, j] = T.Cast(dtype, up(a[0][r, j]) + up(a[1][r, j]))

    lazy_rows, merged_rows, dense_rows = _loops(dtype, step)

    @T.prim_func(s_tir=True)
    def lazy(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, mom: T.handle,
             lr: T.float32, momentum: T.float32, wd: T.float32, rescale_grad: T.float32,
             clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        M = T.match_buffer(mom, (n, d), dtype, align=itemsize)
        lazy_rows((W, M), SgdMomHyper(up(lr), up(momentum), up(wd), up(rescale_grad),
                                      up(clip_gradient)), G, I, k, d)

    @T.prim_func(s_tir=True)
    def std(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, mom: T.handle,
            lr: T.float32, momentum: T.float32, wd: T.float32, rescale_grad: T.float32,
            clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        M = T.match_buffer(mom, (n, d), dtype, align=itemsize)
        merged_rows((W, M), SgdMomHyper(up(lr), up(momentum), up(wd), up(rescale_grad),
                                        up(clip_gradient)), G, I, k, n, d)

    @T.prim_func(s_tir=True)
    def dense(weight: T.handle, grad: T.handle, mom: T.handle, lr: T.float32,
              momentum: T.float32, wd: T.float32, rescale_grad: T.float32,
              clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad, (n, d), dtype, align=itemsize)
        M = T.match_buffer(mom, (n, d), dtype, align=itemsize)
        dense_rows((W, M), SgdMomHyper(up(lr), up(momentum), up(wd), up(rescale_grad),
                                       up(clip_gradient)), G, n, d)

    return {"lazy": lazy, "std": std, "dense": dense}


def adam(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; weight -= lr * mean / (sqrt(var) + epsilon)``
    (MXNet's adam_update; the caller folds bias correction into ``lr``)."""
    itemsize = element_bytes(dtype)
    ct = _compute_type(dtype)

    def up(x: Any) -> Any:
        return T.Cast(ct, x)

    def clipped(h: AdamHyper, g: Any, w: Any) -> Any:
        return _clip(g * h.rescale_grad + w * h.wd, h.clip_gradient)

    @T.macro
    def step(a, h, r, j, g):
        a[1][r, j] = T.Cast(dtype, h.beta1 * up(a[1][r, j])
                            + (up(1) - h.beta1) * clipped(h, g, up(a[0][r, j])))
        a[2][r, j] = T.Cast(dtype, h.beta2 * up(a[2][r, j])
                            + (up(1) - h.beta2) * clipped(h, g, up(a[0][r, j]))
                            * clipped(h, g, up(a[0][r, j])))
        a[0][r, j] = T.Cast(dtype, up(a[0][r, j])
                            - h.lr * up(a[1][r, j]) / (T.sqrt(up(a[2][r, j])) + h.epsilon))

    lazy_rows, merged_rows, dense_rows = _loops(dtype, step)

    @T.prim_func(s_tir=True)
    def lazy(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, mean: T.handle,
             var: T.handle, lr: T.float32, beta1: T.float32, beta2: T.float32,
             epsilon: T.float32, wd: T.float32, rescale_grad: T.float32,
             clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        M = T.match_buffer(mean, (n, d), dtype, align=itemsize)
        V = T.match_buffer(var, (n, d), dtype, align=itemsize)
        lazy_rows((W, M, V), AdamHyper(up(lr), up(beta1), up(beta2), up(epsilon), up(wd),
                                       up(rescale_grad), up(clip_gradient)), G, I, k, d)

    @T.prim_func(s_tir=True)
    def std(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, mean: T.handle,
            var: T.handle, lr: T.float32, beta1: T.float32, beta2: T.float32,
            epsilon: T.float32, wd: T.float32, rescale_grad: T.float32,
            clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        M = T.match_buffer(mean, (n, d), dtype, align=itemsize)
        V = T.match_buffer(var, (n, d), dtype, align=itemsize)
        merged_rows((W, M, V), AdamHyper(up(lr), up(beta1), up(beta2), up(epsilon), up(wd),
                                         up(rescale_grad), up(clip_gradient)), G, I, k, n, d)

    @T.prim_func(s_tir=True)
    def dense(weight: T.handle, grad: T.handle, mean: T.handle, var: T.handle,
              lr: T.float32, beta1: T.float32, beta2: T.float32, epsilon: T.float32,
              wd: T.float32, rescale_grad: T.float32, clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad, (n, d), dtype, align=itemsize)
        M = T.match_buffer(mean, (n, d), dtype, align=itemsize)
        V = T.match_buffer(var, (n, d), dtype, align=itemsize)
        dense_rows((W, M, V), AdamHyper(up(lr), up(beta1), up(beta2), up(epsilon), up(wd),
                                        up(rescale_grad), up(clip_gradient)), G, n, d)

    return {"lazy": lazy, "std": std, "dense": dense}


def adagrad(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``g = clip(rescale_grad*grad); history += g*g;
    weight -= lr * (g / sqrt(history + epsilon) + wd*weight)`` (MXNet's AdaGrad; its sparse
    operator takes no ``wd``, so a row_sparse gradient always runs ``lazy`` with ``wd = 0``)."""
    itemsize = element_bytes(dtype)
    ct = _compute_type(dtype)

    def up(x: Any) -> Any:
        return T.Cast(ct, x)

    @T.macro
    def step(a, h, r, j, g):
        a[1][r, j] = T.Cast(dtype, up(a[1][r, j]) + _clip(g * h.rescale_grad, h.clip_gradient)
                            * _clip(g * h.rescale_grad, h.clip_gradient))
        a[0][r, j] = T.Cast(dtype, up(a[0][r, j]) - h.lr * (
            _clip(g * h.rescale_grad, h.clip_gradient) / T.sqrt(up(a[1][r, j]) + h.epsilon)
            + h.wd * up(a[0][r, j])))

    lazy_rows, _, dense_rows = _loops(dtype, step)

    @T.prim_func(s_tir=True)
    def lazy(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, history: T.handle,
             lr: T.float32, epsilon: T.float32, wd: T.float32, rescale_grad: T.float32,
             clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        H = T.match_buffer(history, (n, d), dtype, align=itemsize)
        lazy_rows((W, H), AdaGradHyper(up(lr), up(epsilon), up(wd), up(rescale_grad),
                                       up(clip_gradient)), G, I, k, d)

    @T.prim_func(s_tir=True)
    def dense(weight: T.handle, grad: T.handle, history: T.handle, lr: T.float32,
              epsilon: T.float32, wd: T.float32, rescale_grad: T.float32,
              clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad, (n, d), dtype, align=itemsize)
        H = T.match_buffer(history, (n, d), dtype, align=itemsize)
        dense_rows((W, H), AdaGradHyper(up(lr), up(epsilon), up(wd), up(rescale_grad),
                                        up(clip_gradient)), G, n, d)

    return {"lazy": lazy, "dense": dense}


def ftrl(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``g = clip(rescale_grad*grad); z += g - (sqrt(n + g*g) - sqrt(n)) * weight / lr;
    n += g*g; weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)``
    (MXNet's ftrl_update)."""
    itemsize = element_bytes(dtype)
    ct = _compute_type(dtype)

    def up(x: Any) -> Any:
        return T.Cast(ct, x)

    def cg(h: FtrlHyper, g: Any) -> Any:
        return _clip(g * h.rescale_grad, h.clip_gradient)

    @T.macro
    def step(a, h, r, j, g):
        a[1][r, j] = T.Cast(dtype, up(a[1][r, j]) + (
            cg(h, g) - (T.sqrt(up(a[2][r, j]) + cg(h, g) * cg(h, g)) - T.sqrt(up(a[2][r, j])))
            * up(a[0][r, j]) / h.lr))
        a[2][r, j] = T.Cast(dtype, up(a[2][r, j]) + cg(h, g) * cg(h, g))
        a[0][r, j] = T.Cast(dtype, (_sign(up(a[1][r, j]), ct) * h.lamda1 - up(a[1][r, j]))
                            / ((h.beta + T.sqrt(up(a[2][r, j]))) / h.lr + h.wd)
                            * T.Cast(ct, T.abs(up(a[1][r, j])) > h.lamda1))

    lazy_rows, merged_rows, dense_rows = _loops(dtype, step)

    @T.prim_func(s_tir=True)
    def lazy(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, z: T.handle,
             n_acc: T.handle, lr: T.float32, lamda1: T.float32, beta: T.float32,
             wd: T.float32, rescale_grad: T.float32, clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        Z = T.match_buffer(z, (n, d), dtype, align=itemsize)
        N = T.match_buffer(n_acc, (n, d), dtype, align=itemsize)
        lazy_rows((W, Z, N), FtrlHyper(up(lr), up(lamda1), up(beta), up(wd), up(rescale_grad),
                                       up(clip_gradient)), G, I, k, d)

    @T.prim_func(s_tir=True)
    def std(weight: T.handle, grad_data: T.handle, grad_indices: T.handle, z: T.handle,
            n_acc: T.handle, lr: T.float32, lamda1: T.float32, beta: T.float32,
            wd: T.float32, rescale_grad: T.float32, clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d, k = T.int64(), T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad_data, (k, d), dtype, align=itemsize)
        I = T.match_buffer(grad_indices, (k,), "int64", align=8)
        Z = T.match_buffer(z, (n, d), dtype, align=itemsize)
        N = T.match_buffer(n_acc, (n, d), dtype, align=itemsize)
        merged_rows((W, Z, N), FtrlHyper(up(lr), up(lamda1), up(beta), up(wd), up(rescale_grad),
                                         up(clip_gradient)), G, I, k, n, d)

    @T.prim_func(s_tir=True)
    def dense(weight: T.handle, grad: T.handle, z: T.handle, n_acc: T.handle, lr: T.float32,
              lamda1: T.float32, beta: T.float32, wd: T.float32, rescale_grad: T.float32,
              clip_gradient: T.float32):
        T.func_attr({"tirx.noalias": True})
        n, d = T.int64(), T.int64()
        W = T.match_buffer(weight, (n, d), dtype, align=itemsize)
        G = T.match_buffer(grad, (n, d), dtype, align=itemsize)
        Z = T.match_buffer(z, (n, d), dtype, align=itemsize)
        N = T.match_buffer(n_acc, (n, d), dtype, align=itemsize)
        dense_rows((W, Z, N), FtrlHyper(up(lr), up(lamda1), up(beta), up(wd), up(rescale_grad),
                                        up(clip_gradient)), G, n, d)

    return {"lazy": lazy, "std": std, "dense": dense}
