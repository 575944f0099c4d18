"""Update rules beyond MXNet's optimizers, each a few lines of the public API: Lion, AdamW
(MXNet's contrib ``adamw_update``), RowWiseAdagrad (one history value per row), LAMB with a
trust ratio per row (a two-pass row: the norms first), and the rules of torch's optimizers that
MXNet's differ from (sparsegen.torch runs them): torch's SGD momentum (the buffer holds the
positive velocity, Nesterov as a 0/1 switch) and Adagrad (epsilon added after the square
root)."""

from __future__ import annotations

from typing import Any

from .define import update_rule


@update_rule(states=("mom",), hyper=("lr", "beta1", "beta2", "wd", "rescale_grad",
                                     "clip_gradient"))
def lion(x: Any, h: Any, g: Any, f: Any) -> Any:
    """Lion: ``g = clip(rescale_grad*grad); weight -= lr * (sign(beta1*mom + (1-beta1)*g) +
    wd*weight); mom = beta2*mom + (1-beta2)*g``."""
    c = f.clip(g * h.rescale_grad, h.clip_gradient)
    step = f.sign(h.beta1 * x.mom + (f.one - h.beta1) * c)
    return x.weight - h.lr * (step + h.wd * x.weight), h.beta2 * x.mom + (f.one - h.beta2) * c


@update_rule(states=("mean", "var"), hyper=("lr", "eta", "beta1", "beta2", "epsilon", "wd",
                                            "rescale_grad", "clip_gradient"))
def adamw(x: Any, h: Any, g: Any, f: Any) -> Any:
    """AdamW (MXNet's contrib adamw_update): ``g = clip(rescale_grad*grad); mean, var as Adam;
    weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd*weight)`` (bias correction in lr)."""
    c = f.clip(g * h.rescale_grad, h.clip_gradient)
    mean = h.beta1 * x.mean + (f.one - h.beta1) * c
    var = h.beta2 * x.var + (f.one - h.beta2) * c * c
    weight = x.weight - h.eta * (h.lr * mean / (f.sqrt(var) + h.epsilon) + h.wd * x.weight)
    return weight, mean, var


@update_rule(row_states=("history",), hyper=("lr", "epsilon", "rescale_grad", "clip_gradient"))
def rowwise_adagrad(x: Any, h: Any, g: Any, f: Any) -> Any:
    """RowWiseAdagrad: ``g = clip(rescale_grad*grad); history += mean(g*g over the row);
    weight -= lr * g / (sqrt(history) + epsilon)``, one history value per row."""
    c = f.clip(g * h.rescale_grad, h.clip_gradient)
    history = x.history + f.row_mean(c * c)
    return x.weight - h.lr * c / (f.sqrt(history) + h.epsilon), history


@update_rule(states=("mean", "var"), hyper=("lr", "beta1", "beta2", "epsilon", "wd",
                                            "rescale_grad", "clip_gradient", "mean_scale",
                                            "var_scale"))
def lamb_rows(x: Any, h: Any, g: Any, f: Any) -> Any:
    """LAMB with a trust ratio per row: ``step = mean*mean_scale / (sqrt(var*var_scale) +
    epsilon) + wd*weight; r = |weight row| / |step row| (1 where either is 0);
    weight -= lr * r * step`` (mean, var as Adam; the scales are the bias corrections)."""
    c = f.clip(g * h.rescale_grad, h.clip_gradient)
    mean = h.beta1 * x.mean + (f.one - h.beta1) * c
    var = h.beta2 * x.var + (f.one - h.beta2) * c * c
    step = mean * h.mean_scale / (f.sqrt(var * h.var_scale) + h.epsilon) + h.wd * x.weight
    w_norm, s_norm = f.row_norm(x.weight), f.row_norm(step)
    ratio = f.where(w_norm > 0, f.where(s_norm > 0, w_norm / s_norm, f.one), f.one)
    return x.weight - h.lr * ratio * step, mean, var


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
