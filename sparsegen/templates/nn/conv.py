"""Direct convolution (kernel ``nn_conv``): MXNet's Convolution forward in one 3-D form.

The host lifts 1-D and 2-D convolutions to 3-D by adding unit dimensions, so each dtype has two
functions: ``forward (x, w, geometry..., out)`` and ``forward_bias (x, w, b, geometry..., out)``.
``x`` is (batch, channels, depth, height, width), ``w`` (filters, channels per group, kd, kh, kw),
``out`` (batch, filters, od, oh, ow). A ``rows`` block per output line (batch, filter, od, oh)
starts the line at the bias (or 0), then for each channel of the filter's group and each tap
whose input row lies inside adds ``w * x`` to every column of the line (0 where the column's
input is padding): the innermost loop runs over output columns (contiguous in ``out``, and in
``x`` at stride 1), each column owned by one thread on a GPU. Every read index is kept within
its axis, so no geometry reads or writes out of bounds. Sums are in the element dtype (float16 runs as float32
on the host side, ops/conv.py).
"""

from __future__ import annotations

import tvm
from tvm import tirx
from tvm.script import tirx as T

from .. import element_bytes
from ..columns import cols

def _clamp(value, high):
    """``value`` within ``[0, high]``: an index stays in bounds whatever the geometry (even one
    whose arithmetic overflows) a direct kernel call passes."""
    return T.max(T.min(value, high), T.int64(0))


def _conv(dtype: str, with_bias: bool) -> tvm.tirx.PrimFunc:
    """``out[n, f, od, oh, ow]`` = the window sum (plus ``b[f]`` when ``with_bias``)."""
    itemsize = element_bytes(dtype)

    @T.macro
    def start(out, b, row, j):
        if with_bias:
            out[row[0], row[1], row[2], row[3], j] = b[row[1]]
        else:
            out[row[0], row[1], row[2], row[3], j] = tirx.const(0, dtype)

    @T.macro
    def tap(out, x, w, row, c, kd, kh, kw, sw, dw, pw, j):
        out[row[0], row[1], row[2], row[3], j] = out[row[0], row[1], row[2], row[3], j] + T.Select(
            0 <= j * sw + kw * dw - pw < x.shape[4],
            w[row[1], c, kd, kh, kw] * x[row[0], row[4] + c, row[5], row[6],
                                         _clamp(j * sw + kw * dw - pw, x.shape[4] - 1)],
            tirx.const(0, dtype))

    @T.macro
    def taps(out, x, w, row, c, kd, kh, sw, dw, pw):
        """Each tap ``kw`` times the input under every column (0 where that is padding)."""
        for kw in T.serial(w.shape[4]):
            cols.each(out.shape[4], tap, out, x, w, row, c, kd, kh, kw, sw, dw, pw)

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
                row = T.alloc_buffer((7,), "int64", scope="local")  # n, f, od, oh, c0, id, ih
                row[0] = vr // (f * od * oh)
                row[1] = vr // (od * oh) % f
                row[2] = vr // oh % od
                row[3] = vr % oh
                cols.each(ow, start, Out, B, row)
                row[4] = row[1] * groups // f * Wt.shape[1]
                for c in T.serial(Wt.shape[1]):
                    if 0 <= row[4] + c < X.shape[1]:
                        for kd in T.serial(Wt.shape[2]):
                            row[5] = row[2] * sd + kd * dd - pd
                            if 0 <= row[5] < X.shape[2]:
                                for kh in T.serial(Wt.shape[3]):
                                    row[6] = row[3] * sh + kh * dh - ph
                                    if 0 <= row[6] < X.shape[3]:
                                        taps(Out, X, Wt, row, c, kd, kh, sw, dw, pw)

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
