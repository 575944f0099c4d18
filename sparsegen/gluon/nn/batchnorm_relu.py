"""``gluon.nn.BatchNormReLU``: a BatchNorm layer whose output is rectified, on
``mx.nd.contrib.BatchNormWithReLU`` (MXNet 1.9.1's fused op)."""

from __future__ import annotations

from typing import Any

from .basic_layers import BatchNorm


class BatchNormReLU(BatchNorm):
    """``relu`` of batch normalization, as ``mxnet.gluon.nn.BatchNormReLU``: BatchNorm's
    arguments, parameters and moving statistics, the op ``contrib.BatchNormWithReLU``."""

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any,  # noqa: N803
                       running_mean: Any, running_var: Any) -> Any:
        """``contrib.BatchNormWithReLU(x, gamma, beta, running_mean, running_var)``."""
        return F.contrib.BatchNormWithReLU(x, gamma, beta, running_mean, running_var,
                                           name="fwd", **self._kwargs)
