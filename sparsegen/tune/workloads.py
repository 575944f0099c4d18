"""Representative inputs for tuning each kernel, one workload per size bucket.

A workload is a list of ``(function, args)`` calls of one kernel's functions on numpy arrays:
the tuner times each call and sums them. Sizes follow the buckets of
``tuning_records.size_bucket``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..registry import KERNELS
from ..update_rules.language import UpdateRule

Calls = list[tuple[str, tuple[Any, ...]]]

ROWS = {"small": 16, "medium": 4096, "large": 131072}
"""Rows per bucket; with 128 columns these touch about 2 K, 512 K and 16 M elements."""
COLS = 128


@dataclass(frozen=True)
class TuningWorkload:
    """Inputs for one kernel in one bucket, described for the tuning record."""

    name: str
    bucket: str
    shape: tuple[int, ...]
    calls: Calls

    def describe(self) -> dict[str, Any]:
        """The record's ``workload`` field."""
        return {"name": self.name, "bucket": self.bucket, "shape": list(self.shape)}


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return (rng.random(shape) * 8).astype(dtype)


def _rows_with_zeros(rng: np.random.Generator, n: int, dtype: str, stored: float) -> np.ndarray:
    x = _values(rng, (n, COLS), dtype)
    x[rng.random(n) >= stored] = 0
    return x


def _cast_dense_rsp(dtype: str, n: int, rng: np.random.Generator) -> Calls:
    x = _rows_with_zeros(rng, n, dtype, 0.1)
    pos = np.empty(n + 1, np.int64)
    pos[1:] = np.cumsum(x.any(axis=1))
    pos[0] = 0
    k = int(pos[-1])
    return [("mark", (x, np.empty(n + 1, np.int64))),
            ("fill", (x, pos, np.empty((k, COLS), dtype), np.empty(k, np.int64)))]


def _cast_rsp_dense(dtype: str, n: int, rng: np.random.Generator) -> Calls:
    idx = np.sort(rng.choice(n, max(1, n // 10), replace=False)).astype(np.int64)
    return [("scatter", (_values(rng, (idx.size, COLS), dtype), idx, np.empty((n, COLS), dtype)))]


def _cast_dense_csr(dtype: str, n: int, rng: np.random.Generator) -> Calls:
    x = _values(rng, (n, COLS), dtype)
    x[rng.random(x.shape) >= 0.05] = 0
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum((x != 0).sum(axis=1))
    nnz = int(indptr[-1])
    return [("count", (x, np.empty(n + 1, np.int64))),
            ("fill", (x, indptr, np.empty(nnz, dtype), np.empty(nnz, np.int64)))]


def _cast_csr_dense(dtype: str, n: int, rng: np.random.Generator) -> Calls:
    mask = rng.random((n, COLS)) < 0.05
    indptr = np.zeros(n + 1, np.int64)
    indptr[1:] = np.cumsum(mask.sum(axis=1))
    indices = np.nonzero(mask)[1].astype(np.int64)
    return [("scatter", (_values(rng, (indices.size,), dtype), indices, indptr,
                         np.empty((n, COLS), dtype)))]


def _retain(dtype: str, n: int, rng: np.random.Generator) -> Calls:
    universe = 10 * n
    stored = np.sort(rng.choice(universe, n, replace=False)).astype(np.int64)
    req = np.sort(rng.choice(universe, max(1, n // 2), replace=False)).astype(np.int64)
    return [("gather", (_values(rng, (n, COLS), dtype), stored, req,
                        np.empty((req.size, COLS), dtype)))]


def _dot_csr_dense(dtype: str, n: int, rng: np.random.Generator) -> Calls:
    inner, per_row = 16 * n, 64
    indices = np.sort(rng.integers(0, inner, (n, per_row)), axis=1).astype(np.int64).ravel()
    indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int64)
    return [("matmul", (_values(rng, (indices.size,), dtype), indices, indptr,
                        _values(rng, (inner, COLS), dtype), np.empty((n, COLS), dtype)))]


def _ew_rsp_add(dtype: str, n: int, rng: np.random.Generator) -> Calls:
    k = max(1, n // 2)
    src = np.sort(rng.choice(n, k, replace=False)).astype(np.int64)
    return [("fill_add", (_values(rng, (n, COLS), dtype), _values(rng, (n, COLS), dtype), src, src,
                          np.empty((k, COLS), dtype)))]


MAKERS: dict[str, Callable[[str, int, np.random.Generator], Calls]] = {
    "dot_csr_dense": _dot_csr_dense,
    "ew_rsp": _ew_rsp_add,
    "cast_dense_rsp": _cast_dense_rsp,
    "cast_rsp_dense": _cast_rsp_dense,
    "cast_dense_csr": _cast_dense_csr,
    "cast_csr_dense": _cast_csr_dense,
    "retain": _retain,
}
"""Kernel name -> inputs for ``rows`` rows of ``COLS`` columns of a dtype."""


def elements(bucket: str) -> int:
    """The number of elements a workload of ``bucket`` touches (rows x columns)."""
    return ROWS[bucket] * COLS


def _rule(rule: UpdateRule) -> Callable[[str, int, np.random.Generator], Calls]:
    """The update of any update rule's kernel ``optim_<name>`` (a built-in's or a user's): its
    ``lazy`` function on ``n // 8`` random rows (or ``dense``), every hyper-parameter 0.5."""

    def make(dtype: str, n: int, rng: np.random.Generator) -> Calls:
        arrays = [_values(rng, (n, COLS), dtype) for _ in range(1 + len(rule.states))]
        arrays += [_values(rng, (n,), dtype) for _ in rule.row_states]
        hyper = rule.arguments({name: 0.5 for name in rule.hyper})
        if "lazy" not in rule.functions:
            return [("dense", (arrays[0], _values(rng, (n, COLS), dtype), *arrays[1:], *hyper))]
        ids = np.sort(rng.choice(n, max(1, n // 8), replace=False)).astype(np.int64)
        grad = _values(rng, (ids.size, COLS), dtype)
        return [("lazy", (arrays[0], grad, ids, *arrays[1:], *hyper))]

    return make


def has_workload(kernel: str) -> bool:
    """Whether ``kernel`` has tuning inputs: one of ``MAKERS``, or any update rule's kernel."""
    return kernel in MAKERS or kernel in KERNELS and KERNELS[kernel].rule is not None


def workload(kernel: str, dtypes: tuple[str, ...], bucket: str, seed: int = 0) -> TuningWorkload:
    """The tuning inputs of ``kernel`` for ``dtypes`` in ``bucket`` (any update rule's kernel
    ``optim_<name>`` has one)."""
    n = ROWS[bucket]
    if not has_workload(kernel):
        raise KeyError(kernel)
    maker = MAKERS.get(kernel) or _rule(KERNELS[kernel].rule)
    calls = maker(dtypes[0], n, np.random.default_rng(seed))
    return TuningWorkload(f"{kernel}-{n}x{COLS}", bucket, (n, COLS), calls)
