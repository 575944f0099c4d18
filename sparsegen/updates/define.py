"""Defining and registering update rules, and their kernels (the API of sparsegen.updates)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import kernels
from ..cache import forget_choices
from ..registry import UPDATE_RULES, add_update_rule
from ..update_rules.language import FUNCTIONS, UpdateRule, UpdateRuleError, define_update

__all__ = ["define_update", "register", "update_rule", "get_rule", "kernel"]

def register(rule: UpdateRule) -> UpdateRule:
    """Give ``rule`` its kernel ``optim_<name>`` (``sparsegen.kernels``, export, tuning) and
    its ``<name>_update`` op (the optimizer path); registering a changed rule of the same name
    replaces it, and its kernels rebuild (the cache keys on the rule's digest)."""
    if not isinstance(rule, UpdateRule):
        raise UpdateRuleError(f"register takes an UpdateRule (define_update), got {rule!r}")
    replaced = rule.name in UPDATE_RULES
    add_update_rule(rule)
    if replaced:
        forget_choices()  # the memoised kernels of the old rule
    return rule


def update_rule(name: str | None = None, *, states: Sequence[str] = (),
                hyper: Sequence[str] = (), row_states: Sequence[str] = (),
                functions: Sequence[str] = FUNCTIONS,
                doc: str | None = None) -> Callable[[Callable[..., Any]], UpdateRule]:
    """Decorator: ``define_update`` and ``register`` the function (named after it by default)."""

    def decorate(update: Callable[..., Any]) -> UpdateRule:
        return register(define_update(name or update.__name__, update, states=states,
                                      hyper=hyper, row_states=row_states, functions=functions,
                                      doc=doc))

    return decorate


def get_rule(name: str) -> UpdateRule:
    """The registered rule ``name`` (a built-in rule or a user's)."""
    if name not in UPDATE_RULES:
        raise UpdateRuleError(f"no update rule {name!r}; registered: {sorted(UPDATE_RULES)}")
    return UPDATE_RULES[name]


def kernel(rule: UpdateRule | str, dtype: str, **options: Any) -> Any:
    """The rule's kernel bound to ``dtype`` (``sparsegen.kernels.get``: compiled or loaded now;
    ``options``: ``target``, ``config``, ``check``)."""
    name = rule.name if isinstance(rule, UpdateRule) else get_rule(rule).name
    return kernels.get(f"optim_{name}", dtype, **options)
