"""One step of the RNN operator's cell on its generated kernel (``nn_rnn_cell``), forward and
backward, on dense buffers: the products ``xw`` / ``hw`` (biases included) arrive as
``(n, gates * h)`` rows, the states as ``(n, h)``. Each function allocates its outputs beside
its inputs and returns them."""

from __future__ import annotations

from typing import Any

from ..device import contiguous, empty_like
from .layout import dtype_name, kernel
from .rnn_layout import GATES


def _cell(near: Any, size: int) -> Any:
    return kernel("nn_rnn_cell", (dtype_name(near.dtype),), near, size)


def _gated(x: Any, gates: int) -> Any:
    n, width = x.shape
    return contiguous(x).reshape(n, gates, width // gates)


def step(mode: str, xw: Any, hw: Any, h_prev: Any, c_prev: Any | None,
         clip: tuple[float, float] | None = None, clip_nan: bool = False) -> tuple[Any, ...]:
    """The new state ``h`` of one step of ``mode``, with what its backward needs: lstm gives
    ``(h, c, gates)``, gru ``(h, gates)`` (r, z, n, hw_n), rnn_relu / rnn_tanh ``(h,)``.
    ``clip`` bounds lstm's cell state (nan becomes the upper bound with ``clip_nan``)."""
    n, h = h_prev.shape[0], xw.shape[1] // GATES[mode]
    out = empty_like(xw, (n, h), xw.dtype)
    cell = _cell(xw, xw.size)
    if mode in ("rnn_relu", "rnn_tanh"):
        (cell.relu if mode == "rnn_relu" else cell.tanh)(contiguous(xw), contiguous(hw), out)
        return (out,)
    if mode == "lstm":
        gates, c = empty_like(xw, (n, 4, h), xw.dtype), empty_like(xw, (n, h), xw.dtype)
        lo, hi = clip if clip is not None else (0.0, 0.0)
        cell.lstm(_gated(xw, 4), _gated(hw, 4), contiguous(c_prev), float(lo), float(hi),
                  int(clip is not None), int(clip_nan), gates, c, out)
        return out, c, gates
    gates = empty_like(xw, (n, 4, h), xw.dtype)
    cell.gru(_gated(xw, 3), _gated(hw, 3), contiguous(h_prev), gates, out)
    return out, gates


def step_backward(mode: str, dh: Any, saved: tuple[Any, ...], h_prev: Any, c_prev: Any | None,
                  dc: Any | None = None,
                  clip: tuple[float, float] | None = None) -> tuple[Any, Any, Any, Any]:
    """The gradients of one step from ``dh`` (and lstm's ``dc``) and the step's ``saved``
    outputs: ``(dxw, dhw, dh_direct, dc_prev)``, the pre-activation gradients of the input and
    recurrent products (``(n, gates * h)``; one buffer for both except gru's), the previous
    state's gradient through the cell's own update (gru; else None) and lstm's ``dc_prev``."""
    n, h = dh.shape
    cell = _cell(dh, dh.size * 4)
    if mode in ("rnn_relu", "rnn_tanh"):
        dpre = empty_like(dh, (n, h), dh.dtype)
        (cell.relu_back if mode == "rnn_relu" else cell.tanh_back)(
            contiguous(saved[0]), contiguous(dh), dpre)
        return dpre, dpre, None, None
    if mode == "lstm":
        _, c, gates = saved
        dgates, dcp = empty_like(dh, (n, 4, h), dh.dtype), empty_like(dh, (n, h), dh.dtype)
        lo, hi = clip if clip is not None else (0.0, 0.0)
        cell.lstm_back(gates, contiguous(c_prev), c, contiguous(dh), contiguous(dc), float(lo),
                       float(hi), int(clip is not None), dgates, dcp)
        flat = dgates.reshape(n, 4 * h)
        return flat, flat, None, dcp
    gates = saved[1]
    dxw, dhw = empty_like(dh, (n, 3, h), dh.dtype), empty_like(dh, (n, 3, h), dh.dtype)
    dhp = empty_like(dh, (n, h), dh.dtype)
    cell.gru_back(gates, contiguous(h_prev), contiguous(dh), dxw, dhw, dhp)
    return dxw.reshape(n, 3 * h), dhw.reshape(n, 3 * h), dhp, None
