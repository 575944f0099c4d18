"""Direct convolution (kernel ``nn_conv``): MXNet's Convolution forward in one 3-D form.

The host lifts 1-D and 2-D convolutions to 3-D by adding unit dimensions, so each dtype has one
function per bias choice: ``forward (x, w, geometry, out)`` and ``forward_bias (x, w, b, geometry,
out)``. ``x`` is (batch, channels, depth, height, width), ``w`` (filters, channels per group,
kd, kh, kw), ``out`` (batch, filters, od, oh, ow). A ``rows`` block per output line (batch,
filter, od, oh) runs the columns ``ow``; each column sums its window over the group's channels
in the compute dtype (float32 for float16). Window positions outside the input read as zero
(padding); the channel and every input coordinate are checked against the input's bounds, so no
geometry reads out of bounds.
"""

from __future__ import annotations

import tvm
from tvm import tirx
from tvm.script import tirx as T

from .. import element_bytes
from ..columns import cols

GEOMETRY = ("stride_d", "stride_h", "stride_w", "dilate_d", "dilate_h", "dilate_w",
            "pad_d", "pad_h", "pad_w", "groups")
"""The int64 scalars after the operands, in order: stride, dilation and padding per axis (depth,
height, width), and the number of groups."""


def _compute_type(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


def _conv(dtype: str, with_bias: bool) -> tvm.tirx.PrimFunc:
    """``out[n, f, od, oh, ow]`` = the window sum (plus ``b[f]`` when ``with_bias``)."""
    itemsize = element_bytes(dtype)
    ct = _compute_type(dtype)

    def widen(value):
        return T.Cast(ct, value) if ct != dtype else value

    @T.macro
    def at(out, x, w, b, acc, vn, vf, vd, vh, sd, sh, sw, dd, dh, dw, pd, ph, pw, groups, j):
        if with_bias:
            acc[0] = widen(b[vf])
        else:
            acc[0] = tirx.const(0, ct)
        for c, kd, kh, kw in T.grid(w.shape[1], w.shape[2], w.shape[3], w.shape[4]):
            if (0 <= (vf * groups) // w.shape[0] * w.shape[1] + c < x.shape[1]
                    and 0 <= vd * sd + kd * dd - pd < x.shape[2]
                    and 0 <= vh * sh + kh * dh - ph < x.shape[3]
                    and 0 <= j * sw + kw * dw - pw < x.shape[4]):
                acc[0] = acc[0] + widen(
                    x[vn, (vf * groups) // w.shape[0] * w.shape[1] + c, vd * sd + kd * dd - pd,
                      vh * sh + kh * dh - ph, j * sw + kw * dw - pw]) * widen(w[vf, c, kd, kh, kw])
        out[vn, vf, vd, vh, j] = T.Cast(dtype, acc[0]) if ct != dtype else acc[0]

    @T.macro
    def lines(X, Wt, B, Out, sd, sh, sw, dd, dh, dw, pd, ph, pw, groups):
        n, f, od, oh, ow = Out.shape
        for r in T.serial(n * f * od * oh):
            with T.sblock("rows"):
                vr = T.axis.spatial(n * f * od * oh, r)
                if with_bias:
                    T.reads(X[vr // (f * od * oh), 0:X.shape[1], 0:X.shape[2], 0:X.shape[3],
                              0:X.shape[4]], Wt[vr // (od * oh) % f, 0:Wt.shape[1],
                                                0:Wt.shape[2], 0:Wt.shape[3], 0:Wt.shape[4]],
                            B[vr // (od * oh) % f])
                else:
                    T.reads(X[vr // (f * od * oh), 0:X.shape[1], 0:X.shape[2], 0:X.shape[3],
                              0:X.shape[4]], Wt[vr // (od * oh) % f, 0:Wt.shape[1],
                                                0:Wt.shape[2], 0:Wt.shape[3], 0:Wt.shape[4]])
                T.writes(Out[vr // (f * od * oh), vr // (od * oh) % f, vr // oh % od, vr % oh,
                             0:ow])
                acc = T.alloc_buffer((1,), ct, scope="local")
                cols.each(ow, at, Out, X, Wt, B, acc, vr // (f * od * oh), vr // (od * oh) % f,
                          vr // oh % od, vr % oh, sd, sh, sw, dd, dh, dw, pd, ph, pw, groups)

    if with_bias:
        @T.prim_func(s_tir=True)
        def func(x: T.handle, w: T.handle, b: T.handle, stride_d: T.int64, stride_h: T.int64,
                 stride_w: T.int64, dilate_d: T.int64, dilate_h: T.int64, dilate_w: T.int64,
                 pad_d: T.int64, pad_h: T.int64, pad_w: T.int64, groups: T.int64, out: T.handle):
            T.func_attr({"tirx.noalias": True})
            n, c, d, h, wd = T.int64(), T.int64(), T.int64(), T.int64(), T.int64()
            f, cg, kd, kh, kw = T.int64(), T.int64(), T.int64(), T.int64(), T.int64()
            od, oh, ow = T.int64(), T.int64(), T.int64()
            X = T.match_buffer(x, (n, c, d, h, wd), dtype, align=itemsize)
            Wt = T.match_buffer(w, (f, cg, kd, kh, kw), dtype, align=itemsize)
            B = T.match_buffer(b, (f,), dtype, align=itemsize)
            Out = T.match_buffer(out, (n, f, od, oh, ow), dtype, align=itemsize)
            lines(X, Wt, B, Out, stride_d, stride_h, stride_w, dilate_d, dilate_h, dilate_w,
                  pad_d, pad_h, pad_w, groups)
    else:
        @T.prim_func(s_tir=True)
        def func(x: T.handle, w: T.handle, stride_d: T.int64, stride_h: T.int64,
                 stride_w: T.int64, dilate_d: T.int64, dilate_h: T.int64, dilate_w: T.int64,
                 pad_d: T.int64, pad_h: T.int64, pad_w: T.int64, groups: T.int64, out: T.handle):
            T.func_attr({"tirx.noalias": True})
            n, c, d, h, wd = T.int64(), T.int64(), T.int64(), T.int64(), T.int64()
            f, cg, kd, kh, kw = T.int64(), T.int64(), T.int64(), T.int64(), T.int64()
            od, oh, ow = T.int64(), T.int64(), T.int64()
            X = T.match_buffer(x, (n, c, d, h, wd), dtype, align=itemsize)
            Wt = T.match_buffer(w, (f, cg, kd, kh, kw), dtype, align=itemsize)
            Out = T.match_buffer(out, (n, f, od, oh, ow), dtype, align=itemsize)
            lines(X, Wt, None, Out, stride_d, stride_h, stride_w, dilate_d, dilate_h, dilate_w,
                  pad_d, pad_h, pad_w, groups)

    return func


def conv(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``forward`` / ``forward_bias``: the direct convolution of a 3-D form (module docstring)."""
    return {"forward": _conv(dtype, False), "forward_bias": _conv(dtype, True)}
