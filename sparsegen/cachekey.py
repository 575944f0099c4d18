"""The kernel cache key: kernel, dtypes, target, config, and the versions of the code that built it."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import runtime
from ._version import __version__
from .schedules.space import Config
from .target import Target

_PACKAGE = Path(__file__).parent

CODE_THAT_SHAPES_BINARIES: tuple[str, ...] = (
    "templates",  # the kernels' TensorIR
    "schedules",  # the knob spaces and the transforms applied to the TensorIR
    "compiler.py",  # lowering and the passes run before tvm.compile
    "registry.py",  # which template and schedule a kernel uses, its symbols and dtype rules
    "target.py",  # the TVM target (CPU model and features, CUDA arch) a kernel is compiled for
    "cuda_runtime.py",  # the nvcc command that compiles a CUDA entry's cubin
    "hints.py",  # the marks templates leave and schedules realise
    "formats.py",  # the index dtype and the index phases' chunk sizes, built into the kernels
)
"""The package's files and folders (of ``.py`` files) whose change can change a kernel binary:
their contents are hashed into every key, so editing one rebuilds the kernels instead of loading
binaries built by the old code."""

ENTRY_FORMAT = 2
"""The layout of an entry: 2 = a sidecar with every file's size and SHA-256 (older entries,
which have none, are not looked up under the new keys)."""


def code_files() -> list[Path]:
    """The files of ``CODE_THAT_SHAPES_BINARIES``, in the order they are hashed."""
    files = []
    for entry in CODE_THAT_SHAPES_BINARIES:
        root = _PACKAGE / entry
        files.extend(sorted(root.rglob("*.py")) if root.is_dir() else [root])
    return files


def code_digest() -> str:
    """A digest of the code that shapes binaries (each file's package path and contents)."""
    digest = hashlib.sha256()
    for path in code_files():
        digest.update(path.relative_to(_PACKAGE).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=None)
def versions() -> dict[str, str]:
    """The versions a kernel binary depends on: TVM, tvm-ffi, sparsegen, and the code digest.

    A runtime-only install (no apache-tvm distribution) reads TVM's from its runtime folder
    (``runtime.tvm_version``), so a cache prebuilt elsewhere keeps its keys.
    """
    return {
        "tvm": runtime.tvm_version(),  # apache-tvm's, or the runtime folder's TVM_VERSION
        "tvm_ffi": importlib.metadata.version("apache-tvm-ffi"),
        "sparsegen": __version__,
        "codegen": code_digest(),
    }


@dataclass(frozen=True)
class KernelKey:
    """Everything that changes a kernel binary except the versions: op, dtypes, target, config."""

    kernel: str
    dtypes: tuple[str, ...]
    target: Target
    config: Config
    definition: str = ""  # an update rule's digest (its code is not in the package's digest)

    def record(self) -> dict[str, Any]:
        """The key as JSON-able data, versions included."""
        return {
            "kernel": self.kernel,
            "dtypes": list(self.dtypes),
            "target": self.target.as_dict,
            "config": dict(self.config),
            "versions": versions(),
            "entry_format": ENTRY_FORMAT,
            **({"definition": self.definition} if self.definition else {}),
        }

    def digest(self) -> str:
        """The hash that names the cache entry."""
        blob = json.dumps(self.record(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:24]

    def filename(self) -> str:
        """``<kernel>-<dtypes>-<target>-<digest>.so``."""
        return f"{self.kernel}-{'-'.join(self.dtypes)}-{self.target.label}-{self.digest()}.so"
