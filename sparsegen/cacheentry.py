"""One kernel cache entry on disk: its files, their verification against the sidecar, loading
and writing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

from . import cachedir, cuda_runtime, registry
from . import tvm_runtime as runtime
from .cachekey import KernelKey
from .files import file_problem, file_record, write_atomically

ABSENT = "it is not there"  # entry_problem's answer for an entry without a sidecar


class Kernel:
    """A loaded kernel module: its functions by short name (``kernel.fill(...)``)."""

    def __init__(self, key: KernelKey, module: Any, path: Path) -> None:
        definition = registry.kernel_def(key.kernel)
        self.key = key
        self.path = path
        self.functions: dict[str, Callable[..., Any]] = {
            name: runtime.wrap(module[definition.symbol(key.dtypes, name)],
                               f"{key.kernel}.{name}")
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


def files_problem(path: Path, meta: Any, suffixes: tuple[str, ...]) -> str | None:
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
    return files_problem(path, meta, tuple(f.suffix for f in entry_files(key, path)))


def _unlink_all(paths: Iterable[Path]) -> None:
    """Remove what exists of ``paths`` (what a failed build wrote of an entry)."""
    for path in paths:
        with suppress(OSError):
            path.unlink(missing_ok=True)


def write_entry(key: KernelKey, path: Path, executable: Any, device_code: dict[str, str | bytes],
                start: float) -> None:
    """Write the entry of ``key`` at ``path``: the library exported from ``executable``, the
    ``device_code`` files by suffix (a CUDA kernel's source and cubin), then the sidecar that
    vouches for them (with the seconds since ``start``); a failed write leaves no part of the
    entry behind."""
    writers: dict[Path, Callable[[Path], object]] = {}
    for suffix, content in device_code.items():
        writers[path.with_suffix(suffix)] = (
            (lambda tmp, text=content: tmp.write_text(text)) if isinstance(content, str)
            else (lambda tmp, data=content: tmp.write_bytes(data)))
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
    except Exception:
        _unlink_all([*writers, sidecar])
        raise
