"""The random-row limit of W1-W6: rows of the workload's width at random ids, moved by generated
parallel kernels with ideal prefetch (the rows ``AHEAD`` entries on, every cache line).

``gather`` reads ``src[ids[r]]`` and writes ``out[r]`` (r in order); ``update`` is the
read-modify-write of the optimizers, ``dst[ids[r]] += s * src[r]``. Their bandwidth counts each
row read or written once and the ids once, as WORKLOADS.md's bytes do; a workload's fraction of
its limit is its effective GB/s over the limit's. A limit runs in the rounds of its workload
(``prepare``), so that both see the same machine: on a shared machine the bandwidth drifts by
tens of percent from minute to minute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

AHEAD = 8
"""Entries ahead whose rows the limit kernels prefetch."""

LINE = 16
"""float32 elements per 64-byte cache line."""


@dataclass(frozen=True)
class Pattern:
    """A random-row access pattern: ``touched`` rows of ``width`` float32 at random ids of a
    ``rows`` x ``width`` array: distinct and sorted as row_sparse ids are, or (``ordered``
    false) drawn independently, as the column ids of all a csr's rows are."""

    kind: str  # "gather" or "update"
    rows: int
    touched: int
    width: int = 128
    ordered: bool = True

    def bytes_moved(self) -> int:
        """Rows read and written (gather: 2 per id, update: 3) and the int64 ids, once each."""
        per_row = (2 if self.kind == "gather" else 3) * self.width * 4
        return self.touched * (per_row + 8)

    def describe(self) -> str:
        """The pattern in words."""
        what = ("out[r] = src[ids[r]]" if self.kind == "gather"
                else "dst[ids[r]] += s * src[r]")
        order = "sorted distinct" if self.ordered else "independent"
        return (f"{what}: {self.touched:,} rows of {self.width} float32 at random {order} ids "
                f"of {self.rows:,}")


PATTERNS: dict[str, Pattern] = {
    "W1": Pattern("gather", 100_000, 50_000),  # the stored rows, half of them kept
    "W2": Pattern("update", 1_000_000, 20_000),
    "W3": Pattern("update", 1_000_000, 20_000),
    "W4": Pattern("gather", 1_000_000, 4_096 * 64, ordered=False),  # an rhs row per csr entry
    "W5": Pattern("gather", 4_096, 206_744, ordered=False),  # rhs rows (2 MB) into W5's rows
    "W6": Pattern("gather", 100_000, 100_000),  # both operands' rows into the union
}
"""Workload id -> the access pattern whose bandwidth is its limit."""


@lru_cache(maxsize=1)
def _kernels() -> Any:
    import tvm
    from tvm.script import tirx as T

    from ..target import host_cpu

    @T.prim_func(s_tir=True)
    def gather(src: T.handle, ids: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True, "global_symbol": "gather"})
        n = T.int64()
        d = T.int64()
        m = T.int64()
        Src = T.match_buffer(src, (n, d), "float32", align=4)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Out = T.match_buffer(out, (m, d), "float32", align=4)
        for r in T.parallel(m):
            if r + AHEAD < m:
                for q in T.serial(d // LINE):
                    T.evaluate(T.call_llvm_intrin(
                        "void", "llvm.prefetch.p0", T.address_of(Src[Ids[r + AHEAD], q * LINE]),
                        T.int32(0), T.int32(3), T.int32(1)))
            for jo in T.serial(d // LINE):
                for ji in T.vectorized(LINE):
                    Out[r, jo * LINE + ji] = Src[Ids[r], jo * LINE + ji]

    @T.prim_func(s_tir=True)
    def update(dst: T.handle, ids: T.handle, src: T.handle, s: T.float32):
        T.func_attr({"tirx.noalias": True, "global_symbol": "update"})
        n = T.int64()
        d = T.int64()
        m = T.int64()
        Dst = T.match_buffer(dst, (n, d), "float32", align=4)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Src = T.match_buffer(src, (m, d), "float32", align=4)
        for r in T.parallel(m):
            if r + AHEAD < m:
                for q in T.serial(d // LINE):
                    T.evaluate(T.call_llvm_intrin(
                        "void", "llvm.prefetch.p0", T.address_of(Dst[Ids[r + AHEAD], q * LINE]),
                        T.int32(1), T.int32(3), T.int32(1)))
            for jo in T.serial(d // LINE):
                for ji in T.vectorized(LINE):
                    Dst[Ids[r], jo * LINE + ji] = (Dst[Ids[r], jo * LINE + ji]
                                                   + s * Src[r, jo * LINE + ji])

    mod = tvm.IRModule({"gather": gather, "update": update})
    return tvm.compile(mod, host_cpu().to_tvm())


def prepare(pattern: Pattern, seed: int = 11) -> Callable[[], Callable[[], Any]]:
    """The limit of one pattern as a harness implementation: a function that makes the arrays
    (numpy's, as the workloads' are), checks the kernel against numpy once and returns the call
    to time, so that the limit runs in the same interleaved rounds as the workload."""

    def make() -> Callable[[], Any]:
        ex = _kernels()
        rng = np.random.default_rng(seed)
        if pattern.ordered:
            ids = np.sort(rng.choice(pattern.rows, pattern.touched, replace=False))
        else:
            ids = rng.integers(0, pattern.rows, pattern.touched)
        ids = ids.astype(np.int64)
        big = rng.random((pattern.rows, pattern.width), dtype=np.float32)
        small = rng.random((pattern.touched, pattern.width), dtype=np.float32)
        if pattern.kind == "gather":
            function, args = ex["gather"], (big, ids, small)
            function(*args)
            np.testing.assert_array_equal(small, big[ids])
        else:
            expected = big.copy()
            expected[ids] += np.float32(0.5) * small
            function, args = ex["update"], (big, ids, small, 0.5)
            function(*args)
            np.testing.assert_allclose(big, expected, rtol=1e-6)
        return lambda: function(*args)

    return make
