"""Row ranges of a row_sparse key over the workers (worker ``r`` owns rows ``[bounds[r],
bounds[r + 1])``, as MXNet splits a key over its servers) and the split of sorted row ids by
owner: metadata the exchanges are planned with (sizes and offsets, never values)."""

from __future__ import annotations

import numpy as np


def bounds(rows: int, workers: int) -> list[int]:
    """The first row of each worker's range, and ``rows`` last: ranges of ``rows // workers``
    or one more rows, the longer ones first."""
    return [rows * r // workers for r in range(workers + 1)]


def counts(ids: np.ndarray, edges: list[int]) -> list[int]:
    """How many of the sorted ``ids`` fall in each worker's range (``edges`` from
    ``bounds``)."""
    cuts = np.searchsorted(ids, np.asarray(edges[1:-1], dtype=ids.dtype), side="left")
    positions = [0, *(int(c) for c in cuts), int(ids.size)]
    return [b - a for a, b in zip(positions[:-1], positions[1:])]


def offsets(sizes: list[int]) -> list[int]:
    """Where each of consecutive chunks of ``sizes`` starts, and their total last."""
    return [0, *np.cumsum(sizes, dtype=np.int64).tolist()] if sizes else [0]
