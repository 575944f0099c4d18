"""File helpers shared by the kernel cache and the exporter."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path


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
