"""CUDA schedules: rows of each ``rows*`` block spread over GPU threads; other blocks on one thread.

Knobs of ``cuda.rows``:

- ``row_threads`` (1, 32, 128; default 32): GPU threads cooperating on one row: 1 is a thread
  per row (the thread loops over the row's columns), 32 a warp per row, 128 with
  ``threads = 128`` a thread block per row. The templates realise it
  (sparsegen/templates/columns.py): with ``row_threads > 1`` each column loop is a loop over
  ``threadIdx.x`` of extent ``row_threads`` whose thread ``t`` takes the columns
  ``t, t + row_threads, ...``, so a warp reads and writes consecutive elements (coalesced), and
  this schedule binds the row loop to (``blockIdx.x``, ``threadIdx.y``), ``threads //
  row_threads`` rows per thread block. Warp per row is the default: rows here hold 32 to 512
  elements, and the kernels are memory-bound.
- ``threads`` (128, 256, 512; default 128): threads per thread block (with ``row_threads = 1``,
  rows per block). Every value is a multiple of every ``row_threads`` value, so every
  combination is valid.
- ``lanes`` (1, 2, 4; default 1): contiguous elements per thread and step of a column loop, as
  vector steps when the row width is a multiple of ``lanes`` (CUDA vector types of at most 4
  elements need aligned addresses; buffers must start ``lanes`` elements aligned, as device
  allocations do).

A ``rows*`` block whose template keeps one thread per row (a reduction over a row's columns, a
sorted merge: no ``threadIdx.x`` loop inside) gets ``threads`` rows per block on ``threadIdx.x``
whatever ``row_threads`` says. A serial block (a scan's carry step, a radix sort pass, a merge)
becomes a kernel of one thread, launched in order on the stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .space import Knob, ScheduleSpace


def _shares_rows(block: Any) -> bool:
    """Whether the template bound column loops of ``block`` to ``threadIdx.x`` (TVM 0.27 has no
    Python statement visitor, so the printed block is searched)."""
    return 'thread="threadIdx.x"' in block.script()


def _apply_rows(sch: Any, config: Mapping[str, Any]) -> None:
    """Bind each ``rows*`` loop to thread blocks of ``threads`` threads; other blocks get one."""
    for gvar in sch.mod.get_global_vars():
        sch.work_on(gvar.name_hint)
        for block in sch.get_child_blocks(sch.get_sblock("root")):
            loops = sch.get_loops(block)
            if sch.get(block).name_hint.startswith("rows") and len(loops) == 1:
                if _shares_rows(sch.get(block)):
                    rows, axis = config["threads"] // config["row_threads"], "threadIdx.y"
                else:
                    rows, axis = config["threads"], "threadIdx.x"
                outer, inner = sch.split(loops[0], factors=[None, rows])
                sch.bind(outer, "blockIdx.x")
                sch.bind(inner, axis)
            else:
                sch.bind(sch.add_unit_loop(loops[0] if loops else block), "blockIdx.x")


ROWS = ScheduleSpace(
    name="cuda.rows",
    knobs=(
        Knob("row_threads", (1, 32, 128), 32,
             "threads sharing one row: 1 thread, 32 warp, 128 (= threads) block per row"),
        Knob("threads", (128, 256, 512), 128, "threads per thread block"),
        Knob("lanes", (1, 2, 4), 1, "contiguous elements per thread and step of column loops"),
    ),
    apply=_apply_rows,
)
"""The CUDA schedule for templates whose work is independent per row."""
