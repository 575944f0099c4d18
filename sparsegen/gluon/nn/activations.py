"""``gluon.nn.Activation``: an activation function as a layer."""

from __future__ import annotations

from typing import Any

from ..block import HybridBlock


class Activation(HybridBlock):
    """``mx.nd.Activation(x, act_type=activation)`` as a layer (named after ``activation``)."""

    def __init__(self, activation: str, **kwargs: Any) -> None:
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self) -> str:
        return self._act_type

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """The activation of ``x``."""
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self) -> str:
        return f"Activation({self._act_type})"
