"""The radix phases run on the host's or a device's buffers: sort entries by column, list the
distinct columns (templates/radix.py builds them into each kernel that needs them)."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

from ..cache import Kernel
from ..device import DeviceArray, copy, empty_like, head, item
from ..formats import CSR, INDEX_DTYPE, SCAN_CHUNK, SORT_CHUNK, radix_passes


def _scratch(near: Any, *sizes: int) -> list[Any]:
    """int64 work arrays of ``sizes`` where ``near`` lives. On the host they are cut from one
    allocation: large scratch then gets huge pages (numpy asks for them from 4 MB) instead of a
    page fault per 4 KB on first touch; a device allocates each (kernels take no offset views)."""
    if isinstance(near, DeviceArray):
        return [empty_like(near, (size,), INDEX_DTYPE) for size in sizes]
    bounds = list(accumulate(sizes, initial=0))  # a few sizes: no numpy call for them
    block = np.empty(bounds[-1], INDEX_DTYPE)
    return [block[start:stop] for start, stop in zip(bounds, bounds[1:])]


def table_size(bits: int, used: int, sort_chunk: int = SORT_CHUNK) -> int:
    """The entries of the offset table of a radix pass of ``bits`` bits over ``used`` entries
    (the kernel checks it)."""
    return (1 << bits) * -(-used // sort_chunk) + 1


def pass_table(scratch: Any, bits: int, used: int, sort_chunk: int = SORT_CHUNK) -> Any:
    """The head of ``scratch`` (sized for the widest pass) that a radix pass of ``bits`` bits
    over ``used`` entries takes as its offset table."""
    return head(scratch, table_size(bits, used, sort_chunk))


def sort_by_column(sorter: Kernel, csr: CSR, rhs_ids: Any, used: int,
                   sort_chunk: int = SORT_CHUNK) -> tuple[Any, Any, Any, Any]:
    """Sort by column the ``used`` entries of ``csr`` in every row (``rhs_ids`` None) or in the
    rows ``rhs_ids`` lists, then list the distinct columns (``unique``), on ``sorter``'s index
    phases. Returns the entry positions by column (``src``), each entry's rhs row (``erow``), the
    distinct column ids (a copy) and where each one's run starts in ``src``.

    Radix passes (``radix_passes`` of the column ids' bits) over chunks of ``sort_chunk``
    entries (the templates' chunk: tests build them smaller) run until the column ids' bits are
    covered, each from one pair of buffers into the other."""
    rows = 0 if rhs_ids is None else rhs_ids.size
    passes = radix_passes(max(csr.shape[1] - 1, 0).bit_length())
    table = table_size(max((width for _, width in passes), default=0), used, sort_chunk)
    keys, src, keys_out, src_out, ids, starts, erow, count, runs, sort_table, row_starts = (
        _scratch(csr.indices, used, used, used, used, used, used + 1, csr.indices.size, 1,
                 -(-used // SCAN_CHUNK) + 1, table, rows + 1)
    )
    if rhs_ids is None:  # the first pass (of no bits for one column) lists each entry's row
        first = passes.pop(0) if passes else (0, 0)
        sorter.sort_dense(csr.indices, csr.indptr, keys, src, erow,
                          pass_table(sort_table, first[1], used, sort_chunk), first[1])
    else:
        sorter.gather_rsp(csr.indices, csr.indptr, rhs_ids, row_starts, keys, src, erow)
    for shift, width in passes:
        sorter.sort_pass(keys, src, keys_out, src_out,
                         pass_table(sort_table, width, used, sort_chunk), shift, width)
        keys, src, keys_out, src_out = keys_out, src_out, keys, src
    sorter.unique(keys, ids, starts, count, runs)
    distinct = item(count, 0)
    return src, erow, copy(head(ids, distinct)), head(starts, distinct + 1)
