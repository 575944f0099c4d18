"""The update rules of torch's optimizers that MXNet's differ from, written with the public API
(sparsegen.updates): torch's SGD momentum (the buffer holds the positive velocity, Nesterov as a
0/1 switch) and Adagrad (epsilon added after the square root)."""

from __future__ import annotations

from typing import Any

from ..updates import update_rule


@update_rule(states=("momentum_buffer",),
             hyper=("lr", "momentum", "dampening", "nesterov", "wd", "rescale_grad",
                    "clip_gradient"))
def torch_sgd_momentum(x: Any, h: Any, g: Any, f: Any) -> Any:
    """torch.optim.SGD with momentum: ``g = clip(rescale_grad*grad) + wd*weight;
    buf = momentum*buf + (1-dampening)*g; weight -= lr * (nesterov ? g + momentum*buf : buf)``
    (the first step passes ``dampening = 0``: the buffer starts as ``g``)."""
    c = f.clip(g * h.rescale_grad, h.clip_gradient) + h.wd * x.weight
    buf = h.momentum * x.momentum_buffer + (f.one - h.dampening) * c
    step = (f.one - h.nesterov) * buf + h.nesterov * (c + h.momentum * buf)
    return x.weight - h.lr * step, buf


@update_rule(states=("sum",), hyper=("lr", "epsilon", "wd", "rescale_grad", "clip_gradient"))
def torch_adagrad(x: Any, h: Any, g: Any, f: Any) -> Any:
    """torch.optim.Adagrad: ``g = clip(rescale_grad*grad) + wd*weight; sum += g*g;
    weight -= lr * g / (sqrt(sum) + epsilon)`` (``lr`` already decayed by the caller)."""
    c = f.clip(g * h.rescale_grad, h.clip_gradient) + h.wd * x.weight
    total = x.sum + c * c
    return x.weight - h.lr * c / (f.sqrt(total) + h.epsilon), total
