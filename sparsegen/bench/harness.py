"""Interleaved timing: every implementation of a workload in one loop, medians and ratios."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Runner = Callable[[], Any]

LIMIT = "limit"
"""The name the limit kernel is timed under in a workload's rounds."""


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform`` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()



def cpu_description() -> str:
    """The CPU's model name, cores and L3 size as Linux reports them (the name alone where
    the L3 size is not reported)."""
    try:
        l3 = Path("/sys/devices/system/cpu/cpu0/cache/index3/size").read_text().strip()
    except OSError:
        return cpu_name()
    mb = int(l3[:-1]) // 1024 if l3.endswith("K") else l3
    return f"{cpu_name()}, {os.cpu_count()} cores, {mb} MB L3"

def fresh_run(python: str, code: str, env: dict[str, str]) -> list[float]:
    """The numbers a fresh ``python -c code`` prints on its last line of output."""
    out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{python} failed:\n{out.stderr[-3000:]}")
    return [float(v) for v in out.stdout.strip().splitlines()[-1].split()]

@dataclass
class Workload:
    """One benchmark: the bytes any implementation must move, and its implementations.

    ``impls`` maps an implementation name to a zero-argument function that prepares the inputs
    and returns the callable to time (so preparation is never timed). An implementation whose
    library is missing is simply absent. ``check(expected, got)`` compares each result with the
    ``oracle`` implementation's (numpy, else scipy, else the first), before anything is timed: a wrong result
    raises, naming the implementation.
    """

    id: str
    title: str
    bytes_moved: int
    impls: dict[str, Callable[[], Runner]]
    check: Callable[[Any, Any], None] | None = None
    notes: list[str] = field(default_factory=list)
    repeats: int = 15  # interleaved rounds; microsecond workloads need many more
    oracle: str = ""  # the implementation results are checked against; "": numpy, else scipy
    limit: dict[str, Any] = field(default_factory=dict)  # its limit: "pattern", "bytes"
    limit_impl: Callable[[], Runner] | None = None  # the limit's kernel, timed in the same rounds


@dataclass
class Result:
    """Median seconds per implementation of one workload, with derived bandwidth and ratios."""

    workload: Workload
    seconds: dict[str, list[float]]
    limit_seconds: list[float] = field(default_factory=list)

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
            "limit": self.limit(),
        }

    def limit(self) -> dict[str, Any]:
        """The workload's limit with its GB/s in this run (its bytes over its median time)."""
        if not self.limit_seconds:
            return dict(self.workload.limit)
        return {**self.workload.limit,
                "gbps": self.workload.limit["bytes"] / statistics.median(self.limit_seconds) / 1e9}


def run(workload: Workload, repeats: int = 15, warmup: int = 2, min_seconds: float = 0.0) -> Result:
    """Time every implementation ``repeats`` times, interleaved, after ``warmup`` calls each.

    Each round runs the implementations in a rotated order so that none always runs first.
    With ``min_seconds`` the rounds continue until that much wall time has passed. The
    workload's limit kernel, if it has one, runs in the same rounds (its result is not checked:
    it moves the same rows, not the same values).
    """
    runners = {name: prepare() for name, prepare in workload.impls.items()}
    if workload.limit_impl is not None:
        runners[LIMIT] = workload.limit_impl()
    results = {}
    for name, runner in runners.items():
        for _ in range(max(warmup, 1)):
            results[name] = runner()
    results.pop(LIMIT, None)
    if workload.check is not None:
        oracle = workload.oracle or next((n for n in ("numpy", "scipy") if n in results),
                                         next(iter(results)))
        for name, got in results.items():
            try:
                workload.check(results[oracle], got)
            except AssertionError as err:
                raise AssertionError(f"{workload.id}: {name} disagrees with {oracle}: "
                                     f"{err}") from None
    del results
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
    return Result(workload, times, times.pop(LIMIT, []))


def bar_chart(report: dict[str, Any], path: Path, reference: tuple[str, float], title: str,
              log_scale: bool = False) -> None:
    """Effective GB/s per workload and implementation as bars, with a reference bandwidth line
    (``(label, GB/s)``); workloads without figures are left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = [w for w in report["workloads"] if w.get("gbps")]
    impls = sorted({impl for w in workloads for impl in w["gbps"]},
                   key=lambda i: (i != "sparsegen", i))
    width = 0.8 / max(len(impls), 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(workloads)), 4))
    for n, impl in enumerate(impls):
        xs = [i + n * width for i, w in enumerate(workloads) if impl in w["gbps"]]
        ys = [w["gbps"][impl] for w in workloads if impl in w["gbps"]]
        ax.bar(xs, ys, width, label=impl)
    ax.axhline(reference[1], color="black", linestyle="--", linewidth=1, label=reference[0])
    ax.set_xticks([i + width * (len(impls) - 1) / 2 for i in range(len(workloads))])
    ax.set_xticklabels([w["id"] for w in workloads])
    if log_scale:
        ax.set_yscale("log")
    ax.set_ylabel(f"effective GB/s ({'log; ' if log_scale else ''}higher is better)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_results(report: dict[str, Any], out: Path, markdown: str,
                  plot: Callable[[dict[str, Any], Path], None]) -> list[Path]:
    """``results.json``, ``results.md`` (the given text) and ``results.png`` (drawn by ``plot``)
    under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json", out / "results.md", out / "results.png"]
    paths[0].write_text(json.dumps(report, indent=1))
    paths[1].write_text(markdown)
    plot(report, paths[2])
    return paths
