"""``mx.nd.RNN``, MXNet 1.9.1's fused recurrent operator (layout TNC): each layer and direction
computes its input product for every step at once (FullyConnected), then steps through time
with the recurrent product (FullyConnected) and one ``nn_rnn_cell`` kernel call per step
(``ops/rnn.py``); layers stack, directions concatenate. Recorded as one node whose gradient
rule (``autograd/gradients/rnn.py``) is backpropagation through time on the same kernels.

Parameters are MXNet's packed vector (``ops/rnn_layout.py``). ``p`` drops outputs of every layer
but the last in training mode. ``use_sequence_length`` (cuDNN-only in MXNet) follows cuDNN:
steps at or past a sequence's length leave its state unchanged and output zeros, and the reverse
direction starts at the sequence's last step. The lstm cell-state clip (cuDNN-only in MXNet)
clamps the cell state to ``[lstm_state_clip_min, lstm_state_clip_max]`` after each step
(``lstm_state_clip_nan``: nan becomes the upper bound); its gradient is zero where a bound
holds the state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import tape
from ..errors import InvalidType, InvalidValue, MissingValue, NotSupported
from ..ops import rnn as ops
from ..ops.rnn_layout import GATES, Unit, packed_layout
from ..params import flag, integer, real
from .arith import broadcast_lesser, broadcast_mul
from .creation import arange
from .indexing import array_arg
from .ndarray import NDArray
from .nn import FullyConnected
from .output import recorded
from .random import uniform
from .shape import concat, reshape, stack
from .slicing import slice_axis, split
from .storage import hold

RNN_DTYPES = ("float32", "float64")
"""The element dtypes of the RNN operator (MXNet's on CPU)."""


@dataclass(frozen=True)
class Config:
    """The operator's checked parameters and the sizes its inputs give."""

    mode: str
    num_layers: int
    directions: int
    state_size: int
    projection_size: int | None
    p: float
    clip: tuple[float, float] | None
    clip_nan: bool
    use_sequence_length: bool
    units: tuple[Unit, ...]

    @property
    def state_width(self) -> int:
        """The width of the hidden state (and of each direction's output): p or h."""
        return self.projection_size or self.state_size


def _config(op: str, data_shape: tuple[int, ...], state_size: Any, num_layers: Any,
            bidirectional: Any, mode: Any, p: Any, projection_size: Any, clip_min: Any,
            clip_max: Any, clip_nan: Any, use_sequence_length: Any) -> tuple[Config, int]:
    """The checked configuration and the packed parameter count for data of ``data_shape``."""
    if mode not in GATES:
        raise InvalidValue(f"{op}: mode must be one of {sorted(GATES)}, got {mode!r}")
    if state_size is None:
        raise MissingValue(f"{op}: state_size is required")
    if num_layers is None:
        raise MissingValue(f"{op}: num_layers is required")
    hidden = integer(state_size, f"{op}: state_size", low=1)
    layers = integer(num_layers, f"{op}: num_layers", low=1)
    proj = None
    if projection_size is not None:
        proj = integer(projection_size, f"{op}: projection_size", low=1)
        if mode != "lstm":
            raise InvalidValue(f"{op}: projection_size is only supported for mode 'lstm', got "
                               f"mode {mode!r}")
        if proj > hidden:
            raise InvalidValue(f"{op}: projection_size ({proj}) must not exceed state_size "
                               f"({hidden})")
    clip = None
    if clip_min is not None or clip_max is not None:
        if mode != "lstm":
            raise InvalidValue(f"{op}: state clipping is only supported for mode 'lstm', got "
                               f"mode {mode!r}")
        if clip_min is None or clip_max is None:
            raise InvalidValue(f"{op}: lstm_state_clip_min and lstm_state_clip_max must be "
                               f"specified together, got {clip_min!r} and {clip_max!r}")
        lo = real(clip_min, f"{op}: lstm_state_clip_min")
        hi = real(clip_max, f"{op}: lstm_state_clip_max")
        if hi < lo:
            raise InvalidValue(f"{op}: lstm_state_clip_max ({hi}) must be greater or equal to "
                               f"lstm_state_clip_min ({lo})")
        clip = (lo, hi)
    if len(data_shape) != 3:
        raise InvalidValue(f"{op}: data must be 3-D (sequence, batch, input) in layout TNC, "
                           f"got shape {data_shape}")
    directions = 2 if flag(bidirectional, f"{op}: bidirectional") else 1
    units, size = packed_layout(mode, layers, directions, data_shape[2], hidden, proj)
    config = Config(mode, layers, directions, hidden, proj,
                    real(p, f"{op}: p", low=0.0, high=1.0), clip,
                    flag(clip_nan, f"{op}: lstm_state_clip_nan"),
                    flag(use_sequence_length, f"{op}: use_sequence_length"), tuple(units))
    return config, size


def _check_inputs(op: str, config: Config, size: int, data: NDArray, parameters: NDArray,
                  state: NDArray, state_cell: NDArray | None,
                  sequence_length: NDArray | None) -> None:
    """Shapes and dtypes of the inputs, against the configuration."""
    t, n, _ = data.shape
    dtype = np.dtype(data.dtype).name
    if dtype not in RNN_DTYPES:
        raise InvalidType(f"{op}: data must be one of {RNN_DTYPES}, got {dtype}")
    states = (config.num_layers * config.directions, n)
    want = {"parameters": (parameters, (size,)),
            "state": (state, (*states, config.state_width))}
    if state_cell is not None:
        want["state_cell"] = (state_cell, (*states, config.state_size))
    for name, (array, shape) in want.items():
        if array.shape != shape:
            raise InvalidValue(f"{op}: {name} has shape {array.shape}, the configuration and "
                               f"data of shape {data.shape} need {shape}")
        if array.dtype != data.dtype:
            raise InvalidType(f"{op}: {name} has dtype {np.dtype(array.dtype).name}, data's "
                              f"is {dtype}")
    if sequence_length is not None and sequence_length.shape != (n,):
        raise InvalidValue(f"{op}: sequence_length has shape {sequence_length.shape}, the "
                           f"batch of {n} needs ({n},)")


def piece(parameters: NDArray, where: Any) -> NDArray:
    """One weight or bias of the packed vector, in its shape."""
    part = slice_axis(parameters, axis=0, begin=where.offset, end=where.offset + where.size)
    return reshape(part, where.shape)


def steps(x: NDArray) -> list[NDArray]:
    """The steps of a ``(T, ...)`` array, each without the time axis."""
    if x.shape[0] == 1:
        return [reshape(x, x.shape[1:])]
    return list(split(x, num_outputs=x.shape[0], axis=0, squeeze_axis=True))


def time_order(t: int, reverse: bool) -> range:
    """The steps in the order a direction visits them."""
    return range(t - 1, -1, -1) if reverse else range(t)


def _masked(mask: NDArray, new: NDArray, old: NDArray) -> NDArray:
    """``new`` where ``mask`` (a ``(n, 1)`` 0/1 column) is 1, ``old`` elsewhere."""
    return broadcast_mul(new - old, mask) + old


def _direction(config: Config, parameters: NDArray, unit: Unit, x: NDArray, h0: NDArray,
               c0: NDArray | None, masks: list[NDArray] | None, reverse: bool
               ) -> tuple[NDArray, NDArray, NDArray | None, dict[str, Any]]:
    """One layer's direction over the sequence: its outputs ``(T, n, p or h)``, final states
    and what the backward needs."""
    t, n, inputs = x.shape
    gh = GATES[config.mode] * config.state_size
    wx, bx, wh, bh = (piece(parameters, w) for w in (unit.wx, unit.bx, unit.wh, unit.bh))
    whr = piece(parameters, unit.whr) if unit.whr is not None else None
    xw = steps(reshape(FullyConnected(reshape(x, (t * n, inputs)), wx, bx, num_hidden=gh),
                       (t, n, gh)))
    h, c = h0, c0
    ys: list[Any] = [None] * t
    saved: list[Any] = [None] * t
    for s in time_order(t, reverse):
        hw = FullyConnected(h, wh, bh, num_hidden=gh)
        out = ops.step(config.mode, xw[s]._storage, hw._storage, h._storage,
                       None if c is None else c._storage, config.clip, config.clip_nan)
        new = [hold(o, x.context) for o in out]
        h_new = new[0]
        if whr is not None:
            h_new = FullyConnected(new[0], whr, no_bias=True, num_hidden=config.projection_size)
        c_new = new[1] if config.mode == "lstm" else None
        saved[s] = {"h_prev": h, "c_prev": c, "cell": new, "out": h_new}
        if masks is not None:
            ys[s] = broadcast_mul(h_new, masks[s])
            h_new = _masked(masks[s], h_new, h)
            if c_new is not None:
                c_new = _masked(masks[s], c_new, c)
        else:
            ys[s] = h_new
        h, c = h_new, c_new
    return stack(*ys, axis=0), h, c, {"saved": saved, "x": x, "wx": wx, "wh": wh, "whr": whr}


def forward(config: Config, data: NDArray, parameters: NDArray, state: NDArray,
            state_cell: NDArray | None, sequence_length: NDArray | None,
            training: bool) -> tuple[list[NDArray], list[dict[str, Any]]]:
    """``[out, hy, cy]`` (cy for lstm) and each unit's saved values (and the dropout masks)."""
    t, n, _ = data.shape
    masks = None
    if sequence_length is not None:
        lengths = reshape(sequence_length.astype(data.dtype), (1, n, 1))
        ticks = reshape(arange(0, t, ctx=data.context, dtype=data.dtype), (t, 1, 1))
        masks = steps(broadcast_lesser(ticks, lengths))
    hs = steps(state)
    cs = steps(state_cell) if state_cell is not None else None
    x, records = data, []
    hy, cy = [], []
    for layer in range(config.num_layers):
        outs = []
        for d in range(config.directions):
            k = layer * config.directions + d
            y, h, c, rec = _direction(config, parameters, config.units[k], x, hs[k],
                                      None if cs is None else cs[k], masks, d == 1)
            rec["masks"] = masks
            records.append(rec)
            outs.append(y)
            hy.append(h)
            cy.append(c)
        x = outs[0] if len(outs) == 1 else concat(*outs, dim=2)
        if training and config.p > 0 and layer < config.num_layers - 1:
            keep = uniform(0, 1, shape=x.shape, dtype=x.dtype, ctx=x.context) >= config.p
            drop = keep * (1.0 / (1.0 - config.p)) if config.p < 1 else keep  # p = 1: zeros
            records[-1]["dropout"] = drop
            x = x * drop
    result = [x, stack(*hy, axis=0)]
    if config.mode == "lstm":
        result.append(stack(*cy, axis=0))
    return result, records


def RNN(data: NDArray | None = None, parameters: NDArray | None = None,  # noqa: N802
        state: NDArray | None = None, state_cell: NDArray | None = None,
        sequence_length: NDArray | None = None, state_size: int | None = None,
        num_layers: int | None = None, bidirectional: bool = False, mode: str | None = None,
        p: float = 0.0, state_outputs: bool = False, projection_size: int | None = None,
        lstm_state_clip_min: float | None = None, lstm_state_clip_max: float | None = None,
        lstm_state_clip_nan: bool = False, use_sequence_length: bool = False,
        out: Any = None, name: str | None = None) -> Any:
    """The fused recurrent layers of ``mode`` (rnn_relu, rnn_tanh, lstm, gru) over ``data``
    ``(T, n, input)``, as ``mxnet.nd.RNN``: the output ``(T, n, directions * (p or h))``, and
    with ``state_outputs`` the final states (lstm: and cell states) as a list."""
    op = "RNN"
    del name
    if out is not None:
        raise NotSupported(f"{op}: out= is not supported (the operator has several outputs)")
    data = array_arg(data, "data", op)
    config, size = _config(op, data.shape, state_size, num_layers, bidirectional, mode, p,
                           projection_size, lstm_state_clip_min, lstm_state_clip_max,
                           lstm_state_clip_nan, use_sequence_length)
    parameters = array_arg(parameters, "parameters", op)
    state = array_arg(state, "state", op)
    if config.mode == "lstm":
        state_cell = array_arg(state_cell, "state_cell", op)
    elif state_cell is not None:
        raise InvalidValue(f"{op}: state_cell is only an input of mode 'lstm', got mode "
                           f"{config.mode!r}")
    if config.use_sequence_length:
        sequence_length = array_arg(sequence_length, "sequence_length", op)
    elif sequence_length is not None:
        raise InvalidValue(f"{op}: sequence_length needs use_sequence_length=True")
    _check_inputs(op, config, size, data, parameters, state, state_cell, sequence_length)
    inputs = tuple(a for a in (data, parameters, state, state_cell, sequence_length)
                   if a is not None)
    params: dict[str, Any] = {"config": config}
    training = tape.is_training()

    def run() -> list[NDArray]:
        result, records = forward(config, data, parameters, state, state_cell,
                                  sequence_length, training)
        params["records"] = records
        return result

    outputs = recorded(op, inputs, run, params)
    if flag(state_outputs, f"{op}: state_outputs"):
        return outputs
    return outputs[0]


__all__ = ["RNN"]
