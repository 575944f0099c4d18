"""Op templates: what each kernel computes, as TVMScript PrimFuncs over symbolic shapes.

Conventions every template follows, so that any schedule can be applied without knowing the op:
- a template is a function of dtype strings returning ``{function name: PrimFunc}``;
- shapes are symbolic ``int64`` variables, indices are ``int64``;
- a block named ``rows*`` is independent across the iterations of its outer loop (safe to run in
  parallel); any other block must stay serial;
- column loops of a ``rows*`` block go through templates/columns.py (never in other blocks):
  on the CPU ``d // lanes`` steps of ``T.vectorized(lanes)`` plus a scalar tail (LLVM does not
  vectorize these loops on its own; see schedules/cpu.py), on a GPU ``row_threads`` threads per
  row. ``lanes`` and ``row_threads`` are keyword parameters that the compiler fills from the
  schedule config; ``row_threads`` defaults to ``None``, the CPU form.
"""

import numpy as np


def element_bytes(dtype: str) -> int:
    """The alignment buffers declare (``align=``): one element, not TVM's default 64 bytes.

    numpy guarantees 16-byte alignment at best, and on a 64-byte promise LLVM vectorizes with
    aligned moves that fault on numpy buffers.
    """
    return np.dtype(dtype).itemsize
