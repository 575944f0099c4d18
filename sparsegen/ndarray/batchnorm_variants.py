"""MXNet 1.9.1's variants of ``BatchNorm``, composed of ``mx.nd.BatchNorm`` (so they share its
kernels, its gradient rule and its in-place moving statistics): ``BatchNorm_v1`` (the legacy
op: channels on axis 1, its second and third outputs the batch mean and biased variance),
``contrib.BatchNormWithReLU`` (``relu`` of the normalized data) and ``contrib.SyncBatchNorm``
(BatchNorm over axis 1 of the batch this process holds; see docs/gluon.md for devices and
workers)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidType
from ..params import integer
from .batchnorm import BatchNorm
from .elemwise import relu, square
from .ndarray import NDArray


def BatchNorm_v1(data: NDArray, gamma: NDArray, beta: NDArray,  # noqa: N802
                 moving_mean: NDArray, moving_var: NDArray, eps: float = 1e-3,
                 momentum: float = 0.9, fix_gamma: bool = True, use_global_stats: bool = False,
                 output_mean_var: bool = False) -> Any:
    """``mx.nd.BatchNorm`` over axis 1, as MXNet's legacy ``BatchNorm_v1``: with
    ``output_mean_var`` a list [output, mean, variance] (the biased variance
    ``1 / invstd ** 2 - eps``, where ``BatchNorm`` gives the inverse standard deviation)."""
    outputs = BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                        fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                        output_mean_var=True, axis=1)
    if not output_mean_var:
        return outputs[0]
    out, mean, invstd = outputs
    return [out, mean, 1.0 / square(invstd) - float(eps)]


def BatchNormWithReLU(data: NDArray, gamma: NDArray, beta: NDArray,  # noqa: N802
                      moving_mean: NDArray, moving_var: NDArray, eps: float = 1e-3,
                      momentum: float = 0.9, fix_gamma: bool = True,
                      use_global_stats: bool = False, output_mean_var: bool = False,
                      axis: int = 1, cudnn_off: bool = False,
                      min_calib_range: float | None = None,
                      max_calib_range: float | None = None) -> Any:
    """``relu(mx.nd.BatchNorm(...))``, as ``mxnet.nd.contrib.BatchNormWithReLU`` (which MXNet
    runs on MKL-DNN only): the same arguments, outputs and moving statistics as BatchNorm,
    the first output rectified."""
    outputs = BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                        fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                        output_mean_var=True, axis=axis, cudnn_off=cudnn_off,
                        min_calib_range=min_calib_range, max_calib_range=max_calib_range)
    rectified = relu(outputs[0])
    return [rectified, *outputs[1:]] if output_mean_var else rectified


def SyncBatchNorm(data: NDArray, gamma: NDArray, beta: NDArray,  # noqa: N802
                  moving_mean: NDArray, moving_var: NDArray, eps: float = 1e-3,
                  momentum: float = 0.9, fix_gamma: bool = True, use_global_stats: bool = False,
                  output_mean_var: bool = False, ndev: int = 1, key: str | None = None) -> Any:
    """``mx.nd.BatchNorm`` over axis 1, as ``mxnet.nd.contrib.SyncBatchNorm``: the batch
    statistics are those of ``data`` (one process's batch); ``ndev`` and ``key`` are checked
    and kept for MXNet's signature (see docs/gluon.md)."""
    integer(ndev, "SyncBatchNorm: ndev", low=1)
    if key is not None and not isinstance(key, str):
        raise InvalidType(f"SyncBatchNorm: key must be a string, got {type(key).__name__}")
    return BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                     fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                     output_mean_var=output_mean_var, axis=1)


__all__ = ["BatchNormWithReLU", "BatchNorm_v1", "SyncBatchNorm"]
