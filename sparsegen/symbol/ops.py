"""The op functions of ``mx.sym`` (and ``mx.sym.sparse``, ``contrib``, ``_internal``,
``random``): one table says, for each op, which keyword arguments are array inputs and which
of them are created as variables when omitted (``fullyconnected0_weight``); every other
keyword becomes one of MXNet's string attributes."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..ndarray._internal import ARRAY_OPS, SCALAR_OPS
from .. import operator
from ..context import Context
from ..errors import InvalidType, InvalidValue, NotSupported
from ..name import NameManager
from ..opaliases import alias_target
from ..opnames import ELEMWISE_UNARY_DENSE, ELEMWISE_UNARY_SPARSE, STRIDED_BINARY_OPS
from .graph import BATCH_NORMS, CACHED_OP, HIDDEN_KEYS, VARIABLE, Entry, Node, params, strings
from .symbol import Symbol, create


@dataclass(frozen=True)
class OpDef:
    """One op of ``mx.sym``: MXNet's op name, its array inputs (in order), those created as
    variables when omitted, and the ``mx.nd`` function (dotted under ``mx.nd``) that runs it."""

    op: str
    inputs: tuple[str, ...] = ("data",)
    created: tuple[str, ...] = ()
    function: str = ""
    variadic: bool = False  # the inputs are the positional arguments (``num_args`` of them)

    @property
    def nd_function(self) -> str:
        """The ``mx.nd`` function that runs the op (its dotted name under ``mx.nd``)."""
        return self.function or self.op


_UNARY = (*ELEMWISE_UNARY_SPARSE, *ELEMWISE_UNARY_DENSE, "zeros_like", "ones_like")
_ELEMWISE = ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div")
BROADCAST_BINARY = tuple(f"broadcast_{name}" for name in (*STRIDED_BINARY_OPS, "minus", "plus"))
"""The binary ``broadcast_*`` ops (``broadcast_minus`` / ``_plus``: MXNet's aliases)."""
_REDUCE = ("sum", "mean", "prod", "nansum", "nanprod", "max", "min", "norm")
_OUTPUTS = ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
            "SoftmaxOutput")

CREATION_FUNCTIONS = ("zeros", "ones", "full", "arange", "linspace", "eye")
"""``mx.sym``'s creation functions (ops ``_zeros``, ...: no inputs)."""

OPS: dict[str, OpDef] = {
    "dot": OpDef("dot", ("lhs", "rhs")),
    "FullyConnected": OpDef("FullyConnected", ("data", "weight", "bias"), ("weight", "bias")),
    "Convolution": OpDef("Convolution", ("data", "weight", "bias"), ("data", "weight", "bias")),
    "Embedding": OpDef("Embedding", ("data", "weight"), ("weight",)),
    "Activation": OpDef("Activation"),
    "LeakyReLU": OpDef("LeakyReLU", ("data", "gamma"), ("gamma",)),
    "softmax": OpDef("softmax"),
    "log_softmax": OpDef("log_softmax"),
    "Dropout": OpDef("Dropout"),
    "Concat": OpDef("Concat", variadic=True),
    "concat": OpDef("Concat", variadic=True),
    "add_n": OpDef("add_n", variadic=True),
    "ElementWiseSum": OpDef("add_n", variadic=True),
    "cast_storage": OpDef("cast_storage"),
    "Cast": OpDef("Cast"),
    "cast": OpDef("Cast"),
    "Reshape": OpDef("Reshape", function="reshape"),
    "reshape": OpDef("Reshape", function="reshape"),
    "transpose": OpDef("transpose"),
    "expand_dims": OpDef("expand_dims"),
    "MakeLoss": OpDef("MakeLoss"),
    "split": OpDef("SliceChannel", function="split"),
    "SliceChannel": OpDef("SliceChannel", function="split"),
    **{name: OpDef(name, ("data", "gamma", "beta", "moving_mean", "moving_var"),
                   ("gamma", "beta", "moving_mean", "moving_var"))
       for name in ("BatchNorm", "BatchNorm_v1")},
    "BlockGrad": OpDef("BlockGrad"),
    "RNN": OpDef("RNN", ("data", "parameters", "state", "state_cell", "sequence_length"),
                 ("parameters", "state", "state_cell", "sequence_length")),
    "IdentityAttachKLSparseReg": OpDef("IdentityAttachKLSparseReg", ("data", "moving_avg"),
                                       ("moving_avg",)),
    **{name: OpDef(name, ("data", "gamma", "beta"), ("gamma", "beta"))
       for name in ("LayerNorm", "InstanceNorm", "GroupNorm")},
    **{name: OpDef(name) for name in _UNARY + _REDUCE},
    **{name: OpDef(name, ("lhs", "rhs")) for name in _ELEMWISE},
    **{op: OpDef(op, ("lhs", "rhs")) for op in BROADCAST_BINARY},
    **{name: OpDef(name, ("data", "label"), ("label",)) for name in _OUTPUTS},
    **{name: OpDef(f"_{name}", (), function=name) for name in CREATION_FUNCTIONS},
}
"""``mx.sym``'s op functions by name."""

SPARSE = ("dot", "Embedding", "FullyConnected", "cast_storage", "elemwise_add", "elemwise_sub",
          "elemwise_mul", "elemwise_div", "sum", "mean", "norm", "square", "sqrt", "abs",
          "negative", "relu", "sigmoid", "concat", "add_n", "ElementWiseSum", "zeros_like",
          "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div")
"""The ops ``mx.sym.sparse`` names too (the same ops, as MXNet's)."""

INTERNAL: dict[str, OpDef] = {
    "_square_sum": OpDef("_square_sum", function="_internal._square_sum"),
    "_maximum": OpDef("_maximum", ("lhs", "rhs"), function="_internal._maximum"),
    "_minimum": OpDef("_minimum", ("lhs", "rhs"), function="_internal._minimum"),
    "_hypot": OpDef("_hypot", ("lhs", "rhs"), function="_internal._hypot"),
    "_scatter_elemwise_div": OpDef("_scatter_elemwise_div", ("lhs", "rhs"),
                                   function="_internal._scatter_elemwise_div"),
    "_scatter_plus_scalar": OpDef("_scatter_plus_scalar",
                                  function="_internal._scatter_plus_scalar"),
    "_scatter_minus_scalar": OpDef("_scatter_minus_scalar",
                                   function="_internal._scatter_minus_scalar"),
}
SPARSE_ONLY: dict[str, OpDef] = {
    "retain": OpDef("_sparse_retain", ("data", "indices"), function="sparse.retain"),
}
"""``mx.sym.sparse``'s ops that are not ``mx.sym``'s."""
"""``mx.sym._internal``'s ops."""

RANDOM: dict[str, OpDef] = {
    name: OpDef(f"_random_{name}", (), function=f"random.{name}")
    for name in ("uniform", "normal", "exponential", "gamma", "poisson", "negative_binomial",
                 "generalized_negative_binomial", "randint")
}
"""``mx.sym.random``'s samplers of number parameters (no array inputs); those of arrays
(``multinomial``, ``shuffle``) come from their ``mx.nd.random`` functions."""
SAMPLERS = frozenset(d.op for d in RANDOM.values())
"""Their op names (``_random_normal``; not ``_random_pdf_normal``, a density of arrays)."""


def _parameters_of(sampler: Callable[..., Any]) -> tuple[str, ...]:
    """A sampler's distribution parameters: its arguments before ``shape``."""
    names = list(inspect.signature(sampler).parameters)
    return tuple(names[:names.index("shape")])


_ARRAY_SAMPLED = tuple(name for name in RANDOM if name != "randint")  # randint: numbers only
SAMPLE: dict[str, OpDef] = {
    name: OpDef(f"_sample_{name}", _parameters_of(getattr(nd.random, name)),
                function=f"random.{name}") for name in _ARRAY_SAMPLED}
"""The same samplers given Symbols as parameters: one draw of ``shape`` per element of the
parameters (MXNet's ``_sample_normal``, ...)."""
RANDOM_LIKE: dict[str, OpDef] = {
    f"{name}_like": OpDef(f"_random_{name}_like", ("data",), function=f"random.{name}_like")
    for name in _ARRAY_SAMPLED}
"""``mx.sym.random.uniform_like`` ...: samples of the shape and dtype of their input."""


def sampler(name: str) -> Callable[..., Symbol]:
    """``mx.sym.random.<name>``: its ``_sample_`` op when a distribution parameter is a Symbol,
    else its ``_random_`` op (parameters as numbers), as MXNet's."""
    by_numbers = make(name, RANDOM[name])
    if name not in SAMPLE:
        return by_numbers
    by_arrays, names = make(name, SAMPLE[name]), SAMPLE[name].inputs

    def function(*args: Any, **kwargs: Any) -> Symbol:
        given = [*args[:len(names)], *(kwargs.get(n) for n in names[len(args):])]
        if any(isinstance(v, Symbol) for v in given):
            return by_arrays(*args, **kwargs)
        return by_numbers(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"MXNet's ``mx.sym.random.{name}`` of numbers or Symbols."
    return function



def randn(*shape: Any, loc: Any = 0, scale: Any = 1, **kwargs: Any) -> Symbol:
    """``mx.sym.random.randn``: normal samples of ``shape`` (positional ints), ``loc`` and
    ``scale`` numbers or Symbols."""
    return sampler("normal")(loc, scale, shape=shape, **kwargs)


CREATION = tuple(f"_{name}" for name in CREATION_FUNCTIONS)
"""The ops that create an array from their attributes alone (``mx.sym.zeros(shape)``)."""

CREATED_INIT = {**{(op, "moving_mean"): '["zero", {}]' for op in BATCH_NORMS},
                **{(op, "moving_var"): '["one", {}]' for op in BATCH_NORMS},
                ("LeakyReLU", "gamma"): '["Constant", {"value": 0.25}]',
                ("IdentityAttachKLSparseReg", "moving_avg"): '["zero", {}]'}
"""The ``__init__`` attribute MXNet writes on the variables it creates for an op's auxiliary
states (what ``mx.mod.Module`` initialises them with)."""

EMBEDDINGS = ("Embedding", "_contrib_SparseEmbedding")
"""The ops that look rows of a weight up (the same shape and dtype rules)."""



def attr_string(key: str, value: Any) -> str:
    """``value`` written as MXNet writes an attribute (``dtype`` by its numpy name)."""
    if key == "dtype" and not isinstance(value, str):
        return np.dtype(value).name
    if isinstance(value, (list, tuple)):  # numpy scalars as numbers: (0, 1), not np.int64(0)
        return str(tuple(v.item() if isinstance(v, np.generic) else v for v in value))
    return str(value.item() if isinstance(value, np.generic) else value)


NAMESPACES = {"": nd, "sparse.": nd.sparse, "_internal.": nd._internal,
              "contrib.": nd.contrib, "random.": nd.random, "linalg.": nd.linalg}
"""Where ``mx.nd`` functions of each ``mx.sym`` namespace live (by their dotted prefix)."""


_PREFIXED = ("contrib.", "linalg.")
"""The namespaces whose ops MXNet names ``_<namespace>_<name>`` (``_linalg_gemm``)."""


def generated(name: str, prefix: str = "") -> OpDef | None:
    """The op of the ``mx.nd`` function ``name`` of namespace ``prefix`` (``'sparse.'``),
    read from its signature: parameters annotated as NDArrays are the inputs; None when there
    is no such function or it takes no arrays."""
    function = getattr(NAMESPACES[prefix], name, None)
    if name.startswith("__") or not callable(function) or isinstance(function, type):
        return None
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    inputs, variadic = [], False
    for parameter in signature.parameters.values():
        arrays = "NDArray" in str(parameter.annotation)
        if parameter.kind is parameter.VAR_POSITIONAL:
            variadic = arrays
        elif arrays and parameter.name != "out" and parameter.kind is not parameter.KEYWORD_ONLY:
            inputs.append(parameter.name)
    if not inputs and not variadic:
        return None
    op = (f"_{prefix[:-1]}_{name}" if prefix in _PREFIXED  # MXNet's op name
          else canonical(name))
    return OpDef(op, tuple(inputs), function=prefix + name, variadic=variadic)


def canonical(op: str) -> str:
    """The name MXNet writes for ``op``: the op an alias names (``stop_gradient`` is
    ``BlockGrad``) when this front end has that op, else ``op``."""
    target = alias_target(op)
    return target if target is not None and definition(target) is not None else op


def definition(op: str) -> OpDef | None:
    """The op named ``op`` in a graph (MXNet's name; None for the operators' ops): a table
    entry, else generated from the ``mx.nd`` function of that name."""
    for table in (OPS, INTERNAL, SPARSE_ONLY, RANDOM, SAMPLE, RANDOM_LIKE):
        for found in table.values():
            if found.op == op:
                return found
    for prefix in _PREFIXED:
        if op.startswith(f"_{prefix[:-1]}_"):
            return generated(op[len(prefix) + 1:], prefix)
    return next((d for prefix in NAMESPACES if (d := generated(op, prefix))), None)


def input_names(node: Node) -> list[str]:
    """The names of ``node``'s inputs as MXNet lists them: its op's (``data``, ``weight``,
    ...), ``arg0`` ... for a variadic op or past the op's names."""
    spec = definition(node.op)
    names = [] if spec is None or spec.variadic else list(spec.inputs)
    return [names[i] if i < len(names) else f"arg{i}" for i in range(len(node.inputs))]


NAMED_DATA = frozenset({"softmax", "log_softmax", "softmin", "MakeLoss", "Dropout", "SliceChannel",
                        "LeakyReLU", "SoftmaxActivation", "L2Normalization"})
"""The ops of one input ``data`` that MXNet registers with its name (``FListInputNames``); its
other one-input ops name it ``input0`` to a monitor (MXNet 1.9.1's monitor callbacks)."""


def monitor_input_names(node: Node) -> list[str]:
    """The names MXNet's monitor gives ``node``'s inputs: ``input_names``, but ``input0`` for
    the input of a one-input op MXNet registers without names (``Activation``, ``relu``,
    ``sum``, ``reshape``, the scalar ops)."""
    names = input_names(node)
    if names == ["data"] and node.op not in NAMED_DATA or (
            len(names) == 1 and definition(node.op) is None):
        return ["input0"]
    return names


def node_runner(node: Node, shape: tuple[int, ...] | None = None
                ) -> Callable[[list[Any], Context], Any]:
    """``runner(inputs, ctx)``: the output of ``node`` on ``inputs``, computed by the ``mx.nd``
    function of its op (looked up and its attributes parsed once, here); a creation or
    sampling op makes an array of ``shape`` when given (inferred from its consumers)."""
    if node.op == "Custom":
        attrs = strings(node)
        return lambda inputs, ctx: operator.run(inputs, attrs, ctx)
    if node.op == CACHED_OP and node.subgraphs:  # its graph, on its inputs by name
        graph: Any = node.subgraphs[0]
        call, names = graph.graph_call(), graph.list_inputs()
        return lambda inputs, ctx: call(dict(zip(names, inputs)), ctx)
    p = params(node)
    if node.op in SCALAR_OPS:
        scalar_op, scalar = SCALAR_OPS[node.op], p["scalar"]
        return lambda inputs, ctx: scalar_op(inputs[0], scalar)
    if node.op in ARRAY_OPS:
        array_op = ARRAY_OPS[node.op]
        return lambda inputs, ctx: array_op(*inputs)
    spec = definition(node.op)
    function = None if spec is None else nd_function(spec)
    if function is None:
        def unsupported(inputs: list[Any], ctx: Context) -> Any:
            raise NotSupported(f"executor: op {node.op} ({node.name}) has no mx.nd function "
                               "in sparsegen")
        return unsupported
    if spec.variadic:
        p.pop("num_args", None)
        return lambda inputs, ctx: function(*inputs, **p)
    if node.op in SAMPLERS or node.op in CREATION:
        p.pop("ctx", None)  # the executor's context, as MXNet's
        if shape is not None:
            p["shape"] = shape
        return lambda inputs, ctx: function(ctx=ctx, **p)
    names = spec.inputs
    return lambda inputs, ctx: function(**dict(zip(names, inputs)), **p)


def _entries(spec: OpDef, function: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> tuple[list[tuple[str, Symbol | None]], dict[str, Any]]:
    """The op's inputs (name, symbol or None) from the call, and the remaining keywords."""
    if spec.variadic:
        if any(not isinstance(a, Symbol) for a in args):
            raise InvalidType(f"{function}: the inputs must be Symbols")
        return [(f"arg{i}", a) for i, a in enumerate(args)], kwargs
    given = dict(zip(spec.inputs, args))
    extra = args[len(spec.inputs):]
    if extra:  # parameters by position, in the order of the mx.nd function's signature
        names = [n for n in _parameters(spec) if n not in spec.inputs and n != "out"]
        if len(extra) > len(names):
            raise InvalidValue(f"{function}: {len(args)} positional arguments, the op takes "
                               f"{len(spec.inputs) + len(names)}")
        for key, value in zip(names, extra):
            if key in kwargs:
                raise InvalidValue(f"{function}: {key} given twice")
            kwargs[key] = value
    for key in spec.inputs:
        if key in kwargs:
            if key in given:
                raise InvalidValue(f"{function}: {key} given twice")
            given[key] = kwargs.pop(key)
    for key, value in given.items():
        if value is not None and not isinstance(value, Symbol):
            raise InvalidType(f"{function}: {key} must be a Symbol, got {type(value).__name__}")
    if not spec.inputs:  # an op of no inputs composes a Symbol keyword into nothing, as MXNet's
        kwargs = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
    return [(key, given.get(key)) for key in spec.inputs], kwargs


def nd_function(spec: OpDef) -> Any:
    """The ``mx.nd`` function that runs ``spec`` (None when ``mx.nd`` has none)."""
    found: Any = nd
    for part in spec.nd_function.split("."):
        found = getattr(found, part, None)
    return found


def _parameters(spec: OpDef) -> list[str]:
    """The parameter names of the ``mx.nd`` function running ``spec`` (none when absent)."""
    found = nd_function(spec)
    if found is None:
        return []
    return [p.name for p in inspect.signature(found).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _required(spec: OpDef) -> set[str]:
    """The inputs the ``mx.nd`` function of ``spec`` cannot go without (no default)."""
    found = nd_function(spec)
    if found is None:
        return set(spec.inputs)
    return {p.name for p in inspect.signature(found).parameters.values()
            if p.default is p.empty and p.name in spec.inputs}


def _creates(spec: OpDef, key: str, attrs: dict[str, str]) -> bool:
    """Whether the op creates its omitted input ``key`` as a variable ``<name>_<key>``, as
    MXNet's: a required input (``fc_data``) or a created one, but no ``bias`` with
    ``no_bias``, a ``gamma`` for LeakyReLU's ``prelu`` only, RNN's ``state_cell`` for lstm
    only and its ``sequence_length`` with ``use_sequence_length`` only."""
    if key not in spec.created:
        return key in _required(spec)
    if key == "bias":
        return attrs.get("no_bias") != "True"
    if spec.op == "LeakyReLU":
        return attrs.get("act_type") == "prelu"
    if spec.op == "RNN":  # state_cell for lstm, sequence_length with use_sequence_length
        return {"state_cell": attrs.get("mode") == "lstm",
                "sequence_length": attrs.get("use_sequence_length") == "True"}.get(key, True)
    return True


def make(function: str, spec: OpDef) -> Callable[..., Symbol]:
    """The ``mx.sym`` function of ``spec``: inputs by position or keyword, omitted created
    inputs as variables ``<name>_<input>``, the other keywords as attributes."""

    def op(*args: Any, name: str | None = None, attr: dict[str, str] | None = None,
           out: Any = None, **kwargs: Any) -> Symbol:  # out: accepted and unused, as MXNet's
        inputs, params = _entries(spec, function, args, kwargs)
        attrs = {f"__{key}__" if key in HIDDEN_KEYS else key: attr_string(key, value)
                 for key, value in params.items() if value is not None}  # lr_mult: __lr_mult__
        if spec.variadic:
            attrs.setdefault("num_args", str(len(inputs)))
        attrs.update(attr or {})
        full_name = NameManager.current().get(name, function.lower())
        entries: list[Entry] = []
        for key, value in inputs:
            if value is None:
                if not _creates(spec, key, attrs):
                    continue
                created = dict(attrs)
                if (spec.op, key) in CREATED_INIT:
                    created["__init__"] = CREATED_INIT[spec.op, key]
                value = Symbol(((Node(VARIABLE, f"{full_name}_{key}", created), 0),))
            entries.append(value._entry(f"{function}: {key}"))
        return create(spec.op, full_name, entries, attrs)

    op.__name__ = function
    op.__doc__ = f"The symbol of MXNet's ``{spec.op}`` op (inputs: {', '.join(spec.inputs)})."
    return op


def Custom(*data: Symbol, op_type: str, name: str | None = None,  # noqa: N802
           attr: dict[str, str] | None = None, **kwargs: Any) -> Symbol:
    """The symbol of the Python operator registered as ``op_type`` (``mx.operator.register``):
    inputs by position or by the names its ``list_arguments`` and ``list_auxiliary_states``
    give (omitted ones become variables ``<name>_<argument>``), the other keywords its string
    arguments, as ``mx.sym.Custom``."""
    arrays = {key: value for key, value in kwargs.items() if isinstance(value, Symbol)}
    strings = {key: str(value) for key, value in kwargs.items() if key not in arrays}
    made = operator.prop(op_type, strings)
    arguments = (*made.list_arguments(), *made.list_auxiliary_states())
    inputs, unknown = _entries(OpDef("Custom", arguments), "Custom", data, arrays)
    if unknown:
        raise InvalidValue(f"Custom {op_type}: {sorted(unknown)} are not its arguments "
                           f"{list(arguments)}")
    attrs = {"op_type": op_type, **strings, **(attr or {})}
    full_name = NameManager.current().get(name, "custom")
    entries = [(value if value is not None else
                Symbol(((Node(VARIABLE, f"{full_name}_{key}", dict(attrs)), 0),)))._entry(key)
               for key, value in inputs]
    return create("Custom", full_name, entries, attrs)


FLUENT = ("square", "sqrt", "abs", "exp", "log", "relu", "sigmoid", "tanh", "sum", "mean",
          "norm", "max", "min", "prod", "reshape", "transpose", "expand_dims")
"""Ops a Symbol also has as methods (``x.square()``, ``y.sum(axis=1)``)."""


def _fluent(function: Callable[..., Symbol]) -> Callable[..., Symbol]:
    def method(self: Symbol, *args: Any, **kwargs: Any) -> Symbol:
        return function(self, *args, **kwargs)

    method.__name__ = function.__name__
    method.__doc__ = f"``mx.sym.{function.__name__}(self, ...)``."
    return method


FUNCTIONS = {**{name: make(name, spec) for name, spec in OPS.items()}, "Custom": Custom}
"""``mx.sym``'s op functions."""

for _name in FLUENT:
    setattr(Symbol, _name, _fluent(FUNCTIONS[_name]))


def tostype(self: Symbol, stype: str) -> Symbol:
    """``mx.sym.cast_storage(self, stype=stype)``."""
    return FUNCTIONS["cast_storage"](self, stype=stype)


def astype(self: Symbol, dtype: Any) -> Symbol:
    """``mx.sym.Cast(self, dtype=dtype)``."""
    return FUNCTIONS["Cast"](self, dtype=dtype)


Symbol.tostype = tostype  # type: ignore[attr-defined]
Symbol.astype = astype  # type: ignore[attr-defined]
