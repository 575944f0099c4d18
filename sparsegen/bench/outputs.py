"""Results of the implementations as numpy arrays, and their checks, outside the timed calls.

A timed call returns what its library returns (an NDArray, a torch tensor, numpy arrays): the
copy of a result to numpy is not part of any workload, so it happens here, before timing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import sparsegen as mx


def dense(result: Any) -> np.ndarray:
    """A dense NDArray, torch tensor or numpy array as a numpy array."""
    if isinstance(result, mx.nd.NDArray):
        return result.asnumpy()
    return result.numpy() if hasattr(result, "numpy") else np.asarray(result)


def rows(result: Any) -> tuple[np.ndarray, np.ndarray]:
    """(row ids, rows) of a row_sparse NDArray, a coalesced torch COO tensor or an (ids, rows)
    pair of numpy / torch arrays."""
    if isinstance(result, mx.nd.NDArray):
        return result.indices.asnumpy(), result.data.asnumpy()
    if isinstance(result, tuple):
        return dense(result[0]), dense(result[1])
    return result.indices()[0].numpy(), result.values().numpy()


def check_dense(expected: Any, got: Any) -> None:
    """Dense results agree to 1e-4 (sums in another order)."""
    np.testing.assert_allclose(dense(got), dense(expected), rtol=1e-4, atol=1e-4)


def rows_checker(tolerance: float) -> Any:
    """A check that the row ids are equal and the rows agree to ``tolerance`` (0: exactly)."""

    def check(expected: Any, got: Any) -> None:
        (ids_e, rows_e), (ids_g, rows_g) = rows(expected), rows(got)
        np.testing.assert_array_equal(ids_g, ids_e)
        np.testing.assert_allclose(rows_g, rows_e, rtol=tolerance, atol=tolerance)

    return check
