"""``gluon.nn``'s activation layers: ``Activation`` (by name), ``LeakyReLU``, ``PReLU`` (learned
slopes), ``ELU``, ``SELU``, ``GELU`` and ``Swish``, as MXNet 1.9.1's."""

from __future__ import annotations

from typing import Any

from ...errors import InvalidArgument
from ...initializer import Constant
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


class LeakyReLU(HybridBlock):
    """``x`` where ``x > 0``, else ``alpha · x`` (``alpha >= 0``)."""

    def __init__(self, alpha: float, **kwargs: Any) -> None:
        if not alpha >= 0:
            raise InvalidArgument(f"LeakyReLU: the slope alpha must be no less than 0, got "
                                  f"{alpha!r}")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """The leaky rectifier of ``x``."""
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self) -> str:
        return f"LeakyReLU({self._alpha})"


class PReLU(HybridBlock):
    """A leaky rectifier whose slopes ``alpha`` (one per input channel, or one shared:
    ``in_channels=1``) are learned, initialized by ``alpha_initializer`` (0.25)."""

    def __init__(self, alpha_initializer: Any = None, in_channels: int = 1,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get(
                "alpha", shape=(in_channels,),
                init=Constant(0.25) if alpha_initializer is None else alpha_initializer)

    def hybrid_forward(self, F: Any, x: Any, alpha: Any) -> Any:  # noqa: N803
        """The rectifier of ``x`` with the learned slopes (axis 1 is the channel axis)."""
        return F.LeakyReLU(x, gamma=alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    """``x`` where ``x > 0``, else ``alpha · (eˣ - 1)``."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """The exponential linear unit of ``x``."""
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """The scaled exponential linear unit (λ and α of Klambauer et al.)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """SELU of ``x``."""
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    """The Gaussian error linear unit, ``x / 2 · (1 + erf(x / √2))``."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """GELU of ``x``."""
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    """``x · sigmoid(beta · x)``."""

    def __init__(self, beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """Swish of ``x``."""
        return x * F.sigmoid(self._beta * x, name="fwd")
