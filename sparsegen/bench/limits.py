"""The random-row limit of W1-W6: rows of the workload's width at random ids, moved by generated
parallel kernels with ideal prefetch (the rows ``AHEAD`` entries on, every cache line).

``gather`` reads ``src[ids[r]]`` and writes ``out[r]`` (r in order); ``reduce`` sums each
``group`` of gathered rows into one output row, which stays in cache while it is summed, as a
csr·dense row is (``out[i] = sum of src[ids[r]]`` over the group's entries r); ``update`` is the
read-modify-write of the optimizers, ``dst[ids[r]] += s * src[r]``. Their bandwidth counts each
row read or written once and the ids once, as WORKLOADS.md's bytes do; a workload's fraction of
its limit is its effective GB/s over the limit's. A limit runs in the rounds of its workload
(``prepare``), so that both see the same machine: on a shared machine the bandwidth drifts by
tens of percent from minute to minute.
"""

from __future__ import annotations

import dataclasses
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
    false) drawn independently, as the column ids of all a csr's rows are (for ``reduce``,
    sorted within each group, as within a csr row)."""

    kind: str  # "gather", "reduce" or "update"
    rows: int
    touched: int
    width: int = 128
    ordered: bool = True
    group: int = 1  # reduce: gathered rows summed into each output row
    arrays: int = 1  # update: the arrays whose rows at each id are updated (weight and states)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")
        if self.arrays < 1 or (self.arrays > 1 and self.kind != "update"):
            raise ValueError(f"arrays must be 1, or more for an update; got {self.arrays} for "
                             f"a {self.kind}")
        if self.group < 1 or self.touched % self.group:
            raise ValueError(f"group must be a positive divisor of touched ({self.touched}), "
                             f"got {self.group}")

    def bytes_moved(self) -> int:
        """Rows read and written (gather: 2 per id, reduce: 1 per id and 1 per output row,
        update: 1 + 2 per updated array per id) and the int64 ids, once each."""
        row = self.width * 4
        written = self.touched // self.group * row if self.kind == "reduce" else 0
        per_id = {"gather": 2, "reduce": 1, "update": 1 + 2 * self.arrays}[self.kind]
        return self.touched * (per_id * row + 8) + written

    def shrunk(self, factor: int) -> Pattern:
        """The pattern about ``factor`` times smaller (quick runs): at least 64 rows and ids."""
        rows = max(self.rows // factor, 64)
        groups = max(self.touched // factor, 64) // self.group or 1
        touched = min(groups * self.group, rows) if self.ordered else groups * self.group
        return dataclasses.replace(self, rows=rows, touched=touched)

    def describe(self) -> str:
        """The pattern in words."""
        updated = "dst[ids[r]]" if self.arrays == 1 else f"dst_k[ids[r]] (k < {self.arrays})"
        what = {"gather": "out[r] = src[ids[r]]", "update": f"{updated} += s * src[r]",
                "reduce": f"out[i] = sum of src[ids[r]] over {self.group} entries r"}[self.kind]
        order = ("sorted distinct" if self.ordered else "independent, sorted within each group"
                 if self.kind == "reduce" else "independent")
        return (f"{what}: {self.touched:,} rows of {self.width} float32 at random {order} ids "
                f"of {self.rows:,}")


_KINDS = ("gather", "reduce", "update")


PATTERNS: dict[str, Pattern] = {
    "W1": Pattern("gather", 100_000, 50_000),  # the stored rows, half of them kept
    "W2": Pattern("update", 1_000_000, 20_000, arrays=2),  # weight and momentum rows
    "W3": Pattern("update", 1_000_000, 20_000, arrays=3),  # weight, mean and variance rows
    # an rhs row per csr entry, summed into its csr row's output row
    "W4": Pattern("reduce", 1_000_000, 4_096 * 64, ordered=False, group=64),
    "W5": Pattern("gather", 4_096, 206_744, ordered=False),  # rhs rows (2 MB) into W5's rows
    "W6": Pattern("gather", 100_000, 100_000),  # both operands' rows into the union
}
"""Workload id -> the access pattern whose bandwidth is its limit."""


@lru_cache(maxsize=1)
def _kernels() -> Any:
    import tvm
    from tvm.script import tirx as T

    from ..target import host_cpu

    @T.macro
    def prefetch_row(d, written, buffer, *row):
        """Prefetch every cache line of ``buffer[*row]`` (for a write when ``written`` is 1)."""
        for q in T.serial(d // LINE):
            T.evaluate(T.call_llvm_intrin(
                "void", "llvm.prefetch.p0", T.address_of(buffer[(*row, q * LINE)]),
                T.int32(written), T.int32(3), T.int32(1)))

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
                prefetch_row(d, 0, Src, Ids[r + AHEAD])
            for jo in T.serial(d // LINE):
                for ji in T.vectorized(LINE):
                    Out[r, jo * LINE + ji] = Src[Ids[r], jo * LINE + ji]

    @T.prim_func(s_tir=True)
    def reduce(src: T.handle, ids: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True, "global_symbol": "reduce"})
        n = T.int64()
        d = T.int64()
        m = T.int64()
        k = T.int64()
        Src = T.match_buffer(src, (n, d), "float32", align=4)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Out = T.match_buffer(out, (k, d), "float32", align=4)
        for i in T.parallel(k):
            for jo in T.serial(d // LINE):
                for ji in T.vectorized(LINE):
                    Out[i, jo * LINE + ji] = T.float32(0)
            for p in T.serial(m // k):
                r = i * (m // k) + p  # the entry: group i's p-th
                if r + AHEAD < m:
                    prefetch_row(d, 0, Src, Ids[r + AHEAD])
                for jo in T.serial(d // LINE):
                    for ji in T.vectorized(LINE):
                        Out[i, jo * LINE + ji] = (Out[i, jo * LINE + ji]
                                                  + Src[Ids[r], jo * LINE + ji])

    @T.prim_func(s_tir=True)
    def update(dst: T.handle, ids: T.handle, src: T.handle, s: T.float32):
        T.func_attr({"tirx.noalias": True, "global_symbol": "update"})
        t = T.int64()
        n = T.int64()
        d = T.int64()
        m = T.int64()
        Dst = T.match_buffer(dst, (t, n, d), "float32", align=4)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Src = T.match_buffer(src, (m, d), "float32", align=4)
        for r in T.parallel(m):
            if r + AHEAD < m:
                for a in T.serial(t):
                    prefetch_row(d, 1, Dst, a, Ids[r + AHEAD])
            for a in T.serial(t):
                for jo in T.serial(d // LINE):
                    for ji in T.vectorized(LINE):
                        Dst[a, Ids[r], jo * LINE + ji] = (Dst[a, Ids[r], jo * LINE + ji]
                                                          + s * Src[r, jo * LINE + ji])

    mod = tvm.IRModule({"gather": gather, "reduce": reduce, "update": update})
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
            if pattern.kind == "reduce":  # sorted within each group, as a csr row's columns
                ids = np.sort(ids.reshape(-1, pattern.group), axis=1).reshape(-1)
        ids = ids.astype(np.int64)
        planes = (pattern.arrays,) if pattern.kind == "update" else ()  # one per updated array
        big = rng.random((*planes, pattern.rows, pattern.width), dtype=np.float32)
        if pattern.kind == "reduce":  # writes only the group sums
            out = np.empty((pattern.touched // pattern.group, pattern.width), np.float32)
            function, args = ex["reduce"], (big, ids, out)
            function(*args)
            expected = big[ids].reshape(out.shape[0], pattern.group, pattern.width).sum(axis=1)
            np.testing.assert_allclose(out, expected, rtol=1e-5)
            return lambda: function(*args)
        small = rng.random((pattern.touched, pattern.width), dtype=np.float32)
        if pattern.kind == "gather":
            function, args = ex["gather"], (big, ids, small)
            function(*args)
            np.testing.assert_array_equal(small, big[ids])
        else:
            expected = big.copy()
            expected[:, ids] += np.float32(0.5) * small
            function, args = ex["update"], (big, ids, small, 0.5)
            function(*args)
            np.testing.assert_allclose(big, expected, rtol=1e-6)
        return lambda: function(*args)

    return make
