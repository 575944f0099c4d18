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

from ..templates.optim_families import RULES

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


def _optimizer(states: int, hyper: tuple[float, ...]) -> Callable[[str, int, np.random.Generator], Calls]:
    """A lazy update of ``n // 8`` random rows of an ``n``-row weight with ``states`` states."""

    def make(dtype: str, n: int, rng: np.random.Generator) -> Calls:
        ids = np.sort(rng.choice(n, max(1, n // 8), replace=False)).astype(np.int64)
        arrays = [_values(rng, (n, COLS), dtype) for _ in range(1 + states)]
        grad = _values(rng, (ids.size, COLS), dtype)
        return [("lazy", (arrays[0], grad, ids, *arrays[1:], *hyper))]

    return make


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
    "optim_sgd": _optimizer(0, (0.1, 1e-4, 1.0, -1.0)),
    "optim_sgd_mom": _optimizer(1, (0.1, 0.9, 1e-4, 1.0, -1.0)),
    "optim_adam": _optimizer(2, (0.01, 0.9, 0.999, 1e-8, 1e-4, 1.0, -1.0)),
    "optim_adagrad": _optimizer(1, (0.1, 1e-7, 0.0, 1.0, -1.0)),
    "optim_ftrl": _optimizer(2, (0.1, 0.01, 1.0, 1e-4, 1.0, -1.0)),
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


def _rule(name: str) -> Callable[[str, int, np.random.Generator], Calls]:
    """The update of any update rule ``optim_<name>`` (a user's too): its ``lazy`` function on
    ``n // 8`` random rows (or ``dense``), every hyper-parameter 0.5."""
    rule = RULES[name]

    def make(dtype: str, n: int, rng: np.random.Generator) -> Calls:
        arrays = [_values(rng, (n, COLS), dtype) for _ in range(1 + len(rule.states))]
        arrays += [_values(rng, (n,), dtype) for _ in rule.row_states]
        hyper = (0.5,) * len(rule.hyper)
        if "lazy" not in rule.functions:
            return [("dense", (arrays[0], _values(rng, (n, COLS), dtype), *arrays[1:], *hyper))]
        ids = np.sort(rng.choice(n, max(1, n // 8), replace=False)).astype(np.int64)
        grad = _values(rng, (ids.size, COLS), dtype)
        return [("lazy", (arrays[0], grad, ids, *arrays[1:], *hyper))]

    return make


def workload(kernel: str, dtypes: tuple[str, ...], bucket: str, seed: int = 0) -> TuningWorkload:
    """The tuning inputs of ``kernel`` for ``dtypes`` in ``bucket`` (any update rule's kernel
    ``optim_<name>`` has one)."""
    n = ROWS[bucket]
    maker = MAKERS.get(kernel)
    if maker is None and kernel.startswith("optim_") and kernel[len("optim_"):] in RULES:
        maker = _rule(kernel[len("optim_"):])
    if maker is None:
        raise KeyError(kernel)
    calls = maker(dtypes[0], n, np.random.default_rng(seed))
    return TuningWorkload(f"{kernel}-{n}x{COLS}", bucket, (n, COLS), calls)
