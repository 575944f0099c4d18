"""Op templates: what each kernel computes, as TVMScript PrimFuncs over symbolic shapes.

Conventions every template follows, so that any schedule can be applied without knowing the op:
- a template is a function of dtype strings returning ``{function name: PrimFunc}``;
- shapes are symbolic ``int64`` variables, indices are ``int64``;
- a block named ``rows*`` is independent across the iterations of its outer loop (safe to run in
  parallel); any other block must stay serial;
- column loops of a ``rows*`` block, owned column writes and gather hints go through
  templates/columns.py (never in other blocks), which leaves marks (sparsegen/hints.py) that
  each target's schedule realises (vector steps, threads per row, prefetches);
- a template knows no target: no vector width, thread count, prefetch distance, intrinsic or
  thread binding is written here.
"""

import numpy as np


def element_bytes(dtype: str) -> int:
    """The alignment buffers declare (``align=``): one element, not TVM's default 64 bytes.

    numpy guarantees 16-byte alignment at best, and on a 64-byte promise LLVM vectorizes with
    aligned moves that fault on numpy buffers.
    """
    return np.dtype(dtype).itemsize
