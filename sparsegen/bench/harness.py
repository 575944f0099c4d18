"""Interleaved timing: every implementation of a workload in one loop, medians and ratios."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Runner = Callable[[], Any]


@dataclass
class Workload:
    """One benchmark: the bytes any implementation must move, and its implementations.

    ``impls`` maps an implementation name to a zero-argument function that prepares the inputs
    and returns the callable to time (so preparation is never timed). An implementation whose
    library is missing is simply absent. ``check`` compares each result with the first's.
    """

    id: str
    title: str
    bytes_moved: int
    impls: dict[str, Callable[[], Runner]]
    check: Callable[[Any, Any], None] | None = None
    notes: list[str] = field(default_factory=list)
    repeats: int = 15  # interleaved rounds; microsecond workloads need many more


@dataclass
class Result:
    """Median seconds per implementation of one workload, with derived bandwidth and ratios."""

    workload: Workload
    seconds: dict[str, list[float]]

    def median(self, impl: str) -> float:
        """The median time of ``impl`` in seconds."""
        return statistics.median(self.seconds[impl])

    def gbps(self, impl: str) -> float:
        """Effective bandwidth of ``impl``: bytes that must move / median time, in GB/s."""
        return self.workload.bytes_moved / self.median(impl) / 1e9

    def as_dict(self) -> dict[str, Any]:
        """JSON-able summary."""
        return {
            "id": self.workload.id,
            "title": self.workload.title,
            "bytes": self.workload.bytes_moved,
            "median_ms": {k: self.median(k) * 1e3 for k in self.seconds},
            "gbps": {k: self.gbps(k) for k in self.seconds},
            "runs": {k: len(v) for k, v in self.seconds.items()},
            "notes": self.workload.notes,
        }


def run(workload: Workload, repeats: int = 15, warmup: int = 2, min_seconds: float = 0.0) -> Result:
    """Time every implementation ``repeats`` times, interleaved, after ``warmup`` calls each.

    Each round runs the implementations in a rotated order so that none always runs first.
    With ``min_seconds`` the rounds continue until that much wall time has passed.
    """
    runners = {name: prepare() for name, prepare in workload.impls.items()}
    first_result = None
    for name, runner in runners.items():
        out = None
        for _ in range(warmup):
            out = runner()
        if workload.check is not None:
            if first_result is None:
                first_result = out
            else:
                workload.check(first_result, out)
    times: dict[str, list[float]] = {name: [] for name in runners}
    names = list(runners)
    start = time.perf_counter()
    rnd = 0
    while rnd < repeats or time.perf_counter() - start < min_seconds:
        order = names[rnd % len(names):] + names[: rnd % len(names)]
        for name in order:
            t0 = time.perf_counter()
            runners[name]()
            times[name].append(time.perf_counter() - t0)
        rnd += 1
    return Result(workload, times)
