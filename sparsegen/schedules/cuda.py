"""CUDA schedules: rows of each ``rows*`` block spread over GPU threads; other blocks on one thread.

Knobs of ``cuda.rows``:

- ``row_threads`` (1, 32, 128; default 32): GPU threads cooperating on one row: 1 is a thread
  per row (the thread loops over the row's columns), 32 a warp per row, 128 with
  ``threads = 128`` a thread block per row. With ``row_threads > 1`` each column loop of the
  templates (``hints.COLUMNS``) becomes a loop over ``threadIdx.x`` of extent ``row_threads``
  whose thread ``t`` takes the element groups ``t, t + row_threads, ...``, so a warp reads and
  writes consecutive elements (coalesced), and the row loop is bound to (``blockIdx.x``,
  ``threadIdx.y``), ``threads // row_threads`` rows per thread block. A write to a column found
  at run time (``hints.OWNED``) runs in the thread whose group holds that column, so every
  element of a row has one owner thread across all of a block's column loops: no races, no
  barriers. Warp per row is the default: rows here hold 32 to 512 elements, and the kernels
  are memory-bound.
- ``threads`` (128, 256, 512; default 128): threads per thread block (with ``row_threads = 1``,
  rows per block). Every value is a multiple of every ``row_threads`` value, so every
  combination is valid.
- ``lanes`` (1, 2, 4; default 1): contiguous elements per thread and step of a column loop, as
  vector steps when the row width is a multiple of ``lanes`` (CUDA vector types of at most 4
  elements need aligned addresses; buffers must start ``lanes`` elements aligned, as device
  allocations do); other widths take the same groups as scalars.

A ``rows*`` block without column loops (a reduction over a row's columns, a sorted merge) gets
``threads`` rows per block on ``threadIdx.x`` whatever ``row_threads`` says. A serial block (a
scan's carry step, a radix sort pass, a merge) becomes a kernel of one thread, launched in order
on the stream. Every launch is guarded by ``grid size > 0``. Gather hints are dropped.

TVM is imported when a schedule is applied, not when its knobs are read (the kernel cache reads
them in processes that never import the compiler).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .space import Knob, ScheduleSpace


def _strided(lanes: int, row_threads: int):
    """The realisation of a column loop: thread ``t`` of ``row_threads`` takes the
    ``lanes``-element groups ``t, t + row_threads, ...`` of the row."""
    from tvm import tirx

    from . import marks

    step = lanes * row_threads

    def columns(width: Any, body: Any, t: Any) -> Any:
        dtype = str(width.ty.dtype)
        jo = tirx.Var("jo", dtype)
        first = (jo * marks.const(row_threads, width) + t) * marks.const(lanes, width)
        vector = tirx.IfThenElse(first < width, marks.lane_loop(
            "ji", lanes, lambda ji: body(first + ji), dtype, tirx.ForKind.VECTORIZED), None)
        scalar = marks.lane_loop("jt", lanes, lambda jt: tirx.IfThenElse(
            first + jt < width, body(first + jt), None), dtype)
        aligned = width % marks.const(lanes, width) == marks.const(0, width)
        if isinstance(width, tirx.IntImm):
            group = vector if width.value % lanes == 0 else scalar
        else:
            group = tirx.IfThenElse(aligned, vector, scalar)
        groups = (width + marks.const(step - 1, width)) // marks.const(step, width)
        return marks.loop(jo, groups, group)

    def realise(width: Any, body: Any) -> Any:
        if row_threads == 1:
            return columns(width, body, marks.const(0, width))
        return marks.thread_loop("t", row_threads, "threadIdx.x",
                                 lambda t: columns(width, body, t))

    return realise


def _owner(lanes: int, row_threads: int):
    """The realisation of an owned write: only in the thread whose group holds column ``j``."""
    from tvm import tirx

    from . import marks

    def realise(j: Any, body: Any) -> Any:
        if row_threads == 1:
            return body
        group = tirx.Cast("int64", j) // tirx.const(lanes, "int64") % tirx.const(
            row_threads, "int64")
        return marks.thread_loop("t", row_threads, "threadIdx.x", lambda t: tirx.IfThenElse(
            group == tirx.Cast("int64", t), body, None))

    return realise


def _shares_rows(block: Any) -> bool:
    """Whether ``block`` holds column loops bound to ``threadIdx.x``."""
    import tvm_ffi
    from tvm import tirx

    found = []

    def visit(loop: Any) -> None:
        binding = loop.thread_binding
        if binding is not None and binding.thread_tag == "threadIdx.x":
            found.append(loop)

    tvm_ffi.structural_walk(block, [(tirx.For, visit)])
    return bool(found)


def _skip_empty_grids(mod: Any) -> Any:
    """Every GPU kernel launch guarded by ``grid size > 0`` (a host-side branch).

    A ``rows*`` loop over zero rows (an array storing no rows) is a grid of zero blocks, which
    the CUDA runtime refuses to launch; on the CPU the same loop simply does not run.
    """
    import tvm_ffi
    from tvm import tirx

    def guard(loop: Any) -> Any:
        if loop.kind == tirx.ForKind.THREAD_BINDING and loop.thread_binding.thread_tag == "blockIdx.x":
            return tirx.IfThenElse(loop.extent > 0, loop, None)
        return loop

    return tvm_ffi.structural_map(mod, [(tirx.For, guard)])


def _realise(mod: Any, config: Mapping[str, Any]) -> Any:
    """The templates' marks realised for CUDA."""
    from . import marks

    lanes, row_threads = config["lanes"], config["row_threads"]
    mod = marks.without_ahead(mod)
    mod = marks.owned(mod, _owner(lanes, row_threads))
    return marks.columns(mod, _strided(lanes, row_threads))


def _apply_rows(mod: Any, config: Mapping[str, Any]) -> Any:
    """Marks realised; each ``rows*`` loop bound to thread blocks of ``threads`` threads, other
    blocks to one thread; empty grids skipped."""
    from tvm import s_tir

    sch = s_tir.Schedule(_realise(mod, config), enable_check=False)
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
    return _skip_empty_grids(sch.mod)


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

ROW_ALONE = ScheduleSpace(
    name="cuda.row_alone",
    knobs=(
        Knob("row_threads", (1,), 1, "one thread per row: its reduction pass and its row states "
             "are shared by no other thread"),
        *ROWS.knobs[1:],
    ),
    apply=_apply_rows,
)
"""ROWS with one thread per row: update rules with a row reduction or row states."""
