"""``mx.init`` (also ``mx.initializer``): weight initializers, as MXNet 1.9.1's
``mxnet.initializer``.

An initializer is called as ``init(InitDesc(name), arr)`` and fills ``arr`` in place, choosing by
the name's ending (``weight``, ``bias``, ``gamma``, ``beta``, ...). Random values come from the
generated samplers of ``mx.nd.random`` (``out=arr``), on the array's context; ``Orthogonal``
draws its random matrix there and takes its SVD with numpy on the host (as MXNet).
A row_sparse array ends up with every row stored, as MXNet's.
"""

from __future__ import annotations

import json
import logging
import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import InvalidType, InvalidValue, NotSupported
from .factory import Factory
from .ndarray import NDArray
from .ndarray import load as _load
from .ndarray import random as _random


class InitDesc(str):
    """The name of an array to initialize, with its attributes (``attrs['__init__']`` names an
    initializer for it) and the global initializer to fall back to."""

    attrs: dict[str, Any]
    global_init: Any

    def __new__(cls, name: str, attrs: dict[str, Any] | None = None,
                global_init: Any = None) -> InitDesc:
        desc = super().__new__(cls, name)
        desc.attrs = attrs or {}
        desc.global_init = global_init
        return desc


def _fill(arr: NDArray, value: Any) -> None:
    """``arr[:] = value``; a row_sparse ``arr`` stores every row, zero too (MXNet's scalar
    fill does)."""
    if arr.stype == "row_sparse" and np.isscalar(value) and value == 0:
        arr[:] = 1
        arr.data[:] = value
    else:
        arr[:] = value


class Initializer:
    """The base class of initializers, as ``mx.init.Initializer``: subclasses define
    ``_init_weight`` (and may override ``_init_bias``, ``_init_gamma``, ...)."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable[[NDArray], str] | None = None

    def set_verbosity(self, verbose: bool = False,
                      print_func: Callable[[NDArray], str] | None = None) -> Initializer:
        """Log (``logging.info``) each initialized array with ``print_func(arr)`` (default: its
        norm over the square root of its size)."""
        self._verbose = verbose
        self._print_func = print_func or (
            lambda x: str((x.norm() / math.sqrt(x.size)).asscalar()))
        return self

    def _verbose_print(self, desc: str, pattern: str, arr: NDArray) -> None:
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, pattern, self._print_func(arr))

    def dumps(self) -> str:
        """The initializer as JSON, ``'["name", {kwargs}]'`` (``mx.init.create`` reads it)."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc: Any, arr: NDArray) -> None:
        """Initialize ``arr`` as ``desc`` (an ``InitDesc``; a plain name takes MXNet's legacy
        rules, with a DeprecationWarning)."""
        if not isinstance(arr, NDArray):
            raise InvalidType(f"arr must be NDArray, got {type(arr).__name__}")
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        pattern = desc.attrs.get("__init__", "")
        if pattern:
            create(pattern)._init_weight(desc, arr)
            self._verbose_print(desc, pattern, arr)
            return
        for ending, method in self._patterns():
            if desc.endswith(ending):
                method(desc, arr)
                self._verbose_print(desc, ending, arr)
                return
        self._init_default(desc, arr)

    def _patterns(self) -> tuple[tuple[str, Callable[[str, NDArray], None]], ...]:
        """The name endings ``__call__`` tries, in MXNet's order, and their methods."""
        return (("weight", self._init_weight), ("bias", self._init_bias),
                ("gamma", self._init_gamma), ("beta", self._init_beta),
                ("min", self._init_zero), ("max", self._init_one),
                ("weight_quantize", self._init_quantized_weight),
                ("bias_quantize", self._init_quantized_bias))

    def _legacy_init(self, name: Any, arr: NDArray) -> None:
        """MXNet's rules for a plain string name (``upsampling*``, ``moving_mean``, ...)."""
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated. "
                      "please use init(mx.init.InitDesc(...), NDArray) instead.",
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise InvalidType(f"name must be string, got {type(name).__name__}")
        rules = (("upsampling", "", self._init_bilinear), ("stn_loc", "weight", self._init_zero),
                 ("stn_loc", "bias", self._init_loc_bias), ("", "bias", self._init_bias),
                 ("", "gamma", self._init_gamma), ("", "beta", self._init_beta),
                 ("", "weight", self._init_weight), ("", "moving_mean", self._init_zero),
                 ("", "moving_var", self._init_one), ("", "moving_inv_var", self._init_zero),
                 ("", "moving_avg", self._init_zero), ("", "min", self._init_zero),
                 ("", "max", self._init_one))
        for start, end, method in rules:
            if name.startswith(start) and name.endswith(end):
                method(name, arr)
                return
        self._init_default(name, arr)

    def _init_bilinear(self, _: str, arr: NDArray) -> None:
        arr[:] = _bilinear(arr.shape)

    def _init_loc_bias(self, _: str, arr: NDArray) -> None:
        if arr.shape[:1] != (6,):
            raise InvalidValue(f"stn_loc bias must have 6 elements, got shape {arr.shape}")
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _: str, arr: NDArray) -> None:
        _fill(arr, 0.0)

    def _init_one(self, _: str, arr: NDArray) -> None:
        _fill(arr, 1.0)

    _init_bias = _init_zero
    _init_beta = _init_zero
    _init_gamma = _init_one

    def _init_quantized_bias(self, _: str, arr: NDArray) -> None:
        _fill(arr, 0)

    def _init_quantized_weight(self, _: str, arr: NDArray) -> None:
        arr[:] = _random.randint(-127, 127, arr.shape, dtype="int32", ctx=arr.context)

    def _init_weight(self, name: str, arr: NDArray) -> None:
        """Initialize a weight (each initializer defines it)."""
        raise NotSupported(f"{type(self).__name__} does not define _init_weight (for {name})")

    def _init_default(self, name: str, _: NDArray) -> None:
        raise InvalidValue(
            f"Unknown initialization pattern for {name}. Default initialization is now limited "
            f'to "weight", "bias", "gamma" (1.0), and "beta" (0.0). Please use '
            f"mx.sym.Variable(init=mx.init.*) to set initialization pattern")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None  # type: ignore[assignment]  # equal by value, as MXNet's


_FACTORY = Factory(Initializer, "initializer")
alias = _FACTORY.alias
create = _FACTORY.create


def register(klass: type) -> type:
    """Register an ``Initializer`` subclass under its lower-cased class name, so that
    ``mx.init.create(name)`` (and a Parameter's ``init='name'``) finds it."""
    return _FACTORY.register(klass)


def _bilinear(shape: tuple[int, ...]) -> np.ndarray:
    """The bilinear upsampling kernel of a 4-D weight shape (MXNet's ``Bilinear``)."""
    if len(shape) != 4:
        raise InvalidValue(f"Bilinear needs a 4-D weight, got shape {shape}")
    f = math.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = np.arange(shape[3])
    y = np.arange(shape[2])
    plane = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c)).astype(np.float32)
    return np.broadcast_to(plane, shape)


class Load:
    """Initialize from saved arrays (a file of ``mx.nd.save`` or a dict of name -> NDArray;
    ``arg:`` / ``aux:`` prefixes dropped), else with ``default_init``."""

    def __init__(self, param: Any, default_init: Any = None, verbose: bool = False) -> None:
        if isinstance(param, str):
            param = _load(param)
        if not isinstance(param, dict):
            raise InvalidType(f"Load: param must be a file name or a dict of arrays, got "
                              f"{type(param).__name__}")
        self.param = {name[4:] if name.startswith(("arg:", "aux:")) else name: value
                      for name, value in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name: str, arr: NDArray) -> None:
        """Copy the saved array of ``name`` into ``arr``, or call ``default_init``."""
        if name in self.param:
            saved = self.param[name]
            if arr.shape != saved.shape:
                raise InvalidValue(f"Parameter {name} cannot be initialized from loading. Shape "
                                   f"mismatch, target {arr.shape} vs loaded {saved.shape}")
            arr[:] = saved
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise InvalidValue(f"Cannot Initialize {name}. Not found in loaded param and no "
                               f"default Initializer is provided.")
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)


class Mixed:
    """Initialize each array with the initializer of the first regular expression (``re.match``)
    that its name matches."""

    def __init__(self, patterns: list[str], initializers: list[Any]) -> None:
        if len(patterns) != len(initializers):
            raise InvalidValue(f"Mixed: {len(patterns)} patterns but {len(initializers)} "
                               f"initializers")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name: str, arr: NDArray) -> None:
        """Initialize ``arr`` with the initializer of the first pattern ``name`` matches."""
        for pattern, init in self.map:
            if pattern.match(name):
                init(name, arr)
                return
        raise InvalidValue(f"Parameter name {name} did not match any pattern. Consider adding "
                           f'a ".*" pattern at the end with a default Initializer.')


@register
@alias("zeros")
class Zero(Initializer):
    """Initialize weights to zero."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _fill(arr, 0)


@register
@alias("ones")
class One(Initializer):
    """Initialize weights to one."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _fill(arr, 1)


@register
class Constant(Initializer):
    """Initialize weights to ``value``: a number, or an array (NDArray or numpy) that
    broadcasts to the weight."""

    def __init__(self, value: Any) -> None:
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _fill(arr, self.value)

    def dumps(self) -> str:
        """The initializer as JSON; an array value is written as nested lists."""
        value = self._kwargs["value"]
        if not np.isscalar(value):
            self._kwargs["value"] = value.tolist() if isinstance(value, np.ndarray) \
                else value.asnumpy().tolist()
        return json.dumps([type(self).__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Initialize weights with values drawn uniformly from ``[-scale, scale)``."""

    def __init__(self, scale: float = 0.07) -> None:
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _random.uniform(-self.scale, self.scale, arr.shape, out=arr)


@register
class Normal(Initializer):
    """Initialize weights with values drawn from the normal distribution of mean 0 and standard
    deviation ``sigma``."""

    def __init__(self, sigma: float = 0.01) -> None:
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _random.normal(0, self.sigma, arr.shape, out=arr)


RAND_TYPES = ("uniform", "normal")
"""Orthogonal's random matrices."""


@register
class Orthogonal(Initializer):
    """Initialize weights as ``scale`` times an orthogonal matrix (Saxe et al., 2013): the
    orthonormal factor of the SVD of a random ``(shape[0], prod(shape[1:]))`` matrix."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform") -> None:
        if rand_type not in RAND_TYPES:
            raise InvalidValue(f"Orthogonal: rand_type must be one of {RAND_TYPES}, got "
                               f"{rand_type!r}")
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _: str, arr: NDArray) -> None:
        rows, cols = arr.shape[0], math.prod(arr.shape[1:])
        draw = _random.uniform(-1.0, 1.0, (rows, cols), ctx=arr.context) \
            if self.rand_type == "uniform" else _random.normal(0.0, 1.0, (rows, cols),
                                                               ctx=arr.context)
        matrix = draw.asnumpy()
        u, _, v = np.linalg.svd(matrix, full_matrices=False)
        arr[:] = self.scale * (u if u.shape == matrix.shape else v).reshape(arr.shape)


RND_TYPES = ("uniform", "gaussian")
"""Xavier's distributions."""
FACTOR_TYPES = ("avg", "in", "out")
"""Xavier's fan choices."""


@register
class Xavier(Initializer):
    """"Xavier" initialization (Glorot and Bengio, 2010): values of ``rnd_type`` (uniform on
    ``[-c, c]`` or gaussian of standard deviation ``c``) with ``c = sqrt(magnitude / n)``, ``n``
    the average of the fans (``factor_type='avg'``), the fan in or the fan out."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg",
                 magnitude: float = 3) -> None:
        if rnd_type not in RND_TYPES:
            raise InvalidValue(f"Xavier: rnd_type must be one of {RND_TYPES}, got {rnd_type!r}")
        if factor_type not in FACTOR_TYPES:
            raise InvalidValue(f"Xavier: factor_type must be one of {FACTOR_TYPES}, got "
                               f"{factor_type!r}")
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def scale(self, shape: tuple[int, ...], name: str = "") -> float:
        """The bound (uniform) or standard deviation (gaussian) for a weight of ``shape``."""
        if len(shape) < 2:
            raise InvalidValue(f"Xavier initializer cannot be applied to vector {name}. It "
                               f"requires at least 2D, got shape {shape}.")
        receptive = math.prod(shape[2:])
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
        return math.sqrt(self.magnitude / factor[self.factor_type])

    def _init_weight(self, name: str, arr: NDArray) -> None:
        scale = self.scale(arr.shape, name)
        if self.rnd_type == "uniform":
            _random.uniform(-scale, scale, arr.shape, out=arr)
        else:
            _random.normal(0, scale, arr.shape, out=arr)


@register
class MSRAPrelu(Xavier):
    """MSRA initialization for PReLU layers (He et al., 2015): gaussian Xavier of magnitude
    ``2 / (1 + slope**2)``."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25) -> None:
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Initialize a 4-D weight as a bilinear upsampling kernel."""

    def __init__(self) -> None:
        super().__init__()

    def _init_weight(self, _: str, arr: NDArray) -> None:
        arr[:] = _bilinear(arr.shape)


@register
class LSTMBias(Initializer):
    """Initialize an LSTM cell's bias to 0 but its forget gate's (the second quarter) to
    ``forget_bias``."""

    def __init__(self, forget_bias: float = 1.0) -> None:
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, _: str, arr: NDArray) -> None:
        arr[:] = 0.0
        hidden = arr.shape[0] // 4
        arr[hidden:2 * hidden] = self.forget_bias


__all__ = ["Bilinear", "Constant", "InitDesc", "Initializer", "LSTMBias", "Load", "MSRAPrelu",
           "Mixed", "Normal", "One", "Orthogonal", "Uniform", "Xavier", "Zero", "create",
           "register"]
