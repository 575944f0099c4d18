"""Column loops of row blocks: the one place that decides which thread touches which column.

A template writes the work on one column ``j`` of a row as a macro ``body(*args, j)`` and runs
it with ``cols.each(width, body, *args)``; a write to a column found at run time (a scatter into
the row) goes through ``cols.owned(j, body, *args)``. Two forms:

- CPU (``row_threads=None``, LLVM targets): ``width // lanes`` steps of ``T.vectorized(lanes)``
  plus a scalar tail, as every template wrote them before (a plain loop for ``lanes == 1``);
  ``owned`` runs the body.
- GPU (``row_threads >= 1``, CUDA): ``row_threads`` threads share a row. Thread ``t`` takes the
  ``lanes``-element groups ``g = jo * row_threads + t``, so neighbouring threads touch
  neighbouring elements (coalesced); with ``row_threads > 1`` the thread loop is bound to
  ``threadIdx.x`` (the CUDA schedule then puts rows on ``threadIdx.y`` / ``blockIdx.x``).
  Columns beyond ``width`` are skipped. Groups are vector steps only when ``width % lanes == 0``
  (CUDA vector types need aligned addresses; other widths take the same groups as scalars).
  ``owned`` runs the body in the thread whose group holds column ``j``, so every element of a
  row has one owner thread across all of a block's column loops: no races, no barriers.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tvm.script import tirx as T


class Columns(NamedTuple):
    """The column-loop macros of one (``lanes``, ``row_threads``) choice."""

    each: Any  # each(width, body, *args): body(*args, j) for this thread's columns j < width
    owned: Any  # owned(j, body, *args): body(*args) in the thread that owns column j


def columns(lanes: int = 1, row_threads: int | None = None) -> Columns:
    """The column loops for ``lanes`` elements per step and ``row_threads`` threads per row
    (``None``: the CPU form)."""
    if row_threads is None:
        return Columns(_cpu_each(lanes), _run)
    if row_threads == 1:
        return Columns(_gpu_each(lanes, 1), _run)
    return Columns(_gpu_each(lanes, row_threads), _gpu_owned(lanes, row_threads))


@T.macro
def _run(j, body, *args):
    body(*args)


def _cpu_each(lanes: int) -> Any:
    """``width // lanes`` vector steps plus a scalar tail, or a plain loop for one lane."""

    @T.macro
    def each_scalar(width, body, *args):
        for j in T.serial(width):
            body(*args, j)

    @T.macro
    def each_vector(width, body, *args):
        for jo in T.serial(width // lanes):
            for ji in T.vectorized(lanes):
                body(*args, jo * lanes + ji)
        for jt in T.serial(width % lanes):
            body(*args, width - width % lanes + jt)

    return each_scalar if lanes == 1 else each_vector


def _gpu_each(lanes: int, row_threads: int) -> Any:
    """Thread ``t`` of ``row_threads`` takes element groups ``t, t + row_threads, ...``."""
    step = lanes * row_threads

    @T.macro
    def strided(width, t, body, *args):
        for jo in T.serial((width + step - 1) // step):
            if width % lanes == 0:
                if (jo * row_threads + t) * lanes < width:
                    for ji in T.vectorized(lanes):
                        body(*args, (jo * row_threads + t) * lanes + ji)
            else:
                for jt in T.serial(lanes):
                    if (jo * row_threads + t) * lanes + jt < width:
                        body(*args, (jo * row_threads + t) * lanes + jt)

    @T.macro
    def each_thread(width, body, *args):
        strided(width, 0, body, *args)

    @T.macro
    def each_shared(width, body, *args):
        for t in T.thread_binding(row_threads, thread="threadIdx.x"):
            strided(width, t, body, *args)

    return each_thread if row_threads == 1 else each_shared


def _gpu_owned(lanes: int, row_threads: int) -> Any:
    """The body guarded to the thread of ``row_threads`` whose element group holds ``j``."""

    @T.macro
    def owned(j, body, *args):
        for t in T.thread_binding(row_threads, thread="threadIdx.x"):
            if T.Cast("int64", j) // lanes % row_threads == T.Cast("int64", t):
                body(*args)

    return owned
