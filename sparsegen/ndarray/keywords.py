"""Unknown keyword arguments to ``mx.nd`` functions raise ``MXNetError``, as MXNet's operators.

MXNet's generated operators take ``**kwargs`` and their C++ parameter parser raises
``MXNetError: Cannot find argument 'foo'``; its Python functions raise ``TypeError``. Every public
function of ``mx.nd`` (and of the modules it exports, ``mx.nd.sparse``, ...) is wrapped once, by
``check_keywords``, so that such a call raises ``InvalidType``: a ``TypeError`` and an
``MXNetError``, naming the function, the argument and the ones it takes (``name`` and ``attr``,
which only a symbol uses, are dropped). The wrapper costs one
call frame; the check itself runs only when the call has already failed to bind.

The same wrapper (``noted`` alone for functions that take ``**kwargs``) is the one place where
the tape learns which ``mx.nd`` function a recorded result came from, and its arguments
(``tape.front_end``): what ``autograd.get_symbol`` rebuilds a graph from.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

from .. import tape
from ..errors import InvalidType

SYMBOL_ONLY = frozenset({"name", "attr"})
"""Keywords of a graph node (``name='fwd'``, ``attr={...}``) that ``mx.nd`` functions accept and
ignore, as MXNet's operators do: one Gluon ``hybrid_forward`` serves ``mx.nd`` and ``mx.sym``."""

_WRAPPED: dict[int, Callable[..., Any]] = {}  # id(function) -> wrapper, so aliases stay one object


def _unknown(function: Callable[..., Any], kwargs: dict[str, Any]) -> list[str]:
    """The keyword arguments ``function`` does not take."""
    parameters = inspect.signature(function).parameters
    return [name for name in kwargs if name not in parameters
            or parameters[name].kind is inspect.Parameter.POSITIONAL_ONLY]


def noted(function: Callable[..., Any], dotted: str) -> Callable[..., Any]:
    """``function`` (``mx.nd``'s ``dotted``) noting its calls while recording
    (``tape.front_end``)."""
    known = _WRAPPED.get(id(function))
    if known is not None:
        return known

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        return tape.front_end(dotted, function, args, kwargs)

    _WRAPPED[id(function)] = _WRAPPED[id(call)] = call
    return call


def checked(function: Callable[..., Any], dotted: str | None = None) -> Callable[..., Any]:
    """``function`` raising ``InvalidType`` (TypeError and MXNetError) on an unknown keyword,
    and noting its calls while recording as ``mx.nd``'s ``dotted`` (``tape.front_end``)."""
    known = _WRAPPED.get(id(function))
    if known is not None:
        return known

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except TypeError:
            unknown = _unknown(function, kwargs) if kwargs else []
            if not unknown:
                raise
            if set(unknown) <= SYMBOL_ONLY:  # MXNet's operators take them, and ignore them
                return function(*args, **{k: v for k, v in kwargs.items() if k not in unknown})
            taken = ", ".join(inspect.signature(function).parameters)
            raise InvalidType(
                f"{function.__name__}: cannot find argument {unknown[0]!r}; it takes {taken}"
            ) from None

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        return tape.front_end(dotted or function.__name__, run, args, kwargs)

    _WRAPPED[id(function)] = _WRAPPED[id(call)] = call
    return call


def _takes_any_keyword(function: Callable[..., Any]) -> bool:
    return any(p.kind is inspect.Parameter.VAR_KEYWORD
               for p in inspect.signature(function).parameters.values())


def check_keywords(module: types.ModuleType, seen: set[str] | None = None,
                   prefix: str = "") -> None:
    """Wrap the public functions of ``module`` (its ``__all__``; ``mx.nd``'s namespace
    ``prefix``, ``'sparse.'``) and of the sparsegen modules it exports with ``checked``;
    functions that take ``**kwargs`` check their own, and are wrapped with ``noted``."""
    seen = set() if seen is None else seen
    seen.add(module.__name__)
    for name in getattr(module, "__all__", ()):
        value = getattr(module, name, None)
        if isinstance(value, types.ModuleType):
            if value.__name__.startswith("sparsegen.") and value.__name__ not in seen:
                check_keywords(value, seen, f"{prefix}{name}.")
        elif inspect.isfunction(value):
            wrap = noted if _takes_any_keyword(value) else checked
            setattr(module, name, wrap(value, prefix + name))
