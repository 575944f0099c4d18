"""The optimizer families as data: one row per family (MXNet 1.9.1's sgd, sgd_mom, adam, adagrad,
ftrl operators) with its states, hyper-parameters, functions and the update of one element.

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
  ``f.sign(x)`` (MXNet's ``sign::Map``), ``f.sqrt``, ``f.abs``, ``f.cast(x)`` (to the compute
  type).
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
)
"""Every optimizer family, in the registry's order."""

FAMILIES: dict[str, OptimFamily] = {family.name: family for family in OPTIMIZERS}
"""The rows of ``OPTIMIZERS`` by name."""
