"""The built-in update rules: MXNet 1.9.1's sgd, sgd_mom, adam, adagrad, ftrl, rmsprop,
rmspropalex, signsgd, signum, nag_mom, lamb_update_phase1, ftml and contrib group_adagrad
operators, the updates of its AdaDelta, Adamax, Nadam, DCASGD and Test optimizers and its
kvstore's 2-bit gradient compression, each written with ``define_update`` as users write theirs.

Free of TVM. ``registry.add_update_rule`` registers each of ``BUILT_IN`` as it registers a
user's rule: the kernel ``optim_<name>`` (its signature derived from the rule), the
``<name>_update`` op and the rule table. Adding an optimizer = one rule in ``BUILT_IN``. A rule
``update(x, h, g, f)`` returns the new weight and states (``update_rules.language`` says what
``x``, ``h``, ``g`` and ``f`` are); a new value another output uses is read back as stored
(rounded to the array's dtype).
"""

from __future__ import annotations

from typing import Any

from .language import UpdateRule, define_update


def _sgd(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)`` (MXNet's sgd_update)."""
    return (f.one - h.lr * h.wd) * x.weight - h.lr * f.clip(h.rescale_grad * g, h.clip_gradient)


def _sgd_mom(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); weight += mom``
    (MXNet's sgd_mom_update: the momentum state holds the negative step)."""
    mom = (h.momentum * x.mom - h.lr * h.wd * x.weight
           - h.lr * f.clip(h.rescale_grad * g, h.clip_gradient))
    return x.weight + mom, mom


def _adam(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; weight -= lr * mean / (sqrt(var) + epsilon)``
    (MXNet's adam_update; the caller folds bias correction into ``lr``)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    var = h.beta2 * x.var + (f.one - h.beta2) * clipped * clipped
    return x.weight - h.lr * mean / (f.sqrt(var) + h.epsilon), mean, var


def _adagrad(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad); history += g*g;
    weight -= lr * (g / sqrt(history + epsilon) + wd*weight)`` (MXNet's AdaGrad; its sparse
    operator takes no ``wd``, so a row_sparse gradient always runs ``lazy`` with ``wd = 0``)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    history = x.history + clipped * clipped
    return x.weight - h.lr * (clipped / f.sqrt(history + h.epsilon) + h.wd * x.weight), history


def _ftrl(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad); z += g - (sqrt(n + g*g) - sqrt(n)) * weight / lr;
    n += g*g; weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)``
    (MXNet's ftrl_update)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    z = x.z + (clipped - (f.sqrt(x.n_acc + clipped * clipped) - f.sqrt(x.n_acc))
               * x.weight / h.lr)
    n_acc = x.n_acc + clipped * clipped
    weight = ((f.sign(z) * h.lamda1 - z) / ((h.beta + f.sqrt(n_acc)) / h.lr + h.wd)
              * f.cast(f.abs(z) > h.lamda1))
    return weight, z, n_acc


def _rmsprop(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad + wd*weight); n = (1-gamma1)*g*g + gamma1*n;
    weight = clip_w(weight - lr * g / sqrt(n + epsilon))`` (MXNet's rmsprop_update;
    ``clip_w`` clamps to ``±clip_weights``)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    n_acc = (f.one - h.gamma1) * clipped * clipped + h.gamma1 * x.n_acc
    return f.clip(x.weight - h.lr * clipped / f.sqrt(n_acc + h.epsilon), h.clip_weights), n_acc


def _rmspropalex(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad + wd*weight); n = (1-gamma1)*g*g + gamma1*n;
    g_acc = (1-gamma1)*g + gamma1*g_acc; delta = gamma2*delta - lr*g/sqrt(n - g_acc*g_acc + eps);
    weight = clip_w(weight + delta)`` (MXNet's rmspropalex_update, centered RMSProp)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    n_acc = (f.one - h.gamma1) * clipped * clipped + h.gamma1 * x.n_acc
    g_acc = (f.one - h.gamma1) * clipped + h.gamma1 * x.g_acc
    delta = (h.gamma2 * x.delta
             - h.lr * clipped / f.sqrt(n_acc - g_acc * g_acc + h.epsilon))
    return f.clip(x.weight + delta, h.clip_weights), n_acc, g_acc, delta


def _signsgd(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``weight = (1 - lr*wd)*weight - lr*sign(grad)`` (MXNet's signsgd_update: rescaling and
    clipping do not change a sign, so the operator ignores them)."""
    return (f.one - h.lr * h.wd) * x.weight - h.lr * f.sign(g)


def _signum(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``mom = momentum*mom - (1-momentum)*(wd*weight + clip(rescale_grad*grad));
    weight = (1 - lr*wd_lh)*weight + lr*sign(mom)`` (MXNet's signum_update: the state holds the
    negative momentum)."""
    mom = h.momentum * x.mom - (f.one - h.momentum) * (
        h.wd * x.weight + f.clip(g * h.rescale_grad, h.clip_gradient))
    return (f.one - h.lr * h.wd_lh) * x.weight + h.lr * f.sign(mom), mom


def _nag_mom(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad) + wd*weight; mom = momentum*mom - lr*g;
    weight += momentum*mom - lr*g`` (MXNet's nag_mom_update, with the weight before the step in
    both lines)."""
    step = h.lr * (f.clip(g * h.rescale_grad, h.clip_gradient) + h.wd * x.weight)
    mom = h.momentum * x.mom - step
    return x.weight + h.momentum * mom - step, mom


def _adadelta(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad); acc_g = rho*acc_g + (1-rho)*g*g;
    delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g; acc_delta = rho*acc_delta +
    (1-rho)*delta*delta; weight -= delta + wd*weight`` (MXNet's AdaDelta; no learning rate)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    acc_g = h.rho * x.acc_g + (f.one - h.rho) * clipped * clipped
    delta = f.sqrt(x.acc_delta + h.epsilon) / f.sqrt(acc_g + h.epsilon) * clipped
    acc_delta = h.rho * x.acc_delta + (f.one - h.rho) * delta * delta
    return x.weight - (delta + h.wd * x.weight), acc_g, acc_delta


def _adamax(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    u = max(beta2*u, |g|); weight -= lr * mean / u`` (MXNet's Adamax; the caller folds the bias
    correction ``1 / (1 - beta1**t)`` into ``lr``)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    u = f.max(h.beta2 * x.u, f.abs(clipped))
    return x.weight - h.lr * mean / u, mean, u


def _nadam(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; m = (1-momentum_t)*g*grad_scale +
    momentum_next*mean*mean_scale; weight -= lr * m / (sqrt(var*var_scale) + epsilon)``
    (MXNet's Nadam; the caller computes the momentum schedule and the scales)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    var = h.beta2 * x.var + (f.one - h.beta2) * clipped * clipped
    bar = ((f.one - h.momentum_t) * clipped * h.grad_scale
           + h.momentum_next * mean * h.mean_scale)
    return x.weight - h.lr * bar / (f.sqrt(var * h.var_scale) + h.epsilon), mean, var


def _lamb(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; step = mean*mean_scale / (sqrt(var*var_scale) + epsilon)
    + wd*weight`` (MXNet's lamb_update_phase1; the scales are the bias corrections or 1). The
    weight is only read: ``step`` goes to its own array for the norms and phase 2."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    var = h.beta2 * x.var + (f.one - h.beta2) * clipped * clipped
    step = mean * h.mean_scale / (f.sqrt(var * h.var_scale) + h.epsilon) + h.wd * x.weight
    return x.weight, mean, var, step


def _ftml(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad + wd*weight); v = beta2*v + (1-beta2)*g*g;
    d_t = d_scale * (sqrt(v * v_scale) + epsilon); z = beta1*z + (1-beta1)*g - (d_t -
    beta1*d)*weight; d = d_t; weight = -z / d_t`` (MXNet's ftml_update; the caller passes
    ``d_scale = (1 - beta1**t) / lr`` and ``v_scale = 1 / (1 - beta2**t)``)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    v = h.beta2 * x.v + (f.one - h.beta2) * clipped * clipped

    def d_t() -> Any:  # z reads the old d and this one: computed there, not read back
        return h.d_scale * (f.sqrt(v * h.v_scale) + h.epsilon)

    z = h.beta1 * x.z + (f.one - h.beta1) * clipped - (d_t() - h.beta1 * x.d) * x.weight
    d = d_t()
    return -z / d, d, v, z


def _dcasgd(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad); mom = momentum*mom - lr*(g + wd*weight +
    lamda*g*g*(weight - previous)); previous = weight; weight += mom`` (MXNet's DCASGD, delay
    compensation)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    mom = h.momentum * x.mom - h.lr * (clipped + h.wd * x.weight
                                       + h.lamda * clipped * clipped * (x.weight - x.previous))
    return x.weight + mom, mom, x.weight


def _group_adagrad(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``g = clip(rescale_grad*grad); history += mean(g*g over the row);
    weight -= lr * g / sqrt(history + epsilon)`` (MXNet's contrib group_adagrad_update: one
    history value per row)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    history = x.history + f.row_mean(clipped * clipped)
    return x.weight - h.lr * clipped / f.sqrt(history + h.epsilon), history


def _accumulate(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``weight += rescale_grad * grad; state = weight`` (MXNet's ``Test`` optimizer, which its
    distributed tests set on the kvstore)."""
    weight = x.weight + g * h.rescale_grad
    return weight, weight


def _quantize_2bit(x: Any, h: Any, g: Any, f: Any) -> Any:
    """``r = residual + grad; code = 1 if r >= threshold, -1 if r <= -threshold, else 0;
    residual = r - threshold*code`` (MXNet's 2-bit gradient compression on a kvstore push; the
    "weight" array receives the codes, which the store sums and scales by ``threshold``)."""
    r = x.residual + g
    code = f.cast(r >= h.threshold) - f.cast(r <= -h.threshold)
    return code, r - h.threshold * code


def _rule(name: str, states: tuple[str, ...], hyper: tuple[str, ...], update: Any, doc: str,
          functions: tuple[str, ...] = ("lazy", "std", "dense"),
          row_states: tuple[str, ...] = ()) -> UpdateRule:
    """A built-in rule, defined as a user's is."""
    return define_update(name, update, states=states, hyper=hyper, functions=functions, doc=doc,
                         row_states=row_states)


BUILT_IN: dict[str, UpdateRule] = {rule.name: rule for rule in (
    _rule("sgd", (), ("lr", "wd", "rescale_grad", "clip_gradient"), _sgd,
                "sgd_update: lazy over gradient rows, std over every row, or dense"),
    _rule("sgd_mom", ("mom",), ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
                _sgd_mom, "sgd_mom_update: momentum and weight in one pass"),
    _rule("adam", ("mean", "var"),
                ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient"), _adam,
                "adam_update: mean, var and weight in one pass (bias correction in lr)"),
    _rule("adagrad", ("history",), ("lr", "epsilon", "wd", "rescale_grad", "clip_gradient"),
                _adagrad, "adagrad_update: history and weight in one pass", ("lazy", "dense")),
    _rule("ftrl", ("z", "n_acc"),
                ("lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient"), _ftrl,
                "ftrl_update: z, n and weight in one pass"),
    # MXNet's operators below have no row_sparse kernel: the front end gives them dense gradients
    _rule("rmsprop", ("n_acc",),
                ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights"),
                _rmsprop, "rmsprop_update: n and weight in one pass", ("dense",)),
    _rule("rmspropalex", ("n_acc", "g_acc", "delta"),
                ("lr", "gamma1", "gamma2", "epsilon", "wd", "rescale_grad", "clip_gradient",
                 "clip_weights"),
                _rmspropalex, "rmspropalex_update: n, g, delta and weight in one pass", ("dense",)),
    _rule("signsgd", (), ("lr", "wd"), _signsgd, "signsgd_update: the weight", ("dense",)),
    _rule("signum", ("mom",),
                ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "wd_lh"), _signum,
                "signum_update: momentum and weight in one pass", ("dense",)),
    _rule("nag_mom", ("mom",), ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
                _nag_mom, "nag_mom_update: momentum and weight in one pass", ("dense",)),
    _rule("adadelta", ("acc_g", "acc_delta"),
                ("rho", "epsilon", "wd", "rescale_grad", "clip_gradient"), _adadelta,
                "AdaDelta: both accumulators and weight in one pass", ("dense",)),
    _rule("adamax", ("mean", "u"),
                ("lr", "beta1", "beta2", "wd", "rescale_grad", "clip_gradient"), _adamax,
                "Adamax: mean, u and weight in one pass (bias correction in lr)", ("dense",)),
    _rule("nadam", ("mean", "var"),
                ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient",
                 "momentum_t", "momentum_next", "grad_scale", "mean_scale", "var_scale"),
                _nadam, "Nadam: mean, var and weight in one pass (schedule from the caller)",
                ("dense",)),
    _rule("lamb", ("mean", "var", "step"),
                ("beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient", "mean_scale",
                 "var_scale"),
                _lamb, "lamb_update_phase1: mean, var and the step in one pass", ("dense",)),
    _rule("ftml", ("d", "v", "z"),
                ("beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient", "d_scale",
                 "v_scale"),
                _ftml, "ftml_update: d, v, z and weight in one pass (schedule from the caller)",
                ("dense",)),
    _rule("dcasgd", ("mom", "previous"),
                ("lr", "momentum", "lamda", "wd", "rescale_grad", "clip_gradient"), _dcasgd,
                "DCASGD: momentum, previous weight and weight in one pass"),
    _rule("group_adagrad", (), ("lr", "epsilon", "rescale_grad", "clip_gradient"),
                _group_adagrad, "group_adagrad_update: a row's history, then its weight",
                ("lazy", "dense"), row_states=("history",)),
    _rule("accumulate", ("state",), ("rescale_grad",), _accumulate,
                "MXNet's Test optimizer: weight += rescale_grad * grad, state = weight"),
    _rule("quantize_2bit", ("residual",), ("threshold",), _quantize_2bit,
                "2-bit gradient compression: each value's code (-1, 0, 1) and its residual",
                ("dense",)),
)}
"""Every built-in rule by name, in the registry's order."""
