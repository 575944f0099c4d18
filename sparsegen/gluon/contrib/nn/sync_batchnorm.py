"""``gluon.contrib.nn.SyncBatchNorm``: BatchNorm whose statistics MXNet shares across the
devices of one machine; here over the batch a process holds (docs/gluon.md)."""

from __future__ import annotations

from typing import Any

from ....context import num_gpus
from ....params import integer
from ...nn import BatchNorm


class SyncBatchNorm(BatchNorm):
    """Batch normalization over axis 1 on ``mx.nd.contrib.SyncBatchNorm``, as
    ``mxnet.gluon.contrib.nn.SyncBatchNorm``: ``num_devices`` (by default the number of GPUs,
    at least 1) is the op's ``ndev`` and the layer's prefix its ``key``; the statistics are
    those of the batch one forward pass is given (see docs/gluon.md)."""

    def __init__(self, in_channels: int = 0, num_devices: int | None = None,
                 momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", **kwargs: Any) -> None:
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)
        ndev = max(num_gpus(), 1) if num_devices is None else integer(
            num_devices, "SyncBatchNorm: num_devices", low=1)
        del self._kwargs["axis"]  # the op's channels are axis 1
        self._kwargs.update(ndev=ndev, key=self.prefix)

    def hybrid_forward(self, F: Any, x: Any, gamma: Any, beta: Any,  # noqa: N803
                       running_mean: Any, running_var: Any) -> Any:
        """``contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var)``."""
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                                       **self._kwargs)

    def __repr__(self) -> str:
        channels = self.gamma.shape[0]
        k = self._kwargs
        return (f"SyncBatchNorm(eps={k['eps']}, momentum={k['momentum']}, "
                f"fix_gamma={k['fix_gamma']}, use_global_stats={k['use_global_stats']}, "
                f"ndev={k['ndev']}, key={k['key']!r}, "
                f"in_channels={channels if channels else None})")
