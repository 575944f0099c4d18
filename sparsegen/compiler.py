"""The compiler: template(dtypes) -> scheduled IRModule for a target -> compiled TVM module."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import tvm

from . import cuda_runtime
from .errors import SparsegenError
from .registry import KernelDef
from .schedules import marks
from .schedules.space import Config
from .target import Target


def _device_code_for(target: Target) -> Any:
    """Where a GPU is present, TVM compiles CUDA code as it builds (through the callback
    ``cuda_runtime`` registers): the block tells it which ``sm_XY`` to compile for."""
    if target.kind != "cuda":
        return nullcontext()
    try:
        cuda_runtime.load()
    except SparsegenError:
        pass  # no CUDA driver: TVM keeps the source, and nvcc compiles it after the build
    return cuda_runtime.serving_cubins(target.arch)


def lower(kernel: KernelDef, dtypes: tuple[str, ...], target: Target, config: Config) -> Any:
    """The scheduled ``IRModule`` of ``kernel`` for ``dtypes``, one function per phase: the
    template's PrimFuncs, named by their exported symbols, transformed by the target's schedule."""
    funcs = {
        kernel.symbol(dtypes, name): func.with_attr("global_symbol", kernel.symbol(dtypes, name))
        for name, func in kernel.build_template(dtypes).items()
    }
    space = kernel.space(target.kind)
    mod = space.apply(tvm.IRModule(funcs), dict(config))
    unrealised = marks.left(mod)
    if unrealised:
        raise SparsegenError(
            f"schedule {space.name!r} left the marks {sorted(set(unrealised))} of kernel "
            f"{kernel.name!r} unrealised (see sparsegen/hints.py)")
    return mod


def build(kernel: KernelDef, dtypes: tuple[str, ...], target: Target, config: Config) -> Any:
    """Compile ``kernel`` for ``dtypes``, ``target`` and schedule ``config``; returns the executable."""
    tvm_target = target.to_tvm()
    with tvm_target, _device_code_for(target):
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
    with tvm_target, _device_code_for(target):
        return mod, tvm.compile(mod, target=tvm_target)


def cuda_source(executable: Any) -> str:
    """The CUDA C of a CUDA executable's device code (TVM 0.27 emits it and compiles nothing)."""
    return executable.mod.imports[0].inspect_source("cuda")
