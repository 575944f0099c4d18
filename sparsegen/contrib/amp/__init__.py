"""``mx.contrib.amp``: importable, so scripts that import it and train in float32 run; its
functions (MXNet's automatic mixed precision) are out of scope and raise naming themselves."""

from . import amp

__all__ = ["amp"]


def __getattr__(name: str) -> object:
    """Every AMP function of MXNet (``init``, ``scale_loss``, ...) refused by name."""
    return getattr(amp, name)
