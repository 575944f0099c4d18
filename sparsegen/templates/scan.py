"""Blocked prefix sums: the one scan every index phase uses, parallel on both targets.

``offsets(buf, n)`` turns ``buf[1 : n + 1]`` (counts) into ``buf[0 : n + 1]`` (offsets: ``buf[0]
= 0``, ``buf[i + 1]`` the sum of the first ``i + 1`` counts), in place, in three blocks over
chunks of ``SCAN_CHUNK`` counts:

- ``rows_scan_local``: each chunk becomes its own inclusive prefix sum (chunks in parallel);
- ``scan_carry``: one serial pass over the chunks' last elements carries the totals forward
  (``n / SCAN_CHUNK`` steps), and writes ``buf[0]``;
- ``rows_scan_add``: every chunk but the first adds the previous chunk's last element (final
  after ``scan_carry``) to each of its elements but its own last (chunks in parallel).

No temporary buffer. On a GPU the ``rows*`` blocks are a thread per chunk and ``scan_carry`` a
one-thread kernel over the chunk totals; on the CPU the chunks are spread over the thread pool.
"""

from __future__ import annotations

from tvm.script import tirx as T

from ..formats import SCAN_CHUNK


@T.macro
def offsets(buf, n):
    """``buf[1 : n + 1]`` counts -> ``buf[0 : n + 1]`` offsets, in place (three blocks)."""
    for c in T.serial((n + SCAN_CHUNK - 1) // SCAN_CHUNK):
        with T.sblock("rows_scan_local"):
            vc = T.axis.spatial((n + SCAN_CHUNK - 1) // SCAN_CHUNK, c)
            T.reads(buf[vc * SCAN_CHUNK + 1 : T.min(vc * SCAN_CHUNK + SCAN_CHUNK, n) + 1])
            T.writes(buf[vc * SCAN_CHUNK + 2 : T.min(vc * SCAN_CHUNK + SCAN_CHUNK, n) + 1])
            for t in T.serial(T.min(SCAN_CHUNK, n - vc * SCAN_CHUNK) - 1):
                buf[vc * SCAN_CHUNK + t + 2] = (
                    buf[vc * SCAN_CHUNK + t + 2] + buf[vc * SCAN_CHUNK + t + 1]
                )
    with T.sblock("scan_carry"):
        T.reads(buf[0 : n + 1])
        T.writes(buf[0 : n + 1])
        buf[0] = T.int64(0)
        for c in T.serial(1, (n + SCAN_CHUNK - 1) // SCAN_CHUNK):
            buf[T.min(c * SCAN_CHUNK + SCAN_CHUNK, n)] = (
                buf[T.min(c * SCAN_CHUNK + SCAN_CHUNK, n)] + buf[c * SCAN_CHUNK]
            )
    for c in T.serial((n + SCAN_CHUNK - 1) // SCAN_CHUNK):
        with T.sblock("rows_scan_add"):
            vc = T.axis.spatial((n + SCAN_CHUNK - 1) // SCAN_CHUNK, c)
            T.reads(buf[vc * SCAN_CHUNK : T.min(vc * SCAN_CHUNK + SCAN_CHUNK, n)])
            T.writes(buf[vc * SCAN_CHUNK + 1 : T.min(vc * SCAN_CHUNK + SCAN_CHUNK, n)])
            if vc > 0:
                for t in T.serial(T.min(SCAN_CHUNK, n - vc * SCAN_CHUNK) - 1):
                    buf[vc * SCAN_CHUNK + t + 1] = (
                        buf[vc * SCAN_CHUNK + t + 1] + buf[vc * SCAN_CHUNK]
                    )
