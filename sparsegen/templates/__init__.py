"""Op templates: what each kernel computes, as TVMScript PrimFuncs over symbolic shapes.

Conventions every template follows, so that any schedule can be applied without knowing the op:
- a template is a function of dtype strings returning ``{function name: PrimFunc}``;
- shapes are symbolic ``int64`` variables, indices are ``int64``;
- a block named ``rows*`` is independent across the iterations of its outer loop (safe to run in
  parallel); any other block must stay serial;
- column loops are written as ``d // lanes`` steps of ``T.vectorized(lanes)`` plus a scalar tail,
  with ``lanes`` a keyword parameter that the compiler fills from the schedule config (LLVM does
  not vectorize these loops on its own; see schedules/cpu.py).
"""

import numpy as np


def element_bytes(dtype: str) -> int:
    """The alignment buffers declare (``align=``): one element, not TVM's default 64 bytes.

    numpy guarantees 16-byte alignment at best, and on a 64-byte promise LLVM vectorizes with
    aligned moves that fault on numpy buffers.
    """
    return np.dtype(dtype).itemsize
