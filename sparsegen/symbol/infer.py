"""Shape, dtype and storage-type inference over a graph, one rule per op of ``mx.sym``:
parameters' shapes follow from the data (FullyConnected and Embedding weights, loss labels),
as MXNet's ``infer_shape`` does; broadcast ops broadcast as numpy."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import operator
from ..errors import InvalidValue
from ..rules import op_rule
from .graph import Node, dtype_name, params, stype_name, topological
from .ops import EMBEDDINGS, SCALAR_OPS

Shape = tuple[int, ...] | None
ShapeRule = Callable[[list[Shape], dict[str, Any]], tuple[list[Shape], Shape]]


def _same(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    known = next((s for s in shapes if s is not None), None)
    return [known if s is None else s for s in shapes], known


def _first(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    return shapes, shapes[0]


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


def _sampler(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    shape = p.get("shape", ())
    return shapes, tuple(shape) if isinstance(shape, tuple) else (int(shape),)


_ELEMWISE_SAME = ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "add_n",
                  "_mod", "_power", "_equal", "_not_equal", "_greater", "_greater_equal",
                  "_lesser", "_lesser_equal")
SHAPE_RULES: dict[str, ShapeRule] = {
    "dot": _dot, "FullyConnected": _fully_connected,
    **{op: _embedding for op in EMBEDDINGS},
    "Concat": _concat, "Reshape": _reshape, "transpose": _transpose,
    "expand_dims": _expand_dims, "SoftmaxOutput": _softmax_output,
    "_random_uniform": _sampler, "_random_normal": _sampler,
    **{op: _regression for op in ("LinearRegressionOutput", "LogisticRegressionOutput",
                                  "MAERegressionOutput")},
    **{op: _reduce for op in ("sum", "mean", "prod", "nansum", "nanprod", "max", "min",
                              "norm", "_square_sum")},
    **{op: _same for op in _ELEMWISE_SAME},
}
"""Shape rule by op; an op not named here (unary, scalar, Activation, Dropout, casts ...)
keeps its first input's shape, and ``broadcast_*`` broadcast."""


def _custom(shapes: list[Shape], p: dict[str, Any]) -> tuple[list[Shape], Shape]:
    """The registered op's ``infer_shape`` (unknown input shapes passed as ``()``)."""
    if shapes[0] is None:
        return shapes, None
    kwargs = {key: str(value) for key, value in p.items()}
    made = operator.prop(kwargs.pop("op_type"), kwargs)
    ins, outs, _ = made.infer_shape([() if s is None else s for s in shapes])
    return [s if s is not None or not tuple(i) else tuple(i) for s, i in zip(shapes, ins)], \
        tuple(outs[0])


SHAPE_RULES["Custom"] = _custom


def _rule(op: str) -> ShapeRule:
    return SHAPE_RULES.get(op, _broadcast if op.startswith("broadcast_") else _first)


def _variable_shape(node: Node, given: dict[str, Any]) -> Shape:
    if node.name in given:
        return tuple(given[node.name])
    written = node.attrs.get("__shape__")
    if written is None:
        return None
    shape = tuple(params(Node("", "", {"shape": written}))["shape"])
    return None if 0 in shape else shape


def shapes(heads: tuple, given: dict[str, Any]) -> dict[int, Shape]:
    """The shape of each node's output (by ``id``), from the arguments' shapes in ``given``
    (else their ``__shape__``); None where unknown. Variables' shapes follow from their users'
    rules, so passes repeat until nothing changes."""
    nodes = topological(heads)
    found: dict[int, Shape] = {id(n): _variable_shape(n, given) for n in nodes if n.is_variable}
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node.is_variable:
                continue
            inputs = [found.get(id(child)) for child, _ in node.inputs]
            filled, out = _rule(node.op)(inputs, params(node))
            for (child, _), before, after in zip(node.inputs, inputs, filled):
                if before is None and after is not None and child.is_variable:
                    found[id(child)], changed = tuple(after), True
                elif before is not None and after is not None and tuple(after) != before:
                    raise InvalidValue(f"infer_shape: {child.name} has shape {before}, "
                                       f"{node.op} {node.name} needs {tuple(after)}")
            if out is not None and found.get(id(node)) != tuple(out):
                found[id(node)], changed = tuple(out), True
    return found


def dtypes(heads: tuple, given: dict[str, Any]) -> dict[int, str | None]:
    """The dtype of each node's output (by ``id``): an op's inputs and output share one dtype
    (Embedding's output is its weight's, ``dtype`` attribute; Cast's its ``dtype``)."""
    nodes = topological(heads)
    found: dict[int, str | None] = {}
    for node in nodes:
        if node.is_variable:
            code = node.attrs.get("__dtype__")
            found[id(node)] = (np.dtype(given[node.name]).name if node.name in given
                               else dtype_name(code) if code is not None else None)
    changed = True
    while changed:
        changed = False
        for node in nodes:
            if node.is_variable:
                continue
            p = params(node)
            children = [child for child, _ in node.inputs]
            if node.op in EMBEDDINGS:
                children = children[1:]
                out = found.get(id(node.inputs[1][0])) or np.dtype(p.get("dtype", "float32")).name
            elif node.op == "Cast" or node.op.startswith("_random_"):
                out = np.dtype(p.get("dtype", "float32")).name
                children = []
            else:
                out = next((found[id(c)] for c in children if found.get(id(c))), None)
            for child in children:
                if out is not None and found.get(id(child)) is None and child.is_variable:
                    found[id(child)], changed = out, True
            if out is not None and found.get(id(node)) != out:
                found[id(node)], changed = out, True
    return found


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
    rule = op_rule(key, tuple(inputs))
    return rule.output_stype if rule is not None and rule.output_stype else "default"


def stypes(heads: tuple, given: dict[str, Any]) -> dict[int, str]:
    """The storage type of each node's output (by ``id``): variables' from ``given``, else
    their ``__storage_type__``, else default; ops' by the front end's storage rules."""
    found: dict[int, str] = {}
    for node in topological(heads):
        if node.is_variable:
            code = node.attrs.get("__storage_type__")
            found[id(node)] = given.get(node.name) or (stype_name(code) if code else "default")
        else:
            found[id(node)] = _stype(node, [found[id(c)] for c, _ in node.inputs], params(node))
    return found


def _given(symbol: Any, args: tuple[Any, ...], kwargs: dict[str, Any], what: str) -> dict[str, Any]:
    """The arguments' known values, given by position (``list_arguments`` order) or name."""
    names = symbol.list_arguments()
    if args and kwargs:
        raise InvalidValue(f"{what}: give the arguments by position or by name, not both")
    given = dict(zip(names, args)) if args else dict(kwargs)
    unknown = set(given) - set(names)
    if unknown:
        raise InvalidValue(f"{what}: {sorted(unknown)} are not arguments of the symbol ({names})")
    return {k: v for k, v in given.items() if v is not None}


def _answer(symbol: Any, found: dict[int, Any], missing: Any) -> tuple[list, list, list]:
    """(argument values, output values, auxiliary values) in MXNet's order."""
    variables = {n.name: n for n in topological(symbol._outputs) if n.is_variable}
    arguments = [found.get(id(variables[name])) for name in symbol.list_arguments()]
    outputs = [found.get(id(node)) for node, _ in symbol._outputs]
    return ([missing if a is None else a for a in arguments],
            [missing if o is None else o for o in outputs], [])


def infer_shape(self: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
    """(argument shapes, output shapes, auxiliary shapes) from some arguments' shapes, as
    ``Symbol.infer_shape``; ``(None, None, None)`` when they do not determine every shape."""
    found = _answer(self, shapes(self._outputs, _given(self, args, kwargs, "infer_shape")), None)
    if any(s is None for s in found[0] + found[1]):
        return None, None, None
    return found


def infer_shape_partial(self: Any, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """As ``infer_shape``, with ``()`` for each shape not determined."""
    return _answer(self, shapes(self._outputs, _given(self, args, kwargs, "infer_shape_partial")),
                   ())


def infer_type(self: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
    """(argument dtypes, output dtypes, auxiliary dtypes) as numpy types from some arguments'
    dtypes; ``(None, None, None)`` when they do not determine every dtype."""
    found = _answer(self, dtypes(self._outputs, _given(self, args, kwargs, "infer_type")), None)
    if any(t is None for t in found[0] + found[1]):
        return None, None, None
    return tuple([np.dtype(t).type for t in part] for part in found)  # type: ignore[return-value]


def infer_storage_type(self: Any, *args: Any, **kwargs: Any) -> tuple[list, list, list]:
    """(argument, output, auxiliary) storage types from some arguments' storage types
    (others: their ``stype`` attribute, else default)."""
    return _answer(self, stypes(self._outputs, _given(self, args, kwargs, "infer_storage_type")),
                   "default")
