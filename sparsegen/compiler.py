"""The compiler: template(dtypes) -> scheduled IRModule for a target -> compiled TVM module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tvm
from tvm import s_tir

from .errors import SparsegenError
from .registry import KernelDef
from .schedules.space import Config
from .target import Target


def lower(kernel: KernelDef, dtypes: tuple[str, ...], target: Target, config: Config) -> Any:
    """The scheduled ``IRModule`` of ``kernel`` for ``dtypes`` with one function per phase.

    Knobs that a template realises itself (a keyword of the template function, such as
    ``lanes``) are passed to it; the schedule applies the rest.
    """
    funcs = {
        kernel.symbol(dtypes, name): func.with_attr("global_symbol", kernel.symbol(dtypes, name))
        for name, func in kernel.build_template(dtypes, dict(config)).items()
    }
    sch = s_tir.Schedule(tvm.IRModule(funcs), enable_check=False)
    kernel.space(target.kind).apply(sch, dict(config))
    return sch.mod


def build(kernel: KernelDef, dtypes: tuple[str, ...], target: Target, config: Config) -> Any:
    """Compile ``kernel`` for ``dtypes``, ``target`` and schedule ``config``; returns the executable."""
    tvm_target = target.to_tvm()
    with tvm_target:
        return tvm.compile(lower(kernel, dtypes, target, config), target=tvm_target)


def build_many(
    parts: Sequence[tuple[KernelDef, tuple[str, ...], Config]], target: Target
) -> tuple[Any, Any]:
    """Compile several kernels into one module (one library for ``sparsegen export``).

    Returns the scheduled ``IRModule``, whose function parameters describe the library, and the
    executable.
    """
    mod = tvm.IRModule({
        gvar.name_hint: func
        for kernel, dtypes, config in parts
        for gvar, func in lower(kernel, dtypes, target, config).functions.items()
    })
    tvm_target = target.to_tvm()
    with tvm_target:
        return mod, tvm.compile(mod, target=tvm_target)


def cuda_binary(executable: Any, target: Target) -> bytes:
    """The cubin of a CUDA executable's device code, compiled by nvcc for the target's ``arch``.

    TVM 0.27 without a CUDA runtime emits CUDA C and compiles nothing; nvcc turns it into a
    cubin here, so a machine without a GPU can build and verify the device code.
    """
    import shutil

    from tvm.support import nvcc

    if shutil.which("nvcc") is None:
        raise SparsegenError("building CUDA kernels needs nvcc (the CUDA toolkit) on PATH")
    source = executable.mod.imports[0].inspect_source("cuda")
    arch = target.as_dict.get("arch", "sm_90")
    with target.to_tvm():
        return bytes(nvcc.compile_cuda(source, target_format="cubin", arch=arch, compiler="nvcc"))
