"""``gluon.contrib.data``: MXNet 1.9.1's contributed data tools that need no download
(``IntervalSampler``; the WikiText datasets of ``contrib.data.text`` download their corpus and
are not provided, docs/gluon.md)."""

from . import sampler
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "sampler"]
