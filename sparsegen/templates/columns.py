"""Column loops of row blocks and the rows a gather will touch next, as marks for the schedule.

A template writes the work on one column ``j`` of a row as a macro ``body(*args, j)`` and runs
it with ``cols.each(width, body, *args)``; a write to a column found at run time (a scatter into
the row) goes through ``cols.owned(j, body, *args)``. Both say only *what* runs: a plain loop
annotated ``hints.COLUMNS`` and an ``hints.OWNED`` attribute, which the schedules realise
(sparsegen/schedules/realise.py: vector steps on a CPU, threads sharing a row on a GPU).

``ahead(position, bound, rows)`` describes the rows (``(buffer, row expression, written)``, the
row written in terms of ``position``, a fresh variable) that the entry at ``position`` of a
gather touches; ``cols.gather(hint, at, body, *args)`` runs ``body`` for the entry at ``at``
with that hint, which a schedule may turn into prefetches of the entries ahead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import tvm
from tvm.script import tirx as T

from .. import hints


class Columns(NamedTuple):
    """The column-loop and gather macros every template uses."""

    each: Any  # each(width, body, *args): body(*args, j) for every column j < width
    owned: Any  # owned(j, body, *args): body(*args), a write to column j of the row
    gather: Any  # gather(hint, at, body, *args): body(*args) for the gather entry at ``at``


@T.macro
def _each(width, body, *args):
    for j in T.serial(width, annotations={hints.COLUMNS: 1}):
        body(*args, j)


@T.macro
def _owned(j, body, *args):
    with T.attr(j, hints.OWNED, j):
        body(*args)


@T.macro
def _gather(hint, at, body, *args):
    with T.attr(hint, hints.AHEAD, at):
        body(*args)


cols = Columns(_each, _owned, _gather)
"""The macros; a template imports this and calls ``cols.each`` / ``cols.owned`` / ``cols.gather``."""


def position() -> tvm.tirx.Var:
    """A fresh position variable for ``ahead``."""
    return tvm.tirx.Var("ahead", "int64")


def ahead(at: tvm.tirx.Var, bound: Any, rows: Sequence[tuple[Any, Any, bool]]) -> list[Any]:
    """The hint of a gather whose entries ``0 <= at < bound`` touch ``rows`` (buffer, row as an
    expression of ``at``, whether the row is written)."""
    return [at, bound, *[[buffer, row, int(written)] for buffer, row, written in rows]]
