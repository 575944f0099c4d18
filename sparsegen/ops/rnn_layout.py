"""MXNet's packed parameter vector of the fused RNN operator (rnn-inl.h ``GetRnnParamSize``):
every layer's and direction's weights first (input weights ``(gates*h, inputs)``, recurrent
weights ``(gates*h, p or h)``, with a projection the projection weights ``(p, h)``), then every
layer's and direction's biases (input bias, recurrent bias, ``gates*h`` each). Metadata only:
offsets and shapes, no TVM and no array."""

from __future__ import annotations

from typing import NamedTuple

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
"""Gates per mode (MXNet's order: lstm i, f, g, o; gru r, z, n)."""


class Piece(NamedTuple):
    """Where one weight or bias lies in the packed vector."""

    offset: int
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        """Its number of elements."""
        size = 1
        for dim in self.shape:
            size *= dim
        return size


class Unit(NamedTuple):
    """The pieces of one layer and direction (``whr`` None without a projection)."""

    wx: Piece
    wh: Piece
    whr: Piece | None
    bx: Piece
    bh: Piece


def packed_layout(mode: str, num_layers: int, directions: int, input_size: int,
                  state_size: int, projection_size: int | None) -> tuple[list[Unit], int]:
    """The units in order (layer-major, then direction) and the packed vector's size."""
    gh = GATES[mode] * state_size
    hs = projection_size or state_size
    weights, offset = [], 0
    for layer in range(num_layers):
        inputs = input_size if layer == 0 else hs * directions
        for _ in range(directions):
            wx = Piece(offset, (gh, inputs))
            wh = Piece(wx.offset + wx.size, (gh, hs))
            offset = wh.offset + wh.size
            whr = None
            if projection_size:
                whr = Piece(offset, (projection_size, state_size))
                offset += whr.size
            weights.append((wx, wh, whr))
    units = []
    for wx, wh, whr in weights:
        units.append(Unit(wx, wh, whr, Piece(offset, (gh,)), Piece(offset + gh, (gh,))))
        offset += 2 * gh
    return units, offset
