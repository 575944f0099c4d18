"""The kernel registry: kernel name -> template, schedule space per target kind, dtype rules.

Templates and schedules are named as ``"module:attribute"`` strings and imported only when a
kernel is built, so that looking up a cached kernel never imports the TVM compiler.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .errors import SparsegenError
from .formats import DATA_DTYPES
from .opnames import (ARITH_BINARY_OPS, ARITH_SCALAR_OPS, COMPARE_OPS, ELEMWISE_SCALAR_OPS,
                      ELEMWISE_UNARY, SPARSE_UNION_OPS, SPARSE_UPDATE_OPS, STRIDED_BINARY_OPS)
from .update_rules.builtin import BUILT_IN
from .update_rules.language import UpdateRule
from .update_rules.table import UPDATE_RULES


@dataclass(frozen=True)
class KernelDef:
    """What a kernel is: its template, schedules, dtypes and function signatures (one compiled
    module of functions per dtypes, target and config)."""

    name: str
    template: str  # "module:function" returning {function name: PrimFunc}
    schedules: tuple[tuple[str, str], ...]  # (target kind, "module:ScheduleSpace")
    dtype_params: tuple[str, ...]
    signatures: tuple[tuple[str, str], ...]  # (function, argument list and what it writes)
    doc: str
    dtypes: tuple[str, ...] = DATA_DTYPES  # element dtypes the kernel is generated for
    rule: UpdateRule | None = None  # the update rule its template builds (optim_<name>)

    @property
    def definition(self) -> str:
        """What else shapes the binary (cache key): an update rule's digest, else empty."""
        return self.rule.digest if self.rule is not None else ""

    def build_template(self, dtypes: tuple[str, ...]) -> dict[str, Any]:
        """The template's PrimFuncs for ``dtypes``, parsed once per process (TVMScript takes
        about a second per kernel; a build per schedule config, target or serial/parallel
        variant reuses the immutable PrimFuncs)."""
        return dict(_template_funcs(self.template, self.rule, tuple(dtypes)))

    def space(self, target_kind: str) -> Any:
        """The schedule space for a target kind (imports TVM)."""
        for kind, ref in self.schedules:
            if kind == target_kind:
                return resolve(ref)
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
def _template_funcs(template: str, rule: UpdateRule | None,
                    dtypes: tuple[str, ...]) -> dict[str, Any]:
    """``template(*dtypes)``; ``rule`` (an update rule's kernel: its template builds the rule
    registered under its name) keys it, so a changed rule of the same name is built anew."""
    return resolve(template)(*dtypes)


@lru_cache(maxsize=None)
def resolve(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names (imported on first use)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


_ROWS = (("llvm", "sparsegen.schedules.cpu:ROWS"), ("cuda", "sparsegen.schedules.cuda:ROWS"))
"""Row-parallel schedules: chunks on the CPU thread pool (llvm); on a GPU (cuda) a thread, warp or
block per row, its threads on neighbouring columns."""

_ROWS_PLAIN = (("llvm", "sparsegen.schedules.cpu:ROWS_PLAIN"),
               ("cuda", "sparsegen.schedules.cuda:ROWS"))
"""Row-parallel schedules whose CPU column loops stay plain unless tuned (the row_sparse merges'
value kernels: LLVM's own vectorization of them measured faster than explicit steps, W6)."""

_GATHER = (("llvm", "sparsegen.schedules.cpu:ROWS_PREFETCH"),
           ("cuda", "sparsegen.schedules.cuda:ROWS"))
"""Row-parallel schedules for templates that gather rows at random ids (prefetch knob)."""


_ROW_ALONE = (("llvm", "sparsegen.schedules.cpu:ROWS_PREFETCH"),
              ("cuda", "sparsegen.schedules.cuda:ROW_ALONE"))
"""_GATHER with one GPU thread per row: an update rule with a row reduction or row states."""


def update_kernel(rule: UpdateRule) -> KernelDef:
    """The in-place kernel ``optim_<name>`` of an update rule, derived from it: one function per
    rule function, states as (n, d) arrays, row states as (n,) arrays, then the hyper-parameters
    in the rule's order."""
    written = "".join(f", {s}[n,d] dtype WRITTEN" for s in rule.states)
    written += "".join(f", {s}[n] dtype WRITTEN" for s in rule.row_states)
    hyper = ", ".join(rule.hyper)
    hyper = f", {hyper} float32" if hyper else ""
    rows = {
        "lazy": "grad_data[k,d] dtype, grad_indices[k] int64 <n sorted",
        "std": "grad_data[k,d] dtype, grad_indices[k] int64 <n sorted",
        "dense": "grad[n,d] dtype",
    }
    return KernelDef(
        f"optim_{rule.name}",
        f"sparsegen.templates.optim:{rule.name}",
        _ROW_ALONE if rule.two_pass else _GATHER,
        ("dtype",),
        tuple((f, f"(weight[n,d] dtype WRITTEN, {rows[f]}{written}{hyper})")
              for f in rule.functions),
        rule.doc,
        ("float16", "float32", "float64"),
        rule,
    )


def add_update_rule(rule: UpdateRule) -> KernelDef:
    """Register an update rule, built-in or a user's: its kernel ``optim_<name>`` in ``KERNELS``
    and the rule in ``UPDATE_RULES`` (``update_rules/table.py``; it gives the rule its
    ``<name>_update`` op,
    ``storage_rules.storage_rule``). A user's rule of the same name as a registered user rule
    replaces it, its kernels keyed anew by the rule's digest; the name of a built-in rule or
    another kernel is refused."""
    kdef = update_kernel(rule)
    known = KERNELS.get(kdef.name)
    if known is not None and (known.rule is None or known.rule.name in BUILT_IN):
        raise SparsegenError(f"rule name {rule.name!r}: kernel {kdef.name!r} is a built-in; "
                             "pick another name")
    UPDATE_RULES[rule.name] = rule
    KERNELS[kdef.name] = kdef
    return kdef


_SORT_BY_COLUMN = (
    ("sort_dense", "(indices[nnz] int64, indptr[n+1] int64, keys[nnz] int64 WRITTEN, "
                   "src[nnz] int64 WRITTEN, erow[nnz] int64 WRITTEN, "
                   "table[t] int64 WRITTEN internal, bits int64)"),
    ("sort_pass", "(keys[u] int64 internal, src[u] int64, keys_out[u] int64 WRITTEN, "
                  "src_out[u] int64 WRITTEN, table[t] int64 WRITTEN, shift int64, "
                  "bits int64)"),
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
        _GATHER,
        ("dtype",),
        (("matmul", "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), "
                    "indptr[n+1] int64 ptr(nnz), rdata[k,d] dtype, rindices[k] int64 sorted, "
                    "out[n,d] dtype WRITTEN)"),
         ("locate", "(ids[s] int64 internal, seg[s+1] int64, src[u] int64, "
                    "rindices[k] int64 sorted, pos[nnz] int64 WRITTEN)"),
         ("matmul_at", "(data[nnz] dtype, pos[nnz] int64 internal, indptr[n+1] int64 ptr(nnz), "
                       "rdata[k,d] dtype, out[n,d] dtype WRITTEN)")),
        "csr · row_sparse -> dense: rhs rows found by binary search among the stored ids "
        "(matmul), or by one merge walk of the column-sorted entries' distinct columns and the "
        "stored ids (locate), then gathered, prefetched (matmul_at)",
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
        ),
        "dense · dense -> dense with the lhs transposed or not; output rows in parallel",
    ),
)
"""dot (sparsegen/ops/dot.py runs them)."""

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
        tuple((fn, _FLAT_MAP) for fn in ELEMWISE_UNARY),
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
        _ROWS_PLAIN,
        ("dtype",),
        (
            *((f"fill_{fn}", f"({_RSP_ARGS})") for fn in (*SPARSE_UNION_OPS, "mul")),
            *((f"update_{fn}", "(dense[n,d] dtype WRITTEN, data[k,d] dtype, "
                               "indices[k] int64 <n sorted)")
              for fn in SPARSE_UPDATE_OPS),
            *((f"gather_{fn}", "(dense[n,d] dtype, data[k,d] dtype, indices[k] int64 <n sorted, "
                               "out[k,d] dtype WRITTEN)") for fn in ("mul", "div")),
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
            *((f"fill_{fn}", f"({_CSR_PAIR})") for fn in (*SPARSE_UNION_OPS, "mul")),
            *((f"update_{fn}", "(dense[n,m] dtype WRITTEN, data[nnz] dtype, "
                               "indices[nnz] int64 <m sorted(indptr), indptr[n+1] int64 ptr(nnz))")
              for fn in SPARSE_UPDATE_OPS),
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

_RNG = "k0, k1, c2, c3 int64"
_RANDOM_KERNELS = (
    KernelDef(
        "random",
        "sparsegen.templates.random:random",
        _ROWS,
        ("dtype",),
        (
            *((fn, f"(a[m] dtype, b[m] dtype, out[m,w] dtype WRITTEN, {_RNG})")
              for fn in ("uniform", "normal", "gamma", "negative_binomial",
                         "generalized_negative_binomial")),
            *((fn, f"(a[m] dtype, out[m,w] dtype WRITTEN, {_RNG})")
              for fn in ("exponential", "poisson")),
            ("randint", f"(out[n] dtype WRITTEN, low, high, {_RNG})"),
            ("keys", f"(keys[n] int64 WRITTEN, src[n] int64 WRITTEN, bits, {_RNG})"),
            ("sort_pass", _SORT_BY_COLUMN[1][1]),
            ("gather", "(x[n,d] dtype, src[n] int64 <n, out[n,d] dtype WRITTEN)"),
        ),
        "samples on a counter-based generator (Philox-4x32-10): row i of out holds w samples "
        "of the parameters a[i] (b[i]); randint; shuffle: random keys, radix passes, row gather",
    ),
    KernelDef(
        "random_multinomial",
        "sparsegen.templates.random:multinomial",
        _ROWS,
        ("dtype", "otype"),
        (("sample", f"(probs[m,k] dtype, out[m,w] otype WRITTEN, logp[m,w] dtype WRITTEN, "
                    f"{_RNG})"),),
        "multinomial samples (outcome ids as otype, their log-probabilities) of rows of probs",
        ("float16", "float32", "float64", "int32", "uint8"),  # MXNet's output dtypes
    ),
    KernelDef(
        "random_unique_zipfian",
        "sparsegen.templates.random:unique_zipfian",
        _ROWS,
        (),
        (("sample", f"(out[m,w] int64 WRITTEN, tries[m] int64 WRITTEN, seen[m,r] uint8 WRITTEN, "
                    f"log_range float64, {_RNG})"),),
        "distinct log-uniform (Zipfian) classes per row (int64), drawn until distinct, and the "
        "draws each row took (the candidates of a sampled softmax)",
    ),
)
"""Random sampling (sparsegen/ops/random.py runs them)."""
_NN_PRE = "x[pre,n,post] dtype"
_FLOAT_DTYPES = ("float16", "float32", "float64")
_NN_KERNELS = (
    KernelDef(
        "astype",
        "sparsegen.templates.nn.astype:astype",
        _ROWS,
        ("src", "dst"),
        (("convert", "(x[n] src, out[n] dst WRITTEN)"),),
        "element dtype casts over flat buffers (cast, astype, and ids to int64): floats to "
        "integers truncate, nan -> 0, saturate to int64, then wrap",
    ),
    KernelDef(
        "nn_gather",
        "sparsegen.templates.nn.gather:gather",
        _GATHER,
        ("dtype",),
        (
            ("take", f"({_NN_PRE}, ids[m] int64, wrap int64, out[pre,m,post] dtype WRITTEN)"),
            ("take_rsp", "(data[k,d] dtype, indices[k] int64 sorted, ids[m] int64, n int64, "
                         "wrap int64, out[m,d] dtype WRITTEN)"),
            ("pick", f"({_NN_PRE}, ids[pre,post] int64, wrap int64, "
                     "out[pre,post] dtype WRITTEN)"),
            ("gather_nd", "(x[r,post] dtype, ids[m,y] int64, dims[m] int64, "
                          "out[y,post] dtype WRITTEN, bad[1] int64 WRITTEN)"),
            ("scatter_nd", "(data[y,post] dtype, ids[m,y] int64, dims[m] int64, "
                           "out[r,post] dtype WRITTEN, bad[1] int64 WRITTEN)"),
            ("one_hot", "(ids[m] int64, on float64|int64, off float64|int64, "
                        "out[m,depth] dtype WRITTEN)"),
            ("csr_count", "(indptr[n+1] int64, ids[m] int64, wrap int64, "
                          "out_indptr[m+1] int64 WRITTEN)"),
            ("csr_fill", "(data[nnz] dtype, indices[nnz] int64, indptr[n+1] int64 ptr(nnz), "
                         "ids[m] int64, wrap int64, out_indptr[m+1] int64 internal, "
                         "out_data[k] dtype WRITTEN, out_indices[k] int64 WRITTEN)"),
            ("transpose", "(x[n,d] dtype, out[d,n] dtype WRITTEN)"),
            ("check", "(ids[m] int64, lo int64, hi int64, bad[1] int64 WRITTEN)"),
        ),
        "gathers by id (take, pick, gather_nd, one_hot, Embedding, csr take, rows of a "
        "row_sparse array by binary search: ids clipped or "
        "wrapped, out-of-range nd ids skipped and reported in bad), scatter_nd, a 2-D "
        "transpose, and the range check of ids",
    ),
    KernelDef(
        "nn_lines",
        "sparsegen.templates.nn.lines:lines",
        _ROWS,
        ("dtype",),
        (
            *((fn, f"({_NN_PRE}, t float64, out[pre,n,post] dtype WRITTEN)")
              for fn in ("softmax", "log_softmax")),
            *((fn, _FLAT_MAP) for fn in ("softrelu", "softsign")),
            ("sigmoid_bce", "(x[n] dtype, z[n] dtype, out[n] dtype WRITTEN)"),
            ("sigmoid_bce_grad", "(g[n] dtype, x[n] dtype, z[n] dtype, out[n] dtype WRITTEN)"),
            ("bias", "(x[m,n] dtype WRITTEN, b[n] dtype)"),
        ),
        "softmax / log_softmax of each line of an axis (a block per line), Activation's "
        "softrelu / softsign, the sigmoid cross entropy of logits and its gradient, "
        "FullyConnected's bias added in place",
        _FLOAT_DTYPES,
    ),
    KernelDef(
        "nn_sort",
        "sparsegen.templates.nn.sort:sort",
        _ROWS,
        ("dtype",),
        (
            ("order", f"({_NN_PRE}, descend int64, ids[pre,n,post] int64 WRITTEN, "
                      "scratch[pre,n,post] int64 WRITTEN)"),
            ("select", f"({_NN_PRE}, ids[pre,n,post] int64 internal, "
                       "values[pre,k,post] dtype WRITTEN, first[pre,k,post] int64 WRITTEN)"),
            ("mask", "(ids[pre,n,post] int64 internal, k int64, "
                     "out[pre,n,post] dtype WRITTEN)"),
            ("csr_rows", "(indices[nnz] int64, indptr[n+1] int64 ptr(nnz), data[nnz] dtype, "
                         "out_indices[nnz] int64 WRITTEN, out_data[nnz] dtype WRITTEN, "
                         "order[nnz] int64 WRITTEN, scratch[nnz] int64 WRITTEN)"),
        ),
        "sort along an axis: a stable merge sort per line (nan last ascending, first "
        "descending), then the first k of each order as values and ids, or as a mask; a "
        "csr's entries sorted by column within each row",
    ),
)
"""Indexing, neural-network and sorting ops, dtype casts (sparsegen/ops/nn.py runs them)."""
# -- conv --
_CONV_ARGS = ("x[n,c,d,h,w] dtype, weight[f,cg,kd,kh,kw] dtype{bias}, stride_d, stride_h, "
              "stride_w, dilate_d, dilate_h, dilate_w, pad_d, pad_h, pad_w, groups int64, "
              "out[n,f,od,oh,ow] dtype WRITTEN")
_CONV_KERNELS = (
    KernelDef(
        "nn_conv",
        "sparsegen.templates.nn.conv:conv",
        _ROWS,
        ("dtype",),
        (("forward", f"({_CONV_ARGS.format(bias='')})"),
         ("forward_bias", f"({_CONV_ARGS.format(bias=', bias[f] dtype')})")),
        "direct convolution of (batch, channels, depth, height, width) data by a grouped "
        "filter bank, optionally plus a bias per filter (Convolution; 1-D and 2-D lifted to "
        "3-D, float16 computed in float32)",
        ("float32", "float64"),
    ),
)
"""Convolution (sparsegen/ops/conv.py runs it)."""
# -- linalg --
_TRI = ("(a[b,s] dtype, x[b,p] dtype, m int64, count int64, a_row int64, a_col int64, "
        "stride int64, step int64, lower int64, alpha float64, out[b,p] dtype WRITTEN)")
_LINALG_KERNELS = (
    KernelDef(
        "linalg",
        "sparsegen.templates.linalg:linalg",
        _ROWS,
        ("dtype",),
        (
            ("gemm", "(a[b,sa] dtype, b[b,sb] dtype, c[b,s] dtype, m int64, n int64, k int64, "
                     "a_row int64, a_col int64, b_row int64, b_col int64, alpha float64, "
                     "beta float64, out[b,s] dtype WRITTEN)"),
            ("gemm2", "(a[b,sa] dtype, b[b,sb] dtype, m int64, n int64, k int64, a_row int64, "
                      "a_col int64, b_row int64, b_col int64, alpha float64, "
                      "out[b,s] dtype WRITTEN)"),
            ("trsm", _TRI),
            ("trmm", _TRI),
            ("potrf", "(a[b,s] dtype, n int64, upper int64, out[b,s] dtype WRITTEN, "
                      "info[b] int64 WRITTEN)"),
            ("lu_det", "(a[b,s] dtype, n int64, work[b,s] dtype WRITTEN, "
                       "sign[b] dtype WRITTEN, logdet[b] dtype WRITTEN, det[b] dtype WRITTEN)"),
            ("inverse", "(a[b,s] dtype, n int64, work[b,s] dtype WRITTEN, "
                        "out[b,s] dtype WRITTEN, info[b] int64 WRITTEN)"),
            ("gelqf", "(a[b,s] dtype, m int64, n int64, work[b,s] dtype WRITTEN, "
                      "taus[b,t] dtype WRITTEN, q[b,s] dtype WRITTEN, l[b,ll] dtype WRITTEN)"),
            ("syevd", "(a[b,s] dtype, n int64, work[b,s] dtype WRITTEN, "
                      "vectors[b,s] dtype WRITTEN, u[b,s] dtype WRITTEN, "
                      "values[b,v] dtype WRITTEN)"),
            ("gather", "(x[b,s] dtype, at[k] int64 <s, out[b,k] dtype WRITTEN)"),
            ("scatter", "(x[b,k] dtype, at[k] int64 <s, out[b,s] dtype WRITTEN)"),
            ("khatri_rao", "(a[m,c] dtype, b[n,c] dtype, out[r,c] dtype WRITTEN)"),
        ),
        "batches of small dense matrices, each a flat row of elements laid out by host-given "
        "strides: products (gemm), triangular solves and products, Cholesky, LU determinants, "
        "Gauss-Jordan inverses, Householder LQ, Jacobi symmetric eigendecompositions, diagonal "
        "and triangle gathers and scatters, Khatri-Rao products",
        ("float32", "float64"),
    ),
)
"""MXNet's linalg ops and khatri_rao (sparsegen/ops/linalg.py runs them)."""
# -- arith (power, maximum, minimum, hypot, mod, logical ops, broadcasting, where, quadratic) --
_ARITH_KERNELS = (
    KernelDef(
        "ew_arith",
        "sparsegen.templates.elemwise.dense:arith",
        _ROWS,
        ("dtype",),
        (
            *((fn, "(a[n] dtype, b[n] dtype, out[n] dtype WRITTEN)") for fn in ARITH_BINARY_OPS),
            *((fn, "(x[n] dtype, s float64|int64, out[n] dtype WRITTEN)")
              for fn in ARITH_SCALAR_OPS),
            ("quadratic", "(x[n] dtype, a float64, b float64, c float64, out[n] dtype WRITTEN)"),
        ),
        "flat maps of power, maximum, minimum, hypot, mod and the logical ops (a <op> b, "
        "x <op> scalar) and contrib.quadratic",
    ),
    KernelDef(
        "bcast_csr",
        "sparsegen.templates.elemwise.broadcast_csr:broadcast_csr",
        _ROWS,
        ("dtype",),
        (
            *((f"{fn}_by_{axis}",
               "(data[nnz] dtype, indices[nnz] int64 <k sorted(indptr), indptr[n+1] int64 "
               "ptr(nnz), v[k] dtype, step int64, out[nnz] dtype WRITTEN)")
              for fn in ("mul", "div") for axis in ("row", "col")),
            ("by_row_nan_count", "(indptr[n+1] int64, z[k] dtype, step int64, cols int64, "
                                 "out_indptr[n+1] int64 WRITTEN)"),
            *((f"{fn}_by_row_nan",
               "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), indptr[n+1] int64 "
               "ptr(nnz), v[k] dtype, z[k] dtype, step int64, cols int64, "
               "out_indptr[n+1] int64 internal, out_indices[m] int64 WRITTEN, "
               "out_data[m] dtype WRITTEN)") for fn in ("mul", "div")),
            ("by_col_nan_count", "(indptr[n+1] int64 ptr(nnz), indices[nnz] int64 "
                                 "sorted(indptr), z_indptr[r+1] int64 ptr(nz), z_indices[nz] "
                                 "int64 sorted(z_indptr), z_data[nz] dtype, zstep int64, "
                                 "out_indptr[n+1] int64 WRITTEN)"),
            *((f"{fn}_by_col_nan",
               "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), indptr[n+1] int64 "
               "ptr(nnz), v[k] dtype, rstep int64, cstep int64, z_indptr[r+1] int64 ptr(nz), "
               "z_indices[nz] int64 sorted(z_indptr), z_data[nz] dtype, zstep int64, "
               "out_indptr[n+1] int64 internal, out_indices[m] int64 WRITTEN, "
               "out_data[m] dtype WRITTEN)") for fn in ("mul", "div")),
        ),
        "csr (op) a broadcast row or column vector -> csr: each stored value times / divided by "
        "the vector element of its row (by_row) or column (by_col), parallel over rows; "
        "*_nan_*: also the positions where 0 (op) the vector is nan (0 * inf, 0 / 0), counted "
        "then filled (by_col: a csr ``z`` of those positions, one row or one per row, with "
        "``v`` read at ``i * rstep + j * cstep``)",
    ),
    KernelDef(
        "where",
        "sparsegen.templates.elemwise.select:where",
        _ROWS,
        ("dtype", "cond"),
        (
            ("dense", "(cond[n] cond, x[n] dtype, y[n] dtype, out[n] dtype WRITTEN)"),
            ("rows", "(cond[m] cond, x[m,d] dtype, y[m,d] dtype, out[m,d] dtype WRITTEN)"),
            ("csr", "(data[nnz] cond, indices[nnz] int64 <d sorted(indptr), indptr[m+1] int64 "
                    "ptr(nnz), x[m,d] dtype, out[m,d] dtype WRITTEN)"),
        ),
        "where(cond, x, y): by a dense condition of the values' shape, one per row, or a csr "
        "condition (out holds y; x is written at the stored non-zero conditions)",
    ),
)
"""Arithmetic beyond the elementwise kernels (sparsegen/ops/arith.py, ops/broadcast.py)."""
# -- strided (shape ops, broadcasting) --
_STRIDED_VIEW = "meta[t] int64 internal, out[r,c] dtype WRITTEN"
_STRIDED_KERNELS = (
    KernelDef(
        "strided",
        "sparsegen.templates.strided:strided",
        _ROWS,
        ("dtype",),
        (
            ("copy", f"(x[n] dtype, {_STRIDED_VIEW})"),
            *((fn, f"(a[na] dtype, b[nb] dtype, {_STRIDED_VIEW})") for fn in STRIDED_BINARY_OPS),
        ),
        "strided views of flat buffers into a C-contiguous output, parallel over rows: copy "
        "(transpose, slice, broadcast_to, ...) and binary ops of two views (broadcasting); meta "
        "holds offsets, strides and outer sizes (sparsegen/ops/strided.py builds it)",
    ),
)
"""Strided copies and broadcast binary maps (sparsegen/ops/strided.py runs them)."""


_SHAPE_KERNELS = (
    KernelDef(
        "shape",
        "sparsegen.templates.shape:shape",
        _ROWS,
        ("dtype",),
        (
            ("arange", "(out[n] dtype WRITTEN, start float64|int64, step float64|int64, "
                       "repeat int64)"),
            ("linspace", "(out[n] dtype WRITTEN, start float64, step float64, low float64)"),
            ("eye", "(out[n,m] dtype WRITTEN, k int64)"),
            ("put", "(x[r,c] dtype, out[r,m] dtype WRITTEN internal, at int64)"),
            ("put_index", "(x[r,c] int64, out[r,m] int64 WRITTEN internal, at int64, "
                          "shift int64)"),
            ("pad", "(x[r,d,h,w] dtype, out[r,d2,h2,w2] dtype WRITTEN internal, front int64, "
                    "top int64, left int64, mode int64, value float64|int64)"),
            ("slice_count", "(indices[nnz] int64 sorted(indptr), indptr[n+1] int64 ptr(nnz), "
                            "row0 int64, col0 int64, col1 int64, "
                            "out_indptr[m+1] int64 WRITTEN internal)"),
            ("slice_fill", "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), "
                           "indptr[n+1] int64 ptr(nnz), row0 int64, col0 int64, col1 int64, "
                           "out_indptr[m+1] int64 internal, out_data[k] dtype WRITTEN, "
                           "out_indices[k] int64 WRITTEN)"),
        ),
        "creation fills (arange, linspace, eye), column-block placement (concat, stack), "
        "4-D/5-D padding, and csr slices over rows and columns (count, scan, fill)",
    ),
)
"""Shape and creation ops beyond strided views (sparsegen/ops/shape.py runs them)."""
_GRAPH_KERNELS = (
    KernelDef(
        "graph",
        "sparsegen.templates.graph:graph",
        _ROWS,
        ("dtype",),
        (("edge_id", "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), "
                     "indptr[n+1] int64 ptr(nnz), u[k] int64 <n, v[k] int64, "
                     "out[k] dtype WRITTEN)"),
         ("subgraph_count", "(indices[nnz] int64 sorted(indptr), indptr[n+1] int64 ptr(nnz), "
                            "v[k] int64 <n, out_indptr[k+1] int64 WRITTEN internal)"),
         ("subgraph_fill", "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), "
                           "indptr[n+1] int64 ptr(nnz), v[k] int64 <n, "
                           "out_indptr[k+1] int64 internal, out_indices[e] int64 WRITTEN, "
                           "out_new[e] dtype WRITTEN, out_old[e] dtype WRITTEN)"),
         ("compact", "(data[nnz] dtype, indices[nnz] int64, v[k] int64 sorted, "
                     "out_indices[nnz] int64 WRITTEN, out_new[nnz] dtype WRITTEN, "
                     "out_old[nnz] dtype WRITTEN, bad[1] int64 WRITTEN)")),
        "graph queries on csr adjacency matrices: edge_id (the value stored at (u, v) by a "
        "binary search of row u, else -1), the subgraph induced by the vertices v (sorted and "
        "unique: the caller checks them with retain.check; counts "
        "scanned into row pointers, then the entries) and the columns of a sampled graph "
        "renumbered by their positions in v (compact)",
    ),
    KernelDef(
        "graph_sample",
        "sparsegen.templates.graph_sample:graph_sample",
        _ROWS,
        ("dtype",),
        (
            ("bfs", "(indices[nnz] int64 sorted(indptr), indptr[n+1] int64 ptr(nnz), "
                    "seeds[s] int64 <n, prob[q] float32, weighted int64, hops int64, "
                    "fanout int64, k0 int64, k1 int64, c2 int64, c3 int64, "
                    "layer[n] int64 WRITTEN, expand[n] int64 WRITTEN, "
                    "queue[m] int64 WRITTEN internal, picked[f] int64 WRITTEN, "
                    "counts[3] int64 WRITTEN)"),
            ("ids", "(indptr[n+1] int64 ptr(nnz), layer[n] int64 internal, "
                    "expand[n] int64 internal, prob[q] float32, weighted int64, fanout int64, "
                    "out_ids[m+1] int64 WRITTEN, out_layer[m] int64 WRITTEN, "
                    "out_prob[r] float32 WRITTEN, out_indptr[m+1] int64 WRITTEN)"),
            ("fill", "(data[nnz] dtype, indices[nnz] int64 sorted(indptr), "
                     "indptr[n+1] int64 ptr(nnz), prob[q] float32, weighted int64, "
                     "fanout int64, k0 int64, k1 int64, c2 int64, c3 int64, "
                     "expand[n] int64 internal, out_ids[m+1] int64 internal, "
                     "out_indptr[m+1] int64 internal, out_indices[e] int64 WRITTEN, "
                     "out_data[e] dtype WRITTEN)"),
        ),
        "neighbour sampling on csr graphs (MXNet's DGL samplers): a serial breadth-first walk "
        "from the seeds drawing up to fanout neighbours of each vertex below hops (Philox "
        "uniforms, weighted by prob[column] when weighted), then the sampled vertices in "
        "order with their layers and row pointers, then each vertex's drawn edges (the same "
        "draws again), parallel over vertices",
    ),
)
"""MXNet's DGL contrib ops on csr graphs (sparsegen/ops/graph.py runs them)."""
_HAWKES_IN = ("lda[n,k] dtype, alpha[k] dtype, beta[k] dtype, state[n,k] dtype, lags[n,t] dtype, "
              "marks[n,t] int64 <k, valid_length[n] dtype, max_time[n] dtype")
_SIGNAL_KERNELS = (
    KernelDef(
        "signal",
        "sparsegen.templates.signal:signal",
        _ROWS,
        ("dtype",),
        (
            ("twiddles", "(tw[d,2] dtype WRITTEN)"),
            ("fft_radix2", "(x[m,d] dtype, tw[d,2] dtype, logd int64, out[m,c] dtype WRITTEN)"),
            ("ifft_radix2", "(x[m,c] dtype, tw[d,2] dtype, logd int64, work[m,c] dtype WRITTEN, "
                            "out[m,d] dtype WRITTEN)"),
            ("fft_direct", "(x[m,d] dtype, tw[d,2] dtype, out[m,c] dtype WRITTEN)"),
            ("ifft_direct", "(x[m,c] dtype, tw[d,2] dtype, out[m,d] dtype WRITTEN)"),
        ),
        "discrete Fourier transforms of each row, complex values interleaved: real -> complex "
        "(fft) and complex -> real part, unnormalised (ifft); radix-2 for power-of-two lengths, "
        "the direct sums otherwise; twiddles: the roots of unity they read",
        ("float32", "float64"),
    ),
    KernelDef(
        "count_sketch",
        "sparsegen.templates.sketch:count_sketch",
        _ROWS,
        ("dtype",),
        (
            ("forward", "(x[m,n] dtype, h[n] int64 <k, s[n] dtype, out[m,k] dtype WRITTEN)"),
            ("backward", "(g[m,k] dtype, h[n] int64 <k, s[n] dtype, out[m,n] dtype WRITTEN)"),
        ),
        "count sketch: out[r, h[j]] += s[j] x[r, j] (a block per row), and its gradient "
        "g[r, h[j]] s[j]",
        ("float32", "float64"),
    ),
    KernelDef(
        "hawkes",
        "sparsegen.templates.hawkes:hawkes",
        _ROWS,
        ("dtype",),
        (
            ("forward", f"({_HAWKES_IN}, last[n,k] dtype WRITTEN, out[n] dtype WRITTEN, "
                        "out_state[n,k] dtype WRITTEN)"),
            ("backward", f"({_HAWKES_IN}, g_out[n] dtype, g_state[n,k] dtype, "
                         "last[n,k] dtype WRITTEN, phi[n,k] dtype WRITTEN, "
                         "dphi[n,k] dtype WRITTEN, q[n,k] dtype WRITTEN, "
                         "grad_lda[n,k] dtype WRITTEN, grad_alpha[n,k] dtype WRITTEN, "
                         "grad_beta[n,k] dtype WRITTEN, grad_state[n,k] dtype WRITTEN)"),
        ),
        "the log-likelihood of marked Hawkes processes with exponential decay (a block per "
        "sample) and its gradients by lda, alpha, beta (per sample) and state",
        ("float32", "float64"),
    ),
)
"""MXNet's contrib fft / ifft, count_sketch and hawkesll (sparsegen/ops/signal.py runs them)."""
_ACC = "acc"  # bound to formats.ACCUMULATOR[dtype] (sparsegen/kernels.py arguments)
_REDUCE_VALUE = ("sum", "nansum", "prod", "nanprod", "sumsq", "abssum", "max", "min")
_REDUCE_KERNELS = (
    KernelDef(
        "reduce",
        "sparsegen.templates.reduce:reduce",
        _ROWS,
        ("dtype",),
        (
            *((f"{fn}_last", f"(x[m,n] dtype, acc[m,8] {_ACC} WRITTEN, out[m] dtype WRITTEN, "
                             "div int64, root int64)")
              for fn in _REDUCE_VALUE),
            *((f"{fn}_mid", f"(x[p,n,q] dtype, acc[p,q] {_ACC} WRITTEN, out[p,q] dtype WRITTEN, "
                            "div int64, root int64)")
              for fn in _REDUCE_VALUE),
            *((f"{fn}_last", f"(x[m,n] dtype, acc[m] {_ACC} WRITTEN, out[m] dtype WRITTEN)")
              for fn in ("argmax", "argmin")),
            *((f"{fn}_mid", f"(x[p,n,q] dtype, acc[p,q] {_ACC} WRITTEN, out[p,q] dtype WRITTEN)")
              for fn in ("argmax", "argmin")),
            *((f"csr_rows_{fn}", f"(data[nnz] dtype, indptr[n+1] int64 ptr(nnz), "
                                 f"acc[n] {_ACC} WRITTEN, out[n] dtype WRITTEN, div int64, "
                                 "root int64)")
              for fn in ("sum", "sumsq")),
            *((f"csr_cols_{fn}", f"(data[nnz] dtype, indices[nnz] int64 <m sorted(indptr), "
                                 f"indptr[n+1] int64 ptr(nnz), part[c,m] {_ACC} WRITTEN, "
                                 "rows int64)")
              for fn in ("sum", "sumsq")),
            ("fold", f"(part[c,m] {_ACC} WRITTEN, out[m] dtype WRITTEN, div int64, root int64)"),
            ("csr_row_counts", "(data[nnz] dtype, indptr[n+1] int64 ptr(nnz), "
                               "out[n] int64 WRITTEN)"),
            *((f"rsp_rows_{fn}", f"(data[k,m] dtype, indices[k] int64 <n sorted, "
                                 f"acc[k,8] {_ACC} WRITTEN, out[n] dtype WRITTEN, div int64, "
                                 "root int64)")
              for fn in ("sum", "sumsq")),
        ),
        "reductions of a (pre, n, post) view along n (_last: post == 1, 8 partials per row; _mid: "
        "columns in blocks, n outer), accumulated in float32 / float64 / int64 scratch (acc) and "
        "finished as acc / div or its "
        "square root; csr rows, csr columns (partial rows per chunk of rows, then fold), "
        "stored entries per csr row, row_sparse rows as a dense vector (rsp_rows: zero gaps and "
        "stored rows' reductions in one pass)",
    ),
)
"""Reductions (sparsegen/ops/reduce.py runs them)."""
# -- io: the data iterators' kernels --
_IO_KERNELS = (
    KernelDef(
        "libsvm",
        "sparsegen.templates.libsvm:libsvm",
        _ROWS,
        ("dtype",),
        (
            ("count", "(buf[nb] uint8, begin[m] int64 internal, end[m] int64, "
                      "indptr[m+1] int64 WRITTEN)"),
            ("fill", "(buf[nb] uint8, begin[m] int64, end[m] int64, cols int64, "
                     "indptr[m+1] int64 internal, labels[m] dtype WRITTEN, "
                     "data[nnz] dtype WRITTEN, indices[nnz] int64 WRITTEN, "
                     "used[m] int64 WRITTEN, err[m] int64 WRITTEN)"),
            ("pack", "(indptr[m+1] int64, used[m] int64 internal, data[nnz] dtype, "
                     "indices[nnz] int64, packed[m+1] int64 WRITTEN, "
                     "packed_data[k] dtype WRITTEN, packed_indices[k] int64 WRITTEN)"),
        ),
        "libsvm text -> csr: bound each line's features by its colons (offsets), parse and "
        "validate labels, values and column ids (an error code per line), then move the "
        "features together where lines hold fewer than their bound",
        ("float32",),
    ),
)

_BATCH_KERNELS = (
    KernelDef(
        "nn_batch_dot",
        "sparsegen.templates.nn.batch_dot:batch_dot",
        _ROWS,
        ("dtype",),
        (
            ("nn", "(lhs[b,m,k] dtype, rhs[b,k,n] dtype, out[b,m,n] dtype WRITTEN)"),
            ("tn", "(lhs[b,k,m] dtype, rhs[b,k,n] dtype, out[b,m,n] dtype WRITTEN)"),
        ),
        "batch_dot: a dense product per batch entry, the lhs transposed or not; output rows of "
        "every entry in parallel",
        ("float32", "float64"),
    ),
    KernelDef(
        "nn_cumsum",
        "sparsegen.templates.nn.cumsum:cumsum",
        _ROWS,
        ("dtype",),
        (("lines", f"({_NN_PRE}, out[pre,n,post] dtype WRITTEN)"),),
        "cumsum: the running sums of each line of an axis (a block per line)",
    ),
)
"""batch_dot and cumsum (sparsegen/ops/batch.py runs them)."""
_RNN_KERNELS = (
    KernelDef(
        "nn_rnn_cell",
        "sparsegen.templates.nn.rnn_cell:rnn_cell",
        _ROWS,
        ("dtype",),
        (
            *((mode, "(xw[n,h] dtype, hw[n,h] dtype, out[n,h] dtype WRITTEN)")
              for mode in ("relu", "tanh")),
            *((f"{mode}_back", "(out[n,h] dtype, dout[n,h] dtype, dpre[n,h] dtype WRITTEN)")
              for mode in ("relu", "tanh")),
            ("lstm", "(xw[n,4,h] dtype, hw[n,4,h] dtype, c_prev[n,h] dtype, lo float64, "
                     "hi float64, clip int64, nan int64, gates[n,4,h] dtype WRITTEN, "
                     "c[n,h] dtype WRITTEN, out[n,h] dtype WRITTEN)"),
            ("lstm_back", "(gates[n,4,h] dtype, c_prev[n,h] dtype, c[n,h] dtype, dh[n,h] dtype, "
                          "dc[n,h] dtype, lo float64, hi float64, clip int64, "
                          "dgates[n,4,h] dtype WRITTEN, dc_prev[n,h] dtype WRITTEN)"),
            ("gru", "(xw[n,3,h] dtype, hw[n,3,h] dtype, h_prev[n,h] dtype, "
                    "gates[n,4,h] dtype WRITTEN, out[n,h] dtype WRITTEN)"),
            ("gru_back", "(gates[n,4,h] dtype, h_prev[n,h] dtype, dh[n,h] dtype, "
                         "dxw[n,3,h] dtype WRITTEN, dhw[n,3,h] dtype WRITTEN, "
                         "dh_prev[n,h] dtype WRITTEN)"),
        ),
        "RNN: one step of a mode's gates and state update after its two products (rnn_relu, "
        "rnn_tanh, lstm with its cell-state clip, gru), and the step's backward",
        ("float32", "float64"),
    ),
)
"""The fused RNN cell (sparsegen/ops/rnn.py runs it)."""

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
             ("gather_merge", "(data[k,d] dtype, indices[k] int64 sorted, req[m] int64 sorted, "
                              "out[m,d] dtype WRITTEN)"),
             ("check", "(req[m] int64, rows int64, bad[1] int64 WRITTEN)")),
            "retain: rows of a row_sparse array by requested id, zero rows where not stored "
            "(by binary search, or a merge walk of the sorted ids); "
            "check: whether requested ids are sorted, unique and in range, where they live",
        ),
    ) + _DOT_KERNELS + _ELEMWISE_KERNELS + _COMPARE_KERNELS
    + _RANDOM_KERNELS
    + _NN_KERNELS + _BATCH_KERNELS + _RNN_KERNELS
    + _STRIDED_KERNELS + _SHAPE_KERNELS + _GRAPH_KERNELS
    + _SIGNAL_KERNELS
    + _REDUCE_KERNELS
    + _IO_KERNELS
    + _ARITH_KERNELS
    + _CONV_KERNELS
    + _LINALG_KERNELS
}
"""Every kernel sparsegen generates (the update rules' kernels join it as they register)."""

for _rule in BUILT_IN.values():
    add_update_rule(_rule)


def kernel_def(name: str) -> KernelDef:
    """The registered kernel ``name``; an unknown name raises with the known ones."""
    try:
        return KERNELS[name]
    except KeyError:
        raise SparsegenError(f"unknown kernel {name!r}; known: {sorted(KERNELS)}") from None
