"""Where the kernel cache writes: the configured directory while it takes files, else (after one
warning naming the directory and the reason) a temporary directory of this process's own.

Reading never needs a write: a complete prebuilt cache on a read-only mount is used as it is,
and the configured directory is first tried for writing when something must be written there.
"""

from __future__ import annotations

import os
import tempfile
import threading
import warnings
from pathlib import Path

from .errors import KernelCacheWarning, SparsegenError
from .files import process_dir

SUBDIRS = ("kernels", "hosts")
_FALLBACK: dict[Path, tuple[Path, str]] = {}  # configured -> (this process's directory, why)
_WRITABLE: set[Path] = set()  # configured directories that took a probe file
_LOCK = threading.Lock()


def describe(err: OSError) -> str:
    """An ``OSError`` as a reason in a sentence: ``Read-only file system: /mnt/cache/kernels``."""
    text = err.strerror or str(err)
    return f"{text}: {err.filename}" if err.filename else text


def unwritable_reason(directory: Path) -> str | None:
    """Why the cache's files cannot be written under ``directory``, or None (a probe file is
    created and removed in its ``kernels`` folder)."""
    if directory.exists() and not directory.is_dir():
        return "it is a file, not a directory"
    try:
        for sub in SUBDIRS:
            (directory / sub).mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=directory / "kernels", prefix=".probe-")
        os.close(handle)
        os.unlink(name)
    except OSError as err:
        return describe(err)
    return None


def fall_back(directory: Path, reason: str, warn: bool = True) -> Path:
    """Send this process's later writes for the configured ``directory`` to a temporary
    directory, and return it; ``warn`` says so once (a caller that raises says it itself)."""
    with _LOCK:
        if directory in _FALLBACK:
            return _FALLBACK[directory][0]
        fallback = process_dir("cache")
        for sub in SUBDIRS:
            (fallback / sub).mkdir(exist_ok=True)
        _FALLBACK[directory] = (fallback, reason)
        _WRITABLE.discard(directory)
    if warn:
        warnings.warn(
            f"the kernel cache directory {directory} is not writable ({reason}); kernels are "
            f"built in {fallback} for this process only (set SPARSEGEN_CACHE_DIR to a writable "
            "directory to keep them)",
            KernelCacheWarning,
            stacklevel=3,
        )
    return fallback


def writable(directory: Path) -> Path:
    """Where writes for the configured ``directory`` go: itself while it takes files, else this
    process's fallback directory (the first time with a ``KernelCacheWarning``)."""
    if directory in _FALLBACK:
        return _FALLBACK[directory][0]
    if directory not in _WRITABLE:
        reason = unwritable_reason(directory)
        if reason is not None:
            return fall_back(directory, reason)
        _WRITABLE.add(directory)
    return directory


def require_writable(directory: Path, purpose: str) -> Path:
    """``directory`` itself, checked to take files; ``SparsegenError`` naming ``purpose`` (which
    a temporary directory would not serve) and the reason where it does not."""
    reason = _FALLBACK[directory][1] if directory in _FALLBACK else unwritable_reason(directory)
    if reason is not None:
        raise SparsegenError(f"the kernel cache directory {directory} is not writable ({reason}), "
                             f"so {purpose} has nowhere to keep kernels; set SPARSEGEN_CACHE_DIR "
                             "to a writable directory")
    return directory


def readable(directory: Path) -> tuple[Path, ...]:
    """The directories holding entries for the configured ``directory``: itself, then this
    process's fallback if it has one."""
    fallback = _FALLBACK.get(directory)
    return (directory,) if fallback is None else (directory, fallback[0])
