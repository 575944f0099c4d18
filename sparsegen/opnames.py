"""Op vocabularies: which unary ops keep sparsity, the scalar, comparison and binary op names.

One list per family of elementwise ops, read by the registry (the functions of the elementwise,
comparison, arithmetic and strided kernels and their signatures), by the templates that generate
those functions (each keeps its element expressions by name; the names and their order come from
here), by the storage-type rules (``storage_rules.py``) and by the front end. TVM-free and importing
nothing, so every layer may read it; it shapes binaries (a name added here is a function more in
a kernel), so the cache key covers it for the kernels whose template imports it.
"""

from __future__ import annotations

ELEMWISE_UNARY_SPARSE = (
    "abs", "sign", "sqrt", "square", "negative", "relu", "sin", "sinh", "tan", "tanh", "arcsin",
    "arcsinh", "arctan", "arctanh", "floor", "ceil", "round", "rint", "fix", "trunc", "expm1",
    "log1p", "cbrt", "degrees", "radians", "erf", "erfinv", "softsign",
)
"""Unary ops that map zero to zero: row_sparse and csr keep their storage (stored values only)."""

ELEMWISE_UNARY_DENSE = (
    "exp", "log", "log10", "log2", "rsqrt", "cos", "cosh", "arccos", "arccosh", "sigmoid",
    "gamma", "gammaln", "reciprocal", "rcbrt",
)
"""Unary ops that map zero elsewhere: a dense kernel only (sparse inputs fall back to it)."""

ELEMWISE_UNARY_INTERNAL = ("digamma",)
"""Unary ops that gradients use and ``mx.nd`` does not name (``nd._internal._digamma``): a dense
kernel only."""

ELEMWISE_UNARY = ELEMWISE_UNARY_SPARSE + ELEMWISE_UNARY_DENSE + ELEMWISE_UNARY_INTERNAL
"""Every unary op, in the order of kernel ``ew_unary``'s functions."""

ELEMWISE_SCALAR_OPS = ("add_scalar", "sub_scalar", "rsub_scalar", "mul_scalar", "div_scalar",
                       "rdiv_scalar")
"""``x <op> s`` and the reflected ``s - x``, ``s / x``: functions of kernel ``ew_dense``."""

SPARSE_UNION_OPS = ("add", "sub", "maximum", "minimum", "hypot")
"""Binary ops of two row_sparse (two csr) arrays that store the union of their positions
(``0 <op> 0`` is 0; a position stored in one operand only is ``x <op> 0`` or ``0 <op> x``):
functions ``fill_<op>`` of ``ew_rsp`` / ``ew_csr``."""

SPARSE_UPDATE_OPS = ("add", "sub")
"""Union ops that also update a dense array in place at a sparse operand's positions
(``_inplace_<op>``): functions ``update_<op>`` of ``ew_rsp`` / ``ew_csr``."""

COMPARE_OPS = ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal")
"""MXNet's comparison ops (``== != > >= < <=``): 1 / 0 in the input dtype, kernel ``cmp_dense``."""

ARITH_BINARY_OPS = ("power", "maximum", "minimum", "hypot", "mod", "logical_and", "logical_or",
                    "logical_xor")
"""Binary ops beyond add / sub / mul / div: functions ``(a, b, out)`` of kernel ``ew_arith`` and
of kernel ``strided`` (broadcasting)."""

ARITH_SCALAR_OPS = ("power_scalar", "rpower_scalar", "maximum_scalar", "minimum_scalar",
                    "mod_scalar", "rmod_scalar")
"""``x <op> s`` and the reflected ``s ** x``, ``s % x`` (kernel ``ew_arith``): dense rules only,
as MXNet 1.9.1 (sparse inputs fall back to dense)."""

STRIDED_BINARY_OPS = ("add", "sub", "mul", "div", *COMPARE_OPS, *ARITH_BINARY_OPS)
"""Binary functions of kernel ``strided``, in this order: ``out = a <op> b`` over two strided
views (broadcasting)."""
