"""``mx.nd.SVMOutput`` of MXNet 1.9.1: the data itself forward, recorded as one node whose
gradient rule (``autograd/gradients/svm.py``) is MXNet's L2-SVM (or, with ``use_linear``,
L1-SVM) loss gradient of the scores against the labels (the head gradient is ignored)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..params import flag, real
from .indexing import array_arg
from .ndarray import NDArray
from .output import dense_inputs, recorded


def SVMOutput(data: NDArray, label: NDArray, margin: Any = 1.0,  # noqa: N802
              regularization_coefficient: Any = 1.0, use_linear: Any = False) -> NDArray:
    """``data`` (scores, (batch, classes...)), as ``mxnet.nd.SVMOutput``; its gradient is
    ``-2 c (margin - x)⁺`` at each sample's label ``k`` and ``2 c (margin + x)⁺`` elsewhere
    (``use_linear``: ``-c [margin > x]`` and ``c [margin > -x]``), ``c`` the
    ``regularization_coefficient``."""
    op = "SVMOutput"
    data, label = array_arg(data, "data", op), array_arg(label, "label", op)
    if data.ndim < 2 or label.size != data.shape[0]:
        raise InvalidValue(f"{op}: data must be (batch, classes...) and label hold one class "
                           f"per sample, got {data.shape} and {label.shape}")
    params = {"margin": real(margin, f"{op}: margin"),
              "regularization_coefficient": real(regularization_coefficient,
                                                 f"{op}: regularization_coefficient"),
              "use_linear": flag(use_linear, f"{op}: use_linear")}
    dense = dense_inputs(op, data)[0]
    return recorded(op, (data, label), lambda: dense.copy(), params)


__all__ = ["SVMOutput"]
