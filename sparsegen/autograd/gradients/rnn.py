"""The gradient of ``RNN``: backpropagation through time over the steps the forward saved, layer
by layer from the last: per step the ``nn_rnn_cell`` backward kernel (``ops/rnn.py``) gives the
pre-activation gradients, the recurrent product's gradient flows to the previous state
(``dot``); per direction the weight and bias gradients are products and sums over all steps at
once, then packed in MXNet's parameter order. ``sequence_length`` takes no gradient."""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ndarray.dispatch import densified
from ...ndarray.rnn import Config, steps, time_order
from ...ndarray.storage import hold
from ...ops import rnn as ops
from ...tape import Node
from .registry import gradient


def _or_zeros(grad: Any, like: Any) -> Any:
    """A head gradient, zeros (of ``like``'s shape) where none was given."""
    return nd.zeros_like(like) if grad is None else densified(grad)


def _direction(config: Config, rec: dict[str, Any], dy: Any, dh: Any, dc: Any | None,
               reverse: bool) -> tuple[Any, dict[str, Any], Any, Any]:
    """One direction's backward: the gradient of its input ``(T, n, inputs)``, of its pieces
    (wx, wh, whr, bx, bh) and of its initial states."""
    x, saved, masks = rec["x"], rec["saved"], rec["masks"]
    t, n, inputs = x.shape
    ctx = x.context
    dys = steps(dy)
    dxw: list[Any] = [None] * t
    dhw: list[Any] = [None] * t
    h_prev: list[Any] = [None] * t
    dwhr = None
    for s in reversed(time_order(t, reverse)):
        step = saved[s]
        g, gc = dh, dc
        carry_h = carry_c = None
        if masks is not None:  # state_s = m * new + (1 - m) * old, y_s = m * new
            m = masks[s]
            carry_h, g = g - nd.broadcast_mul(g, m), nd.broadcast_mul(g + dys[s], m)
            if gc is not None:
                carry_c, gc = gc - nd.broadcast_mul(gc, m), nd.broadcast_mul(gc, m)
        else:
            g = g + dys[s]
        if rec["whr"] is not None:  # out = h · whrᵀ
            part = nd.dot(g, step["cell"][0], transpose_a=True)
            dwhr = part if dwhr is None else dwhr + part
            g = nd.dot(g, rec["whr"])
        c_prev = step["c_prev"]
        dx_s, dh_s, direct, dcp = ops.step_backward(
            config.mode, g._storage, tuple(v._storage for v in step["cell"]),
            step["h_prev"]._storage, None if c_prev is None else c_prev._storage,
            None if gc is None else gc._storage, config.clip)
        dxw[s], dhw[s] = hold(dx_s, ctx), hold(dh_s, ctx)
        h_prev[s] = step["h_prev"]
        dh = nd.dot(dhw[s], rec["wh"])
        if direct is not None:
            dh = dh + hold(direct, ctx)
        if carry_h is not None:
            dh = dh + carry_h
        if dcp is not None:
            dc = hold(dcp, ctx)
            if carry_c is not None:
                dc = dc + carry_c
    gh = dxw[0].shape[1]
    dxw_all = nd.reshape(nd.stack(*dxw, axis=0), (t * n, gh))
    dhw_all = nd.reshape(nd.stack(*dhw, axis=0), (t * n, gh))
    h_all = nd.reshape(nd.stack(*h_prev, axis=0), (t * n, h_prev[0].shape[1]))
    x_flat = nd.reshape(x, (t * n, inputs))
    grads = {"wx": nd.dot(dxw_all, x_flat, transpose_a=True),
             "wh": nd.dot(dhw_all, h_all, transpose_a=True),
             "whr": dwhr,
             "bx": nd.sum(dxw_all, axis=0), "bh": nd.sum(dhw_all, axis=0)}
    dx = nd.reshape(nd.dot(dxw_all, rec["wx"]), (t, n, inputs))
    return dx, grads, dh, dc


@gradient("RNN")
def _rnn(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    config: Config = node.params["config"]
    records = node.params["records"]
    data, parameters, state = node.inputs[:3]
    heads = list(out_grads) + [None] * (3 - len(out_grads))
    t, n, _ = data.shape
    dy = densified(heads[0]) if heads[0] is not None else nd.zeros(
        (t, n, config.directions * config.state_width), ctx=data.context, dtype=data.dtype)
    dhy = steps(_or_zeros(heads[1], state))
    dcy = steps(_or_zeros(heads[2], node.inputs[3])) if config.mode == "lstm" else None
    units = len(records)
    grads: list[Any] = [None] * units
    dstate: list[Any] = [None] * units
    dcell: list[Any] = [None] * units
    width = config.state_width
    for layer in reversed(range(config.num_layers)):
        first = layer * config.directions
        drop = records[first + config.directions - 1].get("dropout")
        if drop is not None:
            dy = dy * drop
        dx = None
        for d in range(config.directions):
            k = first + d
            part = dy if config.directions == 1 else nd.slice_axis(
                dy, axis=2, begin=d * width, end=(d + 1) * width)
            dxd, grads[k], dstate[k], dcell[k] = _direction(
                config, records[k], part, dhy[k], None if dcy is None else dcy[k], d == 1)
            dx = dxd if dx is None else dx + dxd
        dy = dx
    flat = [nd.reshape(grads[k][name], (-1,))
            for k in range(units) for name in ("wx", "wh", "whr") if grads[k][name] is not None]
    flat += [grads[k][name] for k in range(units) for name in ("bx", "bh")]
    result = [dy, nd.concat(*flat, dim=0), nd.stack(*dstate, axis=0)]
    if config.mode == "lstm":
        result.append(nd.stack(*dcell, axis=0))
    if config.use_sequence_length:
        result.append(None)
    return tuple(result)
