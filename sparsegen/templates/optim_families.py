"""The optimizer families as data: one row per family (MXNet 1.9.1's sgd, sgd_mom, adam, adagrad,
ftrl, rmsprop, rmspropalex, signsgd, signum, nag_mom, lamb_update_phase1 operators, and the
updates of its AdaDelta, Adamax and Nadam optimizers) with its states, hyper-parameters, functions and the update of one
element.

Free of TVM: the registry derives each ``optim_<family>`` kernel's signature from its row, and
templates/optim.py builds the row's PrimFuncs. Adding an optimizer = one row in ``OPTIMIZERS``
+ its element update (+ its template name in templates/optim.py).

An element update ``update(x, h, g, f)`` writes one element of the weight and its states, in
the compute type (float32, or float64 for float64 weights):

- ``x.weight``, ``x.<state>`` read the element; ``x.<name> = value`` stores it (rounded to the
  array's dtype once). Values are expressions, evaluated where they are stored: a read placed
  after a store of the same array sees the stored value.
- ``h.<hyper-parameter>``: the kernel's float32 parameters, widened to the compute type.
- ``g``: the gradient value (``0`` for the rows without a gradient row in ``std``).
- ``f``: element functions: ``f.one``, ``f.clip(x, bound)`` (MXNet's ``clip::Map``),
  ``f.sign(x)`` (MXNet's ``sign::Map``), ``f.sqrt``, ``f.abs``, ``f.max(a, b)``, ``f.cast(x)``
  (to the compute type).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

Update = Callable[[Any, Any, Any, Any], None]
"""``update(x, h, g, f)``: writes one element of the weight and its states (see above)."""


@dataclass(frozen=True)
class OptimFamily:
    """One optimizer family: the kernel ``optim_<name>`` and its template."""

    name: str
    states: tuple[str, ...]  # (n, d) arrays next to the weight, in argument order
    hyper: tuple[str, ...]  # float32 hyper-parameters, in argument order
    update: Update  # its docstring is the template's docstring
    doc: str  # the kernel's one-line description
    functions: tuple[str, ...] = ("lazy", "std", "dense")


def _sgd(x: Any, h: Any, g: Any, f: Any) -> None:
    """``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)`` (MXNet's sgd_update)."""
    x.weight = (f.one - h.lr * h.wd) * x.weight - h.lr * f.clip(h.rescale_grad * g, h.clip_gradient)


def _sgd_mom(x: Any, h: Any, g: Any, f: Any) -> None:
    """``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); weight += mom``
    (MXNet's sgd_mom_update: the momentum state holds the negative step)."""
    x.mom = (h.momentum * x.mom - h.lr * h.wd * x.weight
             - h.lr * f.clip(h.rescale_grad * g, h.clip_gradient))
    x.weight = x.weight + x.mom


def _adam(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; weight -= lr * mean / (sqrt(var) + epsilon)``
    (MXNet's adam_update; the caller folds bias correction into ``lr``)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    x.mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    x.var = h.beta2 * x.var + (f.one - h.beta2) * clipped * clipped
    x.weight = x.weight - h.lr * x.mean / (f.sqrt(x.var) + h.epsilon)


def _adagrad(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad); history += g*g;
    weight -= lr * (g / sqrt(history + epsilon) + wd*weight)`` (MXNet's AdaGrad; its sparse
    operator takes no ``wd``, so a row_sparse gradient always runs ``lazy`` with ``wd = 0``)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    x.history = x.history + clipped * clipped
    x.weight = x.weight - h.lr * (clipped / f.sqrt(x.history + h.epsilon) + h.wd * x.weight)


def _ftrl(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad); z += g - (sqrt(n + g*g) - sqrt(n)) * weight / lr;
    n += g*g; weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)``
    (MXNet's ftrl_update)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    x.z = x.z + (clipped - (f.sqrt(x.n_acc + clipped * clipped) - f.sqrt(x.n_acc))
                 * x.weight / h.lr)
    x.n_acc = x.n_acc + clipped * clipped
    x.weight = ((f.sign(x.z) * h.lamda1 - x.z) / ((h.beta + f.sqrt(x.n_acc)) / h.lr + h.wd)
                * f.cast(f.abs(x.z) > h.lamda1))


def _rmsprop(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad + wd*weight); n = (1-gamma1)*g*g + gamma1*n;
    weight = clip_w(weight - lr * g / sqrt(n + epsilon))`` (MXNet's rmsprop_update;
    ``clip_w`` clamps to ``±clip_weights``)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    x.n_acc = (f.one - h.gamma1) * clipped * clipped + h.gamma1 * x.n_acc
    x.weight = f.clip(x.weight - h.lr * clipped / f.sqrt(x.n_acc + h.epsilon), h.clip_weights)


def _rmspropalex(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad + wd*weight); n = (1-gamma1)*g*g + gamma1*n;
    g_acc = (1-gamma1)*g + gamma1*g_acc; delta = gamma2*delta - lr*g/sqrt(n - g_acc*g_acc + eps);
    weight = clip_w(weight + delta)`` (MXNet's rmspropalex_update, centered RMSProp)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    x.n_acc = (f.one - h.gamma1) * clipped * clipped + h.gamma1 * x.n_acc
    x.g_acc = (f.one - h.gamma1) * clipped + h.gamma1 * x.g_acc
    x.delta = (h.gamma2 * x.delta
               - h.lr * clipped / f.sqrt(x.n_acc - x.g_acc * x.g_acc + h.epsilon))
    x.weight = f.clip(x.weight + x.delta, h.clip_weights)


def _signsgd(x: Any, h: Any, g: Any, f: Any) -> None:
    """``weight = (1 - lr*wd)*weight - lr*sign(grad)`` (MXNet's signsgd_update: rescaling and
    clipping do not change a sign, so the operator ignores them)."""
    x.weight = (f.one - h.lr * h.wd) * x.weight - h.lr * f.sign(g)


def _signum(x: Any, h: Any, g: Any, f: Any) -> None:
    """``mom = momentum*mom - (1-momentum)*(wd*weight + clip(rescale_grad*grad));
    weight = (1 - lr*wd_lh)*weight + lr*sign(mom)`` (MXNet's signum_update: the state holds the
    negative momentum)."""
    x.mom = h.momentum * x.mom - (f.one - h.momentum) * (
        h.wd * x.weight + f.clip(g * h.rescale_grad, h.clip_gradient))
    x.weight = (f.one - h.lr * h.wd_lh) * x.weight + h.lr * f.sign(x.mom)


def _nag_mom(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad) + wd*weight; mom = momentum*mom - lr*g;
    weight += momentum*mom - lr*g`` (MXNet's nag_mom_update, with the weight before the step in
    both lines)."""
    step = h.lr * (f.clip(g * h.rescale_grad, h.clip_gradient) + h.wd * x.weight)
    x.mom = h.momentum * x.mom - step
    x.weight = x.weight + h.momentum * x.mom - step  # ``step`` still reads the old weight


def _adadelta(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad); acc_g = rho*acc_g + (1-rho)*g*g;
    delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g; acc_delta = rho*acc_delta +
    (1-rho)*delta*delta; weight -= delta + wd*weight`` (MXNet's AdaDelta; no learning rate)."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    x.acc_g = h.rho * x.acc_g + (f.one - h.rho) * clipped * clipped
    delta = f.sqrt(x.acc_delta + h.epsilon) / f.sqrt(x.acc_g + h.epsilon) * clipped
    x.weight = x.weight - (delta + h.wd * x.weight)  # before acc_delta: delta reads the old one
    x.acc_delta = h.rho * x.acc_delta + (f.one - h.rho) * delta * delta


def _adamax(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    u = max(beta2*u, |g|); weight -= lr * mean / u`` (MXNet's Adamax; the caller folds the bias
    correction ``1 / (1 - beta1**t)`` into ``lr``)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    x.mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    x.u = f.max(h.beta2 * x.u, f.abs(clipped))
    x.weight = x.weight - h.lr * x.mean / x.u


def _nadam(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; m = (1-momentum_t)*g*grad_scale +
    momentum_next*mean*mean_scale; weight -= lr * m / (sqrt(var*var_scale) + epsilon)``
    (MXNet's Nadam; the caller computes the momentum schedule and the scales)."""
    clipped = f.clip(g * h.rescale_grad + x.weight * h.wd, h.clip_gradient)
    x.mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    x.var = h.beta2 * x.var + (f.one - h.beta2) * clipped * clipped
    bar = ((f.one - h.momentum_t) * clipped * h.grad_scale
           + h.momentum_next * x.mean * h.mean_scale)
    x.weight = x.weight - h.lr * bar / (f.sqrt(x.var * h.var_scale) + h.epsilon)


def _lamb(x: Any, h: Any, g: Any, f: Any) -> None:
    """``g = clip(rescale_grad*grad); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; step = mean*mean_scale / (sqrt(var*var_scale) + epsilon)
    + wd*weight`` (MXNet's lamb_update_phase1; the scales are the bias corrections or 1). The
    weight is only read: ``step`` goes to its own array for the norms and phase 2."""
    clipped = f.clip(g * h.rescale_grad, h.clip_gradient)
    x.mean = h.beta1 * x.mean + (f.one - h.beta1) * clipped
    x.var = h.beta2 * x.var + (f.one - h.beta2) * clipped * clipped
    x.step = (x.mean * h.mean_scale / (f.sqrt(x.var * h.var_scale) + h.epsilon)
              + h.wd * x.weight)


OPTIMIZERS: tuple[OptimFamily, ...] = (
    OptimFamily("sgd", (), ("lr", "wd", "rescale_grad", "clip_gradient"), _sgd,
                "sgd_update: lazy over gradient rows, std over every row, or dense"),
    OptimFamily("sgd_mom", ("mom",), ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
                _sgd_mom, "sgd_mom_update: momentum and weight in one pass"),
    OptimFamily("adam", ("mean", "var"),
                ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient"), _adam,
                "adam_update: mean, var and weight in one pass (bias correction in lr)"),
    OptimFamily("adagrad", ("history",), ("lr", "epsilon", "wd", "rescale_grad", "clip_gradient"),
                _adagrad, "adagrad_update: history and weight in one pass", ("lazy", "dense")),
    OptimFamily("ftrl", ("z", "n_acc"),
                ("lr", "lamda1", "beta", "wd", "rescale_grad", "clip_gradient"), _ftrl,
                "ftrl_update: z, n and weight in one pass"),
    # MXNet's operators below have no row_sparse kernel: the front end gives them dense gradients
    OptimFamily("rmsprop", ("n_acc",),
                ("lr", "gamma1", "epsilon", "wd", "rescale_grad", "clip_gradient", "clip_weights"),
                _rmsprop, "rmsprop_update: n and weight in one pass", ("dense",)),
    OptimFamily("rmspropalex", ("n_acc", "g_acc", "delta"),
                ("lr", "gamma1", "gamma2", "epsilon", "wd", "rescale_grad", "clip_gradient",
                 "clip_weights"),
                _rmspropalex, "rmspropalex_update: n, g, delta and weight in one pass", ("dense",)),
    OptimFamily("signsgd", (), ("lr", "wd"), _signsgd, "signsgd_update: the weight", ("dense",)),
    OptimFamily("signum", ("mom",),
                ("lr", "momentum", "wd", "rescale_grad", "clip_gradient", "wd_lh"), _signum,
                "signum_update: momentum and weight in one pass", ("dense",)),
    OptimFamily("nag_mom", ("mom",), ("lr", "momentum", "wd", "rescale_grad", "clip_gradient"),
                _nag_mom, "nag_mom_update: momentum and weight in one pass", ("dense",)),
    OptimFamily("adadelta", ("acc_g", "acc_delta"),
                ("rho", "epsilon", "wd", "rescale_grad", "clip_gradient"), _adadelta,
                "AdaDelta: both accumulators and weight in one pass", ("dense",)),
    OptimFamily("adamax", ("mean", "u"),
                ("lr", "beta1", "beta2", "wd", "rescale_grad", "clip_gradient"), _adamax,
                "Adamax: mean, u and weight in one pass (bias correction in lr)", ("dense",)),
    OptimFamily("nadam", ("mean", "var"),
                ("lr", "beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient",
                 "momentum_t", "momentum_next", "grad_scale", "mean_scale", "var_scale"),
                _nadam, "Nadam: mean, var and weight in one pass (schedule from the caller)",
                ("dense",)),
    OptimFamily("lamb", ("mean", "var", "step"),
                ("beta1", "beta2", "epsilon", "wd", "rescale_grad", "clip_gradient", "mean_scale",
                 "var_scale"),
                _lamb, "lamb_update_phase1: mean, var and the step in one pass", ("dense",)),
)
"""Every optimizer family, in the registry's order."""

FAMILIES: dict[str, OptimFamily] = {family.name: family for family in OPTIMIZERS}
"""The rows of ``OPTIMIZERS`` by name."""
