"""``nose.tools.raises``, ``assert_raises``, ``make_decorator`` and ``ok_``, as MXNet's tests use
them."""

from __future__ import annotations

import functools
from typing import Any, Callable

import pytest

assert_raises = pytest.raises


def make_decorator(function: Callable[..., Any]) -> Callable[..., Any]:
    """A decorator giving its wrapper ``function``'s name and docstring."""
    return functools.wraps(function)


def raises(*exceptions: type[BaseException]) -> Callable[..., Any]:
    """The test passes only if it raises one of ``exceptions``."""
    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> None:
            with pytest.raises(exceptions):
                function(*args, **kwargs)
        return run
    return decorate


def ok_(expr: Any, msg: str | None = None) -> None:
    """Fail with ``msg`` unless ``expr`` is true (nose's ``ok_``)."""
    if not expr:
        raise AssertionError(msg)
