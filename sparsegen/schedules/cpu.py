"""CPU (LLVM) schedules: row blocks run in parallel chunks; LLVM vectorizes the column loops."""

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
    ),
    apply=_apply_rows,
)
"""The schedule for templates whose work is independent per row."""
