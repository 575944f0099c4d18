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

SCAN_CHUNK = 1024
"""Elements per chunk of the blocked prefix sums (templates/scan.py) and of ``unique``: chunks are
scanned in parallel, then a serial pass carries ``n / SCAN_CHUNK`` chunk totals. Kept here, free of
TVM, so the ops can size per-chunk scratch without importing the compiler."""

RADIX_BITS = 8
"""Key bits sorted per pass of the radix sort by column (templates/dot.py): 256 buckets."""

SORT_CHUNK = 4096
"""Entries per chunk of a radix sort pass: each chunk counts its digits into a (buckets x
chunks) table, and scatters its entries from there, chunks in parallel. The table has one
entry per 16 entries sorted (``2**RADIX_BITS / SORT_CHUNK``); on a GPU 10M entries are 2,442
threads."""


def element_bytes(dtype: str) -> int:
    """The alignment buffers declare (``align=``): one element, not TVM's default 64 bytes.

    numpy guarantees 16-byte alignment at best, and on a 64-byte promise LLVM vectorizes with
    aligned moves that fault on numpy buffers.
    """
    return np.dtype(dtype).itemsize
