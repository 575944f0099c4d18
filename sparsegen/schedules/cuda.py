"""CUDA schedules: one GPU thread per row of each ``rows*`` block; other blocks run on one thread.

This is the simple schedule that makes every template run on a GPU (for ``sparsegen export
--target cuda``): a ``rows*`` loop is split into blocks of ``threads`` rows bound to
``blockIdx.x`` / ``threadIdx.x``; a serial block (a prefix scan, a merge) becomes a kernel of one
thread, launched in order on the stream. Column loops keep the template's ``T.vectorized(lanes)``
steps, so ``lanes`` here is small: CUDA has vector types of at most 4 elements.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .space import Knob, ScheduleSpace


def _apply_rows(sch: Any, config: Mapping[str, Any]) -> None:
    """Bind each ``rows*`` loop to (blockIdx.x, threadIdx.x); every other block gets one thread."""
    for gvar in sch.mod.get_global_vars():
        sch.work_on(gvar.name_hint)
        for block in sch.get_child_blocks(sch.get_sblock("root")):
            loops = sch.get_loops(block)
            if sch.get(block).name_hint.startswith("rows") and len(loops) == 1:
                outer, inner = sch.split(loops[0], factors=[None, config["threads"]])
                sch.bind(outer, "blockIdx.x")
                sch.bind(inner, "threadIdx.x")
            else:
                sch.bind(sch.add_unit_loop(loops[0] if loops else block), "blockIdx.x")


ROWS = ScheduleSpace(
    name="cuda.rows",
    knobs=(
        Knob("threads", (64, 128, 256, 512), 128, "rows (GPU threads) per thread block"),
        Knob("lanes", (1, 2, 4), 1, "elements per vector step of column loops"),
    ),
    apply=_apply_rows,
)
"""The CUDA schedule for templates whose work is independent per row."""
