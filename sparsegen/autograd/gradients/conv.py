"""The gradient of Convolution, as convolutions on the same kernel.

For ``y = conv(x, w)`` (stride s, dilate d, pad p, G groups) and the output gradient ``g``:

- the bias gets ``g`` summed over the batch and spatial axes;
- ``w`` gets the convolution of ``x`` by ``g`` with batch and channel axes exchanged: ``g``'s
  output positions are the taps (dilate s), ``w``'s taps the positions (stride d), the groups
  kept apart by ``num_group``; the first K positions of the result are the kernel's;
- ``x`` gets the convolution of ``g`` spread to every s-th position (padded so that a tap
  reading position i of the padded input lines up with i) by ``w`` flipped along its taps,
  with filters and channels exchanged in each group.
"""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ndarray.dispatch import densified
from ...tape import Node
from .nn import take_gradient
from .registry import gradient


def _group_swap(array: Any, groups: int) -> Any:
    """``(G·A, B, ...)`` -> ``(G·B, A, ...)``: the two leading axes exchanged in each group."""
    a, b, *rest = array.shape
    split = array.reshape((groups, a // groups, b, *rest))
    order = (0, 2, 1, *range(3, split.ndim))
    return nd.transpose(split, axes=order).reshape((groups * b, a // groups, *rest))


def _weight_gradient(x: Any, g: Any, window: tuple[int, ...], p: dict) -> Any:
    groups, (n, c), f = p["num_group"], x.shape[:2], g.shape[1]
    # data: (C/G, G·N, *S) — each group's channels as the batch; weight: (F, N, *O)
    data = nd.transpose(x.reshape((n, groups, c // groups, *x.shape[2:])),
                        axes=(2, 1, 0, *range(3, x.ndim + 1)))
    data = data.reshape((c // groups, groups * n, *x.shape[2:]))
    taps = nd.transpose(g, axes=(1, 0, *range(2, g.ndim)))
    full = nd.Convolution(data, taps, kernel=g.shape[2:], stride=p["dilate"], dilate=p["stride"],
                          pad=p["pad"], num_filter=f, num_group=groups, no_bias=True)
    full = nd.slice(full, begin=(0, 0, *(0 for _ in window)), end=(None, None, *window))
    return nd.transpose(full, axes=(1, 0, *range(2, full.ndim)))  # (F, C/G, *K)


def _data_gradient(x: Any, w: Any, g: Any, p: dict) -> Any:
    shape = list(g.shape)
    for axis in range(2, g.ndim):  # g at every s-th position, shifted by the left padding
        k, s, d, q = (w.shape[axis], p["stride"][axis - 2], p["dilate"][axis - 2],
                      p["pad"][axis - 2])
        left, length = (k - 1) * d - q, x.shape[axis] + (k - 1) * d
        first = max(0, -(left // s) if left < 0 else 0)  # outputs whose position is >= 0
        last = min(g.shape[axis], (length - 1 - left) // s + 1)
        shape[axis] = length
        if last <= first:
            return nd.zeros_like(x)
        g = nd.slice_axis(g, axis=axis, begin=first, end=last)
        rows = nd.arange(first, last, ctx=x.context, dtype="int64") * s + left
        g = take_gradient(rows, g, tuple(shape), axis)
    flipped = _group_swap(nd.flip(w, axis=tuple(range(2, w.ndim))), p["num_group"])
    return nd.Convolution(g, flipped, kernel=w.shape[2:], dilate=p["dilate"],
                          num_filter=x.shape[1], num_group=p["num_group"], no_bias=True)


@gradient("Convolution")
def _convolution(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    x, w = node.inputs[:2]
    g, p = densified(out_grads[0]), node.params
    empty = 0 in (x.size, w.size, g.size)
    grads = [None] * len(node.inputs)
    if node.wanted[0]:
        grads[0] = nd.zeros_like(x) if empty else _data_gradient(x, w, g, p)
    if node.wanted[1]:
        grads[1] = nd.zeros_like(w) if empty else _weight_gradient(x, g, w.shape[2:], p)
    if len(grads) == 3 and node.wanted[2]:
        bias = node.inputs[2]
        grads[2] = nd.zeros_like(bias) if g.size == 0 else nd.sum(g, axis=(0, *range(2, g.ndim)))
    return tuple(grads)
