"""MXNet's 2-bit gradient compression of kvstore pushes (``set_gradient_compression``): each
pushed float32 value plus its residual becomes a code (-1, 0 or 1 times ``threshold``), the
rest stays in the residual for the next push. The codes are computed by update rule
``quantize_2bit``'s kernel, travel and sum as int8 (a quarter of float32's bytes; int32 past
127 summands), and become ``threshold * sum`` where the store applies them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidValue, SparsegenError
from ..ndarray import NDArray, zeros
from ..ndarray.optim_run import run
from ..params import real


@dataclass(frozen=True)
class GradientCompression:
    """2-bit compression with ``threshold`` (> 0): a value's code is 1 from ``threshold`` up,
    -1 from ``-threshold`` down, 0 between."""

    threshold: float

    @classmethod
    def from_params(cls, params: Any) -> GradientCompression | None:
        """MXNet's ``compression_params``: ``{'type': '2bit', 'threshold': 0.5}`` (threshold
        default 0.5), or ``{'type': 'none'}`` (``None``: no compression)."""
        if not isinstance(params, dict) or "type" not in params:
            raise InvalidValue(f"compression_params must be a dict with a 'type' ('2bit' or "
                               f"'none'), got {params!r}")
        unknown = sorted(set(params) - {"type", "threshold"})
        if unknown:
            raise InvalidValue(f"compression_params: unknown keys {unknown} (2bit compression "
                               "takes 'type' and 'threshold')")
        if params["type"] == "none":
            return None
        if params["type"] != "2bit":
            raise InvalidValue(f"compression_params: type must be '2bit' or 'none', got "
                               f"{params['type']!r}")
        threshold = real(params.get("threshold", 0.5), "compression_params: threshold",
                         low=0.0, low_open=True)
        if not math.isfinite(threshold):
            raise InvalidValue(f"compression_params: threshold must be finite, got {threshold}")
        return cls(threshold)

    def check(self, key: Any, value: NDArray) -> None:
        """Refuse what MXNet's compression refuses: a push other than dense float32."""
        if value.stype != "default" or np.dtype(value.dtype) != np.float32:
            raise SparsegenError(f"kvstore.push: key {key!r}: gradient compression takes dense "
                                 f"float32 values, got a {value.stype} {np.dtype(value.dtype)} "
                                 "one")

    def residual(self, value: NDArray) -> NDArray:
        """A fresh (zero) residual for pushes like ``value``."""
        return zeros(value.shape, value.context, dtype="float32")

    def codes(self, value: NDArray, residual: NDArray, summands: int) -> NDArray:
        """The codes of ``value`` plus ``residual`` (``residual`` keeps what they leave), as
        int8 when the sum of ``summands`` of them fits (else int32)."""
        code = zeros(value.shape, value.context, dtype="float32")
        run("kvstore.push", "quantize_2bit", code, value, (residual,),
            {"threshold": self.threshold}, lambda w, s: False)
        return code.astype("int8" if summands <= 127 else "int32")

    def values(self, codes: NDArray) -> NDArray:
        """Summed codes back as float32 values: ``threshold * codes``."""
        return codes.astype("float32") * self.threshold
