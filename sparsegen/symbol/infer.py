"""Shape, dtype and storage-type inference over a graph, one rule per op of ``mx.sym``:
parameters' shapes follow from the data (FullyConnected and Embedding weights, loss labels),
as MXNet's ``infer_shape`` does; broadcast ops broadcast as numpy."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import autograd, operator
from .. import ndarray as nd
from ..context import cpu
from ..errors import InvalidValue, SparsegenError
from ..opnames import ELEMWISE_UNARY
from ..ops.conv import output_size
from ..storage_rules import storage_rule
from .graph import (BATCH_NORMS, Entry, Node, dtype_name, output_names, params, stype_name,
                    topological)
from .graph_shapes import GRAPH_SHAPE_RULES
from .linalg_shapes import LINALG_SHAPE_RULES
from .ops import (BROADCAST_BINARY, CREATION, EMBEDDINGS, RANDOM_LIKE, SAMPLE, SAMPLERS, SCALAR_OPS,
                  node_runner)

Shape = tuple[int, ...] | None
ShapeRule = Callable[[list[Shape], dict[str, Any]], tuple[list[Shape], Any]]
"""``rule(input shapes, params) -> (input shapes filled in, output shape)``; an op of several
outputs gives a list of output shapes."""
Key = tuple[int, int]
"""An output of a graph as a dictionary key: the ``id`` of its node and its index."""


def key(entry: Entry) -> Key:
    """The dictionary key of the output ``entry``."""
    return id(entry[0]), entry[1]


def _same(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    """Inputs and output of one shape (elementwise ops: no broadcasting), which a mismatch
    refuses."""
    known = [s for s in shapes if s is not None]
    if any(s != known[0] for s in known):
        raise InvalidValue(f"infer_shape: the inputs of an elementwise op must have one shape "
                           f"(it does not broadcast; use broadcast_* ops), got {known}")
    first = known[0] if known else None
    return [first if s is None else s for s in shapes], first


def _first(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    return shapes, shapes[0]


SAME_SHAPE_RULES = (_same, _first)
"""Rules whose inputs have their output's shape: a consumer's shape for the output (a
``FullyConnected`` naming its weight's) passes back to the inputs."""

def _broadcast(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    if None in shapes:
        return shapes, None
    try:
        return shapes, tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise InvalidValue(f"infer_shape: shapes {shapes} do not broadcast") from None


def _dot(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    lhs, rhs = shapes
    if lhs is None or rhs is None:
        return shapes, None
    lhs = lhs[::-1] if p.get("transpose_a") else lhs
    rhs = rhs[::-1] if p.get("transpose_b") else rhs
    if lhs[-1] != rhs[0]:
        raise InvalidValue(f"infer_shape: dot of shapes {shapes} (transpose_a="
                           f"{bool(p.get('transpose_a'))}, transpose_b="
                           f"{bool(p.get('transpose_b'))}) does not match")
    return shapes, lhs[:-1] + rhs[1:]


def _fully_connected(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    data, hidden, flatten = shapes[0], int(p["num_hidden"]), p.get("flatten", True)
    if data is None:
        return shapes, None
    k = math.prod(data[1:]) if flatten else data[-1]
    filled = [data, (hidden, k), (hidden,)][:len(shapes)]
    return filled, (data[0], hidden) if flatten else data[:-1] + (hidden,)


def _convolution(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    """Convolution's weight ``(num_filter, channels / num_group, *kernel)``, bias and output
    (each spatial axis as the op computes it, ``ops.conv.output_size``)."""
    data = shapes[0]
    if data is None:
        return shapes, None

    def ints(value: Any, default: int) -> tuple[int, ...]:
        value = default if value is None or value == () else value
        return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else \
            (int(value),) * (len(data) - 2)

    kernel = ints(p["kernel"], 1)
    stride, dilate, pad = ints(p.get("stride"), 1), ints(p.get("dilate"), 1), ints(p.get("pad"), 0)
    filters, groups = int(p["num_filter"]), int(p.get("num_group", 1))
    filled = [data, (filters, data[1] // groups, *kernel), (filters,)][:len(shapes)]
    spatial = tuple(output_size(*axis) for axis in zip(data[2:], kernel, stride, dilate, pad))
    return filled, (data[0], filters, *spatial)


def _embedding(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    weight = (int(p["input_dim"]), int(p["output_dim"]))
    data = shapes[0]
    return [data, weight], None if data is None else data + (weight[1],)


def _reduce(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    data = shapes[0]
    if data is None:
        return shapes, None
    axis = p.get("axis")
    axes = set(range(len(data))) if axis is None or axis == () else {
        a % len(data) for a in (axis if isinstance(axis, tuple) else (axis,))}
    if p.get("exclude"):
        axes = set(range(len(data))) - axes
    if p.get("keepdims"):
        return shapes, tuple(1 if i in axes else d for i, d in enumerate(data))
    kept = tuple(d for i, d in enumerate(data) if i not in axes)
    return shapes, kept or (1,)


def _concat(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    if None in shapes:
        return shapes, None
    dim = int(p.get("dim", 1)) % len(shapes[0])
    out = list(shapes[0])
    out[dim] = sum(s[dim] for s in shapes)
    return shapes, tuple(out)


def _reshape(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    data, target = shapes[0], list(p["shape"])
    if data is None:
        return shapes, None
    out = [data[i] if d == 0 else d for i, d in enumerate(target)]
    if -1 in out:
        rest = math.prod(d for d in out if d != -1)
        out[out.index(-1)] = math.prod(data) // rest if rest else 0
    return shapes, tuple(out)


def _transpose(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    data = shapes[0]
    if data is None:
        return shapes, None
    axes = p.get("axes") or tuple(reversed(range(len(data))))
    return shapes, tuple(data[a] for a in axes)


def _expand_dims(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    data = shapes[0]
    if data is None:
        return shapes, None
    axis = int(p["axis"]) % (len(data) + 1)
    return shapes, data[:axis] + (1,) + data[axis:]


def _regression(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    data, label = shapes
    if label is None and data is not None:  # MXNet's: (n,) for data of shape (n, 1)
        label = data[:1] if len(data) == 2 and data[1] == 1 else data
    return [data, label], data


def _softmax_output(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    data, label = shapes
    if label is None and data is not None:
        label = (data[0],) + data[2:] if p.get("multi_output") else data[:-1]
    return [data, label], data


def _split(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Any]:
    data, count = shapes[0], int(p.get("num_outputs", 1))
    if data is None:
        return shapes, None
    axis = int(p.get("axis", 1)) % len(data)
    part = data[:axis] + (data[axis] // count,) + data[axis + 1:]
    if p.get("squeeze_axis"):
        part = part[:axis] + part[axis + 1:]
    return shapes, [part] * count


def _topk(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Any]:
    data = shapes[0]
    if data is None:
        return shapes, None
    if p.get("axis", -1) is None:
        data = (math.prod(data),)
    axis = int(p.get("axis", -1) or 0) % len(data)
    k = int(p.get("k", 1))
    picked = data[:axis] + (data[axis] if k <= 0 else k,) + data[axis + 1:]
    return shapes, data if p.get("ret_typ") == "mask" else [picked, picked]


def _batch_norm(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Any]:
    data = shapes[0]
    if data is None:
        return shapes, None
    channels = (data[int(p.get("axis", 1)) % len(data)],)
    return [data, *[channels] * (len(shapes) - 1)], [data, channels, channels]


def _leaky_relu(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    """The data's shape; prelu's ``gamma`` has one slope per channel (axis 1)."""
    data = shapes[0]
    if len(shapes) > 1 and shapes[1] is None and data is not None and len(data) > 1:
        shapes = [data, (data[1],)]
    return shapes, data


def _normalization(op: str) -> ShapeRule:
    """The rule of LayerNorm, InstanceNorm or GroupNorm: the data's shape (and, with
    ``output_mean_var``, the mean's and deviation's); ``gamma`` and ``beta`` of the normalized
    axis' size, the channels' or ``num_groups``."""

    def rule(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Any]:
        data = shapes[0]
        if data is None:
            return shapes, None
        if op == "GroupNorm":
            size = int(p.get("num_groups", 1))
            stats: Any = (data[0], size)
        elif op == "LayerNorm":
            axis = int(p.get("axis", -1)) % len(data)
            size, stats = data[axis], tuple(1 if k == axis else n for k, n in enumerate(data))
        else:
            size, stats = data[1], None
        shapes = [data] + [(size,) if s is None else s for s in shapes[1:]]
        return shapes, [data, stats, stats] if p.get("output_mean_var") else data

    return rule


def _sampler(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    shape = p.get("shape", ())
    return shapes, tuple(shape) if isinstance(shape, tuple) else (int(shape),)


def _sample(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    """A ``_sample_`` op: the parameters' shape, then ``shape`` per distribution."""
    known = next((s for s in shapes if s is not None), None)
    if known is None:
        return shapes, None
    return [known] * len(shapes), (*known, *_sampler(shapes, p)[1]) if p.get("shape") else known


_ELEMWISE_SAME = ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "add_n",
                  "_mod", "_power", "_equal", "_not_equal", "_greater", "_greater_equal",
                  "_lesser", "_lesser_equal")
SHAPE_RULES: dict[str, ShapeRule] = {
    "dot": _dot, "FullyConnected": _fully_connected, "Convolution": _convolution,
    **{op: _embedding for op in EMBEDDINGS},
    **{d.op: _sample for d in SAMPLE.values()}, **{d.op: _first for d in RANDOM_LIKE.values()},
    "Concat": _concat, "Reshape": _reshape, "transpose": _transpose,
    "expand_dims": _expand_dims, "SoftmaxOutput": _softmax_output,
    "_zeros": _sampler, "_ones": _sampler, "_full": _sampler, "LeakyReLU": _leaky_relu,
    **{op: _normalization(op) for op in ("LayerNorm", "InstanceNorm", "GroupNorm")},
    "SliceChannel": _split, "topk": _topk,
    **{op: _batch_norm for op in BATCH_NORMS},
    "sort": lambda shapes, p: (shapes, [shapes[0], shapes[0]]),
    **{op: _regression for op in ("LinearRegressionOutput", "LogisticRegressionOutput",
                                  "MAERegressionOutput")},
    **{op: _reduce for op in ("sum", "mean", "prod", "nansum", "nanprod", "max", "min",
                              "norm", "_square_sum")},
    **{op: _same for op in (*_ELEMWISE_SAME, "_identity_with_attr_like_rhs")},
    **LINALG_SHAPE_RULES, **GRAPH_SHAPE_RULES,
}
"""Shape rule by op; the binary ``broadcast_*`` ops broadcast, the ``SAME_SHAPE`` ops keep their
first input's shape, and any other op is run on zeros to see (``_evaluated``)."""


def _custom(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Any]:
    """The registered op's ``infer_shape`` of its arguments (unknown shapes passed as
    ``()``), giving its outputs' and auxiliary states' shapes."""
    if shapes[0] is None:
        return shapes, None
    kwargs = {name: str(value) for name, value in p.items()}
    made = operator.prop(kwargs.pop("op_type"), kwargs)
    count = len(made.list_arguments())
    result = list(made.infer_shape([() if s is None else s for s in shapes[:count]]))
    ins, outs, auxs = (result + [[]])[:3]
    return [s if s is not None or not tuple(i) else tuple(i)
            for s, i in zip(shapes, [*ins, *auxs])], [tuple(o) for o in outs]


SHAPE_RULES["Custom"] = _custom


SAME_SHAPE = (*ELEMWISE_UNARY, *SCALAR_OPS, "Activation", "Dropout", "Cast",
              "cast_storage", "softmax", "log_softmax", "BlockGrad", "MakeLoss", "make_loss",
              "clip", "zeros_like", "ones_like", "_sparse_retain")
"""Ops whose output has their first input's shape (elementwise, casts, losses of the data,
retain: running it on dense zeros to see would be refused)."""


def _evaluated(node: Node) -> ShapeRule:
    """The rule of an op that has none written here: the op itself run on float32 zeros of its
    inputs' shapes, on the CPU, its outputs' shapes read off (exact for any op, at the cost of
    running it once)."""
    run = node_runner(node)
    seen: dict[tuple[Shape, ...], Any] = {}  # inference repeats passes: run once per shapes

    def rule(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Any]:
        if None in shapes:
            return shapes, None
        if tuple(shapes) not in seen:
            try:
                with autograd.pause():
                    out = run([nd.zeros(s, ctx=cpu()) for s in shapes], cpu())
            except SparsegenError as error:
                raise type(error)(f"infer_shape: {node.op} {node.name} on inputs of shapes "
                                  f"{shapes}: {error}") from None
            seen[tuple(shapes)] = ([o.shape for o in out] if isinstance(out, (list, tuple))
                                   else out.shape)
        return shapes, seen[tuple(shapes)]

    return rule


def _rule(node: Node) -> ShapeRule:
    op = node.op
    if op in SHAPE_RULES:
        return SHAPE_RULES[op]
    if op in BROADCAST_BINARY:
        return _broadcast
    if op in SAMPLERS:
        return _sampler
    return _first if op in SAME_SHAPE else _evaluated(node)


def _variable_shape(node: Node, given: dict[str, Any]) -> Shape:
    if node.name in given:
        return tuple(given[node.name])
    written = node.attrs.get("__shape__")
    if written is None:
        return None
    shape = tuple(params(Node("", "", {"shape": written}))["shape"])
    return None if 0 in shape else shape


def shapes(heads: tuple, given: dict[str, Any]) -> dict[Key, Shape]:
    """The shape of each output of each node (by ``key``), from the arguments' shapes in
    ``given`` (else their ``__shape__``); None where unknown. Variables' shapes follow from
    their users' rules, so passes repeat until nothing changes."""
    nodes = topological(heads)
    found: dict[Key, Shape] = {(id(n), 0): _variable_shape(n, given)
                               for n in nodes if n.is_variable}
    rules = {id(node): _rule(node) for node in nodes if not node.is_variable}
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node.is_variable:
                continue
            inputs = [found.get(key(entry)) for entry in node.inputs]
            rule, known = rules[id(node)], found.get((id(node), 0))
            seen = ([known if s is None else s for s in inputs]  # the output's shape
                    if known is not None and rule in SAME_SHAPE_RULES else inputs)
            filled, out = rule(seen, params(node))
            for (child, index), before, after in zip(node.inputs, inputs, filled):
                if before is None and after is not None:  # a variable, or another op's output
                    found[id(child), index], changed = tuple(after), True
                elif before is not None and after is not None and tuple(after) != before:
                    raise InvalidValue(f"infer_shape: {child.name} has shape {before}, "
                                       f"{node.op} {node.name} needs {tuple(after)}")
            for index, shape in enumerate(out if isinstance(out, list) else [out]):
                if shape is not None and found.get((id(node), index)) != tuple(shape):
                    found[id(node), index], changed = tuple(shape), True
    return found


def dtypes(heads: tuple, given: dict[str, Any]) -> dict[Key, str | None]:
    """The dtype of each output of each node (by ``key``): an op's inputs and outputs share
    one dtype (Embedding's output is its weight's, ``dtype`` attribute; Cast's its ``dtype``;
    topk's indices its ``dtype``)."""
    nodes = topological(heads)
    found: dict[Key, str | None] = {}
    for node in nodes:
        if node.is_variable:
            code = node.attrs.get("__dtype__")
            found[id(node), 0] = (np.dtype(given[node.name]).name if node.name in given
                                  else dtype_name(code) if code is not None else None)
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node.is_variable:
                continue
            p = params(node)
            children = list(node.inputs)
            if node.op in EMBEDDINGS:
                children = children[1:]
                out = found.get(key(node.inputs[1])) or np.dtype(p.get("dtype", "float32")).name
            elif node.op in ("Cast", *CREATION, *SAMPLERS, *(d.op for d in SAMPLE.values())):
                out = np.dtype(p.get("dtype", "float32")).name
                children = []
            else:
                out = next((found[key(c)] for c in children if found.get(key(c))), None)
            for child in children:
                if out is not None and found.get(key(child)) is None and child[0].is_variable:
                    found[key(child)], changed = out, True
            for index, dtype in enumerate(_output_dtypes(node, p, out)):
                if dtype is not None and found.get((id(node), index)) != dtype:
                    found[id(node), index], changed = dtype, True
    return found


def _output_dtypes(node: Node, p: dict[str, Any], data: str | None) -> list[str | None]:
    """The dtypes of ``node``'s outputs when its data has dtype ``data``: positions (argsort,
    topk's indices) take the ``dtype`` parameter (float32 by default), as MXNet's."""
    positions = np.dtype(p.get("dtype", "float32")).name
    if node.op == "argsort" or (node.op == "topk" and p.get("ret_typ", "indices") == "indices"):
        return [positions]
    if node.op in ("topk", "sort"):
        return [data, positions] if p.get("ret_typ") != "mask" else [data]
    if node.op in ("shape_array", "size_array"):
        return ["int64"]
    if node.op == "multinomial":  # the drawn ids, then (get_prob) their log-probabilities
        ids = np.dtype(p.get("dtype", "int32")).name
        return [ids, data] if p.get("get_prob") else [ids]
    count = len(output_names(node))
    if node.op == "_contrib_dgl_csr_neighbor_non_uniform_sample":  # ids, csrs, probabilities,
        return [data] * (count // 2) + ["float32"] * (count // 4) + [data] * (count // 4)  # layers
    return [data] * count


def _stype(node: Node, inputs: list[str], p: dict[str, Any]) -> str:
    """The output storage type of ``node`` on inputs of ``inputs``, as MXNet infers it."""
    if node.op == "cast_storage":
        return str(p["stype"])
    if node.op in SCALAR_OPS:
        try:
            zero = SCALAR_OPS[node.op](0.0, float(p["scalar"])) == 0
        except ZeroDivisionError:
            zero = False
        return inputs[0] if zero else "default"
    if node.op == "_square_sum":
        keeps = p.get("axis") in (1, -1, (1,), (-1,)) and p.get("keepdims")
        return "row_sparse" if inputs == ["row_sparse"] and keeps else "default"
    key = node.op
    if node.op == "dot":
        key += "_transpose_a" * bool(p.get("transpose_a")) + "_transpose_b" * bool(
            p.get("transpose_b"))
        key += f"->{p['forward_stype']}" if p.get("forward_stype") else ""
    rule = storage_rule(key, tuple(inputs))
    return rule.output_stype if rule is not None and rule.output_stype else "default"


def stypes(heads: tuple, given: dict[str, Any]) -> dict[Key, str]:
    """The storage type of each output of each node (by ``key``): variables' from ``given``,
    else their ``__storage_type__``, else default; ops' by the front end's storage rules (the
    outputs of an op of several outputs are dense)."""
    found: dict[Key, str] = {}
    for node in topological(heads):
        if node.is_variable:
            code = node.attrs.get("__storage_type__")
            found[id(node), 0] = given.get(node.name) or (stype_name(code) if code else "default")
            continue
        count = len(output_names(node))
        found[id(node), 0] = "default" if count > 1 else _stype(
            node, [found[key(c)] for c in node.inputs], params(node))
        found.update({(id(node), index): "default" for index in range(1, count)})
    return found


def _given(symbol: Any, args: tuple[Any, ...], kwargs: dict[str, Any], what: str) -> dict[str, Any]:
    """The inputs' known values, given by position (``list_arguments`` order) or name (an
    argument or an auxiliary state)."""
    names = symbol.list_arguments()
    if args and kwargs:
        raise InvalidValue(f"{what}: give the arguments by position or by name, not both")
    given = dict(zip(names, args)) if args else dict(kwargs)
    unknown = set(given) - set(symbol.list_inputs())
    if unknown:
        raise InvalidValue(f"{what}: {sorted(unknown)} are not arguments of the symbol ({names})")
    return {k: v for k, v in given.items() if v is not None}


def _answer(symbol: Any, found: dict[Key, Any], missing: Any) -> tuple[list, list, list]:
    """(argument values, output values, auxiliary values) in MXNet's order."""
    variables = {n.name: n for n in topological(symbol._outputs) if n.is_variable}
    arguments = [found.get((id(variables[name]), 0)) for name in symbol.list_arguments()]
    aux = [found.get((id(variables[name]), 0)) for name in symbol.list_auxiliary_states()]
    outputs = [found.get(key(entry)) for entry in symbol._outputs]
    return tuple([missing if v is None else v for v in part]  # type: ignore[return-value]
                 for part in (arguments, outputs, aux))


def infer_shape(self: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
    """(argument shapes, output shapes, auxiliary shapes) from some arguments' shapes, as
    ``Symbol.infer_shape``; ``(None, None, None)`` when they do not determine every shape."""
    found = _answer(self, shapes(self._outputs, _given(self, args, kwargs, "infer_shape")), None)
    if any(s is None for s in found[0] + found[1] + found[2]):
        return None, None, None
    return found


def infer_shape_partial(self: Any, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """As ``infer_shape``, with ``()`` for each shape not determined."""
    return _answer(self, shapes(self._outputs, _given(self, args, kwargs, "infer_shape_partial")),
                   ())


def infer_type(self: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
    """(argument dtypes, output dtypes, auxiliary dtypes) as numpy types from some arguments'
    dtypes; ``(None, None, None)`` when they do not determine every dtype."""
    found = infer_type_partial(self, *args, **kwargs)
    if any(t is None for t in found[0] + found[1] + found[2]):
        return None, None, None
    return found


def infer_type_partial(self: Any, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """As ``infer_type``, with None for each dtype not determined."""
    found = _answer(self, dtypes(self._outputs, _given(self, args, kwargs, "infer_type")), None)
    return tuple([None if t is None else np.dtype(t).type for t in part]  # type: ignore
                 for part in found)


def infer_storage_type(self: Any, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """(argument, output, auxiliary) storage types from some arguments' storage types
    (others: their ``stype`` attribute, else default)."""
    return _answer(self, stypes(self._outputs, _given(self, args, kwargs, "infer_storage_type")),
                   "default")
