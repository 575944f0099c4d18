"""The knob search: build each candidate config, time it on representative workloads, log it.

TVM's meta_schedule rejects these kernels (dynamic loops, in-place blocks), so the tuner is a
search of our own over each schedule's declared knobs. Candidates are timed with the TVM
runtime's ``time_evaluator`` on the target's device (the host CPU, or GPU 0 with the inputs in
its memory for ``cuda``), interleaved round by round, and every measurement is appended to a
JSON-lines log that the compiler reads to choose configs.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tvm
from tqdm import tqdm

from .. import registry
from ..cache import KernelKey, choose, default_cache, forget_choices, versions
from ..errors import SparsegenError
from ..schedules.space import Config
from ..target import Target, resolve
from . import records
from .workloads import MAKERS, TuningWorkload, workload


@dataclass(frozen=True)
class Outcome:
    """The result of tuning one (kernel, dtypes, bucket): default and best config and times."""

    kernel: str
    dtypes: tuple[str, ...]
    bucket: str
    default: Config
    default_s: float
    best: Config
    best_s: float

    @property
    def speedup(self) -> float:
        """Default time over best time."""
        return self.default_s / self.best_s


def _candidates(space: Any, trials: int, seed: int) -> list[Config]:
    everything = list(space.candidates())
    rest = everything[1:]
    random.Random(seed).shuffle(rest)
    return [everything[0], *rest[: max(trials, 1) - 1]]


def tuning_target(target: "Target | str | dict[str, Any] | None") -> Target:
    """The target to tune for; ``cuda`` means GPU 0's own ``sm_XY``, and needs a real GPU."""
    resolved = resolve(target)
    if resolved.kind != "cuda":
        return resolved
    from .. import cuda_runtime, device

    if cuda_runtime.device_count() == 0:
        raise SparsegenError(
            "tuning for cuda times kernels on an NVIDIA GPU and this machine has none the CUDA "
            "driver can see (`sparsegen build --target cuda` compiles CUDA kernels without one)"
        )
    return device.cuda_target(0) if target == "cuda" else resolved


def _device(target: Target) -> Any:
    """The TVM device a target's kernels are timed on: GPU 0 for ``cuda``, else the host CPU."""
    return tvm.cuda(0) if target.kind == "cuda" else tvm.cpu(0)


class _Timer:
    """Runs one workload's calls on a loaded kernel module with ``time_evaluator``."""

    def __init__(self, key: KernelKey, work: TuningWorkload) -> None:
        kernel = default_cache().get(key)
        definition = registry.kernel_def(key.kernel)
        module = tvm.runtime.load_module(str(kernel.path))
        self.device = _device(key.target)
        self.calls = [
            (module, definition.symbol(key.dtypes, fname),
             [tvm.runtime.tensor(a, self.device) if isinstance(a, np.ndarray) else a for a in args])
            for fname, args in work.calls
        ]

    def __call__(self, number: int) -> float:
        total = 0.0
        for module, symbol, args in self.calls:
            evaluator = module.time_evaluator(symbol, self.device, number=number, repeat=1)
            total += evaluator(*args).mean
        return total


def tune_one(kernel: str, dtypes: tuple[str, ...], target: Target, bucket: str, trials: int,
             log: Path, rounds: int = 7, seed: int = 0, bar: Any = None,
             ship: Path | None = None) -> Outcome:
    """Tune one (kernel, dtypes, bucket); appends a record per candidate to ``log``, and with
    ``ship`` also to ``ship/<target label>-<kernel>.jsonl`` (the shipped logs' naming)."""
    space = registry.kernel_def(kernel).space(target.kind)
    work = workload(kernel, dtypes, bucket, seed)
    elements = int(work.shape[0]) * int(work.shape[1])
    candidates = _candidates(space, trials, seed)
    timers: dict[KernelKey, _Timer] = {}
    first: dict[KernelKey, float] = {}  # each binary's first call: it loads, runs and warms up
    binaries: dict[Config, KernelKey] = {}
    for config in candidates:
        choice = choose(kernel, dtypes, target, dict(config), bucket)
        key = choice.serial_key if elements < choice.serial_below else choice.parallel_key
        if bar is not None:
            bar.update(1)
        if key not in timers:
            try:
                timers[key] = _Timer(key, work)
                first[key] = timers[key](1)
            except Exception as err:  # noqa: BLE001 - a candidate that cannot run is left out
                timers.pop(key, None)
                if config == candidates[0]:
                    raise
                _warn(f"left out {kernel} {dtypes[0]} {bucket} {dict(config)}", err)
                continue
        binaries[config] = key
    candidates = [config for config in candidates if config in binaries]
    number = max(1, min(1000, int(2e-3 / max(first[binaries[candidates[0]]], 1e-7))))
    times: dict[KernelKey, list[float]] = {key: [] for key in timers}
    keys = list(timers)
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[: r % len(keys)]:
            times[key].append(timers[key](number))
    medians = {config: statistics.median(times[binaries[config]]) for config in candidates}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    lines = "".join(json.dumps({
        "kernel": kernel, "dtypes": list(dtypes), "target": target.as_dict,
        "workload": work.describe(), "config": dict(config), "median_s": median,
        "versions": versions(), "date": stamp,
    }, sort_keys=True) + "\n" for config, median in medians.items())
    for path in (log, *([ship / records.log_name(target, kernel)] if ship else [])):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as out:
            out.write(lines)
    best = min(medians, key=medians.__getitem__)
    return Outcome(kernel, dtypes, bucket, candidates[0], medians[candidates[0]], best, medians[best])


def tune(kernels: Iterable[str], dtypes: Iterable[str], target: Target, trials: int, log: Path,
         buckets: Iterable[str] = records.BUCKETS, progress: bool | None = None,
         ship: Path | None = None) -> list[Outcome]:
    """Tune every kernel x dtype x bucket, with a progress bar over candidate builds.

    A (kernel, dtype, bucket) that cannot be tuned is reported on stderr and left out.
    """
    jobs = [(k, (d,), b) for k in kernels for d in dtypes for b in buckets]
    bar = tqdm(total=len(jobs) * trials, desc="tuning", unit="config",
               disable=None if progress is None else not progress)
    outcomes = []
    for kernel, dts, bucket in jobs:
        bar.set_postfix_str(f"{kernel} {dts[0]} {bucket}", refresh=False)
        try:
            outcomes.append(tune_one(kernel, dts, target, bucket, trials, log, bar=bar, ship=ship))
        except Exception as err:  # noqa: BLE001 - the other kernels are still tuned
            _warn(f"could not tune {kernel} {dts[0]} {bucket}", err)
    bar.close()
    forget_choices()
    return outcomes


def _warn(what: str, err: Exception) -> None:
    """One line on stderr (above the progress bar) about something the tuner skipped."""
    reason = next((line for line in str(err).splitlines() if line.strip()), "")
    tqdm.write(f"sparsegen: warning: {what}: {type(err).__name__}: {reason}", file=sys.stderr)


def tunable() -> list[str]:
    """Kernels that have tuning workloads."""
    return sorted(k for k in registry.KERNELS if k in MAKERS)


def table(outcomes: list[Outcome]) -> str:
    """A plain-text table of the best config against the default for each tuned workload."""
    lines = [f"{'kernel':18} {'dtype':8} {'bucket':7} {'default ms':>11} {'best ms':>9} "
             f"{'speedup':>8}  best config"]
    for o in outcomes:
        changed = {k: v for k, v in o.best if dict(o.default).get(k) != v}
        lines.append(
            f"{o.kernel:18} {o.dtypes[0]:8} {o.bucket:7} {o.default_s * 1e3:11.4f} "
            f"{o.best_s * 1e3:9.4f} {o.speedup:7.2f}x  {changed or 'default'}"
        )
    return "\n".join(lines)
