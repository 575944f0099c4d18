"""Tuning records (JSON lines) and the choice of a schedule config for a call.

A record is one measured config: kernel, dtypes, target, workload (with its size bucket),
config, median seconds, versions and date. For (kernel, dtypes, target, bucket) the config with
the lowest median in the user's logs wins, else the one in the shipped ``tuning_logs/``; a CPU
with no records of its own takes those of the nearest CPU of its family; else the schedule's
defaults. This module never imports TVM: it runs on the call path.
"""

from __future__ import annotations

import json
import math
import statistics
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import cpu_families
from .config import cache_dir
from .target import Target

BUCKETS = ("small", "medium", "large")
"""Workload size buckets, by the number of elements a call touches."""

_BUCKET_LIMITS = (2**15, 2**22)

SHIPPED_LOGS = Path(__file__).resolve().parents[1] / "tuning_logs"
"""Records shipped with sparsegen, one JSON-lines file per target and kernel."""


class TuningLogWarning(UserWarning):
    """A tuning-log line was malformed or not a sparsegen record, and was skipped."""


def size_bucket(elements: int) -> str:
    """The bucket of a call that touches ``elements`` elements."""
    if elements < _BUCKET_LIMITS[0]:  # comparisons, not a loop: it runs on every kernel call
        return BUCKETS[0]
    return BUCKETS[1] if elements < _BUCKET_LIMITS[1] else BUCKETS[2]


def log_name(target: Target, kernel: str) -> str:
    """A kernel's log file name in ``tuning_logs/``, such as ``cuda-sm_90-retain.jsonl``."""
    return f"{target.label}-{kernel}.jsonl"


def user_log() -> Path:
    """The default log ``sparsegen tune`` appends to, and the first place configs are read from."""
    return cache_dir() / "tuning" / "records.jsonl"


@dataclass(frozen=True)
class Record:
    """One measurement of one config on one workload."""

    kernel: str
    dtypes: tuple[str, ...]
    target: str  # canonical target JSON
    bucket: str
    config: tuple[tuple[str, Any], ...]
    median_s: float
    line: dict[str, Any]

    @property
    def measured_on(self) -> dict[str, Any]:
        """The target dict the record was measured on."""
        return json.loads(self.target)

    def target_matches(self, target: Target) -> bool:
        """Whether the record was measured for ``target``'s kind and CPU/GPU model."""
        mine, theirs = target.as_dict, self.measured_on
        return all(mine.get(k) == theirs.get(k) for k in ("kind", "mcpu", "arch"))


_REQUIRED = {"kernel": str, "dtypes": list, "target": dict, "workload": dict, "config": dict,
             "median_s": (int, float)}


def parse(line: str, where: str) -> Record | None:
    """A record from one log line; ``None`` with a ``TuningLogWarning`` when it is not one."""
    if not line.strip():
        return None
    try:
        raw = json.loads(line)
        for key, kind in _REQUIRED.items():
            if not isinstance(raw.get(key), kind):
                raise ValueError(f"field {key!r} missing or not {kind}")
        bucket = raw["workload"].get("bucket")
        if bucket not in BUCKETS:
            raise ValueError(f"workload bucket {bucket!r} is not one of {BUCKETS}")
        median = float(raw["median_s"])
        if not math.isfinite(median) or median <= 0:
            raise ValueError(f"median_s {median} is not a positive time")
        return Record(raw["kernel"], tuple(raw["dtypes"]), json.dumps(raw["target"], sort_keys=True),
                      bucket, tuple(sorted(raw["config"].items())), median, raw)
    except (ValueError, TypeError, AttributeError) as err:
        warnings.warn(f"{where}: skipping a line that is not a sparsegen tuning record ({err})",
                      TuningLogWarning, stacklevel=3)
        return None


def read(path: Path) -> list[Record]:
    """Every valid record of one log file (malformed lines are skipped with a warning)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    records = (parse(line, f"{path}:{number}") for number, line in enumerate(lines, 1))
    return [r for r in records if r is not None]


@lru_cache(maxsize=None)
def _load(sources: tuple[tuple[str, ...], ...]) -> tuple[tuple[Record, ...], ...]:
    return tuple(tuple(r for p in group for r in read(Path(p))) for group in sources)


def sources(log: Path | None = None) -> tuple[tuple[str, ...], ...]:
    """The record files in priority order: the user's log (or ``log``), then the shipped ones."""
    user = (str(log or user_log()),)
    shipped = tuple(str(p) for p in sorted(SHIPPED_LOGS.glob("*.jsonl")))
    return (user, shipped)


def reload() -> None:
    """Forget the records read so far (after a tuning run appended new ones)."""
    _load.cache_clear()


def best(kernel: str, dtypes: tuple[str, ...], target: Target, bucket: str,
         knobs: frozenset[str], log: Path | None = None
         ) -> tuple[dict[str, Any], str, str] | None:
    """The fastest recorded config, where it came from (``user`` or ``shipped``) and the label of
    the target it was measured on, or ``None``.

    Only records of this kernel, dtypes and bucket whose config names exactly the schedule's
    current knobs are considered: those of ``target``'s own model first; for a CPU with none,
    those of the nearest CPU of its family (``cpu_families.nearest``).
    """
    groups = [[r for r in group if r.kernel == kernel and r.dtypes == dtypes
               and r.bucket == bucket and {k for k, _ in r.config} == knobs]
              for group in _load(sources(log))]
    measured_on = [target]
    mcpu = target.as_dict.get("mcpu") if target.kind == "llvm" else None
    others = {r.measured_on.get("mcpu") for group in groups for r in group
              if r.measured_on.get("kind") == "llvm"}
    stand_in = cpu_families.nearest(mcpu, {c for c in others if c})
    if stand_in is not None:
        measured_on.append(Target.from_dict({"kind": "llvm", "mcpu": stand_in}))
    for candidate in measured_on:
        for origin, group in zip(("user", "shipped"), groups):
            matching = [r for r in group if r.target_matches(candidate)]
            if matching:
                by_config: dict[tuple[tuple[str, Any], ...], list[float]] = {}
                for r in matching:
                    by_config.setdefault(r.config, []).append(r.median_s)
                fastest = min(by_config, key=lambda c: statistics.median(by_config[c]))
                return dict(fastest), origin, candidate.label
    return None
