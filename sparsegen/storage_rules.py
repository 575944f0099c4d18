"""Storage-type inference as data: (op, input storage types) -> the output storage type and the
storage-level implementation (sparsegen/ops) that serves it. ``ndarray/dispatch.invoke`` is the
one reader. Rules change no binary, so this module is not in the kernel cache's digest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .opnames import (COMPARE_OPS, ELEMWISE_SCALAR_OPS, ELEMWISE_UNARY_DENSE,
                      ELEMWISE_UNARY_INTERNAL, ELEMWISE_UNARY_SPARSE, SPARSE_UPDATE_OPS)
from .opnames import ARITH_SCALAR_OPS, STRIDED_BINARY_OPS  # -- arith --
from .registry import UPDATE_RULES, resolve
from .update_rules.language import UpdateRule


@dataclass(frozen=True)
class StorageRule:
    """How a front-end op runs for one combination of input storage types."""

    output_stype: str | None  # None: no array result (the op writes its inputs, or checks them)
    implementation: str  # "module:function" of the storage-level op (sparsegen.ops, device)

    @cached_property
    def function(self) -> Callable[..., Any]:
        """The storage-level implementation, imported on first use (then kept: a call pays no
        import lookup)."""
        return resolve(self.implementation)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Call the storage-level implementation."""
        return self.function(*args, **kwargs)


VARIADIC = "..."
"""The last storage type of a rule's key that takes any number of inputs of the one before."""

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
_ELEMWISE_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    **{(op, stypes): StorageRule(out, _EW + impl)
       for op in ("elemwise_add", "elemwise_sub")
       for stypes, (out, impl), _ in _ELEMWISE_BINARY},
    **{("elemwise_mul", stypes): StorageRule(out, _EW + impl)
       for stypes, _, (out, impl) in _ELEMWISE_BINARY},
    ("elemwise_div", ("default", "default")): StorageRule("default", _EW + "dense_binary"),
    **{(f"_inplace_{fn}", ("default", stype)): StorageRule(None, _EW + "update_dense")
       for fn in SPARSE_UPDATE_OPS for stype in ("row_sparse", "csr")},
    **{(f"_{fn}", (stype,)): StorageRule(stype, _EW + "scalar")
       for fn in ELEMWISE_SCALAR_OPS for stype in _STYPES if fn != "rdiv_scalar"},
    ("_rdiv_scalar", ("default",)): StorageRule("default", _EW + "scalar"),
    **{(op, (stype,)): StorageRule(stype, _EW + "unary")
       for op in ELEMWISE_UNARY_SPARSE for stype in _STYPES},
    **{(op, ("default",)): StorageRule("default", _EW + "unary")
       for op in ELEMWISE_UNARY_DENSE + ELEMWISE_UNARY_INTERNAL},
    **{(f"_{fn}", (stype, stype)): StorageRule(stype, _EW + impl)
       for fn in ("maximum", "minimum", "hypot")
       for stype, impl in (("row_sparse", "rsp_rsp"), ("csr", "csr_csr"))},
    ("_scatter_elemwise_div", ("row_sparse", "default")): StorageRule("row_sparse",
                                                                 _EW + "sparse_dense_mul"),
    **{("clip", (stype,)): StorageRule(stype, _EW + "clip") for stype in _STYPES},
}
"""Elementwise storage rules. A scalar op, or clip, whose parameters map zero elsewhere runs on
the dense form (the front end converts first): its result is dense whatever the input."""

_CMP = "sparsegen.ops.compare:"
_COMPARE_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    **{(fn, ("default", "default")): StorageRule("default", _CMP + "arrays") for fn in COMPARE_OPS},
    **{(f"_{fn}_scalar", (stype,)): StorageRule(stype, _CMP + "scalar")
       for fn in COMPARE_OPS for stype in _STYPES},
    **{(f"_{fn}_scalar->default", ("default",)): StorageRule("default", _CMP + "scalar")
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
_DOT_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    (f"dot{flags}{forward}", stypes): StorageRule(stype, _DOT + impls[stype])
    for flags, stypes, default, impls in _DOT_KINDS
    for forward, stype in (("", default), *((f"->{s}", s) for s in impls))
}
"""dot storage rules: the op name carries the transpose flags and forward_stype (``dot``,
``dot_transpose_a->default``, ...); without ``->stype`` the output is MXNet's for the inputs.
These are MXNet's sparse kernels on CPU (plus dense·csrᵀ -> csr, a fallback there); any other
combination runs the dense rule with a StorageFallbackWarning."""

_RND = "sparsegen.ops.random:"
_RANDOM_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    **{(f"_sample_{dist}", ("default",) * arity): StorageRule("default", _RND + "sample_arrays")
       for dist, arity in (("uniform", 2), ("normal", 2), ("gamma", 2), ("exponential", 1),
                           ("poisson", 1), ("negative_binomial", 2),
                           ("generalized_negative_binomial", 2))},
    ("_shuffle", ("default",)): StorageRule("default", _RND + "shuffle"),
}
"""Samplers with NDArray parameters, and shuffle (sparse inputs fall back to dense, as MXNet)."""
_NN = "sparsegen.ops."
_DENSE1, _DENSE2, _DENSE3 = ("default",), ("default",) * 2, ("default",) * 3
_NN_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    ("Cast", _DENSE1): StorageRule("default", _NN + "astype:cast"),
    ("take", _DENSE2): StorageRule("default", _NN + "gather:take"),
    ("take", ("csr", "default")): StorageRule("csr", _NN + "gather:take_csr"),
    ("take", ("row_sparse", "default")): StorageRule("default", _NN + "gather:take_rsp"),
    ("take->default", _DENSE2): StorageRule("default", _NN + "gather:take"),
    ("pick", _DENSE2): StorageRule("default", _NN + "gather:pick"),
    ("gather_nd", _DENSE2): StorageRule("default", _NN + "gather:gather_nd"),
    ("scatter_nd", _DENSE2): StorageRule("default", _NN + "gather:scatter_nd"),
    ("one_hot", _DENSE1): StorageRule("default", _NN + "gather:one_hot"),
    ("Embedding", _DENSE2): StorageRule("default", _NN + "gather:embedding"),
    ("Embedding", ("default", "row_sparse")): StorageRule("default", _NN + "gather:embedding_rsp"),
    **{("FullyConnected", stypes): StorageRule("default", _NN + "layers:fully_connected")
       for stypes in (_DENSE2, _DENSE3)},
    **{("FullyConnected", ("csr", *stypes)):
       StorageRule("default", _NN + "layers:fully_connected_csr") for stypes in (_DENSE1, _DENSE2)},
    ("Activation", _DENSE1): StorageRule("default", _NN + "layers:activation"),
    ("softmax", _DENSE1): StorageRule("default", _NN + "layers:softmax"),
    ("_sigmoid_bce", _DENSE2): StorageRule("default", _NN + "layers:sigmoid_bce"),
    ("_sigmoid_bce_grad", _DENSE3): StorageRule("default", _NN + "layers:sigmoid_bce_grad"),
    ("sort", _DENSE1): StorageRule("default", _NN + "sort:sort"),
    ("argsort", _DENSE1): StorageRule("default", _NN + "sort:argsort"),
    ("topk", _DENSE1): StorageRule("default", _NN + "sort:topk"),
    ("_topk_both", _DENSE1): StorageRule(None, _NN + "sort:topk"),
}
"""Indexing, neural-network and sorting rules (MXNet 1.9.1's: csr take along axis 0, Embedding of a
row_sparse weight and FullyConnected on csr data have sparse kernels, and so has take of
row_sparse rows along axis 0, which MXNet runs on a dense copy; every other sparse input falls
back to dense).
``take->default`` is take where the csr kernel does not serve (another axis, mode='raise');
``_topk_both`` returns topk's (values, indices) pair of dense buffers, which the front end wraps
(its input is dense: the front end converts first)."""
_SHAPE = "sparsegen.ops.shape:"
VIEW_OPS = (
    "transpose", "swapaxes", "flip", "expand_dims", "squeeze", "flatten", "reshape", "tile",
    "repeat", "slice", "slice_axis", "slice_like", "split", "broadcast_to", "broadcast_like",
    "broadcast_axis", "_getitem", "depth_to_space", "space_to_depth",
)
"""Ops that copy a strided view of their input (the front end computes the view from shapes)."""

_SHAPE_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    **{(op, ("default",)): StorageRule("default", _SHAPE + "view") for op in VIEW_OPS},
    ("pad", ("default",)): StorageRule("default", _SHAPE + "pad"),
    ("concat", ("default", VARIADIC)): StorageRule("default", _SHAPE + "concat"),
    ("stack", ("default", VARIADIC)): StorageRule("default", _SHAPE + "stack"),
    ("_concat_csr", ("csr", VARIADIC)): StorageRule("csr", _SHAPE + "concat_csr"),
    ("_slice_csr", ("csr",)): StorageRule("csr", _SHAPE + "slice_csr"),
}
"""Shape and slicing rules, as MXNet 1.9.1's: dense kernels, sparse inputs fall back to dense,
except csr ``concat`` along dim 0 and csr ``slice`` without steps (the front end asks for
``_concat_csr`` / ``_slice_csr`` when every input is csr), which keep csr."""
_RED = "sparsegen.ops.reduce:"
_REDUCE_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    **{(op, ("default",)): StorageRule("default", _RED + "dense")
       for op in ("sum", "mean", "prod", "nansum", "nanprod", "max", "min", "norm", "argmax",
                  "argmin")},
    ("_sparse_reduce", ("csr",)): StorageRule("default", _RED + "csr"),
    ("_sparse_reduce", ("row_sparse",)): StorageRule("default", _RED + "row_sparse"),
    ("_square_sum", ("row_sparse",)): StorageRule("default", _RED + "square_sum"),
    ("_square_sum->row_sparse", ("row_sparse",)):
        StorageRule("row_sparse", _RED + "square_sum_rows"),
    ("getnnz", ("csr",)): StorageRule("default", _RED + "nnz"),
}
"""Reductions (kernel ``reduce``): every op on dense input; sum / mean / norm of 2-D csr and
row_sparse over axis 0, 1 or both (``_sparse_reduce``, which the front end picks; other sparse
reductions fall back to dense under the op's own name); ``_square_sum`` and ``getnnz`` have
sparse rules only, as in MXNet."""
# -- arith --
_ARITH = "sparsegen.ops.arith:"
_BROADCAST = "sparsegen.ops.broadcast:"
_ADD_N_PAIRS = (  # (input stypes, output stype, implementation in ops/elemwise.py)
    (("default", "default"), "default", "dense_binary"),
    (("row_sparse", "row_sparse"), "row_sparse", "rsp_rsp"),
    (("default", "row_sparse"), "default", "dense_sparse"),
    (("default", "csr"), "default", "dense_sparse"),
    (("row_sparse", "default"), "default", "sparse_dense"),
    (("csr", "default"), "default", "sparse_dense"),
)
_ARITH_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    **{(f"broadcast_{fn}{suffix}", ("default", "default")):
       StorageRule("default", _BROADCAST + "dense")
       for fn in STRIDED_BINARY_OPS for suffix in ("", "->default")},
    **{(f"broadcast_{fn}", ("csr", "default")): StorageRule("csr", _BROADCAST + "csr_dense")
       for fn in ("mul", "div")},
    **{(f"_{fn}", ("default",)): StorageRule("default", _ARITH + "scalar")
       for fn in ARITH_SCALAR_OPS},
    **{("add_n", stypes): StorageRule(out, _EW + impl) for stypes, out, impl in _ADD_N_PAIRS},
    **{("add_n", (stype,)): StorageRule(stype, "sparsegen.device:deep_copy")
       for stype in ("default", "row_sparse")},
    ("where", ("default", "default", "default")): StorageRule("default", _ARITH + "where"),
    ("where", ("csr", "default", "default")): StorageRule("default", _ARITH + "where_csr"),
    ("quadratic", ("default",)): StorageRule("default", _ARITH + "quadratic"),
    ("quadratic", ("csr",)): StorageRule("csr", _ARITH + "quadratic"),
    ("quadratic->default", ("default",)): StorageRule("default", _ARITH + "quadratic"),
}
"""Storage rules of power, maximum, minimum, mod, hypot, the logical ops, broadcasting, add_n,
where and quadratic, as MXNet 1.9.1's: ``broadcast_<op>`` of two dense arrays (``->default``: the
name the front end uses for a csr operand the csr kernel cannot serve, so it falls back), csr
``*`` / ``/`` a dense vector -> csr; the scalar ops dense only; ``add_n`` one input at a time,
row_sparse only when every input is; ``where`` by a dense or csr condition -> dense; quadratic
keeps csr when ``c`` is 0 (the front end asks for ``quadratic->default`` otherwise)."""

# -- conv --
_CONV_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    ("Convolution", stypes): StorageRule("default", "sparsegen.ops.conv:convolution")
    for stypes in (("default",) * 2, ("default",) * 3)
}
"""Convolution of dense data, weight (and bias); sparse inputs fall back to dense, as MXNet."""

STORAGE_RULES: dict[tuple[str, tuple[str, ...]], StorageRule] = {
    **_ELEMWISE_RULES,
    **_COMPARE_RULES,
    **_DOT_RULES,
    **_NN_RULES,
    **_REDUCE_RULES,
    **_ARITH_RULES,
    ("cast_storage->row_sparse", ("default",)):
        StorageRule("row_sparse", "sparsegen.ops.cast:dense_to_row_sparse"),
    ("cast_storage->default", ("row_sparse",)):
        StorageRule("default", "sparsegen.ops.cast:row_sparse_to_dense"),
    ("cast_storage->csr", ("default",)): StorageRule("csr", "sparsegen.ops.cast:dense_to_csr"),
    ("cast_storage->default", ("csr",)): StorageRule("default", "sparsegen.ops.cast:csr_to_dense"),
    **{(f"cast_storage->{stype}", (stype,)): StorageRule(stype, "sparsegen.device:deep_copy")
       for stype in _STYPES},
    ("retain", ("row_sparse",)): StorageRule("row_sparse", "sparsegen.ops.retain:retain"),
    ("_retain_check", ("row_sparse", "default")):
        StorageRule(None, "sparsegen.ops.retain:valid_ids"),
    **_RANDOM_RULES,
    **_SHAPE_RULES,
    **_CONV_RULES,
}
"""(op, input storage types) -> output storage type and implementation: storage inference as data."""


def storage_rule(op: str, stypes: tuple[str, ...]) -> StorageRule | None:
    """The rule for ``op`` on inputs of ``stypes``, or ``None`` when no sparse kernel exists.

    A rule keyed ``(stype, VARIADIC)`` serves any number of inputs of that one storage type;
    ``<name>_update`` ops are derived from the registered update rule ``name``
    (``update_storage_rules``)."""
    rule = STORAGE_RULES.get((op, stypes))
    if rule is None and stypes and stypes.count(stypes[0]) == len(stypes):
        rule = STORAGE_RULES.get((op, (stypes[0], VARIADIC)))
    if rule is None and op.endswith(_UPDATE):
        update = UPDATE_RULES.get(op[:-len(_UPDATE)])
        rule = update_storage_rules(update).get((op, stypes)) if update is not None else None
    return rule


_UPDATE = "_update"
_OPTIM_UPDATE = StorageRule(None, "sparsegen.ops.optim:update")


def update_storage_rules(rule: UpdateRule) -> dict[tuple[str, tuple[str, ...]], StorageRule]:
    """The storage rules of update rule ``rule``'s op ``<name>_update``, derived from its
    functions: keyed by the storage types of (weight, grad), in place on the weight and the
    states (kernel ``optim_<name>``); a row_sparse gradient only for a rule that takes one as
    it is (``sparse_gradients``: the front end makes it dense for the others, as MXNet falls
    back)."""
    grads = ("default", "row_sparse") if rule.sparse_gradients else ("default",)
    return {(f"{rule.name}{_UPDATE}", (weight, grad)): _OPTIM_UPDATE
            for weight in ("default", "row_sparse") for grad in grads}


COMPOSED_OPS = (
    "SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
    "MAERegressionOutput", "MakeLoss", "BlockGrad", "BatchNorm",
)
"""Ops with no rule of their own: the front end (``ndarray/output.py``, ``ndarray/batchnorm.py``)
computes them with other ops and records each as one node, whose gradient rule is in
``autograd/gradients``."""
