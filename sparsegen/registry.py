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
from .formats import DATA_DTYPES
from .templates.optim_families import OPTIMIZERS, OptimFamily


@dataclass(frozen=True)
class KernelDef:
    """A generated kernel family: one module of functions per (dtypes, target, config)."""

    name: str
    template: str  # "module:function" returning {function name: PrimFunc}
    schedules: tuple[tuple[str, str], ...]  # (target kind, "module:ScheduleSpace")
    dtype_params: tuple[str, ...]
    signatures: tuple[tuple[str, str], ...]  # (function, argument list and what it writes)
    doc: str
    dtypes: tuple[str, ...] = DATA_DTYPES  # element dtypes the kernel is generated for

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
        if len(dtypes) != len(self.dtype_params) or any(d not in self.dtypes for d in dtypes):
            raise SparsegenError(
                f"kernel {self.name!r} takes dtypes {self.dtype_params} from {self.dtypes}, "
                f"got {dtypes}"
            )


@lru_cache(maxsize=None)
def _resolve(ref: str) -> Any:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


_ROWS = (("llvm", "sparsegen.schedules.cpu:ROWS"), ("cuda", "sparsegen.schedules.cuda:ROWS"))
"""Row-parallel schedules: chunks on the CPU thread pool (llvm); on a GPU (cuda) a thread, warp or
block per row, its threads on neighbouring columns."""

_GATHER = (("llvm", "sparsegen.schedules.cpu:ROWS_PREFETCH"),
           ("cuda", "sparsegen.schedules.cuda:ROWS"))
"""Row-parallel schedules for templates that gather rows at random ids (prefetch knob)."""


def _optim_kernel(family: OptimFamily) -> KernelDef:
    """The in-place kernel of an optimizer family (a row of sparsegen.templates.optim_families;
    states are (n, d) arrays)."""
    written = "".join(f", {s}[n,d] dtype WRITTEN" for s in family.states)
    hyper = ", ".join(family.hyper)
    rows = {
        "lazy": "grad_data[k,d] dtype, grad_indices[k] int64 <n sorted",
        "std": "grad_data[k,d] dtype, grad_indices[k] int64 <n sorted",
        "dense": "grad[n,d] dtype",
    }
    return KernelDef(
        f"optim_{family.name}",
        f"sparsegen.templates.optim:{family.name}",
        _GATHER,
        ("dtype",),
        tuple((f, f"(weight[n,d] dtype WRITTEN, {rows[f]}{written}, {hyper} float32)")
              for f in family.functions),
        family.doc,
        ("float16", "float32", "float64"),
    )


_OPTIM_KERNELS = tuple(_optim_kernel(family) for family in OPTIMIZERS)
"""Optimizer updates, in place (sparsegen/ops/optim.py runs them)."""

_SORT_BY_COLUMN = (
    ("sort_dense", "(indices[nnz] int64, indptr[n+1] int64, keys[nnz] int64 WRITTEN, "
                   "src[nnz] int64 WRITTEN, erow[nnz] int64 WRITTEN, "
                   "table[t] int64 WRITTEN internal)"),
    ("sort_pass", "(keys[u] int64 internal, src[u] int64, keys_out[u] int64 WRITTEN, "
                  "src_out[u] int64 WRITTEN, table[t] int64 WRITTEN, shift int64)"),
    ("unique", "(keys[u] int64 internal, uidx[u] int64 WRITTEN, seg[u+1] int64 WRITTEN, "
               "count[1] int64 WRITTEN, runs[c+1] int64 WRITTEN)"),
)
_CSR_ARGS = "data[nnz] dtype, indices[nnz] int64 <k sorted(indptr), indptr[n+1] int64 ptr(nnz)"

_DOT_KERNELS = (
    KernelDef(
        "dot_csr_dense",
        "sparsegen.templates.dot:csr_dense",
        _GATHER,
        ("dtype",),
        (("matmul", f"({_CSR_ARGS}, rhs[k,d] dtype, out[n,d] dtype WRITTEN)"),),
        "csr · dense -> dense: each csr row accumulates its rhs rows (prefetched) in place",
    ),
    KernelDef(
        "dot_csr_rsp",
        "sparsegen.templates.dot:csr_row_sparse",
        _ROWS,
        ("dtype",),
        (("matmul", "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), "
                    "indptr[n+1] int64 ptr(nnz), rdata[k,d] dtype, rindices[k] int64 sorted, "
                    "out[n,d] dtype WRITTEN)"),),
        "csr · row_sparse -> dense: rhs rows found by binary search among the stored ids",
    ),
    KernelDef(
        "dot_csrT",
        "sparsegen.templates.dot:csr_t",
        _GATHER,
        ("dtype",),
        (
            *_SORT_BY_COLUMN[:1],
            ("gather_rsp", "(indices[nnz] int64, indptr[n+1] int64, rindices[k] int64, "
                           "starts[k+1] int64 WRITTEN, keys[u] int64 WRITTEN internal, "
                           "src[u] int64 WRITTEN, erow[nnz] int64 WRITTEN)"),
            *_SORT_BY_COLUMN[1:],
            ("values", "(data[nnz] dtype, src[u] int64 internal, erow[nnz] int64, seg[s+1] int64, "
                       "rhs[k,d] dtype, out[s,d] dtype WRITTEN)"),
        ),
        "csrᵀ · dense/row_sparse -> row_sparse: radix sort entries by column (blocked passes), "
        "list the distinct columns, then each output row sums its column's entries",
    ),
    KernelDef(
        "dot_dense_csr",
        "sparsegen.templates.dot:dense_csr",
        _ROWS,
        ("dtype",),
        (
            ("matmul", "(lhs[m,k] dtype, data[nnz] dtype, indices[nnz] int64 <n sorted(indptr), "
                       "indptr[k+1] int64 ptr(nnz), out[m,n] dtype WRITTEN)"),
            *_SORT_BY_COLUMN,
            ("rank", "(seg[s+1] int64 internal, src[nnz] int64, ranks[nnz] int64 WRITTEN)"),
            ("values", "(lhs[m,k] dtype, data[nnz] dtype, indptr[k+1] int64, "
                       "ranks[nnz] int64 internal, "
                       "columns[s] int64, out_data[m,s] dtype WRITTEN, "
                       "out_indices[m,s] int64 WRITTEN, out_indptr[m+1] int64 WRITTEN)"),
        ),
        "dense · csr -> dense, or -> csr over the csr's distinct columns (sorted, ranked)",
    ),
    KernelDef(
        "dot_dense_csrT",
        "sparsegen.templates.dot:dense_csr_t",
        _ROWS,
        ("dtype",),
        (("matmul", "(lhs[m,k] dtype, data[nnz] dtype, indices[nnz] int64 <k sorted(indptr), "
                    "indptr[n+1] int64 ptr(nnz), out[m,n] dtype WRITTEN)"),),
        "dense · csrᵀ -> dense: each output element gathers one csr row",
    ),
    KernelDef(
        "dot_dense",
        "sparsegen.templates.dot:dense_dense",
        _ROWS,
        ("dtype",),
        (
            ("nn", "(lhs[m,k] dtype, rhs[k,n] dtype, out[m,n] dtype WRITTEN)"),
            ("tn", "(lhs[k,m] dtype, rhs[k,n] dtype, out[m,n] dtype WRITTEN)"),
            ("nt", "(lhs[m,k] dtype, rhs[n,k] dtype, out[m,n] dtype WRITTEN)"),
            ("tt", "(lhs[k,m] dtype, rhs[n,k] dtype, out[m,n] dtype WRITTEN)"),
        ),
        "dense · dense -> dense with either operand transposed; output rows in parallel",
    ),
)
"""dot (sparsegen/ops/dot.py runs them)."""

ELEMWISE_UNARY_SPARSE = (
    "abs", "sign", "sqrt", "square", "negative", "relu", "sin", "sinh", "tan", "tanh", "arcsin",
    "arcsinh", "arctan", "arctanh", "floor", "ceil", "round", "rint", "fix", "trunc", "expm1",
    "log1p", "cbrt", "degrees", "radians",
)
"""Unary ops that map zero to zero: row_sparse and csr keep their storage (stored values only)."""

ELEMWISE_UNARY_DENSE = (
    "exp", "log", "log10", "log2", "rsqrt", "cos", "cosh", "arccos", "arccosh", "sigmoid",
)
"""Unary ops that map zero elsewhere: a dense kernel only (sparse inputs fall back to it)."""

ELEMWISE_SCALAR_OPS = ("add_scalar", "sub_scalar", "rsub_scalar", "mul_scalar", "div_scalar",
                       "rdiv_scalar")
"""``x <op> s`` and the reflected ``s - x``, ``s / x``: functions of kernel ``ew_dense``."""

_FLAT_MAP = "(x[n] dtype, out[n] dtype WRITTEN)"
_RSP_ARGS = ("a[ka,d] dtype, b[kb,d] dtype, src_a[k] int64 internal, src_b[k] int64, "
             "out[k,d] dtype WRITTEN")
_CSR_PAIR = ("a_indptr[n+1] int64, a_indices[na] int64, a_data[na] dtype, b_indptr[n+1] int64, "
             "b_indices[nb] int64, b_data[nb] dtype, indptr[n+1] int64 internal, "
             "indices[nnz] int64 WRITTEN, data[nnz] dtype WRITTEN")
_MERGE = ("(a[ka] int64, b[kb] int64, indices[m] int64 WRITTEN internal, src_a[m] int64 WRITTEN, "
          "src_b[m] int64 WRITTEN, count[1] int64 WRITTEN, runs[c+1] int64 WRITTEN)")
_COUNT = ("(a_indptr[n+1] int64, a_indices[na] int64, b_indptr[n+1] int64, b_indices[nb] int64, "
          "indptr[n+1] int64 WRITTEN internal)")

_ELEMWISE_KERNELS = (
    KernelDef(
        "ew_dense",
        "sparsegen.templates.elemwise.dense:dense",
        _ROWS,
        ("dtype",),
        (
            *((fn, "(a[n] dtype, b[n] dtype, out[n] dtype WRITTEN)")
              for fn in ("add", "sub", "mul", "div")),
            *((fn, "(x[n] dtype, s float64|int64, out[n] dtype WRITTEN)")
              for fn in ELEMWISE_SCALAR_OPS),
            ("clip", "(x[n] dtype, lo float64|int64, hi float64|int64, out[n] dtype WRITTEN)"),
            ("nonfinite", "(x[n] dtype, counts[c+1] int64 WRITTEN)"),
        ),
        "elementwise maps over flat buffers (dense arrays or stored values): a <op> b, "
        "x <op> scalar, clip; nonfinite counts inf and nan values (counts[c] is the total)",
    ),
    KernelDef(
        "ew_unary",
        "sparsegen.templates.elemwise.unary:unary_maps",
        _ROWS,
        ("dtype",),
        tuple((fn, _FLAT_MAP) for fn in ELEMWISE_UNARY_SPARSE + ELEMWISE_UNARY_DENSE),
        "unary math over flat buffers, one function per op",
    ),
    KernelDef(
        "ew_index",
        "sparsegen.templates.elemwise.merge:index_sets",
        _ROWS,
        (),
        (
            ("rsp_union", _MERGE),
            ("rsp_intersect", _MERGE),
            ("csr_union_count", _COUNT),
            ("csr_intersect_count", _COUNT),
        ),
        "phase 1 of sparse (op) sparse: merged row ids with source positions, or csr row sizes",
    ),
    KernelDef(
        "ew_rsp",
        "sparsegen.templates.elemwise.row_sparse:row_sparse",
        _ROWS,
        ("dtype",),
        (
            *((f"fill_{fn}", f"({_RSP_ARGS})") for fn in ("add", "sub", "mul")),
            *((f"update_{fn}", "(dense[n,d] dtype WRITTEN, data[k,d] dtype, "
                               "indices[k] int64 <n sorted)")
              for fn in ("add", "sub")),
            ("gather_mul", "(dense[n,d] dtype, data[k,d] dtype, indices[k] int64 <n sorted, "
                           "out[k,d] dtype WRITTEN)"),
            ("keep_mul", "(a[ka,d] dtype, b[kb,d] dtype, src_a[k] int64 internal, src_b[k] int64, "
                         "pos[k+1] int64 WRITTEN)"),
            ("fill_mul_kept", "(a[ka,d] dtype, b[kb,d] dtype, src_a[k] int64 internal, "
                              "src_b[k] int64, "
                              "pos[k+1] int64, ids[k] int64, out[m,d] dtype WRITTEN, "
                              "out_ids[m] int64 WRITTEN)"),
        ),
        "phase 2 of row_sparse (op) row_sparse, and row_sparse with dense, parallel over rows; "
        "keep_mul / fill_mul_kept: a product's rows when an operand holds inf or nan",
    ),
    KernelDef(
        "ew_csr",
        "sparsegen.templates.elemwise.csr:csr",
        _ROWS,
        ("dtype",),
        (
            *((f"fill_{fn}", f"({_CSR_PAIR})") for fn in ("add", "sub", "mul")),
            *((f"update_{fn}", "(dense[n,m] dtype WRITTEN, data[nnz] dtype, "
                               "indices[nnz] int64 <m sorted(indptr), indptr[n+1] int64 ptr(nnz))")
              for fn in ("add", "sub")),
            ("gather_mul", "(dense[n,m] dtype, data[nnz] dtype, "
                           "indices[nnz] int64 <m sorted(indptr), indptr[n+1] int64 ptr(nnz), "
                           "out[nnz] dtype WRITTEN)"),
            ("count_mul_nonfinite", "(a_indptr[n+1] int64, a_indices[na] int64, a_data[na] dtype, "
                                    "b_indptr[n+1] int64, b_indices[nb] int64, b_data[nb] dtype, "
                                    "indptr[n+1] int64 WRITTEN internal)"),
            ("fill_mul_nonfinite", f"({_CSR_PAIR})"),
        ),
        "phase 2 of csr (op) csr, and csr with dense, parallel over rows; *_mul_nonfinite: a "
        "product's entries when an operand holds inf or nan",
    ),
)
"""Elementwise ops (sparsegen/ops/elemwise.py runs them)."""

COMPARE_OPS = ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal")
"""MXNet's comparison ops (``== != > >= < <=``): 1 / 0 in the input dtype, kernel ``cmp_dense``."""

_COMPARE_KERNELS = (
    KernelDef(
        "cmp_dense",
        "sparsegen.templates.compare:dense",
        _ROWS,
        ("dtype",),
        (
            *((fn, "(a[n] dtype, b[n] dtype, out[n] dtype WRITTEN)") for fn in COMPARE_OPS),
            *((f"{fn}_scalar", "(x[n] dtype, s float64|int64, out[n] dtype WRITTEN)")
              for fn in COMPARE_OPS),
        ),
        "comparisons over flat buffers (dense arrays or stored values): a <op> b, x <op> scalar",
    ),
)
"""Comparisons (sparsegen/ops/compare.py runs them)."""

KERNELS: dict[str, KernelDef] = {
    k.name: k
    for k in (
        KernelDef(
            "cast_dense_rsp",
            "sparsegen.templates.cast:dense_to_row_sparse",
            _ROWS,
            ("dtype",),
            (
                ("mark", "(x[n,d] dtype, pos[n+1] int64 WRITTEN)"),
                ("fill", "(x[n,d] dtype, pos[n+1] int64 internal, data[k,d] dtype WRITTEN, "
                         "indices[k] int64 WRITTEN)"),
            ),
            "dense -> row_sparse: mark non-zero rows (prefix sum), then compact them",
        ),
        KernelDef(
            "cast_rsp_dense",
            "sparsegen.templates.cast:row_sparse_to_dense",
            _ROWS,
            ("dtype",),
            (("scatter", "(data[k,d] dtype, indices[k] int64 <n sorted, "
                         "out[n,d] dtype WRITTEN)"),),
            "row_sparse -> dense: zero the output, scatter the stored rows",
        ),
        KernelDef(
            "cast_dense_csr",
            "sparsegen.templates.cast:dense_to_csr",
            _ROWS,
            ("dtype",),
            (
                ("count", "(x[n,d] dtype, indptr[n+1] int64 WRITTEN)"),
                ("fill", "(x[n,d] dtype, indptr[n+1] int64 internal, data[nnz] dtype WRITTEN, "
                         "indices[nnz] int64 WRITTEN)"),
            ),
            "dense -> csr: count non-zeros per row (prefix sum), then gather them",
        ),
        KernelDef(
            "cast_csr_dense",
            "sparsegen.templates.cast:csr_to_dense",
            _ROWS,
            ("dtype",),
            (("scatter", "(data[nnz] dtype, indices[nnz] int64 <d sorted(indptr), "
                         "indptr[n+1] int64 ptr(nnz), "
                         "out[n,d] dtype WRITTEN)"),),
            "csr -> dense: zero each row, scatter its stored values",
        ),
        KernelDef(
            "retain",
            "sparsegen.templates.retain:retain",
            _ROWS,
            ("dtype",),
            (("gather", "(data[k,d] dtype, indices[k] int64 sorted, req[m] int64, "
                        "out[m,d] dtype WRITTEN)"),
             ("check", "(req[m] int64, rows int64, bad[1] int64 WRITTEN)")),
            "retain: rows of a row_sparse array by requested id, zero rows where not stored; "
            "check: whether requested ids are sorted, unique and in range, where they live",
        ),
    ) + _OPTIM_KERNELS + _DOT_KERNELS + _ELEMWISE_KERNELS + _COMPARE_KERNELS
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

    output_stype: str | None  # None: no array result (the op writes its inputs, or checks them)
    implementation: str  # "module:function" of the storage-level op (sparsegen.ops, device)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Call the storage-level implementation."""
        return _resolve(self.implementation)(*args, **kwargs)


_EW = "sparsegen.ops.elemwise:"
_STYPES = ("default", "row_sparse", "csr")
_ELEMWISE_BINARY = (  # input stypes, (output stype, implementation) of add / sub, of mul
    (("default", "default"), ("default", "dense_binary"), ("default", "dense_binary")),
    (("row_sparse", "row_sparse"), ("row_sparse", "rsp_rsp"), ("row_sparse", "rsp_rsp")),
    (("csr", "csr"), ("csr", "csr_csr"), ("csr", "csr_csr")),
    (("default", "row_sparse"), ("default", "dense_sparse"), ("row_sparse", "dense_sparse_mul")),
    (("row_sparse", "default"), ("default", "sparse_dense"), ("row_sparse", "sparse_dense_mul")),
    (("default", "csr"), ("default", "dense_sparse"), ("csr", "dense_sparse_mul")),
    (("csr", "default"), ("default", "sparse_dense"), ("csr", "sparse_dense_mul")),
)
_ELEMWISE_RULES: dict[tuple[str, tuple[str, ...]], OpRule] = {
    **{(op, stypes): OpRule(out, _EW + impl)
       for op in ("elemwise_add", "elemwise_sub")
       for stypes, (out, impl), _ in _ELEMWISE_BINARY},
    **{("elemwise_mul", stypes): OpRule(out, _EW + impl)
       for stypes, _, (out, impl) in _ELEMWISE_BINARY},
    ("elemwise_div", ("default", "default")): OpRule("default", _EW + "dense_binary"),
    **{(f"_inplace_{fn}", ("default", stype)): OpRule(None, _EW + "update_dense")
       for fn in ("add", "sub") for stype in ("row_sparse", "csr")},
    **{(f"_{fn}", (stype,)): OpRule(stype, _EW + "scalar")
       for fn in ELEMWISE_SCALAR_OPS for stype in _STYPES if fn != "rdiv_scalar"},
    ("_rdiv_scalar", ("default",)): OpRule("default", _EW + "scalar"),
    **{(op, (stype,)): OpRule(stype, _EW + "unary")
       for op in ELEMWISE_UNARY_SPARSE for stype in _STYPES},
    **{(op, ("default",)): OpRule("default", _EW + "unary") for op in ELEMWISE_UNARY_DENSE},
    **{("clip", (stype,)): OpRule(stype, _EW + "clip") for stype in _STYPES},
}
"""Elementwise storage rules. A scalar op, or clip, whose parameters map zero elsewhere runs on
the dense form (the front end converts first): its result is dense whatever the input."""

_CMP = "sparsegen.ops.compare:"
_COMPARE_RULES: dict[tuple[str, tuple[str, ...]], OpRule] = {
    **{(fn, ("default", "default")): OpRule("default", _CMP + "arrays") for fn in COMPARE_OPS},
    **{(f"_{fn}_scalar", (stype,)): OpRule(stype, _CMP + "scalar")
       for fn in COMPARE_OPS for stype in _STYPES},
    **{(f"_{fn}_scalar->default", ("default",)): OpRule("default", _CMP + "scalar")
       for fn in COMPARE_OPS},
}
"""Comparison storage rules, as MXNet 1.9.1's: two arrays give a dense result (sparse operands
fall back to dense). ``x <op> s`` keeps the storage type of ``x`` when ``0 <op> s`` is false
(``_<op>_scalar``, stored values only); otherwise the front end asks for
``_<op>_scalar->default``, which has a dense kernel only, so sparse ``x`` falls back to it."""

_DOT = "sparsegen.ops.dot:"
_DOT_FLAGS = ("", "_transpose_a", "_transpose_b", "_transpose_a_transpose_b")
_DOT_KINDS = (  # flags, input stypes, output stype without forward_stype, {output stype: impl}
    ("", ("csr", "default"), "default", {"default": "csr_dense"}),
    ("_transpose_a", ("csr", "default"), "row_sparse",
     {"row_sparse": "csr_t_dense", "default": "csr_t_dense_to_dense"}),
    ("", ("csr", "row_sparse"), "default", {"default": "csr_row_sparse"}),
    ("_transpose_a", ("csr", "row_sparse"), "row_sparse",
     {"row_sparse": "csr_t_row_sparse", "default": "csr_t_row_sparse_to_dense"}),
    ("", ("default", "csr"), "csr", {"csr": "dense_csr_to_csr", "default": "dense_csr"}),
    ("_transpose_b", ("default", "csr"), "csr",
     {"csr": "dense_csr_t_to_csr", "default": "dense_csr_t"}),
    *((flags, ("default", "default"), "default",
       {"default": "dense_dense", "row_sparse": "dense_dense_to_row_sparse",
        "csr": "dense_dense_to_csr"})
      for flags in _DOT_FLAGS),
)
_DOT_RULES: dict[tuple[str, tuple[str, ...]], OpRule] = {
    (f"dot{flags}{forward}", stypes): OpRule(stype, _DOT + impls[stype])
    for flags, stypes, default, impls in _DOT_KINDS
    for forward, stype in (("", default), *((f"->{s}", s) for s in impls))
}
"""dot storage rules: the op name carries the transpose flags and forward_stype (``dot``,
``dot_transpose_a->default``, ...); without ``->stype`` the output is MXNet's for the inputs.
These are MXNet's sparse kernels on CPU (plus dense·csrᵀ -> csr, a fallback there); any other
combination runs the dense rule with a StorageFallbackWarning."""

_OPTIM_RULES: dict[tuple[str, tuple[str, ...]], OpRule] = {
    (f"{family}_update", (weight, grad)): OpRule(None, "sparsegen.ops.optim:update")
    for family in ("sgd", "sgd_mom", "adam", "adagrad", "ftrl")
    for weight in ("default", "row_sparse") for grad in ("default", "row_sparse")
}
"""Optimizer updates (MXNet's ``<family>_update`` ops), keyed by the storage types of (weight,
grad), in place on the weight and the states (kernel ``optim_<family>``)."""

OP_RULES: dict[tuple[str, tuple[str, ...]], OpRule] = {
    **_ELEMWISE_RULES,
    **_COMPARE_RULES,
    **_DOT_RULES,
    **_OPTIM_RULES,
    ("cast_storage->row_sparse", ("default",)):
        OpRule("row_sparse", "sparsegen.ops.cast:dense_to_row_sparse"),
    ("cast_storage->default", ("row_sparse",)):
        OpRule("default", "sparsegen.ops.cast:row_sparse_to_dense"),
    ("cast_storage->csr", ("default",)): OpRule("csr", "sparsegen.ops.cast:dense_to_csr"),
    ("cast_storage->default", ("csr",)): OpRule("default", "sparsegen.ops.cast:csr_to_dense"),
    **{(f"cast_storage->{stype}", (stype,)): OpRule(stype, "sparsegen.device:deep_copy")
       for stype in _STYPES},
    ("retain", ("row_sparse",)): OpRule("row_sparse", "sparsegen.ops.retain:retain"),
    ("_retain_check", ("row_sparse", "default")): OpRule(None, "sparsegen.ops.retain:valid_ids"),
}
"""(op, input storage types) -> output storage type and implementation: storage inference as data."""


def op_rule(op: str, stypes: tuple[str, ...]) -> OpRule | None:
    """The rule for ``op`` on inputs of ``stypes``, or ``None`` when no sparse kernel exists."""
    return OP_RULES.get((op, stypes))
