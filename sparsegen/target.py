"""Compile targets as plain data, and the host CPU's LLVM target (found once, remembered on disk)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import warnings
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from . import cachedir
from .config import cache_dir
from .errors import SparsegenError, TargetWarning
from .files import write_atomically


KINDS = ("llvm", "cuda")
"""The target kinds sparsegen compiles for."""


@dataclass(frozen=True)
class Target:
    """A TVM target as a JSON-able dict (``kind`` plus attributes), hashable for cache keys."""

    spec: str  # canonical JSON of the target dict, host included

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> "Target":
        """A target from a TVM target dict such as ``{"kind": "llvm", "mcpu": "znver3"}``."""
        if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
            raise SparsegenError(
                f"target must be a dict with a 'kind' of {', '.join(map(repr, KINDS))}, "
                f"got {spec!r}")
        return cls(json.dumps(spec, sort_keys=True))

    @property
    def as_dict(self) -> dict[str, Any]:
        """The target dict TVM accepts."""
        return json.loads(self.spec)

    @cached_property
    def kind(self) -> str:
        """``llvm`` or ``cuda`` (read once: every kernel call asks)."""
        return self.as_dict["kind"]

    @property
    def arch(self) -> str:
        """The ``sm_XY`` a CUDA target compiles for (``sm_90`` unless it says)."""
        return self.as_dict.get("arch", "sm_90")

    @property
    def label(self) -> str:
        """A short name for file names and tables, such as ``llvm-znver3``."""
        spec = self.as_dict
        detail = spec.get("mcpu") or spec.get("arch") or "default"
        return f"{spec['kind']}-{detail}"

    def to_tvm(self) -> Any:
        """The ``tvm.target.Target`` (imports the TVM compiler)."""
        import tvm

        return tvm.target.Target(self.as_dict)


def first_processor() -> list[str] | None:
    """The first processor's lines of ``/proc/cpuinfo`` (``flags : ...``, stripped), or None
    where there is no such file."""
    lines = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():  # first processor only
                    break
                lines.append(line.strip())
    except OSError:
        return None
    return lines


def cpu_flags() -> set[str]:
    """The first processor's feature flags (``avx2``, ``sse4_2``, ...; empty where unknown)."""
    for line in first_processor() or []:
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def _cpu_fingerprint() -> str:
    """A digest of what identifies this CPU model and its features (no TVM import)."""
    parts = [platform.machine(), platform.system()]
    lines = first_processor()
    if lines is None:
        parts.append(platform.processor())
    else:
        parts += [line for line in lines if line.split(":", 1)[0].strip() in
                  ("vendor_id", "model name", "flags", "Features", "CPU part")]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _detect_host_llvm() -> dict[str, Any]:
    """Ask LLVM (through TVM) for this machine's triple and CPU name."""
    try:
        from tvm.target import codegen
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] != "tvm":
            raise
        raise SparsegenError(
            "the host CPU target is unknown: asking LLVM needs the TVM compiler, which is not "
            "installed; set SPARSEGEN_CPU_TARGET to the target JSON the kernel cache was built "
            "for"
        ) from None

    mcpu = codegen.llvm_get_system_cpu()
    triple = codegen.llvm_get_system_triple()
    if mcpu == "generic":
        warnings.warn(
            "LLVM does not recognise this CPU and reports 'generic': kernels are compiled "
            "without AVX2/FMA. Set SPARSEGEN_CPU_TARGET to a target JSON to choose the CPU.",
            TargetWarning,
            stacklevel=3,
        )
    return {"kind": "llvm", "mtriple": triple, "mcpu": mcpu}


def _recorded_host(record: Path, fingerprint: str) -> Target | None:
    """The target in the host record at ``record`` if it was written for ``fingerprint`` (this
    CPU) and names an LLVM CPU; None for a missing, unreadable, foreign or malformed record."""
    try:
        data = json.loads(record.read_text())
        spec = data["target"]
        if data["fingerprint"] != fingerprint or spec["kind"] != "llvm" or not spec["mcpu"]:
            return None
        return Target.from_dict(spec)
    except (OSError, ValueError, TypeError, KeyError, SparsegenError):
        return None


def _remember_host(spec: dict[str, Any], fingerprint: str) -> None:
    """Keep this CPU's target in the cache directory (or this process's fallback for it)."""
    configured = cache_dir()
    text = json.dumps({"fingerprint": fingerprint, "target": spec}, sort_keys=True)
    directory = cachedir.writable(configured)
    try:
        write_atomically(directory / "hosts" / f"{fingerprint}.json", lambda t: t.write_text(text))
    except OSError as err:  # the record only saves asking LLVM again: never fatal
        if directory == configured:
            fallback = cachedir.fall_back(configured, cachedir.describe(err))
            with contextlib.suppress(OSError):
                write_atomically(fallback / "hosts" / f"{fingerprint}.json",
                                 lambda t: t.write_text(text))


@lru_cache(maxsize=None)
def host_cpu() -> Target:
    """The LLVM target of this machine's real CPU (``$SPARSEGEN_CPU_TARGET`` JSON overrides it).

    LLVM is asked once per CPU model; the answer is kept in the cache directory, with the CPU's
    fingerprint, so that a warm process finds its kernels without importing the TVM compiler.
    A record written for another fingerprint is not trusted: LLVM is asked and it is replaced.
    """
    override = os.environ.get("SPARSEGEN_CPU_TARGET")
    if override:
        try:
            spec = json.loads(override)
        except json.JSONDecodeError as err:
            raise SparsegenError(
                f"SPARSEGEN_CPU_TARGET={override!r} is not valid JSON: {err}") from None
        if not isinstance(spec, dict) or spec.get("kind") != "llvm":
            raise SparsegenError(
                f"SPARSEGEN_CPU_TARGET must be a JSON dict with \"kind\": \"llvm\" (the host "
                f"CPU's target), got {override!r}")
        return Target.from_dict(spec)
    fingerprint = _cpu_fingerprint()
    found = _recorded_host(cache_dir() / "hosts" / f"{fingerprint}.json", fingerprint)
    if found is not None:
        return found
    spec = _detect_host_llvm()
    _remember_host(spec, fingerprint)
    return Target.from_dict(spec)


def resolve(target: "Target | str | dict[str, Any] | None") -> Target:
    """A ``Target`` from ``None``/``'cpu'``/``'llvm'`` (the host), ``'cuda'``, a dict or a JSON string."""
    if target is None or target in ("cpu", "llvm", "host"):
        return host_cpu()
    if isinstance(target, Target):
        return target
    if target == "cuda":
        return cuda()
    if isinstance(target, str):
        try:
            target = json.loads(target)
        except json.JSONDecodeError:
            raise SparsegenError(
                f"target must be 'cpu', 'cuda' or a target JSON dict, got {target!r}"
            ) from None
    return Target.from_dict(target)


def cuda(arch: str = "sm_90") -> Target:
    """A CUDA target for ``arch`` with the host CPU as its host."""
    return Target.from_dict({"kind": "cuda", "arch": arch, "host": host_cpu().as_dict})
