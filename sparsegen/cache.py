"""The kernel cache: memory, then disk (exported ``.so`` files), then a build under a file lock."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import importlib.metadata
import json
import os
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from . import cachedir, cuda_runtime, registry, runtime
from ._version import __version__
from .config import cache_dir
from .errors import KernelCacheWarning, SparsegenError
from .files import disk_full, file_problem, file_record, write_atomically
from .schedules.space import Config
from .target import Target
from .target import resolve as resolve_target
from .tune import records

_PACKAGE = Path(__file__).parent
_CODE_THAT_SHAPES_BINARIES = ("templates", "schedules", "formats.py", "compiler.py")
# the layout of an entry: 2 = a sidecar with every file's size and SHA-256 (older entries,
# which have none, are not looked up under the new keys)
ENTRY_FORMAT = 2


@lru_cache(maxsize=None)
def versions() -> dict[str, str]:
    """The versions a kernel binary depends on: TVM, tvm-ffi, sparsegen, and the code digest.

    A runtime-only install (no apache-tvm distribution) reads TVM's from its runtime folder
    (``runtime.tvm_version``), so a cache prebuilt elsewhere keeps its keys.
    """
    digest = hashlib.sha256()
    for entry in _CODE_THAT_SHAPES_BINARIES:
        root = _PACKAGE / entry
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            digest.update(path.name.encode() + path.read_bytes())
    return {
        "tvm": runtime.tvm_version(),  # apache-tvm's, or the runtime folder's TVM_VERSION
        "tvm_ffi": importlib.metadata.version("apache-tvm-ffi"),
        "sparsegen": __version__,
        "codegen": digest.hexdigest()[:16],
    }


class CompilerMissingError(SparsegenError):
    """A kernel is not in the cache and the TVM compiler that would build it is not installed."""


@dataclass(frozen=True)
class KernelKey:
    """Everything that changes a kernel binary except the versions: op, dtypes, target, config."""

    kernel: str
    dtypes: tuple[str, ...]
    target: Target
    config: Config

    def record(self) -> dict[str, Any]:
        """The key as JSON-able data, versions included."""
        return {
            "kernel": self.kernel,
            "dtypes": list(self.dtypes),
            "target": self.target.as_dict,
            "config": dict(self.config),
            "versions": versions(),
            "entry_format": ENTRY_FORMAT,
        }

    def digest(self) -> str:
        """The hash that names the cache entry."""
        blob = json.dumps(self.record(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:24]

    def filename(self) -> str:
        """``<kernel>-<dtypes>-<target>-<digest>.so``."""
        return f"{self.kernel}-{'-'.join(self.dtypes)}-{self.target.label}-{self.digest()}.so"


class Kernel:
    """A loaded kernel module: its functions by short name (``kernel.fill(...)``)."""

    def __init__(self, key: KernelKey, module: Any, path: Path) -> None:
        definition = registry.kernel_def(key.kernel)
        self.key = key
        self.path = path
        self.functions: dict[str, Callable[..., Any]] = {
            name: runtime.wrap(module[definition.symbol(key.dtypes, name)])
            for name, _ in definition.signatures
        }
        for name, function in self.functions.items():
            setattr(self, name, function)  # kernel.fill(...) with plain attribute lookup

    def __repr__(self) -> str:
        return f"<Kernel {self.key.kernel} {self.key.dtypes} {self.key.target.label}>"


def load_entry(key: KernelKey, path: Path) -> Any:
    """Load the module of the (verified) cache entry at ``path``; a CUDA entry's cubin is
    registered first, so that the runtime's compile request for its device code is answered
    without compiling."""
    if key.target.kind == "cuda":
        cuda_runtime.register_cubin(path.with_suffix(".cu").read_text(),
                                    path.with_suffix(".cubin").read_bytes())
        with cuda_runtime.serving_cubins(key.target.arch):
            return runtime.load_module(path)
    return runtime.load_module(path)


def entry_files(key: KernelKey, path: Path) -> tuple[Path, ...]:
    """The files of the entry at ``path`` that its sidecar vouches for: the library, and for a
    CUDA kernel its source and cubin."""
    if key.target.kind == "cuda":
        return (path, path.with_suffix(".cu"), path.with_suffix(".cubin"))
    return (path,)


ABSENT = "it is not there"  # entry_problem's answer for an entry without a sidecar


def _files_problem(path: Path, meta: Any, suffixes: tuple[str, ...]) -> str | None:
    """Why a file of the entry at ``path`` does not match its sidecar ``meta``, or None."""
    files = meta.get("files") if isinstance(meta, dict) else None
    if not isinstance(files, dict):
        return f"its record {path.with_suffix('.json').name} has no file sizes and digests"
    for suffix in suffixes:
        problem = file_problem(path.with_suffix(suffix), files.get(suffix))
        if problem is not None:
            return problem
    return None


def entry_problem(key: KernelKey, path: Path) -> str | None:
    """Why the entry at ``path`` cannot be loaded as ``key`` (``ABSENT`` without a sidecar),
    or None once its sidecar names ``key`` and every file has the recorded size and digest.

    The sidecar is written last, so an entry whose build was interrupted counts as absent.
    """
    sidecar = path.with_suffix(".json")
    try:
        meta = json.loads(sidecar.read_text())
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except OSError as err:
        return f"its record {sidecar.name} cannot be read ({cachedir.describe(err)})"
    except ValueError:
        return f"its record {sidecar.name} is not JSON"
    expected = json.loads(json.dumps(key.record()))
    if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in expected.items()):
        return f"its record {sidecar.name} describes another kernel or version"
    return _files_problem(path, meta, tuple(f.suffix for f in entry_files(key, path)))


def _compiler(key: KernelKey, directory: Path) -> Any:
    """The compiler module, imported only when something is built; a runtime-only install (no
    ``tvm`` package) gets ``CompilerMissingError`` naming the kernel instead."""
    try:
        from . import compiler
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


def _unlink_all(paths: Iterable[Path]) -> None:
    """Remove what exists of ``paths`` (what a failed build wrote of an entry)."""
    for path in paths:
        with suppress(OSError):
            path.unlink(missing_ok=True)


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
        """Compile ``key`` and write its entry at ``path``: its files, then the sidecar that
        vouches for them; a failed write leaves no part of the entry behind."""
        compiler = _compiler(key, self.directory)
        start = time.perf_counter()
        definition = registry.kernel_def(key.kernel)
        executable = compiler.build(definition, key.dtypes, key.target, key.config)
        writers: dict[Path, Callable[[Path], object]] = {}
        if key.target.kind == "cuda":  # the device code, and its cubin for loading it
            source = compiler.cuda_source(executable)
            binary = cuda_runtime.cubin(source, key.target.arch)
            writers[path.with_suffix(".cu")] = lambda tmp: tmp.write_text(source)
            writers[path.with_suffix(".cubin")] = lambda tmp: tmp.write_bytes(binary)
        writers[path] = lambda tmp: executable.export_library(str(tmp))
        sidecar = path.with_suffix(".json")
        try:
            sidecar.unlink(missing_ok=True)  # the entry is absent until its sidecar is back
            for file, write in writers.items():
                write_atomically(file, write)
            meta = {**key.record(), "files": {f.suffix: file_record(f) for f in writers},
                    "build_seconds": round(time.perf_counter() - start, 3),
                    "built": time.strftime("%Y-%m-%dT%H:%M:%S")}
            write_atomically(sidecar, lambda tmp: tmp.write_text(json.dumps(meta, indent=1)))
        except Exception as err:
            _unlink_all([*writers, sidecar])
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
                              "problem": _files_problem(so, record, suffixes or (".so",))})
        return found

    def clear(self) -> int:
        """Delete every entry on disk and in memory; returns the number of files removed."""
        removed = 0
        _KERNELS.clear()
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


@dataclass(frozen=True)
class Choice:
    """The schedule config chosen for a call, where it came from, and its cache keys."""

    config: Config  # every knob, dispatch-only ones included
    source: str  # "given", "user", "shipped" or "default"
    parallel_key: KernelKey
    serial_key: KernelKey  # used for calls smaller than the config's serial_below
    serial_below: int


def choose(
    name: str,
    dtypes: tuple[str, ...],
    target: "Target | str | dict[str, Any] | None" = None,
    config: dict[str, Any] | None = None,
    bucket: str = "large",
) -> Choice:
    """The config for kernel ``name`` on ``target``: ``config`` if given, else the best tuning
    record for the size ``bucket`` (user logs, then shipped logs), else the schedule defaults."""
    definition = registry.kernel_def(name)
    definition.check_dtypes(dtypes)
    resolved = resolve_target(target)
    space = definition.space(resolved.kind)
    source = "given"
    if config is None:
        found = records.best(name, dtypes, resolved, bucket, frozenset(k.name for k in space.knobs))
        config, source = found if found else ({}, "default")
    full = space.config(config)
    values = dict(full)
    serial = space.config({**values, "parallel": False}) if "parallel" in values else full
    return Choice(
        full,
        source,
        KernelKey(name, dtypes, resolved, space.binary(full)),
        KernelKey(name, dtypes, resolved, space.binary(serial)),
        values.get("serial_below", 0) if values.get("parallel") else 0,
    )


def kernel_key(
    name: str,
    dtypes: tuple[str, ...],
    target: "Target | str | dict[str, Any] | None" = None,
    config: dict[str, Any] | None = None,
) -> KernelKey:
    """The cache key of kernel ``name`` for ``dtypes`` on ``target`` with ``config`` (or defaults)."""
    return choose(name, dtypes, target, config or {}).parallel_key


_CHOICES: dict[tuple[Any, ...], Choice] = {}
_KERNELS: dict[tuple[Any, ...], Kernel] = {}  # (choice memo, serial) -> loaded kernel


def get_kernel(
    name: str,
    dtypes: tuple[str, ...],
    target: "Target | str | None" = None,
    config: dict[str, Any] | None = None,
    size: int | None = None,
) -> Kernel:
    """The compiled kernel ``name`` for ``dtypes`` on ``target`` (host CPU by default).

    ``size`` is the number of elements the call touches: it selects the tuning bucket, and calls
    below the config's ``serial_below`` get the serial build of the same config.
    """
    if isinstance(target, dict):
        target = resolve_target(target)
    bucket = records.size_bucket(size) if size is not None else "large"
    memo = (name, dtypes, target, tuple(sorted(config.items())) if config else None, bucket)
    choice = _CHOICES.get(memo)
    if choice is None:
        choice = _CHOICES[memo] = choose(name, dtypes, target, config, bucket)
    small = size is not None and size < choice.serial_below
    kernel = _KERNELS.get((memo, small))
    if kernel is None:
        kernel = default_cache().get(choice.serial_key if small else choice.parallel_key)
        _KERNELS[(memo, small)] = kernel
    return kernel


def forget_choices() -> None:
    """Drop the memoised config choices (after new tuning records were written)."""
    _CHOICES.clear()
    _KERNELS.clear()
    records.reload()
