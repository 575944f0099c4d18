"""MXNet's ``random_pdf_*`` ops: the density (or, with ``is_log``, the log density) of samples
under distributions whose parameters are arrays, composed of the elementwise, broadcast and
reduce ops (so they run on those generated kernels and differentiate through their gradient
rules).

The parameters have the shape of the samples' leading axes: one distribution per element of the
parameters, drawing the samples along the trailing axes (``sample`` of shape ``(2, 3, 100)``
with ``mu`` and ``sigma`` of shape ``(2, 3)``: 100 samples from each of 6 normals), as the
``random.*`` samplers given array parameters make them. ``random_pdf_dirichlet``'s samples are
vectors along the last axis, its ``alpha`` ends with that axis. The discrete densities (poisson,
negative binomials) give the samples no gradient, as MXNet's.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import InvalidValue
from ..params import flag
from . import arith, elemwise, reduce, shape as shapes
from .dispatch import deliver
from .indexing import array_arg
from .ndarray import NDArray
from .output import BlockGrad

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _arrays(op: str, sample: Any, params: dict[str, Any],
            vector: bool = False) -> tuple[NDArray, list[NDArray]]:
    """``sample`` and the parameters (one shape, the leading axes of ``sample``'s; with
    ``vector`` also its last axis), the parameters reshaped to broadcast against ``sample``."""
    sample = array_arg(sample, "sample", op)
    arrays = {name: array_arg(value, name, op) for name, value in params.items()}
    shape = next(iter(arrays.values())).shape
    for name, value in arrays.items():
        if value.shape != shape:
            raise InvalidValue(f"{op}: the parameters must have one shape, got "
                               + ", ".join(f"{n} {a.shape}" for n, a in arrays.items()))
    lead = shape[:-1] if vector else shape
    fits = (len(shape) <= sample.ndim and sample.shape[:len(lead)] == lead
            and (not vector or shape[-1:] == sample.shape[-1:]))
    if not shape or not fits:
        where = " and its last axis" if vector else ""
        raise InvalidValue(f"{op}: the parameters' shape {shape} must be the leading axes of "
                           f"sample's {sample.shape}{where}")
    spread = (*lead, *(1,) * (sample.ndim - len(shape)), *shape[len(lead):])
    return sample, [a.reshape(spread) for a in arrays.values()]


def _density(op: str, log_density: NDArray, is_log: Any, out: NDArray | None) -> NDArray:
    """``log_density``, or its exponential; written into ``out`` when given."""
    result = log_density if flag(is_log, f"{op}: is_log") else elemwise.exp(log_density)
    if out is None:
        return result
    return deliver(op, result._storage, result.stype, result.context, (), out)


def _negative_binomial_log(x: NDArray, k: NDArray, p: NDArray) -> NDArray:
    """``log(Γ(x+k) / (Γ(x+1) Γ(k)) p^k (1-p)^x)``, broadcast."""
    combinations = arith.broadcast_sub(elemwise.gammaln(arith.broadcast_add(x, k)),
                                       elemwise.gammaln(x + 1))
    combinations = arith.broadcast_sub(combinations, elemwise.gammaln(k))
    return arith.broadcast_add(arith.broadcast_add(combinations, k * elemwise.log(p)),
                               arith.broadcast_mul(x, elemwise.log(1 - p)))


def random_pdf_normal(sample: NDArray | None = None, mu: NDArray | None = None,
                      sigma: NDArray | None = None, is_log: Any = False,
                      out: NDArray | None = None) -> NDArray:
    """Density of ``sample`` under normals of means ``mu`` and deviations ``sigma``."""
    x, (mu, sigma) = _arrays("random_pdf_normal", sample, {"mu": mu, "sigma": sigma})
    z = arith.broadcast_div(arith.broadcast_sub(x, mu), sigma)
    log_density = arith.broadcast_sub(elemwise.square(z) * -0.5,
                                      elemwise.log(sigma) + _HALF_LOG_2PI)
    return _density("random_pdf_normal", log_density, is_log, out)


def random_pdf_uniform(sample: NDArray | None = None, low: NDArray | None = None,
                       high: NDArray | None = None, is_log: Any = False,
                       out: NDArray | None = None) -> NDArray:
    """Density of ``sample`` under uniforms on [``low``, ``high``) (``1 / (high - low)``
    wherever the sample lies, as MXNet's)."""
    x, (low, high) = _arrays("random_pdf_uniform", sample, {"low": low, "high": high})
    log_density = shapes.broadcast_like(-elemwise.log(high - low), x)
    return _density("random_pdf_uniform", log_density, is_log, out)


def random_pdf_gamma(sample: NDArray | None = None, alpha: NDArray | None = None,
                     beta: NDArray | None = None, is_log: Any = False,
                     out: NDArray | None = None) -> NDArray:
    """Density of ``sample`` under gammas of shapes ``alpha`` and rates ``beta``."""
    x, (alpha, beta) = _arrays("random_pdf_gamma", sample, {"alpha": alpha, "beta": beta})
    log_density = arith.broadcast_sub(arith.broadcast_mul(alpha - 1, elemwise.log(x)),
                                      arith.broadcast_mul(beta, x))
    log_density = arith.broadcast_add(
        log_density, alpha * elemwise.log(beta) - elemwise.gammaln(alpha))
    return _density("random_pdf_gamma", log_density, is_log, out)


def random_pdf_exponential(sample: NDArray | None = None, lam: NDArray | None = None,
                           is_log: Any = False, out: NDArray | None = None) -> NDArray:
    """Density of ``sample`` under exponentials of rates ``lam``."""
    x, (lam,) = _arrays("random_pdf_exponential", sample, {"lam": lam})
    log_density = arith.broadcast_sub(elemwise.log(lam), arith.broadcast_mul(lam, x))
    return _density("random_pdf_exponential", log_density, is_log, out)


def random_pdf_poisson(sample: NDArray | None = None, lam: NDArray | None = None,
                       is_log: Any = False, out: NDArray | None = None) -> NDArray:
    """Probability of the counts ``sample`` under poissons of means ``lam``."""
    x, (lam,) = _arrays("random_pdf_poisson", sample, {"lam": lam})
    x = BlockGrad(x)
    log_density = arith.broadcast_sub(arith.broadcast_mul(x, elemwise.log(lam)),
                                      elemwise.gammaln(x + 1))
    log_density = arith.broadcast_sub(log_density, lam)
    return _density("random_pdf_poisson", log_density, is_log, out)


def random_pdf_negative_binomial(sample: NDArray | None = None, k: NDArray | None = None,
                                 p: NDArray | None = None, is_log: Any = False,
                                 out: NDArray | None = None) -> NDArray:
    """Probability of the counts ``sample`` (failures before the ``k``-th success) under
    negative binomials of success probabilities ``p``."""
    x, (k, p) = _arrays("random_pdf_negative_binomial", sample, {"k": k, "p": p})
    return _density("random_pdf_negative_binomial",
                    _negative_binomial_log(BlockGrad(x), k, p), is_log, out)


def random_pdf_generalized_negative_binomial(sample: NDArray | None = None,
                                             mu: NDArray | None = None,
                                             alpha: NDArray | None = None, is_log: Any = False,
                                             out: NDArray | None = None) -> NDArray:
    """Probability of the counts ``sample`` under negative binomials of means ``mu`` and
    dispersions ``alpha`` (``k = 1 / alpha``, ``p = 1 / (1 + mu alpha)``)."""
    op = "random_pdf_generalized_negative_binomial"
    x, (mu, alpha) = _arrays(op, sample, {"mu": mu, "alpha": alpha})
    k, p = 1 / alpha, 1 / (mu * alpha + 1)
    return _density(op, _negative_binomial_log(BlockGrad(x), k, p), is_log, out)


def random_pdf_dirichlet(sample: NDArray | None = None, alpha: NDArray | None = None,
                         is_log: Any = False, out: NDArray | None = None) -> NDArray:
    """Density of the vectors ``sample`` (along its last axis) under dirichlets of
    concentrations ``alpha`` (``alpha``'s last axis is theirs); one sample vector gives shape
    ``(1,)``, as MXNet's."""
    x, (alpha,) = _arrays("random_pdf_dirichlet", sample, {"alpha": alpha}, vector=True)
    terms = reduce.sum(arith.broadcast_mul(alpha - 1, elemwise.log(x)), axis=-1)
    norm = elemwise.gammaln(reduce.sum(alpha, axis=-1)) - reduce.sum(elemwise.gammaln(alpha),
                                                                     axis=-1)
    log_density = arith.broadcast_add(terms, norm)
    if x.ndim == 1:
        log_density = log_density.reshape((1,))
    return _density("random_pdf_dirichlet", log_density, is_log, out)


__all__ = [name for name in dict(globals()) if name.startswith("random_pdf_")]
