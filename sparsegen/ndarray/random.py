"""``mx.nd.random``: samples of MXNet 1.9.1's distributions on the counter-based generator of
sparsegen/ops/random.py (kernels ``random`` and ``random_multinomial``).

Distribution parameters are numbers (``shape`` samples, default one) or NDArrays of one shape
(``shape`` samples for each parameter: the result has shape ``params.shape + shape``), as
MXNet's ``_random_*`` / ``_sample_*`` operators.
"""

from __future__ import annotations

import inspect
import numbers
from typing import Any

import numpy as np

from .. import tape
from ..context import Context
from ..context import resolve as resolve_context
from ..device import check_allocation, device_of
from ..errors import InvalidType, InvalidValue, SparsegenError
from ..formats import check_dtype, check_shape
from ..ops import random as ops
from ..params import integer, real
from .dispatch import check_out, deliver, densified, invoke
from .ndarray import NDArray

FLOAT_DTYPES = ("float16", "float32", "float64")
"""Output dtypes of the continuous samplers and poisson (MXNet's)."""
INT_DTYPES = ("int32", "int64")
"""Output dtypes of randint."""
MULTINOMIAL_DTYPES = ("float16", "float32", "float64", "int32", "uint8")
"""Output dtypes of multinomial's samples."""


def _no_extra(op: str, kwargs: dict[str, Any]) -> None:
    """MXNet's operator interface refuses arguments it does not know (MXNetError)."""
    if kwargs:
        raise SparsegenError(f"{op}: unknown argument(s) {sorted(kwargs)}")


def _stream(ctx: Context) -> tuple[int, int, int, int]:
    return ops.next_stream((ctx.device_type, ctx.device_id))


def _dtype(op: str, dtype: Any, allowed: tuple[str, ...], out: NDArray | None,
           default: str) -> np.dtype:
    """The output dtype: ``dtype``, else ``out``'s, else ``default``."""
    if dtype is None:
        dtype = out.dtype if isinstance(out, NDArray) else default
    resolved = check_dtype(dtype, f"{op}: dtype")
    if resolved.name not in allowed:
        raise SparsegenError(f"{op}: dtype must be one of {allowed}, got {resolved.name}")
    return resolved


def _shape(op: str, shape: Any, out: NDArray | None, default: tuple[int, ...]) -> tuple[int, ...]:
    """The samples' shape: ``shape`` (an int or a tuple of ints), else ``out``'s, else
    ``default``."""
    if shape is None:
        return out.shape if isinstance(out, NDArray) else default
    dims = check_shape((shape,) if isinstance(shape, numbers.Integral) else shape,
                       f"{op}: shape")
    return dims


def _numbers_or_arrays(op: str, names: tuple[str, ...], values: tuple[Any, ...]) -> bool:
    """Whether the parameters are NDArrays (all of them) rather than numbers (all of them)."""
    arrays = [isinstance(v, NDArray) for v in values]
    if all(arrays):
        shapes = {v.shape for v in values}
        if len(shapes) > 1:
            raise InvalidValue(f"{op}: parameter arrays {names} must have one shape, got "
                               f"{[v.shape for v in values]}")
        return True
    if any(arrays) or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                              for v in values):
        raise InvalidType(
            f"{op}: distribution parameters {names} must all be NDArrays or all numbers, got "
            f"{', '.join(type(v).__name__ for v in values)}")
    return False


def _draw(op: str, dist: str, names: tuple[str, ...], values: tuple[Any, ...], checks: Any,
          shape: Any, dtype: Any, ctx: Context | None, out: NDArray | None,
          kwargs: dict[str, Any]) -> NDArray:
    """Samples of ``dist`` for parameters ``values`` (numbers passed through ``checks``, or
    NDArrays), as MXNet's ``_random_<dist>`` / ``_sample_<dist>``."""
    _no_extra(op, kwargs)
    resolved = _dtype(op, dtype, FLOAT_DTYPES, out, "float32")
    if _numbers_or_arrays(op, names, values):
        dims = _shape(op, shape, None, ())
        arrays = tuple(v if v.dtype == resolved else v.astype(resolved) for v in values)
        check_out(op, out, (*values[0].shape, *dims), resolved, values[0].context)
        check_allocation((*values[0].shape, *dims), resolved)
        return invoke(f"_sample_{dist}", arrays, out=out, dist=dist, shape=dims, dtype=resolved,
                      stream=_stream(values[0].context))
    checked = checks(*values)
    dims = _shape(op, shape, out, (1,))
    if dims == ():
        raise InvalidValue(f"{op}: shape must name at least one dimension, got ()")
    ctx = resolve_context(ctx if ctx is not None else getattr(out, "context", None))
    check_out(op, out, dims, resolved, ctx)
    check_allocation(dims, resolved)
    params = ops.scalar_params(checked, resolved, device_of(ctx))
    result = ops.sample(dist, params, dims, resolved, _stream(ctx)).reshape(dims)
    return deliver(f"_random_{dist}", result, "default", ctx, (), out)


def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None,
            ctx: Context | None = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the uniform distribution over ``[low, high)``, as ``mx.nd.random.uniform``
    (``low <= high``; float16, float32 (default) or float64)."""
    def checks(lo: Any, hi: Any) -> tuple[float, float]:
        lo, hi = real(lo, "uniform: low"), real(hi, "uniform: high")
        if lo > hi:
            raise InvalidValue(f"uniform: low ({lo:g}) must not exceed high ({hi:g})")
        return lo, hi

    return _draw("uniform", "uniform", ("low", "high"), (low, high), checks, shape, dtype, ctx,
                 out, kwargs)


def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None,
           ctx: Context | None = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the normal distribution of mean ``loc`` and standard deviation ``scale``
    (``>= 0``), as ``mx.nd.random.normal``."""
    def checks(mean: Any, sd: Any) -> tuple[float, float]:
        return real(mean, "normal: loc"), real(sd, "normal: scale", low=0)

    return _draw("normal", "normal", ("loc", "scale"), (loc, scale), checks, shape, dtype, ctx,
                 out, kwargs)


def randn(*shape: Any, **kwargs: Any) -> NDArray:
    """Normal samples of shape ``shape`` (positional ints), as ``mx.nd.random.randn``; ``loc``,
    ``scale``, ``dtype``, ``ctx`` and ``out`` are keyword arguments."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    loc, scale = kwargs.pop("loc", 0), kwargs.pop("scale", 1)
    dtype, ctx, out = kwargs.pop("dtype", None), kwargs.pop("ctx", None), kwargs.pop("out", None)
    return normal(loc, scale, tuple(shape), dtype, ctx, out, **kwargs)


def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None,
                ctx: Context | None = None, out: NDArray | None = None,
                **kwargs: Any) -> NDArray:
    """Samples from the exponential distribution of mean ``scale`` (``> 0``), as
    ``mx.nd.random.exponential``."""
    def checks(mean: Any) -> tuple[float]:
        return (real(mean, "exponential: scale", low=0, low_open=True),)

    return _draw("exponential", "exponential", ("scale",), (scale,), checks, shape, dtype, ctx,
                 out, kwargs)


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None,
          ctx: Context | None = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the gamma distribution of shape ``alpha`` and scale ``beta`` (both
    ``> 0``), as ``mx.nd.random.gamma``."""
    def checks(a: Any, b: Any) -> tuple[float, float]:
        return (real(a, "gamma: alpha", low=0, low_open=True),
                real(b, "gamma: beta", low=0, low_open=True))

    return _draw("gamma", "gamma", ("alpha", "beta"), (alpha, beta), checks, shape, dtype, ctx,
                 out, kwargs)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, ctx: Context | None = None,
            out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples from the Poisson distribution of rate ``lam`` (``>= 0``) as floats, as
    ``mx.nd.random.poisson``."""
    def checks(rate: Any) -> tuple[float]:
        return (real(rate, "poisson: lam", low=0),)

    return _draw("poisson", "poisson", ("lam",), (lam,), checks, shape, dtype, ctx, out, kwargs)


def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None,
                      ctx: Context | None = None, out: NDArray | None = None,
                      **kwargs: Any) -> NDArray:
    """Samples (as floats) from the negative binomial distribution: failures before ``k``
    (``> 0``) successes of probability ``p`` (in ``(0, 1]``), as
    ``mx.nd.random.negative_binomial``."""
    def checks(limit: Any, prob: Any) -> tuple[float, float]:
        return (real(limit, "negative_binomial: k", low=0, low_open=True),
                real(prob, "negative_binomial: p", low=0, low_open=True, high=1))

    return _draw("negative_binomial", "negative_binomial", ("k", "p"), (k, p), checks, shape,
                 dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = None,
                                  dtype: Any = None, ctx: Context | None = None,
                                  out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Samples (as floats) from the generalized negative binomial distribution of mean ``mu``
    (``>= 0``) and dispersion ``alpha`` (``>= 0``; 0 is Poisson), as
    ``mx.nd.random.generalized_negative_binomial``."""
    def checks(mean: Any, dispersion: Any) -> tuple[float, float]:
        return (real(mean, "generalized_negative_binomial: mu", low=0),
                real(dispersion, "generalized_negative_binomial: alpha", low=0))

    return _draw("generalized_negative_binomial", "generalized_negative_binomial",
                 ("mu", "alpha"), (mu, alpha), checks, shape, dtype, ctx, out, kwargs)


def randint(low: Any, high: Any, shape: Any = None, dtype: Any = None,
            ctx: Context | None = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Integers drawn uniformly from ``[low, high)`` (``low < high``), int32 (default) or
    int64, as ``mx.nd.random.randint``."""
    _no_extra("randint", kwargs)
    if isinstance(low, NDArray) or isinstance(high, NDArray):
        raise InvalidType("randint: low and high must be integers (MXNet has no randint of "
                          "NDArray parameters)")
    resolved = _dtype("randint", dtype, INT_DTYPES, out, "int32")
    info = np.iinfo(resolved)
    lo = integer(low, "randint: low", low=int(info.min))
    hi = integer(high, "randint: high", low=int(info.min))
    if hi > info.max:
        raise SparsegenError(f"randint: high must be at most {info.max} for {resolved.name}, "
                             f"got {hi}")
    if lo >= hi:
        raise InvalidValue(f"randint: low ({lo}) must be less than high ({hi})")
    dims = _shape("randint", shape, out, (1,))
    ctx = resolve_context(ctx if ctx is not None else getattr(out, "context", None))
    check_out("randint", out, dims, resolved, ctx)
    check_allocation(dims, resolved)
    result = ops.randint(lo, hi, dims, resolved, device_of(ctx), _stream(ctx))
    return deliver("_random_randint", result, "default", ctx, (), out)


def sample_unique_zipfian(range_max: int, shape: Any = None, ctx: Any = None,
                          **kwargs: Any) -> list[NDArray]:
    """MXNet's ``_sample_unique_zipfian``: for ``shape = (batch, num_sampled)``, each row holds
    ``num_sampled`` distinct classes of ``[0, range_max)`` drawn from the log-uniform
    distribution until that many are distinct (int64), and the draws each row took (int64):
    the candidates of a sampled softmax without accidental repeats."""
    _no_extra("_sample_unique_zipfian", kwargs)
    range_max = integer(range_max, "_sample_unique_zipfian: range_max", low=1)
    dims = _shape("_sample_unique_zipfian", shape, None, ())
    if len(dims) != 2:
        raise InvalidValue(f"_sample_unique_zipfian: shape must be (batch_size, num_sampled), "
                           f"got {dims}")
    if dims[1] > range_max:
        raise InvalidValue(f"_sample_unique_zipfian: num_sampled {dims[1]} cannot exceed "
                           f"range_max {range_max} (the number of classes)")
    ctx = resolve_context(ctx)
    check_allocation((dims[0], range_max), np.dtype(np.uint8))
    samples, tries = ops.unique_zipfian(range_max, dims[0], dims[1], device_of(ctx),
                                        _stream(ctx))
    return [deliver("_sample_unique_zipfian", samples, "default", ctx, (), None),
            deliver("_sample_unique_zipfian", tries, "default", ctx, (), None)]


def multinomial(data: NDArray, shape: Any = None, get_prob: bool = False,
                out: NDArray | None = None, dtype: Any = "int32",
                **kwargs: Any) -> NDArray | list[NDArray]:
    """Outcome ids drawn from the distributions along the last axis of ``data`` (each row of
    probabilities should sum to 1), ``shape`` samples from each, as
    ``mx.nd.random.multinomial``; with ``get_prob`` also their log-probabilities."""
    _no_extra("multinomial", kwargs)
    if not isinstance(data, NDArray):
        raise InvalidType(f"multinomial: data must be an NDArray, got {type(data).__name__}")
    if data.dtype not in (np.float16, np.float32, np.float64) or data.ndim == 0:
        raise SparsegenError(f"multinomial: data must be a float array of at least one "
                             f"dimension, got {np.dtype(data.dtype).name} of shape {data.shape}")
    if data.shape[-1] == 0:
        raise InvalidValue(f"multinomial: data must have at least one outcome along its last "
                           f"axis, got shape {data.shape}")
    otype = _dtype("multinomial", dtype, MULTINOMIAL_DTYPES, None, "int32")
    exact = (int(np.iinfo(otype).max) if otype.kind in "iu"
             else 2 ** (np.finfo(otype).nmant + 1))
    if data.shape[-1] - 1 > exact:
        raise InvalidValue(f"multinomial: dtype {otype.name} cannot hold the outcome ids of "
                           f"{data.shape[-1]} categories exactly (at most {exact}); use a "
                           "wider dtype")
    dims = _shape("multinomial", shape, None, ())
    if not dims and data.ndim == 1:
        dims = (1,)
    result_shape = (*data.shape[:-1], *dims)
    outs = list(out) if isinstance(out, (list, tuple)) else [out, None]
    check_out("multinomial", outs[0], result_shape, otype, data.context)
    check_out("multinomial", outs[1], result_shape, data.dtype, data.context)
    check_allocation(result_shape, np.dtype(data.dtype))
    dense = densified(data)
    samples, logp = ops.multinomial(dense._storage, dims, otype, _stream(data.context))
    picked = deliver("_sample_multinomial", samples, "default", data.context, (), outs[0])
    if not get_prob:
        return picked
    prob = deliver("_sample_multinomial", logp, "default", data.context, (), outs[1])
    tape.record("_sample_multinomial", (dense,), [picked, prob],
                {"samples": picked, "log_prob": prob})  # the log-probabilities differentiate
    return [picked, prob]


def shuffle(data: NDArray, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """``data`` with its rows (along axis 0) in a random order, as ``mx.nd.random.shuffle``
    (dense result; sparse input falls back to dense with a warning, as MXNet)."""
    _no_extra("shuffle", kwargs)
    if not isinstance(data, NDArray):
        raise InvalidType(f"shuffle: data must be an NDArray, got {type(data).__name__}")
    if data.ndim == 0:
        raise SparsegenError("shuffle: data must have at least one dimension, got shape ()")
    return invoke("_shuffle", (data,), out=out, stream=_stream(data.context))


# -- MXNet's operator names in mx.nd: number parameters only, (..., shape, ctx, dtype, out) ----
def _numbers_only(op: str, values: tuple[Any, ...]) -> None:
    if any(isinstance(v, NDArray) for v in values):
        raise InvalidType(f"{op} takes numbers; for NDArray parameters use mx.nd.random.*")


def random_uniform(low: Any = 0, high: Any = 1, shape: Any = None, ctx: Context | None = None,
                   dtype: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """MXNet's operator ``mx.nd.random_uniform`` (also ``mx.nd.uniform``)."""
    _numbers_only("random_uniform", (low, high))
    return uniform(low, high, shape, dtype, ctx, out, **kwargs)


def random_normal(loc: Any = 0, scale: Any = 1, shape: Any = None, ctx: Context | None = None,
                  dtype: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """MXNet's operator ``mx.nd.random_normal`` (also ``mx.nd.normal``)."""
    _numbers_only("random_normal", (loc, scale))
    return normal(loc, scale, shape, dtype, ctx, out, **kwargs)


def random_exponential(lam: Any = 1, shape: Any = None, ctx: Context | None = None,
                       dtype: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """MXNet's operator ``mx.nd.random_exponential``: of rate ``lam`` (``> 0``)."""
    _numbers_only("random_exponential", (lam,))
    rate = real(lam, "random_exponential: lam", low=0, low_open=True)
    return exponential(1.0 / rate, shape, dtype, ctx, out, **kwargs)


def random_gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, ctx: Context | None = None,
                 dtype: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """MXNet's operator ``mx.nd.random_gamma``."""
    _numbers_only("random_gamma", (alpha, beta))
    return gamma(alpha, beta, shape, dtype, ctx, out, **kwargs)


def random_poisson(lam: Any = 1, shape: Any = None, ctx: Context | None = None,
                   dtype: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """MXNet's operator ``mx.nd.random_poisson``."""
    _numbers_only("random_poisson", (lam,))
    return poisson(lam, shape, dtype, ctx, out, **kwargs)


def random_randint(low: Any, high: Any, shape: Any = None, ctx: Context | None = None,
                   dtype: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """MXNet's operator ``mx.nd.random_randint``."""
    return randint(low, high, shape, dtype, ctx, out, **kwargs)


def _like(sampler: Any) -> Any:
    """MXNet's ``<sampler>_like(data, <parameters>)``: samples of ``sampler`` shaped, typed and
    placed as ``data`` (number parameters only)."""
    name = f"{sampler.__name__}_like"
    taken = [p for p in inspect.signature(sampler).parameters.values()
             if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in ("shape", "dtype", "ctx",
                                                                       "out")]

    def like(data: NDArray, *args: Any, out: NDArray | None = None, **kwargs: Any) -> NDArray:
        if not isinstance(data, NDArray):
            raise InvalidType(f"{name}: data must be an NDArray, got {type(data).__name__}")
        values = dict(zip((p.name for p in taken), args), **kwargs)
        _no_extra(name, {k: v for k, v in values.items() if k not in {p.name for p in taken}})
        if any(isinstance(v, NDArray) for v in values.values()):
            raise InvalidType(f"{name}: the parameters must be numbers (samples like data)")
        return sampler(**values, shape=data.shape, dtype=data.dtype, ctx=data.context, out=out)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"Samples of ``{sampler.__name__}`` of ``data``'s shape, dtype and context."
    like.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("data", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                           annotation="NDArray"),
         *(p.replace(annotation="Any") for p in taken),
         inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                           annotation="NDArray | None")],
        return_annotation="NDArray")
    return like


def _exponential_of_rate(lam: Any = 1, shape: Any = None, dtype: Any = None,
                         ctx: Context | None = None, out: NDArray | None = None) -> NDArray:
    """``exponential`` of rate ``lam`` (``> 0``): MXNet's ``exponential_like`` takes the rate
    where ``exponential`` takes the scale."""
    rate = real(lam, "exponential_like: lam", low=0, low_open=True)
    return exponential(1 / rate, shape=shape, dtype=dtype, ctx=ctx, out=out)


_exponential_of_rate.__name__ = "exponential"
LIKE = {f"{f.__name__}_like": _like(f) for f in (
    uniform, normal, gamma, _exponential_of_rate, poisson, negative_binomial,
    generalized_negative_binomial)}
"""MXNet's ``*_like`` samplers (``mx.nd.random.uniform_like``, ...)."""
globals().update(LIKE)

__all__ = ["exponential", "gamma", "generalized_negative_binomial", "multinomial",
           "negative_binomial", "normal", "poisson", "randint", "randn", "shuffle", "uniform",
           *LIKE]
