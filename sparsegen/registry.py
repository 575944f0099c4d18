"""The kernel registry: kernel name -> template, schedule space per target kind, dtype rules.

Templates and schedules are named as ``"module:attribute"`` strings and imported only when a
kernel is built, so that looking up a cached kernel never imports the TVM compiler.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .errors import SparsegenError

DATA_DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64")
"""Element dtypes every storage kernel is generated for (MXNet's sparse dtypes)."""


@dataclass(frozen=True)
class KernelDef:
    """A generated kernel family: one module of functions per (dtypes, target, config)."""

    name: str
    template: str  # "module:function" returning {function name: PrimFunc}
    schedules: tuple[tuple[str, str], ...]  # (target kind, "module:ScheduleSpace")
    dtype_params: tuple[str, ...]
    signatures: tuple[tuple[str, str], ...]  # (function, argument list and what it writes)
    doc: str

    def build_template(self, dtypes: tuple[str, ...], config: dict[str, Any]) -> dict[str, Any]:
        """The template's PrimFuncs for ``dtypes``, given the config knobs it takes as keywords."""
        template = _resolve(self.template)
        accepted = inspect.signature(template).parameters
        return template(*dtypes, **{k: v for k, v in config.items() if k in accepted})

    def space(self, target_kind: str) -> Any:
        """The schedule space for a target kind (imports TVM)."""
        for kind, ref in self.schedules:
            if kind == target_kind:
                return _resolve(ref)
        raise SparsegenError(
            f"kernel {self.name!r} has no schedule for target kind {target_kind!r}; "
            f"it has {[k for k, _ in self.schedules]}"
        )

    def symbol(self, dtypes: tuple[str, ...], function: str) -> str:
        """The exported symbol of one function of this kernel for ``dtypes``."""
        return "_".join(("sg", self.name, *dtypes, function))

    def check_dtypes(self, dtypes: tuple[str, ...]) -> None:
        """Raise if ``dtypes`` does not match the kernel's dtype parameters."""
        if len(dtypes) != len(self.dtype_params) or any(d not in DATA_DTYPES for d in dtypes):
            raise SparsegenError(
                f"kernel {self.name!r} takes dtypes {self.dtype_params} from {DATA_DTYPES}, "
                f"got {dtypes}"
            )


@lru_cache(maxsize=None)
def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


_CPU_ROWS = (("llvm", "sparsegen.schedules.cpu:ROWS"),)

KERNELS: dict[str, KernelDef] = {
    k.name: k
    for k in (
        KernelDef(
            "cast_dense_rsp",
            "sparsegen.templates.cast:dense_to_row_sparse",
            _CPU_ROWS,
            ("dtype",),
            (
                ("mark", "(x[n,d] dtype, pos[n+1] int64 WRITTEN)"),
                ("fill", "(x[n,d] dtype, pos[n+1] int64, data[k,d] dtype WRITTEN, "
                         "indices[k] int64 WRITTEN)"),
            ),
            "dense -> row_sparse: mark non-zero rows (prefix sum), then compact them",
        ),
        KernelDef(
            "cast_rsp_dense",
            "sparsegen.templates.cast:row_sparse_to_dense",
            _CPU_ROWS,
            ("dtype",),
            (("scatter", "(data[k,d] dtype, indices[k] int64, out[n,d] dtype WRITTEN)"),),
            "row_sparse -> dense: zero the output, scatter the stored rows",
        ),
        KernelDef(
            "cast_dense_csr",
            "sparsegen.templates.cast:dense_to_csr",
            _CPU_ROWS,
            ("dtype",),
            (
                ("count", "(x[n,d] dtype, indptr[n+1] int64 WRITTEN)"),
                ("fill", "(x[n,d] dtype, indptr[n+1] int64, data[nnz] dtype WRITTEN, "
                         "indices[nnz] int64 WRITTEN)"),
            ),
            "dense -> csr: count non-zeros per row (prefix sum), then gather them",
        ),
        KernelDef(
            "cast_csr_dense",
            "sparsegen.templates.cast:csr_to_dense",
            _CPU_ROWS,
            ("dtype",),
            (("scatter", "(data[nnz] dtype, indices[nnz] int64, indptr[n+1] int64, "
                         "out[n,d] dtype WRITTEN)"),),
            "csr -> dense: zero each row, scatter its stored values",
        ),
        KernelDef(
            "retain",
            "sparsegen.templates.retain:retain",
            _CPU_ROWS,
            ("dtype",),
            (("gather", "(data[k,d] dtype, indices[k] int64, req[m] int64, "
                        "out[m,d] dtype WRITTEN)"),),
            "retain: rows of a row_sparse array by requested id, zero rows where not stored",
        ),
    )
}
"""Every kernel family sparsegen generates."""


def kernel_def(name: str) -> KernelDef:
    """The registered kernel ``name``; an unknown name raises with the known ones."""
    try:
        return KERNELS[name]
    except KeyError:
        raise SparsegenError(f"unknown kernel {name!r}; known: {sorted(KERNELS)}") from None


@dataclass(frozen=True)
class OpRule:
    """How a front-end op runs for one combination of input storage types."""

    output_stype: str
    implementation: str  # "module:function" of the storage-level op (sparsegen.ops)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Call the storage-level implementation."""
        return _resolve(self.implementation)(*args, **kwargs)


OP_RULES: dict[tuple[str, tuple[str, ...]], OpRule] = {
    ("cast_storage->row_sparse", ("default",)):
        OpRule("row_sparse", "sparsegen.ops.cast:dense_to_row_sparse"),
    ("cast_storage->default", ("row_sparse",)):
        OpRule("default", "sparsegen.ops.cast:row_sparse_to_dense"),
    ("cast_storage->csr", ("default",)): OpRule("csr", "sparsegen.ops.cast:dense_to_csr"),
    ("cast_storage->default", ("csr",)): OpRule("default", "sparsegen.ops.cast:csr_to_dense"),
    ("retain", ("row_sparse",)): OpRule("row_sparse", "sparsegen.ops.retain:retain"),
}
"""(op, input storage types) -> output storage type and implementation: storage inference as data."""


def op_rule(op: str, stypes: tuple[str, ...]) -> OpRule | None:
    """The rule for ``op`` on inputs of ``stypes``, or ``None`` when no sparse kernel exists."""
    return OP_RULES.get((op, stypes))
