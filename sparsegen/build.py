"""Precompiling kernels into the cache, with a progress bar on a terminal."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from tqdm import tqdm

from .cache import CompilerMissingError, default_cache
from .cachekey import KernelKey
from .choice import choose
from .formats import DATA_DTYPES
from .registry import KERNELS, kernel_def
from .target import Target
from .target import resolve as resolve_target


@dataclass(frozen=True)
class BuildSummary:
    """What a build did: binaries compiled, found in the cache, refused, and the wall time."""

    built: int
    cached: int
    seconds: float
    failed: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = f"{self.built} kernels built, {self.cached} from cache, {self.seconds:.1f} s"
        if self.failed:
            text += f"; {len(self.failed)} not buildable for this target: {', '.join(self.failed)}"
        return text


def build_library(
    kernels: Iterable[str] | None = None,
    dtypes: Iterable[str] = DATA_DTYPES,
    target: Target | str | None = None,
    progress: bool | None = None,
) -> BuildSummary:
    """Compile every kernel for every dtype into the cache; ``progress=None`` shows a bar on a TTY.

    Each (kernel, dtype) gets the binaries its calls use: on the CPU the parallel and the serial
    build of its chosen config. A kernel with several dtype parameters is built with all of them
    equal to each dtype. Kernels that cannot be generated for the target are listed, not fatal;
    a kernel missing from a runtime-only install's cache (no TVM compiler) is.
    """
    cache = default_cache()
    resolved = resolve_target(target)
    keys: dict[KernelKey, str] = {}
    for name in kernels or sorted(KERNELS):
        definition = kernel_def(name)
        for dtype in dtypes:
            if dtype in definition.dtypes:
                choice = choose(name, (dtype,) * len(definition.dtype_params), resolved)
                for key in (choice.key, choice.small_key):
                    keys[key] = f"{name}[{dtype}]"
    start = time.perf_counter()
    built, failed = 0, []
    bar = tqdm(list(keys), desc="building kernels", unit="kernel",
               disable=None if progress is None else not progress)
    for key in bar:
        bar.set_postfix_str(keys[key], refresh=False)
        try:
            built += cache.ensure(key)
        except Exception as err:  # noqa: BLE001 - a kernel the target cannot take is reported
            if resolved.kind == "llvm" or isinstance(err, CompilerMissingError):
                raise
            failed.append(keys[key])
    return BuildSummary(built, len(keys) - built - len(failed), time.perf_counter() - start,
                        tuple(sorted(set(failed))))
