"""The basic layers of ``gluon.nn`` on ``mx.nd`` ops: Dense (``FullyConnected``, csr input
too), Embedding (``sparse_grad``: a row_sparse weight gradient), Dropout, BatchNorm (running
statistics as parameters), Flatten, Lambda, HybridLambda, and the containers Sequential /
HybridSequential."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ... import ndarray
from ...errors import InvalidType, InvalidValue
from ..block import Block, HybridBlock, _indent
from .activations import Activation


class _Chain:
    """What Sequential and HybridSequential share: ``add``, indexing, ``len`` and the
    forward pass through the children in order."""

    _children: dict[str, Block]

    def add(self, *blocks: Block) -> None:
        """Append ``blocks``."""
        for block in blocks:
            self.register_child(block)  # type: ignore[attr-defined]

    def forward(self, x: Any, *args: Any) -> Any:
        """``x`` through every child in order."""
        for block in self._children.values():
            x = block(x, *args)
            args = ()
        return x

    def __repr__(self) -> str:
        body = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                         for key, block in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    def __getitem__(self, key: Any) -> Any:
        layers = list(self._children.values())[key]
        if not isinstance(layers, list):
            return layers
        net = type(self)(prefix=self.prefix)  # type: ignore[attr-defined]
        with net.name_scope():
            net.add(*layers)
        return net

    def __len__(self) -> int:
        return len(self._children)


class Sequential(_Chain, Block):
    """Blocks run one after the other, as ``mxnet.gluon.nn.Sequential``."""

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Hybridize every child; warns, as MXNet's, when every child is a HybridBlock (a
        HybridSequential would run them as one graph)."""
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"Sequential {self.prefix!r}: every child is a HybridBlock; a "
                          "HybridSequential runs them as one graph", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Chain, HybridBlock):
    """Hybrid blocks run one after the other, as ``mxnet.gluon.nn.HybridSequential``."""

    def add(self, *blocks: Block) -> None:
        """Append ``blocks`` (HybridBlocks)."""
        for block in blocks:
            if not isinstance(block, HybridBlock):
                raise InvalidType(f"HybridSequential takes HybridBlocks, got "
                                  f"{type(block).__name__}")
        super().add(*blocks)


class Dense(HybridBlock):
    """A fully connected layer, ``activation(dot(x, weightᵀ) + bias)``, as
    ``mxnet.gluon.nn.Dense``; ``in_units=0`` is found at the first forward pass; csr ``x``
    runs FullyConnected's csr kernel."""

    def __init__(self, units: int, activation: str | None = None, use_bias: bool = True,
                 flatten: bool = True, dtype: Any = "float32", weight_initializer: Any = None,
                 bias_initializer: Any = "zeros", in_units: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._flatten, self._units, self._in_units = flatten, units, in_units
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            self.bias = (self.params.get("bias", shape=(units,), init=bias_initializer,
                                         dtype=dtype, allow_deferred_init=True)
                         if use_bias else None)
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``in_units`` from ``x`` (everything but the first axis, or the last axis)."""
        units = math.prod(x.shape[1:]) if self._flatten else x.shape[-1]
        self.weight.shape = (self._units, units)

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:  # noqa: N803
        """``FullyConnected(x, weight, bias)`` and the activation."""
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")
        return self.act(out) if self.act is not None else out

    def __repr__(self) -> str:
        shape = self.weight.shape
        return (f"Dense({shape[1] if shape[1] else None} -> {shape[0]}, "
                f"{self.act if self.act is not None else 'linear'})")


class Embedding(HybridBlock):
    """Rows of a weight (``input_dim`` x ``output_dim``) by index, as
    ``mxnet.gluon.nn.Embedding``; ``sparse_grad`` gives the weight a row_sparse gradient."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32",
                 weight_initializer: Any = None, sparse_grad: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype="row_sparse" if sparse_grad else "default")

    def hybrid_forward(self, F: Any, x: Any, weight: Any) -> Any:  # noqa: N803
        """``Embedding(x, weight)``."""
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"Embedding({k['input_dim']} -> {k['output_dim']}, {np.dtype(k['dtype']).name})"


class Dropout(HybridBlock):
    """``mx.nd.Dropout(x, p=rate, axes=axes)`` while training, ``x`` otherwise."""

    def __init__(self, rate: float, axes: Any = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rate, self._axes = rate, axes

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """Dropout of ``x``."""
        return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd") if self._rate > 0 else x

    def __repr__(self) -> str:
        return f"Dropout(p = {self._rate}, axes={self._axes})"


class BatchNorm(HybridBlock):
    """Batch normalization over axis ``axis``, as ``mxnet.gluon.nn.BatchNorm``: ``gamma``
    (``scale``) and ``beta`` (``center``) are trained, ``running_mean`` and ``running_var``
    are parameters with ``grad_req='null'`` that ``mx.nd.BatchNorm``'s backward pass moves
    by ``momentum`` after each training forward; ``in_channels=0`` is found at the first
    forward pass."""

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5,
                 center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self._axis = axis
        with self.name_scope():
            made = {}
            for name, init, trained in (
                    ("gamma", gamma_initializer, scale), ("beta", beta_initializer, center),
                    ("running_mean", running_mean_initializer, False),
                    ("running_var", running_variance_initializer, False)):
                made[name] = self.params.get(
                    name, grad_req="write" if trained else "null", shape=(in_channels,),
                    init=init, allow_deferred_init=True,
                    differentiable=name in ("gamma", "beta") and trained)
            self.gamma, self.beta = made["gamma"], made["beta"]
            self.running_mean, self.running_var = made["running_mean"], made["running_var"]

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``in_channels`` from ``x``'s axis ``axis``."""
        channels = x.shape[self._axis]
        for param in (self.gamma, self.beta, self.running_mean, self.running_var):
            param.shape = (channels,)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any,  # noqa: N803
                       running_mean: Any, running_var: Any) -> Any:
        """``BatchNorm(x, gamma, beta, running_mean, running_var)``."""
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        channels = self.gamma.shape[0]
        return (f"{type(self).__name__}(axis={self._axis}, eps={self._kwargs['eps']}, "
                f"momentum={self._kwargs['momentum']}, fix_gamma={self._kwargs['fix_gamma']}, "
                f"use_global_stats={self._kwargs['use_global_stats']}, "
                f"in_channels={channels if channels else None})")


class _Normalization(HybridBlock):
    """What LayerNorm, InstanceNorm and GroupNorm share: a ``gamma`` (``scale``) and a ``beta``
    (``center``) of ``size`` entries, trained unless switched off, found at the first forward
    pass when ``size`` is 0."""

    def __init__(self, size: int, epsilon: float, center: bool, scale: bool,
                 beta_initializer: Any, gamma_initializer: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._epsilon = epsilon
        with self.name_scope():
            self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                         shape=(size,), init=gamma_initializer,
                                         allow_deferred_init=True, differentiable=scale)
            self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                        shape=(size,), init=beta_initializer,
                                        allow_deferred_init=True, differentiable=center)

    _axis: int

    def _size(self, x: Any) -> int:
        """The size of ``gamma`` and ``beta`` for input ``x``: its normalized axis'."""
        return x.shape[self._axis]

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``gamma`` and ``beta``'s size from ``x``."""
        for param in (self.gamma, self.beta):
            param.shape = (self._size(x),)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(eps={self._epsilon}, in_channels={self.gamma.shape[0]})"


class LayerNorm(_Normalization):
    """Each position normalized over axis ``axis``, as ``mxnet.gluon.nn.LayerNorm``."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(in_channels, epsilon, center, scale, beta_initializer,
                         gamma_initializer, **kwargs)
        self._axis = axis

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:  # noqa: N803
        """``LayerNorm(x, gamma, beta)``."""
        return F.LayerNorm(x, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class InstanceNorm(_Normalization):
    """Each sample's channels (axis ``axis``) normalized over the other axes, as
    ``mxnet.gluon.nn.InstanceNorm`` (``scale`` off by default)."""

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(in_channels, epsilon, center, scale, beta_initializer,
                         gamma_initializer, **kwargs)
        self._axis = axis

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:  # noqa: N803
        """``InstanceNorm`` of ``x`` with its channels moved to axis 1 and back."""
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        moved = F.swapaxes(x, dim1=1, dim2=self._axis)
        return F.swapaxes(F.InstanceNorm(moved, gamma, beta, name="fwd", eps=self._epsilon),
                          dim1=1, dim2=self._axis)


class GroupNorm(_Normalization):
    """Each sample's channels in ``num_groups`` groups, each normalized over its channels and
    the axes after them, one ``gamma`` and ``beta`` per group, as ``mxnet.gluon.nn.GroupNorm``
    of MXNet 1.9.1."""

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", **kwargs: Any) -> None:
        super().__init__(num_groups, epsilon, center, scale, beta_initializer,
                         gamma_initializer, **kwargs)
        self._num_groups = num_groups

    def _size(self, x: Any) -> int:
        return self._num_groups

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any) -> Any:  # noqa: N803
        """``GroupNorm(x, gamma, beta, num_groups)``."""
        return F.GroupNorm(x, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)


class Flatten(HybridBlock):
    """``x`` reshaped to (batch, everything else)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """``Flatten(x)``."""
        return F.Flatten(x)

    def __repr__(self) -> str:
        return "Flatten"


def _function(function: Any, owner: str) -> Any:
    """``function``, or the ``mx.nd`` function it names."""
    if isinstance(function, str):
        if not hasattr(ndarray, function):
            raise InvalidValue(f"{owner}: function name {function} is not found in ndarray")
        return function
    if not callable(function):
        raise InvalidType(f"{owner}: unrecognized function {function!r} (a callable or the "
                          "name of an mx.nd function)")
    return function


class Lambda(Block):
    """A function (or the name of an ``mx.nd`` function) as a block."""

    def __init__(self, function: Any, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        chosen = _function(function, "Lambda")
        self._func = getattr(ndarray, chosen) if isinstance(chosen, str) else chosen
        self._func_name = getattr(self._func, "__name__", repr(self._func))

    def forward(self, *args: Any) -> Any:
        """``function(*args)``."""
        return self._func(*args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._func_name})"


class HybridLambda(HybridBlock):
    """A function ``f(F, x, *args)`` (or the name of an ``mx.nd`` function) as a hybrid
    block."""

    def __init__(self, function: Any, prefix: str | None = None) -> None:
        super().__init__(prefix=prefix)
        chosen = _function(function, "HybridLambda")
        self._func = ((lambda F, *args: getattr(F, chosen)(*args))  # noqa: N803
                      if isinstance(chosen, str) else chosen)
        self._func_name = chosen if isinstance(chosen, str) else chosen.__name__

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:  # noqa: N803
        """``function(F, x, *args)``."""
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._func_name})"
