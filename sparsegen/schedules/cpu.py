"""CPU (LLVM) schedules: row blocks run in parallel chunks; column loops use explicit vectors.

LLVM does not vectorize TVM's column loops by itself here (it cannot prove the buffers do not
alias inside the parallel closure), and TVM 0.27's schedule primitives cannot vectorize a loop of
symbolic extent (``loop_partition`` rejects dynamic extents; ``split`` + ``vectorize`` adds a
predicate and comes out scalar). So the ``lanes`` knob is realised by the templates: a template
that declares a ``lanes`` keyword writes each column loop as ``d // lanes`` vector steps
(``T.vectorized(lanes)``) plus a scalar tail, and the compiler passes it this knob's value.
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
        Knob("parallel", (True, False), True, "run row blocks on the thread pool"),
        Knob("chunk", (1, 8, 64), 8, "rows per parallel task"),
        Knob("lanes", (4, 8, 16, 32), 16, "elements per vector step of column loops"),
        Knob("serial_below", (0, 4096, 65536), 4096,
             "calls touching fewer elements run a serial build (a parallel launch costs ~10 us)",
             in_binary=False),
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
