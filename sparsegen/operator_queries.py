"""``mx.operator``'s registry queries, as MXNet 1.9.1's: ``get_all_registered_operators()`` (the
names of MXNet's registry that sparsegen serves) and ``get_operator_arguments(op_name)`` (an
``OperatorArguments(narg, names, types)`` read from the signature of the ``mx.nd`` function that
serves the operator).

MXNet's names come from its recorded registry (``mxnet_operators.py``); an operator is served
where ``mx.nd`` has a function by its name, in ``mx.nd._internal``, or, without its prefix, in
the namespace its prefix names (``_contrib_index_copy`` is ``mx.nd.contrib.index_copy``). The
argument types are written in MXNet's words (``'NDArray-or-Symbol'``, ``'float, optional,
default=1'``) from each parameter's annotation and default.
"""

from __future__ import annotations

import inspect
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ndarray as nd
from .errors import InvalidType, InvalidValue, NotSupported
from .mxnet_operators import MXNET_OPERATORS
from .ndarray.l2_normalization import L2_MODES
from .ndarray.leaky_relu import ACT_TYPES as LEAKY_ACT_TYPES
from .ndarray.nn import ACT_TYPES, CUDNN_TUNE
from .ndarray.output import NORMALIZATIONS
from .opaliases import PREFIXES, alias_target

OperatorArguments = namedtuple("OperatorArguments", ["narg", "names", "types"])
"""An operator's arguments: how many, their names and their types (MXNet's strings)."""

CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("Activation", "act_type"): ACT_TYPES,
    ("LeakyReLU", "act_type"): LEAKY_ACT_TYPES,
    ("L2Normalization", "mode"): L2_MODES,
    ("Convolution", "cudnn_tune"): CUDNN_TUNE,
    ("SoftmaxOutput", "normalization"): NORMALIZATIONS,
    ("MakeLoss", "normalization"): NORMALIZATIONS,
    ("cast_storage", "stype"): ("csr", "default", "row_sparse"),
}
"""The string arguments whose values the front end checks against a list, by (op, argument):
their type is the set of values, as MXNet writes an enum (``{'relu', 'sigmoid', ...}``)."""

_SKIPPED = frozenset({"out", "name", "attr"})
"""Parameters of ``mx.nd`` functions that are no operator argument (the output buffer, and the
graph node's name and attributes)."""

_KINDS = {"bool": "boolean", "int": "int", "float": "float", "str": "string"}
"""Annotations and the words MXNet's parameter descriptions use for them."""


def served_by(op_name: str) -> Callable[..., Any] | None:
    """The ``mx.nd`` function that serves MXNet's operator ``op_name`` (None when none does)."""
    found = getattr(nd, op_name, None) or getattr(nd._internal, op_name, None)
    prefix = next((p for p in PREFIXES if op_name.startswith(p)), None)
    if found is None and prefix is not None:
        found = getattr(getattr(nd, PREFIXES[prefix], None), op_name[len(prefix):], None)
    return found if callable(found) and not isinstance(found, type) else None


def get_all_registered_operators() -> list[str]:
    """The names of MXNet's registered operators (aliases included) that sparsegen serves,
    sorted, as ``mx.operator.get_all_registered_operators``."""
    return [name for name in MXNET_OPERATORS if served_by(name) is not None]


def _kind(annotation: Any, default: Any) -> str:
    """MXNet's word for a parameter's type: from its annotation, else from its default."""
    base = str(annotation).replace(" | None", "").replace("None | ", "").strip()
    if base in _KINDS:
        return _KINDS[base]
    if isinstance(default, (type, np.dtype)):  # a dtype: MXNet's enum of dtype names
        return "string"
    for kind, word in (("bool", "boolean"), ("int", "int"), ("float", "float"), ("str", "string")):
        if type(default).__name__ == kind:
            return word
    return "Shape(tuple)" if isinstance(default, (tuple, list)) else "any"


def _default_text(kind: str, default: Any) -> str:
    """``default`` as MXNet prints it for a parameter of type ``kind`` (floats as float32)."""
    if kind == "boolean":
        return str(int(bool(default)))
    if kind == "int":
        return f"'{default}'"
    if kind == "float":
        return f"{np.float32(default):.9g}"
    if kind == "Shape(tuple)":
        return f"[{','.join(str(v) for v in default)}]"
    if isinstance(default, (type, np.dtype)):
        return f"'{np.dtype(default).name}'"
    return f"'{default}'"


def _type_text(op: str, parameter: inspect.Parameter) -> str:
    """MXNet's description of an argument's type (``'int, optional, default='1''``)."""
    default = parameter.default
    choices = CHOICES.get((op, parameter.name))
    if choices is not None:
        values = ", ".join(f"'{c}'" for c in sorted(choices))
        if default is parameter.empty:
            return f"{{{values}}}, required"
        return f"{{{values}}},optional, default='{default}'"
    kind = _kind(parameter.annotation, default)
    if default is parameter.empty:
        return f"{kind}, required"
    if default is None:
        return f"{kind} or None, optional, default=None"
    return f"{kind}, optional, default={_default_text(kind, default)}"


def get_operator_arguments(op_name: str) -> OperatorArguments:
    """The arguments of operator ``op_name``, as ``mx.operator.get_operator_arguments``: its array
    inputs first (``'NDArray-or-Symbol'``, ``'NDArray-or-Symbol[]'`` for a list), then its other
    parameters, named and ordered as the ``mx.nd`` function that serves it takes them."""
    if not isinstance(op_name, str):
        raise InvalidType(f"get_operator_arguments: op_name must be a string, got "
                          f"{type(op_name).__name__}")
    if op_name not in MXNET_OPERATORS:
        raise InvalidValue(f"get_operator_arguments: operator {op_name!r} is not registered "
                           "(MXNet 1.9.1 has no operator of that name)")
    function = served_by(op_name)
    if function is None:
        raise NotSupported(f"get_operator_arguments: MXNet's operator {op_name!r} is not in "
                           "sparsegen (docs/mxnet-differences.md lists what is missing)")
    op = alias_target(op_name) or op_name
    inputs: list[tuple[str, str]] = []
    others: list[tuple[str, str]] = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name in _SKIPPED or parameter.kind is parameter.VAR_KEYWORD:
            continue
        if parameter.kind is parameter.VAR_POSITIONAL:
            inputs.append((parameter.name, "NDArray-or-Symbol[]"))
        elif "NDArray" in str(parameter.annotation):
            inputs.append((parameter.name, "NDArray-or-Symbol"))
        else:
            others.append((parameter.name, _type_text(op, parameter)))
    arguments = inputs + others
    return OperatorArguments(len(arguments), [n for n, _ in arguments], [t for _, t in arguments])
