"""The kernel cache key: kernel, dtypes, target, config, the versions of the tools that built it,
and a digest of exactly the code that shapes that kernel's binary.

A kernel's code is its template module, its schedule module for the target kind, the common
modules every build runs (``COMMON_CODE``, and ``CUDA_CODE`` for CUDA targets), each with every
package module it imports, transitively (read from source, nothing imported), and its own
definition: the data of its ``KernelDef`` (not registry.py's file) and the ``KernelDef`` code that
names its symbols. Editing one template rebuilds the kernels whose template is or imports it,
nothing else.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import registry
from . import tvm_runtime as runtime
from ._version import __version__
from .errors import SparsegenError
from .registry import KernelDef
from .schedules.space import Config
from .target import Target

_PACKAGE = Path(__file__).parent
"""The package source the code digests read (tests point it at an edited copy)."""

_NAME = __name__.partition(".")[0]

COMMON_CODE: tuple[str, ...] = (
    f"{_NAME}.compiler",  # lowering and the passes run before tvm.compile
    f"{_NAME}.target",  # the TVM target (CPU model and features, CUDA arch) a kernel is built for
    f"{_NAME}.hints",  # the marks templates leave and schedules realise
    f"{_NAME}.formats",  # the index dtype and the index phases' chunk sizes, built into kernels
)
"""Modules whose code, with what it imports, shapes every kernel's binary."""

CUDA_CODE: tuple[str, ...] = (
    f"{_NAME}.cuda_runtime",  # the nvcc command that compiles a CUDA entry's cubin
)
"""Modules whose code, with what it imports, shapes every CUDA kernel's binary (and no other)."""

OUTSIDE_THE_CLOSURE: dict[str, str] = {
    _NAME: "the package's __init__: the front end",
    f"{_NAME}.registry": "enters a key as that kernel's own definition (definition_text), not as "
                        "a file: editing one KernelDef rebuilds that kernel only",
    f"{_NAME}.errors": "exception classes",
    f"{_NAME}.cachedir": "where cache files are written",
    f"{_NAME}.config": "the cache directory setting",
    f"{_NAME}.files": "atomic writes and file digests",
    f"{_NAME}.runtime": "loading libraries (tvm-ffi, libtvm_runtime)",
    f"{_NAME}._version": "the version, keyed on its own",
}
"""Package modules that code shaping binaries imports but whose text changes no binary: the
closure stops there (they are not hashed, their imports not followed). ``CUDA_CODE`` is outside
the closure of non-CUDA kernels too (compiler.py calls it for CUDA targets only)."""

ENTRY_FORMAT = 2
"""The layout of an entry: 2 = a sidecar with every file's size and SHA-256 (older entries,
which have none, are not looked up under the new keys)."""

_DEFINITION_CODE = ("KernelDef", "_template_funcs", "resolve")
"""The registry's code that shapes every binary: the class (symbol names) and what calls the
template."""


@lru_cache(maxsize=None)
def _path_of(root: Path, module: str) -> str | None:
    """The package path (``templates/dot.py``) of module ``module`` under ``root``, if any."""
    base = "/".join(module.split(".")[1:])
    for candidate in (f"{base}/__init__.py".lstrip("/"), f"{base}.py" if base else ""):
        if candidate and os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def _owner(root: Path, name: str) -> str | None:
    """The package module ``name`` lies in (itself, or its longest prefix that is a module)."""
    while name and _path_of(root, name) is None:
        name = name.rpartition(".")[0]
    return name or None


def _import_lines(source: bytes) -> list[bytes]:
    """The lines of ``source`` that start an import statement, each with its parenthesised or
    continued lines (found by the word ``import``: scanning every line start costs more)."""
    found = []
    at = source.find(b"import")
    while at != -1:
        start = source.rfind(b"\n", 0, at) + 1
        head = source[start:at].strip()
        if (not head or head.startswith(b"from ")) and source[at + 6:at + 7] in (b" ", b"\t", b"("):
            end = _line_end(source, at)
            if b"(" in source[at:end] and b")" not in source[at:end]:
                end = _line_end(source, source.find(b")", at))
            while end < len(source) and source[start:end].rstrip().endswith(b"\\"):
                end = _line_end(source, end + 1)
            found.append(source[start:end].strip())
            at = source.find(b"import", end)
        else:
            at = source.find(b"import", at + 6)
    return found


def _line_end(source: bytes, at: int) -> int:
    end = source.find(b"\n", at) if at != -1 else -1
    return len(source) if end == -1 else end


def import_statements(source: bytes) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``source``, at module level or inside functions.

    Only the lines that start one are parsed (parsing a template whole takes milliseconds);
    where those lines do not parse on their own (an import line of a docstring, say), the whole
    source is."""
    try:
        nodes = ast.parse(b"\n".join(_import_lines(source))).body  # import statements only
    except SyntaxError:
        nodes = list(ast.walk(ast.parse(source)))
    return [node for node in nodes if isinstance(node, (ast.Import, ast.ImportFrom))]


def import_base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` statement of ``module`` names (its relative
    dots resolved against ``module``, a package's own name when ``is_package``)."""
    base = node.module or ""
    if node.level:
        anchor = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            anchor = anchor.rpartition(".")[0]
        base = f"{anchor}.{base}" if base else anchor
    return base


@lru_cache(maxsize=None)
def _read(root: Path, module: str) -> tuple[str, str, tuple[str, ...]]:
    """Module ``module`` under ``root``: its package path, the digest of its text, and the
    package modules it imports (by name; ``from X import n`` imports ``X.n`` where that is a
    module, else ``X``)."""
    path = _path_of(root, module)
    if path is None:
        raise SparsegenError(f"no source for module {module!r} under {root}")
    with open(os.path.join(root, path), "rb") as file:
        source = file.read()
    is_package = path.endswith("__init__.py")
    found = []
    for node in import_statements(source):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
            continue
        base = import_base(node, module, is_package)
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            found.append(submodule if _path_of(root, submodule) else base)
    inside = [name for name in found if name == _NAME or name.startswith(_NAME + ".")]
    imported = tuple(dict.fromkeys(owner for name in inside if (owner := _owner(root, name))))
    return path, hashlib.sha256(source).hexdigest()[:16], imported


def _packages(module: str) -> list[str]:
    """The packages importing ``module`` runs first (the package root included)."""
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


@lru_cache(maxsize=None)
def closure(root: Path, modules: tuple[str, ...], cuda: bool) -> frozenset[str]:
    """``modules``, every package module they import, transitively, and the packages those lie
    in, short of ``OUTSIDE_THE_CLOSURE`` (and of ``CUDA_CODE`` unless ``cuda``)."""
    stop = set(OUTSIDE_THE_CLOSURE) | (set() if cuda else set(CUDA_CODE))
    found: set[str] = set()
    pending = list(modules)
    while pending:
        module = pending.pop()
        if module in found or module in stop:
            continue
        found.add(module)
        pending += [*_read(root, module)[2], *_packages(module)]
    return frozenset(found)


_BLOCK = r"^(?:@.*\n)*(?:class|def) {name}\b.*\n(?:(?:[ \t].*)?\n)*"


@lru_cache(maxsize=None)
def _definition_code(root: Path) -> str:
    """A digest of the registry's code that shapes every binary (``_DEFINITION_CODE``)."""
    text = (root / "registry.py").read_text()
    blocks = []
    for name in _DEFINITION_CODE:
        found = re.search(_BLOCK.format(name=name), text, re.M)
        if found is None:
            raise SparsegenError(f"{root / 'registry.py'} defines no {name} (cachekey hashes it)")
        blocks.append(found.group())
    return hashlib.sha256("".join(blocks).encode()).hexdigest()[:16]


def _module_of(ref: str) -> str:
    return ref.partition(":")[0]


def _schedule(kernel: KernelDef, target_kind: str) -> str | None:
    return next((ref for kind, ref in kernel.schedules if kind == target_kind), None)


def definition_text(kernel: KernelDef, target_kind: str) -> str:
    """The kernel's own definition as canonical text: template, schedule for ``target_kind``,
    dtype parameters and dtypes, signatures and the ``definition`` digest (its doc is left out,
    as its schedules for other target kinds)."""
    return json.dumps({
        "template": kernel.template,
        "schedule": _schedule(kernel, target_kind),
        "dtype_params": list(kernel.dtype_params),
        "dtypes": list(kernel.dtypes),
        "signatures": [list(s) for s in kernel.signatures],
        "definition": kernel.definition,
    }, sort_keys=True)


def kernel_modules(kernel: KernelDef, target_kind: str) -> frozenset[str]:
    """The package modules whose code shapes ``kernel``'s binary for ``target_kind``."""
    return _kernel_modules(_PACKAGE, kernel, target_kind)


def _kernel_modules(root: Path, kernel: KernelDef, target_kind: str) -> frozenset[str]:
    cuda = target_kind == "cuda"
    schedule = _schedule(kernel, target_kind)
    return frozenset().union(
        closure(root, (_module_of(kernel.template),), cuda),
        closure(root, (_module_of(schedule),), cuda) if schedule is not None else (),
        closure(root, COMMON_CODE + (CUDA_CODE if cuda else ()), cuda),
    )


def kernel_code(kernel: KernelDef, target_kind: str) -> dict[str, Any]:
    """What a kernel's code digest hashes: each module of ``kernel_modules`` (package path ->
    digest of its text), the registry's ``KernelDef`` code and the kernel's definition."""
    return _kernel_code(_PACKAGE, kernel, target_kind)


def _kernel_code(root: Path, kernel: KernelDef, target_kind: str) -> dict[str, Any]:
    modules = dict(_read(root, module)[:2] for module in _kernel_modules(root, kernel, target_kind))
    return {"modules": modules, "registry": _definition_code(root),
            "definition": definition_text(kernel, target_kind)}


@lru_cache(maxsize=None)
def _kernel_digest(root: Path, kernel: KernelDef, target_kind: str) -> str:
    code = _kernel_code(root, kernel, target_kind)
    lines = sorted(f"{path} {digest}" for path, digest in code["modules"].items())
    lines += [f"registry {code['registry']}", code["definition"]]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def kernel_digest(kernel: KernelDef | str, target_kind: str) -> str:
    """A digest of the code that shapes ``kernel``'s binary for ``target_kind`` (``kernel_code``),
    computed once per process."""
    if isinstance(kernel, str):
        kernel = registry.kernel_def(kernel)
    return _kernel_digest(_PACKAGE, kernel, target_kind)


def code_digest() -> str:
    """A digest of the code of every registered kernel for every target kind: what a set of
    entries was built from (a prebuilt bundle, tuning records, an export); no key holds it."""
    lines = sorted(f"{kind} {name} {kernel_digest(kernel, kind)}"
                   for name, kernel in registry.KERNELS.items()
                   for kind, _ in kernel.schedules)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def forget() -> None:
    """Forget the digests and imports read so far (tests that edit a copy of the package)."""
    for cached in (_path_of, _read, closure, _definition_code, _kernel_digest):
        cached.cache_clear()


@lru_cache(maxsize=None)
def tool_versions() -> dict[str, str]:
    """The versions in every key: TVM, tvm-ffi and sparsegen.

    A runtime-only install (no apache-tvm distribution) reads TVM's from its runtime folder
    (``runtime.tvm_version``), so a cache prebuilt elsewhere keeps its keys.
    """
    return {
        "tvm": runtime.tvm_version(),  # apache-tvm's, or the runtime folder's TVM_VERSION
        "tvm_ffi": importlib.metadata.version("apache-tvm-ffi"),
        "sparsegen": __version__,
    }


def versions() -> dict[str, str]:
    """The tool versions and the digest of every kernel's code (``code_digest``): what built a
    set of entries, as tuning records, export manifests and the GPU bundle record it."""
    return {**tool_versions(), "codegen": code_digest()}


@dataclass(frozen=True)
class KernelKey:
    """Everything that changes a kernel binary except the versions: op, dtypes, target, config."""

    kernel: str
    dtypes: tuple[str, ...]
    target: Target
    config: Config
    definition: str = ""  # an update rule's digest (a user rule's code is in no package file)

    def record(self) -> dict[str, Any]:
        """The key as JSON-able data, the tool versions and the kernel's code digest included."""
        return {
            "kernel": self.kernel,
            "dtypes": list(self.dtypes),
            "target": self.target.as_dict,
            "config": dict(self.config),
            "versions": tool_versions(),
            "code": kernel_digest(self.kernel, self.target.kind),
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
