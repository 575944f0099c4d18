"""The knob search: time candidate configs on representative workloads, log the timings.

TVM's meta_schedule rejects these kernels (dynamic loops, in-place blocks), so the tuner is a
search of our own over each schedule's declared knobs. Candidates come from the kernel cache
(built on demand where the TVM compiler is installed; on a runtime-only install only those
prebuilt into the cache, see ``prebuild``). They are timed with the TVM runtime's time evaluator
(``runtime.RPCTimeEvaluator`` of ``libtvm_runtime``, no compiler needed; CUDA events on a GPU)
on the target's device (the host CPU, or GPU 0 with the inputs in its memory for ``cuda``),
interleaved round by round, and every measurement is appended to a JSON-lines log that the
compiler reads to choose configs.
"""

from __future__ import annotations

import json
import random
import statistics
import struct
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .. import cuda_runtime, registry
from ..build import BuildSummary
from ..cache import CompilerMissingError, default_cache, forget_choices
from ..cacheentry import load_entry
from ..cachekey import KernelKey, versions
from ..choice import choose
from ..device import DeviceArray
from ..errors import SparsegenError
from ..tvm_runtime import tvm_ffi
from ..schedules.space import Config, ScheduleSpace
from ..target import Target, resolve
from .. import tuning_records
from .workloads import elements, has_workload, workload

Calls = list[tuple[str, list[Any]]]


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
    timed: int  # configs timed
    missing: int  # candidates passed over: not in the prebuilt cache and no compiler to build them

    @property
    def speedup(self) -> float:
        """Default time over best time."""
        return self.default_s / self.best_s


def _order(space: ScheduleSpace, seed: int, applying: Config | None = None) -> list[Config]:
    """Every config of ``space`` in the order the tuner tries them: the default, the config that
    records make apply now (``applying``: another CPU's of the family, say), then shuffled."""
    everything = list(space.candidates())
    rest = [c for c in everything[1:] if c != applying]
    random.Random(seed).shuffle(rest)
    first = [everything[0], *([applying] if applying in everything[1:] else [])]
    return [*first, *rest]


def _applying(kernel: str, dtypes: tuple[str, ...], target: Target, bucket: str) -> Config | None:
    """The config records make apply now for this workload, or ``None`` (the defaults apply)."""
    choice = choose(kernel, dtypes, target, None, bucket)
    return None if choice.source == "default" else choice.config


def tuning_target(target: "Target | str | dict[str, Any] | None") -> Target:
    """The target to tune for; ``cuda`` means GPU 0's own ``sm_XY``, and needs a real GPU."""
    resolved = resolve(target)
    if resolved.kind != "cuda":
        return resolved
    from .. import device

    if cuda_runtime.device_count() == 0:
        raise SparsegenError(
            "tuning for cuda times kernels on an NVIDIA GPU and this machine has none the CUDA "
            "driver can see (`sparsegen build --target cuda` compiles CUDA kernels without one)"
        )
    return device.cuda_target(0) if target == "cuda" else resolved


def _device(target: Target) -> Any:
    """The device a target's kernels are timed on: GPU 0 for ``cuda``, else the host CPU."""
    if target.kind == "cuda":
        cuda_runtime.load()
        return tvm_ffi.device("cuda", 0)
    return tvm_ffi.device("cpu", 0)


def _binary(kernel: str, dtypes: tuple[str, ...], target: Target, config: Config,
            bucket: str) -> KernelKey:
    """The cache key a workload of ``bucket`` runs with ``config`` (its small-call build or not)."""
    return choose(kernel, dtypes, target, dict(config), bucket).key_for(elements(bucket))


def _on_device(calls: list[tuple[str, tuple[Any, ...]]], device: Any) -> Calls:
    """The workload's calls with every array copied into ``device``'s memory (once, for all
    candidates)."""
    return [(name, [DeviceArray.from_numpy(a, device) if isinstance(a, np.ndarray) else a
                    for a in args]) for name, args in calls]


def _seconds(module: Any, symbol: str, device: Any, number: int, args: list[Any]) -> float:
    """The mean time of ``number`` calls after one warm-up call, measured by the TVM runtime on
    ``device`` (which it synchronises)."""
    evaluator = tvm_ffi.get_global_func("runtime.RPCTimeEvaluator")(
        module, symbol, device.dlpack_device_type(), device.index, number,
        1,  # repeat: one mean over ``number`` calls
        0, 100, 0, 1, 0, "",  # min_repeat_ms, limit_zero_time_iterations, cooldown_interval_ms,
    )  # repeats_to_cooldown, cache_flush_bytes, f_preproc: tvm.runtime.Module's defaults
    return struct.unpack("@d", bytes(evaluator(*args)))[0]  # ``repeat`` doubles


class _Timer:
    """A candidate binary, loaded, with the workload's calls on it; ``first``: one call's time."""

    def __init__(self, key: KernelKey, calls: Calls) -> None:
        path = default_cache().get(key).path  # built now where the compiler is installed
        module = load_entry(key, path)
        definition = registry.kernel_def(key.kernel)
        self.device = _device(key.target)
        self.calls = [(module, definition.symbol(key.dtypes, name), args) for name, args in calls]
        self.first = self(1)

    def __call__(self, number: int) -> float:
        return sum(_seconds(module, symbol, self.device, number, args)
                   for module, symbol, args in self.calls)


def _candidates(kernel: str, dtypes: tuple[str, ...], target: Target, bucket: str, trials: int,
                calls: Calls, seed: int, bar: Any) -> tuple[dict[Config, _Timer], int]:
    """The first ``trials`` candidates that are available, by config, with their timers (one per
    binary), and how many were passed over for missing from a prebuilt cache without compiler.

    A candidate that cannot be loaded or run is left out with a warning; the default must run.
    """
    order = _order(registry.kernel_def(kernel).space(target.kind), seed,
                   _applying(kernel, dtypes, target, bucket))
    timers: dict[KernelKey, _Timer] = {}
    chosen: dict[Config, _Timer] = {}
    tried = missing = 0
    for config in order:
        if tried == trials:
            break
        key = _binary(kernel, dtypes, target, config, bucket)
        try:
            if key not in timers:
                timers[key] = _Timer(key, calls)
            timer: _Timer | None = timers[key]
        except CompilerMissingError:
            if config == order[0]:
                raise
            missing += 1
            continue
        except Exception as err:  # noqa: BLE001 - a candidate that cannot run is left out
            if config == order[0]:
                raise
            _warn(f"left out {kernel} {dtypes[0]} {bucket} {dict(config)}", err)
            timer = None
        tried += 1
        if bar is not None:
            bar.update(1)
        if timer is not None:
            chosen[config] = timer
    return chosen, missing


def tune_one(kernel: str, dtypes: tuple[str, ...], target: Target, bucket: str, trials: int,
             log: Path, rounds: int = 7, seed: int = 0, bar: Any = None,
             ship: Path | None = None) -> Outcome:
    """Tune one (kernel, dtypes, bucket); appends a record per candidate to ``log``, and with
    ``ship`` also to ``ship/<target label>-<kernel>.jsonl`` (the shipped logs' naming)."""
    work = workload(kernel, dtypes, bucket, seed)
    calls = _on_device(work.calls, _device(target))
    chosen, missing = _candidates(kernel, dtypes, target, bucket, trials, calls, seed, bar)
    candidates = list(chosen)
    number = max(1, min(1000, int(2e-3 / max(chosen[candidates[0]].first, 1e-7))))
    timers = list(dict.fromkeys(chosen.values()))
    times: dict[_Timer, list[float]] = {timer: [] for timer in timers}
    for r in range(rounds):
        for timer in timers[r % len(timers):] + timers[: r % len(timers)]:
            times[timer].append(timer(number))
    medians = {config: statistics.median(times[chosen[config]]) for config in candidates}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    lines = "".join(json.dumps({
        "kernel": kernel, "dtypes": list(dtypes), "target": target.as_dict,
        "workload": work.describe(), "config": dict(config), "median_s": median,
        "versions": versions(), "date": stamp,
    }, sort_keys=True) + "\n" for config, median in medians.items())
    for path in (log, *([ship / tuning_records.log_name(target, kernel)] if ship else [])):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as out:
            out.write(lines)
    best = min(medians, key=medians.__getitem__)
    return Outcome(kernel, dtypes, bucket, candidates[0], medians[candidates[0]], best,
                   medians[best], len(candidates), missing)


def prebuild(kernels: Iterable[str], dtypes: Iterable[str], target: Target, trials: int,
             buckets: Iterable[str] = tuning_records.BUCKETS, seed: int = 0,
             progress: bool | None = None) -> BuildSummary:
    """Build into the kernel cache the binaries ``tune`` with ``trials`` would time, timing
    nothing (no GPU needed): a runtime-only install can then tune among them."""
    keys = list(dict.fromkeys(
        _binary(kernel, (dtype,), target, config, bucket)
        for kernel in kernels for dtype in dtypes for bucket in buckets
        for config in _order(registry.kernel_def(kernel).space(target.kind), seed,
                             _applying(kernel, (dtype,), target, bucket))[:trials]
    ))
    start = time.perf_counter()
    bar = tqdm(keys, desc="building candidates", unit="kernel",
               disable=None if progress is None else not progress)
    built = sum(default_cache().ensure(key) for key in bar)
    return BuildSummary(built, len(keys) - built, time.perf_counter() - start)


def tune(kernels: Iterable[str], dtypes: Iterable[str], target: Target, trials: int, log: Path,
         buckets: Iterable[str] = tuning_records.BUCKETS, progress: bool | None = None,
         ship: Path | None = None, rounds: int = 7) -> list[Outcome]:
    """Tune every kernel x dtype x bucket, with a progress bar over candidates.

    A (kernel, dtype, bucket) that cannot be tuned is reported on stderr and left out.
    """
    jobs = [(k, (d,), b) for k in kernels for d in dtypes for b in buckets]
    bar = tqdm(total=len(jobs) * trials, desc="tuning", unit="config",
               disable=None if progress is None else not progress)
    outcomes = []
    for kernel, dts, bucket in jobs:
        bar.set_postfix_str(f"{kernel} {dts[0]} {bucket}", refresh=False)
        try:
            outcomes.append(tune_one(kernel, dts, target, bucket, trials, log, rounds, bar=bar,
                                     ship=ship))
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
    """Kernels that have tuning workloads (every update rule's kernel among them)."""
    return sorted(k for k in registry.KERNELS if has_workload(k))


def table(outcomes: list[Outcome]) -> str:
    """A plain-text table of the best config against the default for each tuned workload."""
    lines = [f"{'kernel':18} {'dtype':8} {'bucket':7} {'default ms':>11} {'best ms':>9} "
             f"{'speedup':>8} {'configs':>7}  best config"]
    for o in outcomes:
        changed = {k: v for k, v in o.best if dict(o.default).get(k) != v}
        lines.append(
            f"{o.kernel:18} {o.dtypes[0]:8} {o.bucket:7} {o.default_s * 1e3:11.4f} "
            f"{o.best_s * 1e3:9.4f} {o.speedup:7.2f}x {o.timed:7}  {changed or 'default'}"
        )
    return "\n".join(lines)
