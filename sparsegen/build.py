"""Precompiling kernels into the cache, with a progress bar on a terminal."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from tqdm import tqdm

from .cache import default_cache, get_kernel
from .registry import DATA_DTYPES, KERNELS, kernel_def


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
    """Compile every kernel for every dtype into the cache; ``progress=None`` shows a bar on a TTY.

    A kernel with several dtype parameters is built with all of them equal to each dtype.
    """
    cache = default_cache()
    names = list(kernels or sorted(KERNELS))
    jobs = sorted({(k, (d,) * len(kernel_def(k).dtype_params)) for k in names for d in dtypes
                   if d in kernel_def(k).dtypes})
    start = time.perf_counter()
    before = cache.stats["built"] + cache.stats["rebuilt"]
    bar = tqdm(jobs, desc="building kernels", unit="kernel", disable=None if progress is None else not progress)
    for kernel, kernel_dtypes in bar:
        bar.set_postfix_str(f"{kernel} {','.join(kernel_dtypes)}", refresh=False)
        get_kernel(kernel, kernel_dtypes, target)
    built = cache.stats["built"] - before
    return BuildSummary(built, len(jobs) - built, time.perf_counter() - start)
