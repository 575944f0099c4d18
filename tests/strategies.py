"""Hypothesis strategies for dense arrays with controlled row and element density."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conftest import DTYPES


@st.composite
def sparse_dense_arrays(draw, ndim: int | None = None, max_rows: int = 40, max_cols: int = 9,
                        dtypes=DTYPES) -> np.ndarray:
    """A dense array whose rows are zero with a drawn probability (0 to 1), of a drawn dtype.

    Row counts are mostly small, sometimes large enough that calls run the parallel builds."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    ndim = ndim or draw(st.sampled_from((1, 2, 2, 2, 3)))
    # mostly small, sometimes big enough (> serial_below elements) to run the parallel builds
    rows = draw(st.one_of(st.integers(0, max_rows), st.sampled_from((700, 4099))))
    trailing = tuple(draw(st.lists(st.integers(0 if ndim == 2 else 1, max_cols), min_size=ndim - 1,
                                   max_size=ndim - 1)))
    row_density = draw(st.sampled_from((0.0, 0.1, 0.5, 1.0)))
    elem_density = draw(st.sampled_from((0.2, 0.7, 1.0)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shape = (rows, *trailing)
    values = rng.integers(1, 100, size=shape).astype(dtype)
    if dtype.kind == "f":
        values = (values / 7).astype(dtype)
    mask = rng.random(shape) < elem_density
    mask &= (rng.random(rows) < row_density).reshape((rows,) + (1,) * (ndim - 1))
    return np.where(mask, values, np.zeros((), dtype)).astype(dtype)


MERGE_STEPS = 1024  # sparsegen.templates.elemwise.merge.MERGE_STEPS: steps per merge task
MERGE_SIZES = (0, 1, 7, MERGE_STEPS - 1, MERGE_STEPS, MERGE_STEPS + 1, 3 * MERGE_STEPS + 5)
"""List lengths around a merge walk's task edges: none, one, a task's steps - 1 / + 0 / + 1,
several tasks (retain's gather_merge, dot's locate)."""
