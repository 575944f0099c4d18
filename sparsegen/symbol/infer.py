"""Shape, dtype and storage-type inference over a graph, one rule per op of ``mx.sym``:
parameters' shapes follow from the data (FullyConnected and Embedding weights, loss labels),
as MXNet's ``infer_shape`` does; broadcast ops broadcast as numpy."""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import autograd, operator
from .. import ndarray as nd
from ..context import cpu
from ..errors import InvalidValue, SparsegenError
from ..opnames import ELEMWISE_UNARY
from ..ops.conv import output_size
from ..ops.rnn_layout import packed_layout
from ..storage_rules import storage_rule
from ..util import is_np_shape
from .graph import (BATCH_NORMS, Entry, Node, dtype_name, output_names, params, stype_name,
                    topological)
from .graph_shapes import GRAPH_SHAPE_RULES
from .linalg_shapes import LINALG_SHAPE_RULES
from .ops import (BROADCAST_BINARY, CREATION, EMBEDDINGS, RANDOM_LIKE, SAMPLE, SAMPLERS, SCALAR_OPS,
                  node_runner)
from .shape_types import Answer, Params, Shape, ShapeRule

Key = tuple[int, int]
"""An output of a graph as a dictionary key: the ``id`` of its node and its index."""
UNKNOWN = -1
"""An unknown dimension inside a shape (MXNet writes 0 for it in its legacy shapes, -1 under
``mx.util.set_np_shape(True)``)."""


def key(entry: Entry) -> Key:
    """The dictionary key of the output ``entry``."""
    return id(entry[0]), entry[1]


def complete(shape: Shape) -> bool:
    """Whether every dimension of ``shape`` is known."""
    return shape is not None and UNKNOWN not in shape


def from_mxnet(shape: Any) -> Shape:
    """A shape written in MXNet's notation of the current shape semantics (legacy: 0 is an
    unknown dimension and ``()`` an unknown shape; numpy's, ``mx.util.is_np_shape()``: -1 and
    None), as inference holds it."""
    if shape is None:
        return None
    dims = (int(shape),) if isinstance(shape, numbers.Integral) else tuple(int(d) for d in shape)
    if is_np_shape():
        return tuple(UNKNOWN if d < 0 else d for d in dims)
    return tuple(UNKNOWN if d == 0 else d for d in dims) if dims else None


def to_mxnet(shape: Shape) -> Any:
    """``shape`` in MXNet's notation of the current shape semantics (``from_mxnet``'s inverse)."""
    if is_np_shape():
        return shape
    return () if shape is None else tuple(0 if d == UNKNOWN else d for d in shape)


def merge(first: Shape, second: Shape) -> Shape:
    """The shape both ``first`` and ``second`` describe, each dimension known in either kept;
    ``ValueError`` when they disagree."""
    if first is None or second is None:
        return second if first is None else first
    if len(first) != len(second) or any(a != b for a, b in zip(first, second)
                                        if UNKNOWN not in (a, b)):
        raise ValueError(f"{to_mxnet(first)} and {to_mxnet(second)} disagree")
    return tuple(b if a == UNKNOWN else a for a, b in zip(first, second))


def _merged(shapes: list[Shape]) -> Shape:
    return functools.reduce(merge, shapes, None)


def handles_unknown_dims(rule: ShapeRule) -> ShapeRule:
    """Marks ``rule`` as one that reads partial shapes (``UNKNOWN`` dimensions) correctly: it
    gets them as they are, where another rule gets None for a shape not complete."""
    rule.handles_unknown_dims = True  # type: ignore[attr-defined]
    return rule


@handles_unknown_dims
def _same(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """Inputs and output of one shape (elementwise ops: no broadcasting), which a mismatch
    refuses; the output's shape, known from a consumer, passes back to the inputs."""
    try:
        shape = _merged([*shapes, outs[0]])
    except ValueError:
        raise InvalidValue(f"infer_shape: the inputs of an elementwise op must have one shape "
                           f"(it does not broadcast; use broadcast_* ops), got "
                           f"{[to_mxnet(s) for s in shapes if s is not None]}") from None
    return [shape] * len(shapes), shape


@handles_unknown_dims
def _first(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """The first input's shape, which the output's (known from a consumer) completes."""
    try:
        shape = merge(shapes[0], outs[0])
    except ValueError as error:
        raise InvalidValue(f"infer_shape: the output must have the input's shape: {error}") \
            from None
    return [shape, *shapes[1:]], shape


@handles_unknown_dims
def _broadcast(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """numpy's broadcasting; an axis stays unknown unless a known size other than 1 fixes it."""
    if None in shapes:
        return shapes, None
    rank = max(len(s) for s in shapes)  # type: ignore[arg-type]
    out = []
    for sizes in zip(*[(1,) * (rank - len(s)) + s for s in shapes]):  # type: ignore[operator]
        fixed = {n for n in sizes if n not in (1, UNKNOWN)}
        if len(fixed) > 1:
            raise InvalidValue(f"infer_shape: shapes {[to_mxnet(s) for s in shapes]} do not "
                               "broadcast")
        out.append(fixed.pop() if fixed else UNKNOWN if UNKNOWN in sizes else 1)
    return shapes, tuple(out)


@handles_unknown_dims
def _dot(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """``dot``: the contracted axes (the last of ``op(lhs)``, the first of ``op(rhs)``) agree,
    one completing the other; the output is ``op(lhs)[:-1] + op(rhs)[1:]``."""
    lhs, rhs = shapes
    if lhs is None or rhs is None:
        return shapes, None
    left = lhs[::-1] if p.get("transpose_a") else lhs
    right = rhs[::-1] if p.get("transpose_b") else rhs
    if UNKNOWN not in (left[-1], right[0]) and left[-1] != right[0]:
        raise InvalidValue(f"infer_shape: dot of shapes {[to_mxnet(s) for s in shapes]} "
                           f"(transpose_a={bool(p.get('transpose_a'))}, transpose_b="
                           f"{bool(p.get('transpose_b'))}) does not match")
    k = right[0] if left[-1] == UNKNOWN else left[-1]
    left, right = left[:-1] + (k,), (k,) + right[1:]
    filled = [left[::-1] if p.get("transpose_a") else left,
              right[::-1] if p.get("transpose_b") else right]
    return filled, left[:-1] + right[1:]


@handles_unknown_dims
def _batch_dot(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """``batch_dot``: leading batch axes shared, then a matrix product; as MXNet's, the output
    stays unknown while a contracted axis is."""
    lhs, rhs = shapes
    if lhs is None or rhs is None:
        return shapes, None
    if len(lhs) != len(rhs) or len(lhs) < 3:
        raise InvalidValue(f"infer_shape: batch_dot takes two arrays of one number (>= 3) of "
                           f"dimensions, got {to_mxnet(lhs)} and {to_mxnet(rhs)}")
    m, k = lhs[-1:-3:-1] if p.get("transpose_a") else lhs[-2:]
    k_rhs, n = rhs[-1:-3:-1] if p.get("transpose_b") else rhs[-2:]
    if UNKNOWN in (k, k_rhs):
        return shapes, None
    try:
        if k != k_rhs:
            raise ValueError(f"contracted axes of {k} and {k_rhs}")
        batch = merge(lhs[:-2], rhs[:-2])
    except ValueError as error:
        raise InvalidValue(f"infer_shape: batch_dot of shapes {to_mxnet(lhs)} and "
                           f"{to_mxnet(rhs)} (transpose_a={bool(p.get('transpose_a'))}, "
                           f"transpose_b={bool(p.get('transpose_b'))}): {error}") from None
    assert batch is not None
    return [batch + lhs[-2:], batch + rhs[-2:]], batch + (m, n)


@handles_unknown_dims
def _fully_connected(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """FullyConnected's weight ``(num_hidden, k)`` and bias from the data (k: the product of
    its other axes, or its last with ``flatten=False``); the batch also from a consumer's shape
    for the output, the data's last axis from the weight's."""
    data, hidden, flatten = shapes[0], int(p["num_hidden"]), p.get("flatten", True)
    if data is None:
        return shapes, None
    out, weight = outs[0], shapes[1] if len(shapes) > 1 else None
    if out is not None:
        try:
            data = merge(data, (out[0],) + data[1:] if flatten else out[:-1] + data[-1:])
        except ValueError as error:
            raise InvalidValue(f"infer_shape: FullyConnected: the data and the output's batch: "
                               f"{error}") from None
    assert data is not None
    if weight is not None and len(weight) == 2 and data[-1] == UNKNOWN and (
            len(data) == 2 or not flatten):
        data = data[:-1] + weight[1:]
    rest = data[1:] if flatten else data[-1:]
    k = UNKNOWN if UNKNOWN in rest else math.prod(rest)
    filled = [data, (hidden, k), (hidden,)][:len(shapes)]
    return filled, (data[0], hidden) if flatten else data[:-1] + (hidden,)


@handles_unknown_dims
def _convolution(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """Convolution's weight ``(num_filter, channels / num_group, *kernel)``, bias and output
    (each spatial axis as the op computes it, ``ops.conv.output_size``); as MXNet's, the batch
    and (stride 1) the spatial axes also follow from a consumer's shape for the output."""
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
    axes = list(zip(kernel, stride, dilate, pad))
    out, weight = outs[0], shapes[1] if len(shapes) > 1 else None
    channels = UNKNOWN if weight is None or weight[1] == UNKNOWN else weight[1] * groups
    spatial = [UNKNOWN if out is None or o == UNKNOWN or s != 1 else o + d * (k - 1) - 2 * q
               for o, (k, s, d, q) in zip(out[2:] if out is not None else data[2:], axes)]
    try:
        data = merge(data, (UNKNOWN if out is None else out[0], channels, *spatial))
    except ValueError as error:
        raise InvalidValue(f"infer_shape: Convolution: {error}") from None
    assert data is not None
    per_group = UNKNOWN if data[1] == UNKNOWN else data[1] // groups
    filled = [data, (filters, per_group, *kernel), (filters,)][:len(shapes)]
    sizes = tuple(UNKNOWN if n == UNKNOWN else output_size(n, *axis)
                  for n, axis in zip(data[2:], axes))
    return filled, (data[0], filters, *sizes)


@handles_unknown_dims
def _embedding(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """Embedding's weight ``(input_dim, output_dim)``; the output is the data's shape with
    ``output_dim`` appended."""
    weight = (int(p["input_dim"]), int(p["output_dim"]))
    data = shapes[0]
    return [data, weight], None if data is None else data + (weight[1],)


@handles_unknown_dims
def _reduce(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
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


@handles_unknown_dims
def _concat(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """Concat: the inputs and the output share every axis but ``dim``, where the output's is
    the inputs' sum (one input's unknown size follows from the others' and the output's)."""
    ranks = {len(s) for s in [*shapes, outs[0]] if s is not None}
    if len(ranks) != 1:
        if ranks:
            raise InvalidValue(f"infer_shape: Concat of shapes {[to_mxnet(s) for s in shapes]}: "
                               "the inputs must have one number of dimensions")
        return shapes, None
    rank = ranks.pop()
    dim = int(p.get("dim", 1)) % rank
    sizes = [UNKNOWN if s is None else s[dim] for s in shapes]
    total = UNKNOWN if outs[0] is None else outs[0][dim]
    try:
        common = _merged([s[:dim] + (UNKNOWN,) + s[dim + 1:]
                          for s in [*shapes, outs[0]] if s is not None])
    except ValueError as error:
        raise InvalidValue(f"infer_shape: Concat on dim {dim}: {error}") from None
    assert common is not None
    if UNKNOWN not in sizes:
        total = sum(sizes)
    elif sizes.count(UNKNOWN) == 1 and total != UNKNOWN:
        sizes[sizes.index(UNKNOWN)] = total - sum(n for n in sizes if n != UNKNOWN)
    return ([common[:dim] + (n,) + common[dim + 1:] for n in sizes],
            common[:dim] + (total,) + common[dim + 1:])


@handles_unknown_dims
def _reshape(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """Reshape to ``shape``: a 0 copies the data's axis, a -1 takes what is left (unknown while
    a dimension it depends on is)."""
    data, target = shapes[0], list(p["shape"])
    if data is None:
        return shapes, None
    out = [data[i] if d == 0 else d for i, d in enumerate(target)]
    if -1 in target:
        at = target.index(-1)
        rest = [d for i, d in enumerate(out) if i != at]
        if UNKNOWN in data or UNKNOWN in rest:
            out[at] = UNKNOWN
        else:
            out[at] = math.prod(data) // math.prod(rest) if math.prod(rest) else 0
    return shapes, tuple(out)


@handles_unknown_dims
def _transpose(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    data = shapes[0]
    if data is None:
        return shapes, None
    axes = p.get("axes") or tuple(reversed(range(len(data))))
    return shapes, tuple(data[a] for a in axes)


@handles_unknown_dims
def _expand_dims(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    data = shapes[0]
    if data is None:
        return shapes, None
    axis = int(p["axis"]) % (len(data) + 1)
    return shapes, data[:axis] + (1,) + data[axis:]


@handles_unknown_dims
def _regression(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    data, label = shapes
    if label is None and data is not None:  # MXNet's: (n,) for data of shape (n, 1)
        label = data[:1] if len(data) == 2 and data[1] == 1 else data
    return [data, label], data


@handles_unknown_dims
def _softmax_output(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    data, label = shapes
    if label is None and data is not None:
        label = (data[0],) + data[2:] if p.get("multi_output") else data[:-1]
    return [data, label], data


@handles_unknown_dims
def _split(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """SliceChannel: ``num_outputs`` equal parts along ``axis`` (squeezed with
    ``squeeze_axis``); the outputs' shapes, known from consumers, give back the data's."""
    count, squeeze = int(p.get("num_outputs", 1)), bool(p.get("squeeze_axis"))
    data = shapes[0]
    try:
        part = _merged(list(outs))
        if data is None and part is None:
            return shapes, None
        rank = len(data) if data is not None else len(part) + squeeze  # type: ignore[arg-type]
        axis = int(p.get("axis", 1)) % rank
        if part is not None:
            size = count if squeeze else UNKNOWN if part[axis] == UNKNOWN else part[axis] * count
            data = merge(data, part[:axis] + (size,) + part[axis + (not squeeze):])
    except ValueError as error:
        raise InvalidValue(f"infer_shape: SliceChannel: {error}") from None
    assert data is not None
    piece = () if squeeze else (UNKNOWN if data[axis] == UNKNOWN else data[axis] // count,)
    return [data], [data[:axis] + piece + data[axis + 1:]] * count


def _topk(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    data = shapes[0]
    if data is None:
        return shapes, None
    if p.get("axis", -1) is None:
        data = (math.prod(data),)
    axis = int(p.get("axis", -1) or 0) % len(data)
    k = int(p.get("k", 1))
    picked = data[:axis] + (data[axis] if k <= 0 else k,) + data[axis + 1:]
    return shapes, data if p.get("ret_typ") == "mask" else [picked, picked]


@handles_unknown_dims
@handles_unknown_dims
def _pick(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """pick: the data without ``axis`` (kept as 1 with ``keepdims``); the index has the
    output's shape."""
    data, index = shapes
    axis = p.get("axis", -1)
    if data is None or axis is None:
        return shapes, None
    axis = int(axis) % len(data)
    out = data[:axis] + ((1,) if p.get("keepdims") else ()) + data[axis + 1:]
    if p.get("keepdims"):
        return shapes, out
    try:
        out = merge(out, index)
    except ValueError as error:
        raise InvalidValue(f"infer_shape: pick: the index must have the output's shape: "
                           f"{error}") from None
    return [data, out], out


def _sequence(last: bool) -> ShapeRule:
    """The rule of SequenceMask / SequenceReverse (the data's shape) or, ``last``,
    SequenceLast (the data without its time ``axis``); ``sequence_length`` is ``(batch,)``."""

    @handles_unknown_dims
    def rule(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
        data = shapes[0]
        if data is None or len(data) < 2:
            return shapes, None
        axis = int(p.get("axis", 0)) % 2
        filled = [data, (data[1 - axis],)][:len(shapes)]
        return filled, data[:axis] + data[axis + 1:] if last else data

    return rule


def _batch_norm(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    data = shapes[0]
    if data is None:
        return shapes, None
    channels = (data[int(p.get("axis", 1)) % len(data)],)
    return [data, *[channels] * (len(shapes) - 1)], [data, channels, channels]


def _rnn(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """RNN's packed parameters' size from the data and ``state_size`` (MXNet's
    ``GetRnnParamSize``), its states' shapes ``(layers * directions, batch, p or h)`` (cells:
    ``h``), ``sequence_length``'s ``(batch,)``; the output ``(T, batch, directions * (p or h))``
    and with ``state_outputs`` the states'."""
    data = shapes[0]
    if data is None:
        return shapes, None
    mode, (t, n, inputs) = p.get("mode"), data
    directions = 2 if p.get("bidirectional") else 1
    layers, hidden = int(p.get("num_layers", 1)), int(p.get("state_size", 1))
    proj = int(p["projection_size"]) if p.get("projection_size") not in (None, "None") else None
    size = packed_layout(str(mode), layers, directions, inputs, hidden, proj)[1]
    state, cell = (layers * directions, n, proj or hidden), (layers * directions, n, hidden)
    want = [data, (size,), state] + [cell] * (mode == "lstm")
    want += [(n,)] * bool(p.get("use_sequence_length"))
    out = (t, n, directions * (proj or hidden))
    if not p.get("state_outputs"):
        return [s if s is not None else w for s, w in zip(shapes, want)], out
    return [s if s is not None else w for s, w in zip(shapes, want)], [
        out, state, *[cell] * (mode == "lstm")]


@handles_unknown_dims
def _leaky_relu(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """The data's shape; prelu's ``gamma`` has one slope per channel (axis 1)."""
    data = shapes[0]
    if len(shapes) > 1 and shapes[1] is None and data is not None and len(data) > 1:
        shapes = [data, (data[1],)]
    return shapes, data


def _normalization(op: str) -> ShapeRule:
    """The rule of LayerNorm, InstanceNorm or GroupNorm: the data's shape (and, with
    ``output_mean_var``, the mean's and deviation's); ``gamma`` and ``beta`` of the normalized
    axis' size, the channels' or ``num_groups``."""

    @handles_unknown_dims
    def rule(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
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


def _shape_parameter(p: Params) -> tuple[int, ...]:
    """The ``shape`` parameter as ints (an int alone is a 1-D shape)."""
    shape = p.get("shape", ())
    return tuple(shape) if isinstance(shape, tuple) else (int(shape),)


@handles_unknown_dims
def _sampler(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """A creation or sampling op: its ``shape`` parameter; in MXNet's legacy shape semantics a
    0 (or ``()``) leaves that dimension (or the shape) to the consumers, as MXNet's."""
    try:
        return shapes, merge(from_mxnet(_shape_parameter(p)), outs[0])
    except ValueError as error:
        raise InvalidValue(f"infer_shape: the op's shape parameter and its consumers: {error}") \
            from None


def shape_left_to_consumers(node: Node) -> bool:
    """Whether ``node`` creates or samples an array whose ``shape`` parameter leaves some of it
    to its consumers (``_sampler``): the executor runs it with the inferred shape."""
    rule = SHAPE_RULES.get(node.op, _sampler if node.op in SAMPLERS else None)  # as _rule's
    return rule is _sampler and not complete(from_mxnet(_shape_parameter(params(node))))


def _sample(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """A ``_sample_`` op: the parameters' shape, then ``shape`` per distribution."""
    known = next((s for s in shapes if s is not None), None)
    if known is None:
        return shapes, None
    return [known] * len(shapes), (*known, *_shape_parameter(p))


_ELEMWISE_SAME = ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "add_n",
                  "_mod", "_power", "_equal", "_not_equal", "_greater", "_greater_equal",
                  "_lesser", "_lesser_equal")
SHAPE_RULES: dict[str, ShapeRule] = {
    "dot": _dot, "batch_dot": _batch_dot, "pick": _pick,
    **{op: _sequence(op == "SequenceLast") for op in ("SequenceMask", "SequenceLast",
                                                       "SequenceReverse")},
    "FullyConnected": _fully_connected, "Convolution": _convolution,
    **{op: _embedding for op in EMBEDDINGS},
    **{d.op: _sample for d in SAMPLE.values()}, **{d.op: _first for d in RANDOM_LIKE.values()},
    "Concat": _concat, "Reshape": _reshape, "transpose": _transpose,
    "expand_dims": _expand_dims, "SoftmaxOutput": _softmax_output,
    "_zeros": _sampler, "_ones": _sampler, "_full": _sampler, "LeakyReLU": _leaky_relu,
    **{op: _normalization(op) for op in ("LayerNorm", "InstanceNorm", "GroupNorm")},
    "SliceChannel": _split, "topk": _topk,
    **{op: _batch_norm for op in BATCH_NORMS},
    "RNN": _rnn,
    "sort": lambda shapes, p, outs: (shapes, [shapes[0], shapes[0]]),
    **{op: _regression for op in ("LinearRegressionOutput", "LogisticRegressionOutput",
                                  "MAERegressionOutput")},
    **{op: _reduce for op in ("sum", "mean", "prod", "nansum", "nanprod", "max", "min",
                              "norm", "_square_sum")},
    **{op: _same for op in (*_ELEMWISE_SAME, "_identity_with_attr_like_rhs")},
    **LINALG_SHAPE_RULES, **GRAPH_SHAPE_RULES,
}
"""Shape rule by op; the binary ``broadcast_*`` ops broadcast, the ``SAME_SHAPE`` ops keep their
first input's shape, and any other op is run on zeros to see (``_evaluated``)."""


def _custom(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
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


def _hawkesll(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
    """contrib.hawkesll: every input's shape from ``lda`` (N, K) and ``lags`` (N, T); outputs the
    log-likelihood (N,) and the states (N, K)."""
    lda, lags = shapes[0], shapes[4]
    if lda is None or lags is None or len(lda) != 2 or len(lags) != 2:
        return shapes, None  # the op's own check names a wrong rank
    (n, k), t = lda, lags[1]
    return [lda, (k,), (k,), (n, k), lags, (n, t), (n,), (n,)], [(n,), (n, k)]


SHAPE_RULES["_contrib_hawkesll"] = _hawkesll
INPUT_DTYPES = {("_contrib_hawkesll", 5): "int32"}
"""Inputs whose dtype is their op's own, not the data's (hawkesll's marks)."""


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

    def rule(shapes: list[Shape], p: Params, outs: list[Shape]) -> Answer:
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
        return given[node.name]
    written = node.attrs.get("__shape__")
    if written is None:
        return None
    return from_mxnet(params(Node("", "", {"shape": written}))["shape"])


def _applied(rule: ShapeRule, inputs: list[Shape], outputs: list[Shape], p: Params) -> Answer:
    """``rule`` on the shapes known so far; a rule not marked ``handles_unknown_dims`` sees
    None for each shape not complete."""
    if getattr(rule, "handles_unknown_dims", False):
        return rule(inputs, p, outputs)
    return rule([s if complete(s) else None for s in inputs], p,
                [s if complete(s) else None for s in outputs])


def _learned(found: dict[Key, Shape], where: Key, shape: Any,
             conflict: Callable[[Any, Any], str]) -> bool:
    """Merges ``shape`` into what ``found`` knows at ``where``; whether that grew. A
    disagreement raises ``InvalidValue`` worded by ``conflict(known, new)``."""
    known, new = found.get(where), None if shape is None else tuple(shape)
    try:
        merged = merge(known, new)
    except ValueError:
        raise InvalidValue(f"infer_shape: {conflict(to_mxnet(known), to_mxnet(new))}") from None
    if merged == known:
        return False
    found[where] = merged
    return True


def shapes(heads: tuple, given: dict[str, Shape]) -> dict[Key, Shape]:
    """The shape of each output of each node (by ``key``), from the arguments' shapes in
    ``given`` (else their ``__shape__``); None where unknown, ``UNKNOWN`` for each dimension
    not known. Shapes follow from the rules of the ops that make and use them, so passes repeat
    until nothing changes (each only adds what is known: it ends)."""
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
            outputs = [found.get((id(node), i)) for i in range(len(output_names(node)))]
            filled, out = _applied(rules[id(node)], inputs, outputs, params(node))
            for (child, index), shape in zip(node.inputs, filled):  # a variable's, or an op's
                changed |= _learned(found, (id(child), index), shape, lambda known, new: (
                    f"{child.name} has shape {known}, {node.op} {node.name} needs {new}"))
            for index, shape in enumerate(out if isinstance(out, list) else [out]):
                changed |= _learned(found, (id(node), index), shape, lambda known, new: (
                    f"output {index} of {node.op} {node.name} has shape {new}, its consumers "
                    f"need {known}"))
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
                out = next((found[key(c)] for i, c in enumerate(children)
                            if found.get(key(c)) and (node.op, i) not in INPUT_DTYPES), None)
            for position, child in enumerate(children):
                own = INPUT_DTYPES.get((node.op, position), out)
                if own is not None and found.get(key(child)) is None and child[0].is_variable:
                    found[key(child)], changed = own, True
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


def _shapes_given(symbol: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                  what: str) -> dict[Key, Shape]:
    """The shapes of each output of ``symbol``'s nodes from the inputs' shapes ``args`` /
    ``kwargs`` in MXNet's notation (``from_mxnet``)."""
    given = _given(symbol, args, kwargs, what)
    return shapes(symbol._outputs, {name: from_mxnet(shape) for name, shape in given.items()})


def infer_shape(self: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
    """(argument shapes, output shapes, auxiliary shapes) from some arguments' shapes, as
    ``Symbol.infer_shape``; ``(None, None, None)`` when they do not determine every shape."""
    found = _answer(self, _shapes_given(self, args, kwargs, "infer_shape"), None)
    if not all(complete(s) for s in found[0] + found[1] + found[2]):
        return None, None, None
    return found


def infer_shape_partial(self: Any, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """As ``infer_shape``, with what is known of the other shapes in MXNet's notation: in its
    legacy shape semantics a 0 for each unknown dimension and ``()`` for an unknown shape,
    under ``mx.util.set_np_shape(True)`` -1 and None."""
    found = _answer(self, _shapes_given(self, args, kwargs, "infer_shape_partial"), None)
    return tuple([to_mxnet(s) for s in part] for part in found)  # type: ignore[return-value]


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
