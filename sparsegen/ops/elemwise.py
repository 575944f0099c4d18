"""Elementwise ops on dense buffers and the row_sparse / csr formats, on generated kernels.

Ops whose output size depends on the data run in two phases: the index set (kernel ``ew_index``:
a merge of the sorted ids), then the values (``ew_rsp`` / ``ew_csr``: parallel over rows).
Every result is freshly allocated and shares no buffer with an input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..device import (DeviceArray, contiguous, copy, deep_copy, empty_like, head, item,
                      target_of)
from ..formats import CSR, INDEX_DTYPE, MERGE_CHUNK, SERIAL_MERGE_STEPS, RowSparse
from ..opnames import (ELEMWISE_SCALAR_OPS, ELEMWISE_UNARY_DENSE, ELEMWISE_UNARY_INTERNAL,
                       ELEMWISE_UNARY_SPARSE, SPARSE_UNION_OPS, SPARSE_UPDATE_OPS)
from .cast import dense_to_csr
from .layout import as_rows, dtype_name, kernel
from .rule import STYPES, Rules, StorageRule
from .shape import arange

Storage = Any  # a dense buffer (numpy or device array), RowSparse or CSR

UNION_OPS = SPARSE_UNION_OPS
"""Binary ops whose sparse result stores the union of both operands' positions (add, sub,
maximum, minimum, hypot; ``mul`` stores the intersection)."""

NONFINITE_CHUNK = 8192
"""Values per chunk of the non-finite check (``ew_dense.nonfinite``): one parallel task each."""


def _name(values: Any) -> str:
    return dtype_name(values.dtype)


def _flat(x: Any) -> Any:
    return contiguous(x).reshape(-1)


def _dense_kernel(values: Any) -> Any:
    return kernel("ew_dense", (_name(values),), values, values.size)


_FORMATS = (RowSparse, CSR)


def _with_data(storage: RowSparse | CSR, data: Any) -> RowSparse | CSR:
    """``storage`` with new stored values, sharing its index arrays (nothing writes to the
    index arrays of a format once it exists, and users see them read-only)."""
    if type(storage) is RowSparse:
        return RowSparse(data, storage.indices, storage.shape)
    return CSR(data, storage.indices, storage.indptr, storage.shape)


def _map_values(x: Storage, function: Callable[..., Any], *args: Any) -> Storage:
    """``function(values, *args, out)`` over the flat values of a dense array or the stored
    values of a sparse one; a sparse result keeps the input's indices."""
    dense = not isinstance(x, _FORMATS)
    values = x if dense else x.data
    out = empty_like(values, values.shape, values.dtype)
    function(_flat(values), *args, out.reshape(-1))
    return out if dense else _with_data(x, out)


def _map_kernel(x: Storage, name: str, fn: str, *args: Any) -> Storage:
    """``_map_values`` with function ``fn`` of kernel ``name`` for the values of ``x``."""
    values = x.data if isinstance(x, _FORMATS) else x
    function = getattr(kernel(name, (_name(values),), values, values.size), fn)
    return _map_values(x, function, *args)


# -- maps: every storage type -------------------------------------------------------------------
def unary(x: Storage, fn: str) -> Storage:
    """The unary op ``fn`` (an MXNet name such as ``sqrt``) on every value (kernel ``ew_unary``);
    on sparse storage only the stored values, which is exact for ops that map zero to zero."""
    return _map_kernel(x, "ew_unary", fn)


def scalar(x: Storage, fn: str, scalar: Any) -> Storage:
    """``x <op> scalar`` (or the reflected ``rsub_scalar`` / ``rdiv_scalar``) with ``scalar``
    already in the dtype of ``x`` (kernel ``ew_dense``)."""
    return _map_kernel(x, "ew_dense", fn, scalar)


def clip(x: Storage, a_min: Any, a_max: Any) -> Storage:
    """MXNet's clip of every value into ``[a_min, a_max]`` (bounds already in ``x``'s dtype)."""
    return _map_kernel(x, "ew_dense", "clip", a_min, a_max)


# -- binary ops ---------------------------------------------------------------------------------
def dense_binary(a: Any, b: Any, fn: str) -> Any:
    """``a <fn> b`` for two dense arrays of one shape and dtype (kernel ``ew_dense``)."""
    out = empty_like(a, a.shape, a.dtype)
    getattr(_dense_kernel(a), fn)(_flat(a), _flat(b), out.reshape(-1))
    return out


def _merge_chunks(steps: int, ids: Any) -> int:
    """Chunks for a merge of ``steps`` ids held where ``ids`` is: one (a serial merge in one pass)
    on the CPU below ``SERIAL_MERGE_STEPS``, else chunks of at most ``MERGE_CHUNK`` steps."""
    if target_of(ids) is None and steps < SERIAL_MERGE_STEPS:
        return 1
    return max(1, -(-steps // MERGE_CHUNK))


def has_nonfinite(values: Any) -> bool:
    """Whether ``values`` (any shape, on any device) hold inf or nan: one ``ew_dense.nonfinite``
    pass over chunks of ``NONFINITE_CHUNK``; never true for integer dtypes (no pass)."""
    if values.dtype.kind != "f" or values.size == 0:
        return False
    counts = empty_like(values, (-(-values.size // NONFINITE_CHUNK) + 1,), INDEX_DTYPE)
    _dense_kernel(values).nonfinite(_flat(values), counts)
    return item(counts, -1) > 0


def _nonfinite_product(a: RowSparse | CSR, b: RowSparse | CSR, shared: int) -> bool:
    """Whether ``a * b`` may hold nan outside the ``shared`` positions stored in both (``inf *
    0``): only an operand that stores positions beyond them is checked, so a product of two
    arrays storing the same rows pays nothing."""
    return any(len(x.indices) > shared and has_nonfinite(x.data) for x in (a, b))


def _rsp_mul_nonfinite(a: RowSparse, b: RowSparse) -> RowSparse:
    """``a * b`` when an operand holds inf or nan: the rows stored in both, and the rows stored
    in one that hold a non-finite value (``x * 0`` is nan there, as in MXNet)."""
    size = a.indices.size + b.indices.size
    indices, src_a, src_b = (empty_like(a.indices, (size,), INDEX_DTYPE) for _ in range(3))
    count = empty_like(a.indices, (1,), INDEX_DTYPE)
    runs = empty_like(a.indices, (_merge_chunks(size, a.indices) + 1,), INDEX_DTYPE)
    kernel("ew_index", (), a.indices, size).rsp_union(a.indices, b.indices, indices, src_a, src_b,
                                                      count, runs)
    union = item(count, 0)
    values = kernel("ew_rsp", (_name(a),), a.data, a.data.size + b.data.size)
    pos = empty_like(a.indices, (union + 1,), INDEX_DTYPE)
    src_a, src_b = head(src_a, union), head(src_b, union)
    values.keep_mul(as_rows(a.data), as_rows(b.data), src_a, src_b, pos)
    k = item(pos, -1)
    data = empty_like(a.data, (k, *a.shape[1:]), a.dtype)
    out_indices = empty_like(a.indices, (k,), INDEX_DTYPE)
    values.fill_mul_kept(as_rows(a.data), as_rows(b.data), src_a, src_b, pos,
                         head(indices, union), as_rows(data, written=True), out_indices)
    return RowSparse(data, out_indices, a.shape)


def rsp_rsp(a: RowSparse, b: RowSparse, fn: str) -> RowSparse:
    """``a <fn> b`` for two row_sparse arrays: union of rows for add / sub, intersection for mul
    (plus the rows where inf or nan meets an absent row, when an operand holds any)."""
    union = fn in UNION_OPS
    size = a.indices.size + b.indices.size if union else min(a.indices.size, b.indices.size)
    indices, src_a, src_b = (empty_like(a.indices, (size,), INDEX_DTYPE) for _ in range(3))
    count = empty_like(a.indices, (1,), INDEX_DTYPE)
    runs = empty_like(a.indices,
                      (_merge_chunks(a.indices.size + b.indices.size, a.indices) + 1,),
                      INDEX_DTYPE)
    index = kernel("ew_index", (), a.indices, size)
    (index.rsp_union if union else index.rsp_intersect)(a.indices, b.indices, indices, src_a,
                                                        src_b, count, runs)
    k = item(count, 0)
    if fn == "mul" and _nonfinite_product(a, b, k):
        return _rsp_mul_nonfinite(a, b)
    data = empty_like(a.data, (k, *a.shape[1:]), a.dtype)
    getattr(kernel("ew_rsp", (_name(a),), data, data.size), f"fill_{fn}")(
        as_rows(a.data), as_rows(b.data), head(src_a, k), head(src_b, k),
        as_rows(data, written=True)
    )
    return RowSparse(data, copy(head(indices, k)), a.shape)


def csr_csr(a: CSR, b: CSR, fn: str) -> CSR:
    """``a <fn> b`` for two csr matrices, row by row: union of columns for add / sub,
    intersection for mul (plus the entries where inf or nan meets an absent entry, when an
    operand holds any)."""
    indptr = empty_like(a.indptr, (a.shape[0] + 1,), INDEX_DTYPE)
    values = kernel("ew_csr", (_name(a),), a.data, a.indices.size + b.indices.size)
    index = kernel("ew_index", (), a.indptr, a.indices.size + b.indices.size)
    count = index.csr_union_count if fn in UNION_OPS else index.csr_intersect_count
    count(a.indptr, a.indices, b.indptr, b.indices, indptr)
    nnz = item(indptr, -1)
    fill = f"fill_{fn}"
    if fn == "mul" and _nonfinite_product(a, b, nnz):
        values.count_mul_nonfinite(a.indptr, a.indices, a.data, b.indptr, b.indices, b.data,
                                   indptr)
        nnz, fill = item(indptr, -1), "fill_mul_nonfinite"
    indices = empty_like(a.indptr, (nnz,), INDEX_DTYPE)
    data = empty_like(a.data, (nnz,), a.dtype)
    getattr(values, fill)(
        a.indptr, a.indices, a.data, b.indptr, b.indices, b.data, indptr, indices, data
    )
    return CSR(data, indices, indptr, a.shape)


def update_dense(dense: Any, sparse: RowSparse | CSR, fn: str) -> Any:
    """``dense <fn>= sparse`` in place at the stored positions (add / sub); returns ``dense``."""
    if isinstance(sparse, RowSparse):
        getattr(kernel("ew_rsp", (_name(dense),), dense, sparse.data.size), f"update_{fn}")(
            as_rows(dense, written=True), as_rows(sparse.data), sparse.indices
        )
    else:
        getattr(kernel("ew_csr", (_name(dense),), dense, sparse.data.size), f"update_{fn}")(
            as_rows(dense, written=True), sparse.data, sparse.indices, sparse.indptr
        )
    return dense


def dense_sparse(dense: Any, sparse: RowSparse | CSR, fn: str) -> Any:
    """``dense <fn> sparse`` (add / sub) -> dense: a copy of ``dense`` updated where stored."""
    return update_dense(copy(dense), sparse, fn)


def sparse_dense(sparse: RowSparse | CSR, dense: Any, fn: str) -> Any:
    """``sparse <fn> dense`` (add / sub) -> dense; ``s - d`` runs as ``(-d) + s``, which is
    ``s - d`` in IEEE and integer arithmetic where ``s`` is stored, and ``-d`` elsewhere (so
    ``-0.0`` where ``d`` is 0, as MXNet)."""
    if fn == "add":
        return dense_sparse(dense, sparse, fn)
    return update_dense(unary(dense, "negative"), sparse, "add")


def nan_zero_image(values: Any, fn: str) -> Any | None:
    """``0 <fn> values`` for fn mul or div, when it holds a nan (``0 * inf``, ``0 * nan``, ``0 /
    0``, ``0 / nan``; every other value gives a signed zero), else ``None``: what a sparse
    operand's absent zeros become where they meet ``values``. Never for integer dtypes (their
    division by zero is refused before)."""
    if values.dtype.kind != "f" or values.size == 0:
        return None
    if fn == "mul" and not has_nonfinite(values):  # one pass, no buffer: the usual case
        return None
    image = scalar(values, "mul_scalar" if fn == "mul" else "rdiv_scalar", 0.0)
    return image if fn == "mul" or has_nonfinite(image) else None


def csr_nan_by_row(a: CSR, v: Any, image: Any, fn: str, step: int) -> CSR:
    """``a <fn> v`` for a flat ``v`` holding one value per row (``step`` 1) or a single value
    (``step`` 0), whose zero image ``image`` (``nan_zero_image``) holds a nan: csr storing
    ``a``'s entries and every column of the rows whose image is nan (kernel ``bcast_csr``)."""
    rows, cols = a.shape
    values = kernel("bcast_csr", (_name(a.data),), a.data, a.data.size + image.size)
    indptr = empty_like(a.indptr, (rows + 1,), INDEX_DTYPE)
    values.by_row_nan_count(a.indptr, image, step, cols, indptr)
    nnz = item(indptr, -1)
    indices = empty_like(a.indptr, (nnz,), INDEX_DTYPE)
    data = empty_like(a.data, (nnz,), a.dtype)
    getattr(values, f"{fn}_by_row_nan")(a.data, a.indices, a.indptr, v, image, step, cols,
                                        indptr, indices, data)
    return CSR(data, indices, indptr, a.shape)


def csr_nan_by_col(a: CSR, v: Any, image: Any, fn: str) -> CSR:
    """``a <fn> v`` for a flat ``v`` holding a row of ``a``'s columns, or a value per entry of
    ``a``'s shape, whose zero image ``image`` (``nan_zero_image``) holds a nan: csr storing
    ``a``'s entries and the positions where the image is nan (kernel ``bcast_csr``)."""
    rows, cols = a.shape
    nan = dense_to_csr(image.reshape(-1, cols))  # the image's nan positions (its zeros drop)
    zstep = int(nan.shape[0] > 1)
    values = kernel("bcast_csr", (_name(a.data),), a.data, a.data.size + image.size)
    indptr = empty_like(a.indptr, (rows + 1,), INDEX_DTYPE)
    values.by_col_nan_count(a.indptr, a.indices, nan.indptr, nan.indices, nan.data, zstep,
                            indptr)
    nnz = item(indptr, -1)
    indices = empty_like(a.indptr, (nnz,), INDEX_DTYPE)
    data = empty_like(a.data, (nnz,), a.dtype)
    getattr(values, f"{fn}_by_col_nan")(a.data, a.indices, a.indptr, v, cols * zstep, 1,
                                        nan.indptr, nan.indices, nan.data, zstep, indptr,
                                        indices, data)
    return CSR(data, indices, indptr, a.shape)


def sparse_dense_mul(sparse: RowSparse | CSR, dense: Any, fn: str) -> RowSparse | CSR:
    """``sparse * dense`` -> the storage of ``sparse``: stored values times the dense values at
    their positions, zeros elsewhere; where the dense side holds inf or nan at a position
    ``sparse`` does not store, ``0 * inf`` is nan, stored (the rows of such values for
    row_sparse, computed as ``0 * dense``; the entries for csr). ``fn`` div (row_sparse only):
    MXNet's ``_scatter_elemwise_div``, stored rows divided by the dense rows, nothing else."""
    if fn == "mul" and has_nonfinite(dense):
        if isinstance(sparse, RowSparse):  # the dense operand as row_sparse storing every row
            every = arange(dense.shape[0], 0, 1, 1, INDEX_DTYPE,
                           dense.device if isinstance(dense, DeviceArray) else None)
            return _rsp_mul_nonfinite(sparse, RowSparse(contiguous(dense), every, dense.shape))
        flat = _flat(dense)
        return csr_nan_by_col(sparse, flat, scalar(flat, "mul_scalar", 0.0), fn)
    family = "ew_rsp" if isinstance(sparse, RowSparse) else "ew_csr"
    gather = getattr(kernel(family, (_name(dense),), dense, sparse.data.size), f"gather_{fn}")
    out = empty_like(sparse.data, sparse.data.shape, sparse.dtype)
    if isinstance(sparse, RowSparse):
        gather(as_rows(dense), as_rows(sparse.data), sparse.indices, as_rows(out, written=True))
    else:
        gather(contiguous(dense), sparse.data, sparse.indices, sparse.indptr, out)
    return _with_data(sparse, out)


def dense_sparse_mul(dense: Any, sparse: RowSparse | CSR, fn: str) -> RowSparse | CSR:
    """``dense * sparse`` -> the storage of ``sparse`` (multiplication commutes exactly)."""
    return sparse_dense_mul(sparse, dense, fn)


_BINARY = (  # input stypes, (output stype, implementation) of add / sub, of mul
    (("default", "default"), ("default", dense_binary), ("default", dense_binary)),
    (("row_sparse", "row_sparse"), ("row_sparse", rsp_rsp), ("row_sparse", rsp_rsp)),
    (("csr", "csr"), ("csr", csr_csr), ("csr", csr_csr)),
    (("default", "row_sparse"), ("default", dense_sparse), ("row_sparse", dense_sparse_mul)),
    (("row_sparse", "default"), ("default", sparse_dense), ("row_sparse", sparse_dense_mul)),
    (("default", "csr"), ("default", dense_sparse), ("csr", dense_sparse_mul)),
    (("csr", "default"), ("default", sparse_dense), ("csr", sparse_dense_mul)),
)
_ADD_N = (  # add_n's pairs: (input stypes, output stype, implementation)
    (("default", "default"), "default", dense_binary),
    (("row_sparse", "row_sparse"), "row_sparse", rsp_rsp),
    (("default", "row_sparse"), "default", dense_sparse),
    (("default", "csr"), "default", dense_sparse),
    (("row_sparse", "default"), "default", sparse_dense),
    (("csr", "default"), "default", sparse_dense),
)
STORAGE_RULES: Rules = {
    **{(op, stypes): StorageRule(out, impl)
       for op in ("elemwise_add", "elemwise_sub")
       for stypes, (out, impl), _ in _BINARY},
    **{("elemwise_mul", stypes): StorageRule(out, impl) for stypes, _, (out, impl) in _BINARY},
    ("elemwise_div", ("default", "default")): StorageRule("default", dense_binary),
    **{(f"_inplace_{fn}", ("default", stype)): StorageRule(None, update_dense)
       for fn in SPARSE_UPDATE_OPS for stype in ("row_sparse", "csr")},
    **{(f"_{fn}", (stype,)): StorageRule(stype, scalar)
       for fn in ELEMWISE_SCALAR_OPS for stype in STYPES if fn != "rdiv_scalar"},
    ("_rdiv_scalar", ("default",)): StorageRule("default", scalar),
    **{(op, (stype,)): StorageRule(stype, unary)
       for op in ELEMWISE_UNARY_SPARSE for stype in STYPES},
    **{(op, ("default",)): StorageRule("default", unary)
       for op in ELEMWISE_UNARY_DENSE + ELEMWISE_UNARY_INTERNAL},
    **{(f"_{fn}", (stype, stype)): StorageRule(stype, impl)
       for fn in ("maximum", "minimum", "hypot")
       for stype, impl in (("row_sparse", rsp_rsp), ("csr", csr_csr))},
    ("_scatter_elemwise_div", ("row_sparse", "default")): StorageRule("row_sparse",
                                                                 sparse_dense_mul),
    **{("clip", (stype,)): StorageRule(stype, clip) for stype in STYPES},
    **{("add_n", stypes): StorageRule(out, impl) for stypes, out, impl in _ADD_N},
    **{("add_n", (stype,)): StorageRule(stype, deep_copy) for stype in ("default", "row_sparse")},
}
"""Elementwise storage rules. A scalar op, or clip, whose parameters map zero elsewhere runs on
the dense form (the front end converts first): its result is dense whatever the input.
``add_n`` (MXNet's ``ElementWiseSum``) adds one input at a time, row_sparse only when every
input is."""
