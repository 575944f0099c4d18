"""Precompiling kernels into the cache, with a progress bar on a terminal."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from tqdm import tqdm

from .cache import default_cache, get_kernel
from .registry import DATA_DTYPES, KERNELS


@dataclass(frozen=True)
class BuildSummary:
    """What a build did: kernels compiled, served from the cache, and the wall time."""

    built: int
    cached: int
    seconds: float

    def __str__(self) -> str:
        return f"{self.built} kernels built, {self.cached} from cache, {self.seconds:.1f} s"


def build_library(
    kernels: Iterable[str] | None = None,
    dtypes: Iterable[str] = DATA_DTYPES,
    target: str | None = None,
    progress: bool | None = None,
) -> BuildSummary:
    """Compile every (kernel, dtype) pair into the cache; ``progress=None`` shows a bar on a TTY."""
    cache = default_cache()
    jobs = [(k, d) for k in (kernels or sorted(KERNELS)) for d in dtypes]
    start = time.perf_counter()
    before = cache.stats["built"] + cache.stats["rebuilt"]
    bar = tqdm(jobs, desc="building kernels", unit="kernel", disable=None if progress is None else not progress)
    for kernel, dtype in bar:
        bar.set_postfix_str(f"{kernel} {dtype}", refresh=False)
        get_kernel(kernel, (dtype,), target)
    built = cache.stats["built"] - before
    return BuildSummary(built, len(jobs) - built, time.perf_counter() - start)
