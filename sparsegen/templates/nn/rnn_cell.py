"""The fused RNN cell (kernel ``nn_rnn_cell``): one step of MXNet's RNN operator after its two
products, the gate nonlinearities and the state update in one pass over ``(batch, hidden)``.

The caller has computed ``xw = x_t · Wxᵀ + bx`` and ``hw = h_{t-1} · Whᵀ + bh`` on the dense
product kernels, each laid out ``(n, gates, h)`` in MXNet's gate order (lstm: i, f, g, o; gru:
r, z, n). A function per mode steps forward, its ``_back`` twin turns the gradient of the new
state into the gradients of the pre-activations (and of the previous state's direct term). One
``rows`` block per batch row, its hidden units a column loop; values are written to buffers and
read back instead of held in scalar temporaries (which miscompile in vectorized loops).
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from .. import element_bytes
from ..columns import cols


def _sigmoid(x: tvm.ir.PrimExpr, dtype: str) -> tvm.ir.PrimExpr:
    """``1 / (1 + exp(-x))``."""
    return T.Cast(dtype, 1) / (T.Cast(dtype, 1) + T.exp(-x))


def _plain(dtype: str, relu: bool) -> tuple[tvm.tirx.PrimFunc, tvm.tirx.PrimFunc]:
    """``(xw[n,h], hw[n,h], out[n,h])`` and ``(out, dout, dpre)`` of rnn_relu / rnn_tanh."""
    elem = element_bytes(dtype)

    @T.macro
    def step(out, xw, hw, r, j):
        if relu:
            out[r, j] = T.max(xw[r, j] + hw[r, j], T.Cast(dtype, 0))
        else:
            out[r, j] = T.tanh(xw[r, j] + hw[r, j])

    @T.macro
    def back(dpre, out, dout, r, j):
        if relu:
            dpre[r, j] = T.if_then_else(out[r, j] > T.Cast(dtype, 0), dout[r, j],
                                        T.Cast(dtype, 0))
        else:
            dpre[r, j] = dout[r, j] * (T.Cast(dtype, 1) - out[r, j] * out[r, j])

    @T.prim_func(s_tir=True)
    def forward(xw: T.handle, hw: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        h = T.int64()
        XW = T.match_buffer(xw, (n, h), dtype, align=elem)
        HW = T.match_buffer(hw, (n, h), dtype, align=elem)
        Out = T.match_buffer(out, (n, h), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(XW[vi, 0:h], HW[vi, 0:h])
                T.writes(Out[vi, 0:h])
                cols.each(h, step, Out, XW, HW, vi)

    @T.prim_func(s_tir=True)
    def backward(out: T.handle, dout: T.handle, dpre: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        h = T.int64()
        Out = T.match_buffer(out, (n, h), dtype, align=elem)
        DOut = T.match_buffer(dout, (n, h), dtype, align=elem)
        DPre = T.match_buffer(dpre, (n, h), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Out[vi, 0:h], DOut[vi, 0:h])
                T.writes(DPre[vi, 0:h])
                cols.each(h, back, DPre, Out, DOut, vi)

    return forward, backward


def _lstm(dtype: str) -> tuple[tvm.tirx.PrimFunc, tvm.tirx.PrimFunc]:
    """``lstm (xw[n,4,h], hw[n,4,h], c_prev[n,h], lo, hi, clip, nan, gates[n,4,h], c[n,h],
    out[n,h])`` and ``lstm_back (gates, c_prev, c, dh, dc, lo, hi, clip, dgates, dc_prev)``."""
    elem = element_bytes(dtype)
    one, zero = T.Cast(dtype, 1), T.Cast(dtype, 0)

    @T.macro
    def step(g, c, out, xw, hw, cp, lo, hi, clip, nan, r, j):
        g[r, 0, j] = _sigmoid(xw[r, 0, j] + hw[r, 0, j], dtype)
        g[r, 1, j] = _sigmoid(xw[r, 1, j] + hw[r, 1, j], dtype)
        g[r, 2, j] = T.tanh(xw[r, 2, j] + hw[r, 2, j])
        g[r, 3, j] = _sigmoid(xw[r, 3, j] + hw[r, 3, j], dtype)
        c[r, j] = g[r, 1, j] * cp[r, j] + g[r, 0, j] * g[r, 2, j]
        if clip != 0:
            c[r, j] = T.if_then_else(
                nan != 0 and T.isnan(c[r, j]), T.Cast(dtype, hi),
                T.max(T.min(c[r, j], T.Cast(dtype, hi)), T.Cast(dtype, lo)))
        out[r, j] = g[r, 3, j] * T.tanh(c[r, j])

    @T.macro
    def back(dg, dcp, g, cp, c, dh, dc, lo, hi, clip, r, j):
        # dcp first holds the gradient of the new cell state (zero where a clip bound held it)
        dcp[r, j] = dc[r, j] + dh[r, j] * g[r, 3, j] * (one - T.tanh(c[r, j]) * T.tanh(c[r, j]))
        if clip != 0:
            dcp[r, j] = T.if_then_else(
                c[r, j] > T.Cast(dtype, lo) and c[r, j] < T.Cast(dtype, hi), dcp[r, j], zero)
        dg[r, 0, j] = dcp[r, j] * g[r, 2, j] * g[r, 0, j] * (one - g[r, 0, j])
        dg[r, 1, j] = dcp[r, j] * cp[r, j] * g[r, 1, j] * (one - g[r, 1, j])
        dg[r, 2, j] = dcp[r, j] * g[r, 0, j] * (one - g[r, 2, j] * g[r, 2, j])
        dg[r, 3, j] = dh[r, j] * T.tanh(c[r, j]) * g[r, 3, j] * (one - g[r, 3, j])
        dcp[r, j] = dcp[r, j] * g[r, 1, j]

    @T.prim_func(s_tir=True)
    def forward(xw: T.handle, hw: T.handle, c_prev: T.handle, lo: T.float64, hi: T.float64,
                clip: T.int64, nan: T.int64, gates: T.handle, c: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        h = T.int64()
        XW = T.match_buffer(xw, (n, 4, h), dtype, align=elem)
        HW = T.match_buffer(hw, (n, 4, h), dtype, align=elem)
        CP = T.match_buffer(c_prev, (n, h), dtype, align=elem)
        G = T.match_buffer(gates, (n, 4, h), dtype, align=elem)
        C = T.match_buffer(c, (n, h), dtype, align=elem)
        Out = T.match_buffer(out, (n, h), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(XW[vi, 0:4, 0:h], HW[vi, 0:4, 0:h], CP[vi, 0:h])
                T.writes(G[vi, 0:4, 0:h], C[vi, 0:h], Out[vi, 0:h])
                cols.each(h, step, G, C, Out, XW, HW, CP, lo, hi, clip, nan, vi)

    @T.prim_func(s_tir=True)
    def backward(gates: T.handle, c_prev: T.handle, c: T.handle, dh: T.handle, dc: T.handle,
                 lo: T.float64, hi: T.float64, clip: T.int64, dgates: T.handle,
                 dc_prev: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        h = T.int64()
        G = T.match_buffer(gates, (n, 4, h), dtype, align=elem)
        CP = T.match_buffer(c_prev, (n, h), dtype, align=elem)
        C = T.match_buffer(c, (n, h), dtype, align=elem)
        DH = T.match_buffer(dh, (n, h), dtype, align=elem)
        DC = T.match_buffer(dc, (n, h), dtype, align=elem)
        DG = T.match_buffer(dgates, (n, 4, h), dtype, align=elem)
        DCP = T.match_buffer(dc_prev, (n, h), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(G[vi, 0:4, 0:h], CP[vi, 0:h], C[vi, 0:h], DH[vi, 0:h], DC[vi, 0:h])
                T.writes(DG[vi, 0:4, 0:h], DCP[vi, 0:h])
                cols.each(h, back, DG, DCP, G, CP, C, DH, DC, lo, hi, clip, vi)

    return forward, backward


def _gru(dtype: str) -> tuple[tvm.tirx.PrimFunc, tvm.tirx.PrimFunc]:
    """``gru (xw[n,3,h], hw[n,3,h], h_prev[n,h], gates[n,4,h], out[n,h])`` (gates: r, z, n and
    the recurrent part of n, ``hw_n``) and ``gru_back (gates, h_prev, dh, dxw[n,3,h],
    dhw[n,3,h], dh_prev)``."""
    elem = element_bytes(dtype)
    one = T.Cast(dtype, 1)

    @T.macro
    def step(g, out, xw, hw, hp, r, j):
        g[r, 0, j] = _sigmoid(xw[r, 0, j] + hw[r, 0, j], dtype)
        g[r, 1, j] = _sigmoid(xw[r, 1, j] + hw[r, 1, j], dtype)
        g[r, 3, j] = hw[r, 2, j]
        g[r, 2, j] = T.tanh(xw[r, 2, j] + g[r, 0, j] * hw[r, 2, j])
        out[r, j] = (one - g[r, 1, j]) * g[r, 2, j] + g[r, 1, j] * hp[r, j]

    @T.macro
    def back(dxw, dhw, dhp, g, hp, dh, r, j):
        dxw[r, 2, j] = dh[r, j] * (one - g[r, 1, j]) * (one - g[r, 2, j] * g[r, 2, j])
        dhw[r, 2, j] = dxw[r, 2, j] * g[r, 0, j]
        dxw[r, 0, j] = dxw[r, 2, j] * g[r, 3, j] * g[r, 0, j] * (one - g[r, 0, j])
        dhw[r, 0, j] = dxw[r, 0, j]
        dxw[r, 1, j] = dh[r, j] * (hp[r, j] - g[r, 2, j]) * g[r, 1, j] * (one - g[r, 1, j])
        dhw[r, 1, j] = dxw[r, 1, j]
        dhp[r, j] = dh[r, j] * g[r, 1, j]

    @T.prim_func(s_tir=True)
    def forward(xw: T.handle, hw: T.handle, h_prev: T.handle, gates: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        h = T.int64()
        XW = T.match_buffer(xw, (n, 3, h), dtype, align=elem)
        HW = T.match_buffer(hw, (n, 3, h), dtype, align=elem)
        HP = T.match_buffer(h_prev, (n, h), dtype, align=elem)
        G = T.match_buffer(gates, (n, 4, h), dtype, align=elem)
        Out = T.match_buffer(out, (n, h), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(XW[vi, 0:3, 0:h], HW[vi, 0:3, 0:h], HP[vi, 0:h])
                T.writes(G[vi, 0:4, 0:h], Out[vi, 0:h])
                cols.each(h, step, G, Out, XW, HW, HP, vi)

    @T.prim_func(s_tir=True)
    def backward(gates: T.handle, h_prev: T.handle, dh: T.handle, dxw: T.handle, dhw: T.handle,
                 dh_prev: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        h = T.int64()
        G = T.match_buffer(gates, (n, 4, h), dtype, align=elem)
        HP = T.match_buffer(h_prev, (n, h), dtype, align=elem)
        DH = T.match_buffer(dh, (n, h), dtype, align=elem)
        DXW = T.match_buffer(dxw, (n, 3, h), dtype, align=elem)
        DHW = T.match_buffer(dhw, (n, 3, h), dtype, align=elem)
        DHP = T.match_buffer(dh_prev, (n, h), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(G[vi, 0:4, 0:h], HP[vi, 0:h], DH[vi, 0:h])
                T.writes(DXW[vi, 0:3, 0:h], DHW[vi, 0:3, 0:h], DHP[vi, 0:h])
                cols.each(h, back, DXW, DHW, DHP, G, HP, DH, vi)

    return forward, backward


def rnn_cell(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """One step of each RNN mode and its backward: ``relu``, ``tanh``, ``lstm``, ``gru`` and
    their ``_back`` functions (signatures in the registry)."""
    relu, relu_back = _plain(dtype, True)
    tanh, tanh_back = _plain(dtype, False)
    lstm, lstm_back = _lstm(dtype)
    gru, gru_back = _gru(dtype)
    return {"relu": relu, "relu_back": relu_back, "tanh": tanh, "tanh_back": tanh_back,
            "lstm": lstm, "lstm_back": lstm_back, "gru": gru, "gru_back": gru_back}
