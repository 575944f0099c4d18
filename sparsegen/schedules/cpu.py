"""CPU (LLVM) schedules: row blocks run in parallel chunks; column loops use explicit vectors.

TVM 0.27's schedule primitives cannot vectorize a loop of symbolic extent (``loop_partition``
rejects dynamic extents; ``split`` + ``vectorize`` adds a predicate and comes out scalar), so the
``lanes`` knob is realised by the templates: a template that declares a ``lanes`` keyword writes
each column loop as ``d // lanes`` vector steps (``T.vectorized(lanes)``) plus a scalar tail, and
the compiler passes it this knob's value. LLVM's own loop vectorizer (enabled by the functions'
``tirx.noalias``) still handles the loops a template leaves scalar; the explicit form makes the
width a tunable knob instead of LLVM's guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .space import Knob, ScheduleSpace


def _apply_rows(sch: Any, config: Mapping[str, Any]) -> None:
    """Split each ``rows*`` block's loop into chunks of ``chunk`` rows, run the chunks in parallel."""
    if not config["parallel"]:
        return
    for gvar in sch.mod.get_global_vars():
        sch.work_on(gvar.name_hint)
        for block in sch.get_child_blocks(sch.get_sblock("root")):
            if not sch.get(block).name_hint.startswith("rows"):
                continue
            (loop,) = sch.get_loops(block)
            if config["chunk"] > 1:
                loop, _ = sch.split(loop, factors=[None, config["chunk"]])
            sch.parallel(loop)


ROWS = ScheduleSpace(
    name="cpu.rows",
    knobs=(
        Knob("parallel", (True, False), True, "run row blocks on the thread pool", small=False),
        Knob("chunk", (1, 8, 64), 8, "rows per parallel task"),
        Knob("lanes", (4, 8, 16, 32), 16, "elements per vector step of column loops"),
        Knob("serial_below", (0, 4096, 65536), 4096,
             "calls touching fewer elements run a serial build (a parallel launch costs ~10 us)",
             threshold=True),
    ),
    apply=_apply_rows,
)
"""The schedule for templates whose work is independent per row."""

ROWS_PREFETCH = ScheduleSpace(
    name="cpu.rows_prefetch",
    knobs=(
        *ROWS.knobs,
        Knob("prefetch", (0, 4, 8, 16), 8,
             "rows ahead whose scattered target rows the template prefetches (0: none)"),
    ),
    apply=_apply_rows,
)
"""ROWS for templates that update rows at random ids (lazy optimizer updates); the template
realises ``prefetch`` itself, as it does ``lanes``."""
