"""CPU (LLVM) schedules: row blocks run in parallel chunks; column loops use explicit vectors.

TVM 0.27's schedule primitives cannot vectorize a loop of symbolic extent (``loop_partition``
rejects dynamic extents; ``split`` + ``vectorize`` adds a predicate and comes out scalar), so
this schedule realises the templates' column loops (``hints.COLUMNS``) itself: ``width //
lanes`` steps of ``lanes`` vector lanes plus a scalar tail. LLVM's own loop vectorizer (enabled
by the functions' ``tirx.noalias``) still handles the loops a template leaves plain; the
explicit form makes the width a tunable knob instead of LLVM's guess. Gather hints
(``hints.AHEAD``) become LLVM prefetches of the rows ``prefetch`` entries ahead, one per cache
line: they sit at random ids, where the hardware prefetcher cannot guess them. A ``rows_task*``
block's rows are a task's worth each (a reduction's chunk of csr rows): one parallel task per
row, whatever ``chunk`` says.

TVM is imported when a schedule is applied, not when its knobs are read (the kernel cache reads
them in processes that never import the compiler).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .space import Knob, ScheduleSpace

_LINE_BYTES = 64
"""Bytes per cache line: one prefetch per line of a row."""


def _vector_steps(lanes: int):
    """The realisation of a column loop: vector steps of ``lanes`` plus a scalar tail; a plain
    loop for one lane, for a constant width (LLVM vectorizes those itself) and for a column body
    with loops of its own (a dot product per column)."""
    from tvm import tirx

    from . import marks

    def realise(width: Any, body: Any) -> Any:
        dtype = str(width.ty.dtype)
        j = tirx.Var("j", dtype)
        plain = body(j)
        if lanes == 1 or isinstance(width, tirx.IntImm) or marks.has_loop(plain):
            return marks.loop(j, width, plain)
        step = marks.const(lanes, width)
        jo, jt = tirx.Var("jo", dtype), tirx.Var("jt", dtype)
        vector = marks.loop(jo, width // step, marks.lane_loop(
            "ji", lanes, lambda ji: body(jo * step + ji), dtype, tirx.ForKind.VECTORIZED))
        tail = marks.loop(jt, width % step, body(width - width % step + jt))
        return tirx.SeqStmt([vector, tail])

    return realise


def _prefetches(distance: int):
    """The realisation of a gather hint: prefetch the rows of the entry ``distance`` ahead."""
    from tvm import tirx

    from . import marks

    def realise(node: Any, at: Any, body: Any) -> Any:
        if distance == 0:
            return body
        rows = marks.ahead_rows(node, at, distance)
        width = rows[0][0].shape[1]
        line = max(1, _LINE_BYTES // marks.element_bytes(rows[0][0]))
        q = tirx.Var("q", str(width.ty.dtype))
        fetch = marks.seq([
            tirx.Evaluate(tirx.call_llvm_intrin(
                "void", "llvm.prefetch.p0",
                tirx.address_of(tirx.BufferLoad(buffer, [row, q * marks.const(line, q)])),
                tirx.const(written, "int32"), tirx.const(3, "int32"), tirx.const(1, "int32")))
            for buffer, row, written in rows
        ])
        lines = (width + marks.const(line - 1, width)) // marks.const(line, width)
        return tirx.SeqStmt([marks.loop(q, lines, fetch), body])

    return realise


def _realise(mod: Any, config: Mapping[str, Any]) -> Any:
    """The templates' marks realised for the CPU."""
    from .. import hints
    from . import marks

    mod = marks.on_stack(mod)
    mod = marks.attributes(mod, hints.AHEAD, _prefetches(config.get("prefetch", 0)))
    mod = marks.owned(mod, lambda _j, body: body)
    return marks.columns(mod, _vector_steps(config["lanes"]))


def _apply_rows(mod: Any, config: Mapping[str, Any]) -> Any:
    """Marks realised; each ``rows*`` block's loop split into chunks of ``chunk`` rows, run in
    parallel (a ``rows_task*`` block's rows, each already a task's worth, one per task)."""
    from tvm import s_tir

    sch = s_tir.Schedule(_realise(mod, config), enable_check=False)
    if not config["parallel"]:
        return sch.mod
    for gvar in sch.mod.get_global_vars():
        sch.work_on(gvar.name_hint)
        for block in sch.get_child_blocks(sch.get_sblock("root")):
            if not sch.get(block).name_hint.startswith("rows"):
                continue
            (loop,) = sch.get_loops(block)
            if config["chunk"] > 1 and not sch.get(block).name_hint.startswith("rows_task"):
                loop, _ = sch.split(loop, factors=[None, config["chunk"]])
            sch.parallel(loop)
    return sch.mod


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

ROWS_PLAIN = ScheduleSpace(
    name="cpu.rows_plain",
    knobs=tuple(
        Knob("lanes", (1, 4, 8, 16, 32), 1,
             "elements per vector step of column loops (1: a plain loop LLVM vectorizes)")
        if knob.name == "lanes" else knob for knob in ROWS.knobs),
    apply=_apply_rows,
)
"""ROWS with plain column loops unless tuned otherwise."""

ROWS_PREFETCH = ScheduleSpace(
    name="cpu.rows_prefetch",
    knobs=(
        *ROWS.knobs,
        Knob("prefetch", (0, 4, 8, 16), 8,
             "entries ahead whose scattered rows a gather prefetches (0: none)"),
    ),
    apply=_apply_rows,
)
"""ROWS for templates that gather rows at random ids (csr products, lazy optimizer updates)."""
