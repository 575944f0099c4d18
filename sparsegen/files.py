"""File helpers shared by the kernel cache and the exporter: atomic writes, digests, full disks."""

from __future__ import annotations

import atexit
import errno
import glob
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

# below this many free bytes, a failed write or link into a folder is put down to a full disk
_NEARLY_FULL = 1 << 20
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Have ``write`` fill a temporary file beside ``path``, then rename it into place.

    The temporary name keeps ``path``'s suffix (TVM's ``export_library`` picks the format from
    it) and is unique per process and thread, so readers never see a partial file.
    """
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp{path.suffix}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_temporaries(path: Path) -> None:
    """Remove the temporaries ``write_atomically`` left beside ``path`` (any suffix) in a process
    killed mid-write; call it only while holding the lock that keeps other writers of ``path`` out."""
    for tmp in path.parent.glob(f".{glob.escape(path.stem)}.*.tmp*"):
        tmp.unlink(missing_ok=True)


def file_record(path: Path) -> dict[str, int | str]:
    """The size and SHA-256 digest of the file at ``path``, as an entry's sidecar keeps them."""
    data = path.read_bytes()
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def file_problem(path: Path, record: object) -> str | None:
    """Why the file at ``path`` is not the one ``record`` (a ``file_record``) describes, or None.

    The size is compared first, so a truncated file is refused without reading it.
    """
    if not isinstance(record, dict) or not {"bytes", "sha256"} <= record.keys():
        return f"its record has no size and digest for {path.name}"
    try:
        size = path.stat().st_size
        if size != record["bytes"]:
            return f"{path.name} is {size} bytes, its record says {record['bytes']}"
        if hashlib.sha256(path.read_bytes()).hexdigest() != record["sha256"]:
            return f"the content of {path.name} differs from its recorded digest"
    except OSError as err:
        return f"{path.name} cannot be read ({err.strerror or err})"
    return None


def disk_full(err: BaseException, folder: Path) -> bool:
    """Whether ``err``, raised while writing into ``folder``, comes from a full disk: errno
    ENOSPC or EDQUOT, a tool (the linker) saying so, or a folder with almost no space left."""
    if isinstance(err, OSError) and err.errno in _FULL_ERRNOS:
        return True
    if any(os.strerror(code) in str(err) for code in _FULL_ERRNOS):
        return True
    try:
        return shutil.disk_usage(folder).free < _NEARLY_FULL
    except OSError:
        return False


_PROCESS_DIRS: dict[tuple[int, str], Path] = {}


def process_dir(purpose: str) -> Path:
    """A temporary directory for this process only (one per ``purpose``), removed when it exits."""
    owner = os.getpid()  # a forked child makes its own
    directory = _PROCESS_DIRS.get((owner, purpose))
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix=f"sparsegen-{purpose}-{owner}-"))
        _PROCESS_DIRS[(owner, purpose)] = directory
        atexit.register(lambda: os.getpid() == owner and shutil.rmtree(directory, True))
    return directory
