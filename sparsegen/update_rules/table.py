"""The table of update rules with a kernel, by name: the built-ins and the rules users
registered. ``registry.add_update_rule`` fills it (with the kernels); it lives here, below the
templates, so that ``templates/optim.py`` finds the rule its template builds by name."""

from __future__ import annotations

from .language import UpdateRule

UPDATE_RULES: dict[str, UpdateRule] = {}
"""Every registered update rule, by name (``registry.add_update_rule`` fills it)."""
