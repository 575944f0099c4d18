"""``gluon.contrib.data.sampler``: ``IntervalSampler``, the ids of ``[0, length)`` at a fixed
interval."""

from __future__ import annotations

from typing import Iterator

from ....errors import InvalidValue
from ....params import flag, integer
from ...data.sampler import Sampler


class IntervalSampler(Sampler):
    """The ids ``0, interval, 2 * interval, ...`` below ``length``, then (``rollover``) the same
    from 1, 2, ... ``interval - 1`` until every id is visited, as
    ``mxnet.gluon.contrib.data.IntervalSampler``; ``interval`` may not exceed ``length``."""

    def __init__(self, length: int, interval: int, rollover: bool = True) -> None:
        self._length = integer(length, "IntervalSampler: length")
        self._interval = integer(interval, "IntervalSampler: interval", low=1)
        if self._interval > self._length:
            raise InvalidValue(f"IntervalSampler: interval {interval} must be smaller than or "
                               f"equal to length {length}")
        self._rollover = flag(rollover, "IntervalSampler: rollover")

    def __iter__(self) -> Iterator[int]:
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self) -> int:
        """The number of ids the sampler gives (``length`` with ``rollover``)."""
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))


__all__ = ["IntervalSampler"]
