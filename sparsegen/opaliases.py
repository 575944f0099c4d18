"""MXNet's other names of its ops (NNVM aliases such as ``_Plus``, ``stop_gradient``,
``_sparse_dot``): front-end vocabulary, which shapes no binary (so it is not in ``opnames.py``,
which kernel cache keys cover). TVM-free and importing nothing."""

from __future__ import annotations

ALIASES = {
    "_DivScalar": "_div_scalar", "_Equal": "_equal", "_EqualScalar": "_equal_scalar",
    "_Greater": "_greater", "_GreaterEqualScalar": "_greater_equal_scalar",
    "_GreaterScalar": "_greater_scalar", "_Greater_Equal": "_greater_equal", "_Lesser": "_lesser",
    "_LesserEqualScalar": "_lesser_equal_scalar", "_LesserScalar": "_lesser_scalar",
    "_Lesser_Equal": "_lesser_equal", "_MaximumScalar": "_maximum_scalar",
    "_MinimumScalar": "_minimum_scalar", "_MinusScalar": "_minus_scalar", "_Mod": "_mod",
    "_ModScalar": "_mod_scalar", "_MulScalar": "_mul_scalar",
    "_NotEqualScalar": "_not_equal_scalar", "_Not_Equal": "_not_equal",
    "_PlusScalar": "_plus_scalar", "_Power": "_power", "_PowerScalar": "_power_scalar",
    "_RDivScalar": "_rdiv_scalar", "_RMinusScalar": "_rminus_scalar",
    "_RModScalar": "_rmod_scalar", "_RPowerScalar": "_rpower_scalar",
    "ElementWiseSum": "add_n", "Softmax": "SoftmaxOutput", "_Div": "elemwise_div",
    "_Hypot": "_hypot", "_Maximum": "_maximum", "_Minimum": "_minimum", "_Minus": "elemwise_sub",
    "_Mul": "elemwise_mul", "_Plus": "elemwise_add", "_add": "elemwise_add",
    "_div": "elemwise_div", "_minus": "elemwise_sub", "_mul": "elemwise_mul",
    "_plus": "elemwise_add", "_sub": "elemwise_sub", "broadcast_axes": "broadcast_axis",
    "broadcast_minus": "broadcast_sub", "broadcast_plus": "broadcast_add", "cast": "Cast",
    "choose_element_0index": "pick", "_crop_assign": "_slice_assign",
    "_crop_assign_scalar": "_slice_assign_scalar", "concat": "Concat", "crop": "slice", "flatten": "Flatten",
    "flip": "reverse", "max_axis": "max", "min_axis": "min", "pad": "Pad", "reshape": "Reshape",
    "split": "SliceChannel", "stop_gradient": "BlockGrad", "sum_axis": "sum",
    "normal": "_random_normal", "random_exponential": "_random_exponential",
    "random_gamma": "_random_gamma",
    "random_generalized_negative_binomial": "_random_generalized_negative_binomial",
    "random_negative_binomial": "_random_negative_binomial", "random_normal": "_random_normal",
    "random_poisson": "_random_poisson", "random_randint": "_random_randint",
    **{f"random_pdf_{d}": f"_random_pdf_{d}" for d in (
        "dirichlet", "exponential", "gamma", "generalized_negative_binomial",
        "negative_binomial", "normal", "poisson", "uniform")},
    "random_uniform": "_random_uniform", "sample_exponential": "_sample_exponential",
    "sample_gamma": "_sample_gamma",
    "sample_generalized_negative_binomial": "_sample_generalized_negative_binomial",
    "sample_multinomial": "_sample_multinomial",
    "sample_negative_binomial": "_sample_negative_binomial", "sample_normal": "_sample_normal",
    "sample_poisson": "_sample_poisson", "sample_uniform": "_sample_uniform",
    "uniform": "_random_uniform", "shuffle": "_shuffle", "swapaxes": "SwapAxis",
    **{f"linalg_{name}": f"_linalg_{name}" for name in (
        "det", "extractdiag", "extracttrian", "gelqf", "gemm", "gemm2", "inverse", "makediag",
        "maketrian", "potrf", "potri", "slogdet", "sumlogdiag", "syrk", "trmm", "trsm")},
    "_HypotScalar": "_hypot_scalar", "_Logical_And": "_logical_and", "_Logical_Or": "_logical_or",
    "_Logical_Xor": "_logical_xor", "_LogicalAndScalar": "_logical_and_scalar",
    "_LogicalOrScalar": "_logical_or_scalar", "_LogicalXorScalar": "_logical_xor_scalar",
    "identity": "_copy", "ravel_multi_index": "_ravel_multi_index",
    "unravel_index": "_unravel_index",
}
"""MXNet 1.9.1's other names of the ops sparsegen has under either name (its NNVM aliases, as
recorded in tests/fixtures/mxnet_census.json): alias -> the op's name. ``mx.nd``
(``mx.nd._internal`` for a leading underscore) serves both names as the one function,
``mx.sym`` writes the op's name, and a symbol file naming an alias loads as the op.
``_sparse_<op>`` aliases are ``SPARSE_ALIASED``."""

PREFIXES = {"_contrib_": "contrib", "_sparse_": "sparse", "_random_": "random",
            "_sample_": "random", "_linalg_": "linalg"}
"""The prefixes of MXNet's registered op names and the ``mx.nd`` namespace that holds each op
without its prefix (``_random_uniform`` is ``mx.nd.random.uniform``)."""

SPARSE_ALIASED = (
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "abs", "adam_update", "add_n", "arccos",
    "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "broadcast_add", "broadcast_div",
    "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub", "cast_storage", "cbrt",
    "ceil", "clip", "concat", "cos", "cosh", "degrees", "dot", "elemwise_add", "elemwise_div",
    "elemwise_mul", "elemwise_sub", "exp", "expm1", "fix", "floor", "ftrl_update", "gamma",
    "gammaln", "log", "log10", "log1p", "log2", "make_loss", "mean", "negative", "norm",
    "radians", "relu",
    "rint", "round", "rsqrt", "sgd_mom_update", "sgd_update", "sigmoid", "sign", "sin", "sinh",
    "slice", "sqrt", "square", "stop_gradient", "sum", "tan", "tanh", "trunc", "where",
    "zeros_like", "_contrib_round_ste", "_contrib_sign_ste",
)
"""The ops MXNet 1.9.1 also registers as ``_sparse_<name>`` (``<name>`` an op or an alias)."""


MXNET_NAMES = {"_add_scalar": "_plus_scalar", "_sub_scalar": "_minus_scalar",
               "_rsub_scalar": "_rminus_scalar"}
"""The ops sparsegen's front end runs under another name than MXNet registers (its
elementwise scalar kernels' function names): what the profiler reports them as."""


def alias_target(name: str) -> str | None:
    """The op that MXNet's alias ``name`` names, or None when ``name`` is no alias."""
    if name.startswith("_sparse_") and name[len("_sparse_"):] in SPARSE_ALIASED:
        name = name[len("_sparse_"):]
        return ALIASES.get(name, name)
    return ALIASES.get(name)
