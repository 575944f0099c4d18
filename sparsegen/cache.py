"""The kernel cache: memory, then disk (exported ``.so`` files), then a build under a file lock.

The key is ``cachekey``'s, an entry's files are ``cacheentry``'s, and the config a call gets is
``choice``'s; ``get_kernel`` puts the three together.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from . import cachedir, cuda_runtime, registry
from . import tvm_runtime as runtime
from .cacheentry import ABSENT, Kernel, entry_problem, files_problem, load_entry, write_entry
from .cachekey import KernelKey
from .choice import choose
from .config import cache_dir
from .errors import KernelCacheWarning, SparsegenError
from .files import disk_full, remove_temporaries
from .target import Target
from .target import resolve as resolve_target
from . import tuning_records


class CompilerMissingError(SparsegenError):
    """A kernel is not in the cache and the TVM compiler that would build it is not installed."""


def _compiler(key: KernelKey, directory: Path) -> Any:
    """The compiler module, imported only when something is built; a runtime-only install (no
    ``tvm`` package) gets ``CompilerMissingError`` naming the kernel instead."""
    try:
        from . import compiler

        runtime.register_ml_dtypes()  # TVM has imported ml_dtypes: tvm_ffi gets its entries
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] != "tvm":
            raise
        raise CompilerMissingError(
            f"kernel {key.kernel}[{','.join(key.dtypes)}] for {key.target.label} is not in the "
            f"prebuilt cache ({directory / 'kernels'}) and the TVM compiler is not installed "
            "(pip install apache-tvm, or prebuild it with `sparsegen build` where it is)"
        ) from None
    return compiler


@contextmanager
def _file_lock(handle: BinaryIO) -> Iterator[None]:
    """An exclusive lock between processes (``flock`` on the open ``handle``, closed after)."""
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class KernelCache:
    """Compiled kernels by key: from memory, else verified from disk, else built and exported.

    ``directory`` is the configured one; entries are read from it (and from this process's
    fallback directory, once it has one) without a lock, and built where ``cachedir.writable``
    says, under a lock.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.stats: Counter[str] = Counter()
        self._memory: dict[KernelKey, Kernel] = {}
        self._lock = threading.Lock()

    def get(self, key: KernelKey) -> Kernel:
        """The kernel for ``key``; counts ``memory``, ``disk``, ``built`` and ``rebuilt`` in stats."""
        kernel = self._memory.get(key)
        if kernel is not None:
            self.stats["memory"] += 1
            return kernel
        with self._lock:
            kernel = self._memory.get(key) or self._load_or_build(key)
            self._memory[key] = kernel
            return kernel

    def _path(self, key: KernelKey, directory: Path | None = None) -> Path:
        return (directory or self.directory) / "kernels" / key.filename()

    def _load(self, key: KernelKey, path: Path) -> tuple[Kernel | None, str | None]:
        """The kernel of the entry at ``path`` once it verifies, else why not."""
        problem = entry_problem(key, path)
        if problem is not None:
            return None, problem
        try:
            return Kernel(key, load_entry(key, path), path), None
        except Exception as err:  # a verified entry that still fails to load is rebuilt too
            text = str(err).strip()
            return None, f"it failed to load ({type(err).__name__}: " \
                         f"{text.splitlines()[0] if text else ''})"

    def _lock_for(self, key: KernelKey, directory: Path) -> tuple[Path, BinaryIO]:
        """``key``'s entry path in ``directory`` (where builds go) and its lock file, opened; a
        configured directory that refuses the lock file is given up for the fallback."""
        path = self._path(key, directory)
        try:
            return path, open(path.with_suffix(".lock"), "a+b")
        except OSError as err:
            if directory != self.directory:
                raise SparsegenError(f"the kernel cache cannot write in {path.parent} "
                                     f"({cachedir.describe(err)})") from None
            reason = cachedir.describe(err)
        return self._lock_for(key, cachedir.fall_back(self.directory, reason))

    def _warn_rebuild(self, path: Path, problem: str, into: Path) -> None:
        where = "" if into == path.parent else f" in {into}"
        warnings.warn(f"kernel cache entry {path} is not loaded: {problem}; rebuilding it{where}",
                      KernelCacheWarning, stacklevel=5)
        self.stats["rebuilt"] += 1

    def ensure(self, key: KernelKey) -> bool:
        """Build ``key``'s entry on disk unless a valid one is there (any target; nothing is loaded).

        Returns whether it was built now. This is ``sparsegen build``: CUDA kernels can be
        compiled (to cubin, with nvcc) on a machine without a GPU. The entry must land in the
        configured directory: one that is not writable raises ``SparsegenError``.
        """
        if entry_problem(key, self._path(key)) is None:
            return False
        cachedir.require_writable(self.directory, "building kernels ahead of use")
        path, handle = self._lock_for(key, self.directory)
        with _file_lock(handle):
            problem = entry_problem(key, path)
            if problem is None:
                return False
            if problem != ABSENT:
                self._warn_rebuild(path, problem, path.parent)
            self._build(key, path)
            return True

    def _load_or_build(self, key: KernelKey) -> Kernel:
        # configuration errors (TVM_NUM_THREADS, the runtime folder) are raised here, before the
        # loading below, which would take them for a damaged entry and rebuild it
        runtime.runtime_library()
        if key.target.kind == "cuda":
            cuda_runtime.load()  # without the CUDA libraries say so, rather than rebuild entries
        bad: tuple[Path, str] | None = None
        for directory in cachedir.readable(self.directory):  # no lock: reading writes nothing
            kernel, problem = self._load(key, self._path(key, directory))
            if kernel is not None:
                self.stats["disk"] += 1
                return kernel
            if problem != ABSENT and bad is None:
                bad = (self._path(key, directory), problem or "")
        path, handle = self._lock_for(key, cachedir.writable(self.directory))
        with _file_lock(handle):
            kernel, problem = self._load(key, path)  # another process may have built it
            if kernel is not None:
                self.stats["disk"] += 1
                return kernel
            if problem != ABSENT and (bad is None or bad[0] == path):
                bad = (path, problem or "")
            if bad is not None:
                self._warn_rebuild(*bad, into=path.parent)
            self._build(key, path)
            return Kernel(key, load_entry(key, path), path)

    def _build(self, key: KernelKey, path: Path) -> None:
        """Compile ``key`` and write its entry at ``path`` (nothing of it is kept on failure)."""
        remove_temporaries(path)  # a build killed mid-write leaves them; we hold the lock
        compiler = _compiler(key, self.directory)
        start = time.perf_counter()
        definition = registry.kernel_def(key.kernel)
        executable = compiler.build(definition, key.dtypes, key.target, key.config)
        device_code: dict[str, str | bytes] = {}
        if key.target.kind == "cuda":  # the device code, and its cubin for loading it
            source = compiler.cuda_source(executable)
            device_code = {".cu": source, ".cubin": cuda_runtime.cubin(source, key.target.arch)}
        try:
            write_entry(key, path, executable, device_code, start)
        except Exception as err:
            self._write_failed(path, err)
            raise
        self.stats["built"] += 1

    def _write_failed(self, path: Path, err: Exception) -> None:
        """Raise ``SparsegenError`` for an entry the disk refused (full, or not writable), after
        sending this process's later builds to the fallback directory; return for other errors."""
        full = disk_full(err, path.parent)
        if not full and not isinstance(err, OSError):
            return  # a compiler or linker failure of its own: raised as it is
        if full:
            reason = f"the disk is full ({os.strerror(errno.ENOSPC)})"
        else:
            assert isinstance(err, OSError)
            reason = f"the write was refused ({cachedir.describe(err)})"
        later = ""
        if path.parent.parent == self.directory:
            fallback = cachedir.fall_back(self.directory, reason, warn=False)
            later = f"; later kernels are built in {fallback} for this process only"
        raise SparsegenError(
            f"kernel cache entry {path.name} could not be written in {path.parent}: {reason}; "
            f"nothing of it was kept{later} (free space there, or set SPARSEGEN_CACHE_DIR to "
            "another directory)"
        ) from None

    def entries(self) -> list[dict[str, Any]]:
        """The metadata of every entry on disk, with its file size and ``problem``: None for an
        entry whose files match their recorded sizes and digests, else why not."""
        found = []
        for meta in sorted((self.directory / "kernels").glob("*.json")):
            so = meta.with_suffix(".so")
            if so.exists():
                try:
                    record = json.loads(meta.read_text())
                except (OSError, ValueError):
                    record = {"kernel": "?"}
                suffixes = tuple(record.get("files", {})) if isinstance(record, dict) else ()
                found.append({**record, "file": so.name, "bytes": so.stat().st_size,
                              "problem": files_problem(so, record, suffixes or (".so",))})
        return found

    def clear(self) -> int:
        """Delete every entry on disk and in memory; returns the number of files removed."""
        removed = 0
        _CHOICES.clear()
        with self._lock:
            self._memory.clear()
            for path in (self.directory / "kernels").glob("*"):
                if path.is_file():
                    try:
                        path.unlink()
                    except OSError as err:
                        raise SparsegenError(f"cannot clear the kernel cache: {path} could not "
                                             f"be removed ({cachedir.describe(err)})") from None
                    removed += 1
        return removed


_ACTIVE: list[KernelCache] = []


def default_cache() -> KernelCache:
    """The process's cache, in the directory configured when it was first used (or reset)."""
    if not _ACTIVE:
        _ACTIVE.append(KernelCache(cache_dir()))
    return _ACTIVE[0]


def reset() -> None:
    """Re-read ``$SPARSEGEN_CACHE_DIR`` and the tuning logs on next use (tests, tools)."""
    _ACTIVE.clear()
    forget_choices()


_CHOICES: dict[tuple[Any, ...], list[Any]] = {}
"""Call memo -> [its config choice, its loaded large build, its loaded small build] (the builds
``None`` until first used): one dict lookup per kernel call."""


def get_kernel(
    name: str,
    dtypes: tuple[str, ...],
    target: "Target | str | None" = None,
    config: dict[str, Any] | None = None,
    size: int | None = None,
) -> Kernel:
    """The compiled kernel ``name`` for ``dtypes`` on ``target`` (host CPU by default).

    ``size`` is the number of elements the call touches: it selects the tuning bucket, and calls
    below the config's small-call threshold get the schedule space's small-call build of the
    same config (on the CPU the serial one).
    """
    if isinstance(target, dict):
        target = resolve_target(target)
    bucket = tuning_records.size_bucket(size) if size is not None else "large"
    memo = (name, dtypes, target, tuple(sorted(config.items())) if config else None, bucket)
    entry = _CHOICES.get(memo)
    if entry is None:
        entry = _CHOICES[memo] = [choose(name, dtypes, target, config, bucket), None, None]
    build = 2 if entry[0].is_small(size) else 1  # hashing the whole key costs microseconds
    kernel = entry[build]
    if kernel is None:
        kernel = entry[build] = default_cache().get(entry[0].key_for(size))
    return kernel


def forget_choices() -> None:
    """Drop the memoised config choices (after new tuning records were written)."""
    _CHOICES.clear()
    tuning_records.reload()
