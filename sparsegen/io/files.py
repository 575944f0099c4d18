"""Text files for the file iterators: reading, MXNet's byte partitions, line boundaries."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import InvalidValue, SparsegenError
from ..formats import INDEX_DTYPE

NEWLINE = 10
CHUNK = 1 << 23
"""Bytes searched for newlines at a time (one reused mask, not one the size of the file)."""


def read_bytes(path: Any, what: str) -> np.ndarray:
    """The bytes of file ``path`` as a uint8 array mapped copy-on-write (the kernels take
    writable arrays; nothing writes it); a missing file raises naming it."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        raise SparsegenError(f"{what}: cannot find the file {path!r}")
    if os.path.getsize(path) == 0:
        return np.zeros(0, np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="c")


def newlines(buf: np.ndarray) -> np.ndarray:
    """The offsets of the newlines in ``buf`` (int64), found a chunk at a time."""
    mask = np.empty(min(CHUNK, buf.size), bool)
    found = [np.zeros(0, INDEX_DTYPE)]
    for start in range(0, buf.size, CHUNK):
        chunk = buf[start : start + CHUNK]
        np.equal(chunk, NEWLINE, out=mask[: chunk.size])
        found.append(np.flatnonzero(mask[: chunk.size]) + start)
    return np.concatenate(found).astype(INDEX_DTYPE, copy=False)


def check_parts(num_parts: Any, part_index: Any) -> tuple[int, int]:
    """``num_parts`` >= 1 and ``0 <= part_index < num_parts`` as ints, else ``InvalidValue``."""
    for name, value in (("num_parts", num_parts), ("part_index", part_index)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InvalidValue(f"{name} must be an integer, got {value!r}")
    if num_parts < 1 or not 0 <= part_index < num_parts:
        raise InvalidValue(f"part_index must be in [0, num_parts), got part_index={part_index} "
                           f"with num_parts={num_parts}")
    return int(num_parts), int(part_index)


def part_lines(buf: np.ndarray, num_parts: int, part_index: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-empty lines of part ``part_index`` of ``num_parts`` of ``buf``: their begin and
    end offsets (end at the newline) and 1-based line numbers in the file.

    Parts are MXNet's (dmlc's): byte ranges of ``ceil(size / num_parts)`` bytes, each begun
    after the first newline at or after its offset (part 0 at byte 0)."""
    ends = newlines(buf)
    step = -(-buf.size // num_parts)

    def start(part: int) -> int:
        if part == 0:
            return 0
        offset = min(step * part, buf.size)
        at = int(np.searchsorted(ends, offset))
        return int(ends[at]) + 1 if at < ends.size else buf.size

    lo, hi = start(part_index), start(part_index + 1) if part_index + 1 < num_parts else buf.size
    first, last = np.searchsorted(ends, lo), np.searchsorted(ends, hi)
    inner = ends[first:last]
    begin = np.concatenate(([lo], inner + 1)).astype(INDEX_DTYPE)
    end = np.concatenate((inner, [hi])).astype(INDEX_DTYPE)
    number = np.arange(first + 1, first + 2 + inner.size, dtype=INDEX_DTYPE)
    keep = begin < end
    if not keep.all():
        begin, end, number = begin[keep], end[keep], number[keep]
    return begin, end, number


def line_text(buf: np.ndarray, begin: int, end: int, limit: int = 80) -> str:
    """Line ``buf[begin:end]`` as text for an error message (cut at ``limit`` characters)."""
    text = bytes(buf[begin : min(end, begin + limit)]).decode("utf-8", "replace").rstrip("\r")
    return text + ("..." if end - begin > limit else "")
