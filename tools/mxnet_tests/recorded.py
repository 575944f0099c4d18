"""What MXNet printed against what sparsegen prints: the runners of MXNet's tutorials and example
programs record MXNet's output several times, with ``mx.random`` seeded differently each time,
and compare sparsegen's with it.

Python's and numpy's generators are seeded alike in every run (sparsegen's ``test_utils`` draws
its data from numpy as MXNet's does, so data drawn there is the same on both); ``mx.random``
(MXNet's own generator: initial weights, ``mx.nd.random``) is seeded with ``SEED + run`` in run
number ``run`` (0, 1, ...), and so is every seed the program gives ``mx.random.seed``. Output
that MXNet prints the same in every run is *exact*: sparsegen must print the same words and the
same numbers (within float32 rounding). Output that changes is *random*: the same words, and each
number that changes but by at most ``STABLE`` of itself (a loss, an accuracy) must lie in MXNet's
range widened on either side by twice its span or ``STAT_RTOL`` of it, whichever is more; numbers
that vary more, or not at all (draws, which may coincide), are not compared there.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import random
import re
from typing import Any, Iterator, Sequence

import numpy as np

SEED = 1
RUNS = 3
"""MXNet's side is recorded this many times by default (``mx.random`` shifted by the run's
number); sparsegen's side runs as the first."""
STABLE = 0.1
"""A random number is compared when MXNet's runs differ by at most this fraction of it."""
STAT_RTOL = 1e-3
"""The least widening of a statistic's range: float32 training in another summation order."""
RTOL, ATOL = 1e-4, 1e-6
"""How close an exact number must be: float32 values printed by numpy (8 digits) after sums in
another order."""
_UNCOMPARED = re.compile(r"0x[0-9a-fA-F]+|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?"
                         r"|(?<=Speed: )[\d.]+|(?<=Time cost=)[\d.]+")
"""Text never compared: addresses, log timestamps, and the speeds and times MXNet's
``Speedometer`` and ``fit`` log."""
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")
_WORD = re.compile(r"[A-Za-z_]+")
NUMPY_1X = {"product": "prod", "cumproduct": "cumprod", "sometrue": "any", "alltrue": "all",
            "NaN": "nan", "Inf": "inf", "float_": "float64", "bool8": "bool_"}
"""numpy 1.x spellings that numpy 2 removed and MXNet-era code uses (numpy's own aliases)."""


def numpy_1x() -> None:
    """Let code written for numpy 1.x (as MXNet 1.9.1's is) run and print as it did there: the
    removed aliases of ``NUMPY_1X`` restored, scalars printed as ``1.0``, not
    ``np.float64(1.0)``."""
    if int(np.__version__.split(".")[0]) < 2:
        return
    np.set_printoptions(legacy="1.25")
    for old, new in NUMPY_1X.items():
        if not hasattr(np, old):
            setattr(np, old, getattr(np, new))


def heading(title: str) -> str:
    """A status file's first line: ``title``, the time (UTC) and the CPU it ran on."""
    from sparsegen.bench.harness import cpu_description

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"# {title} ({stamp}, {cpu_description()})\n\n"


def report(title: str, table: list[str], status: Any) -> None:
    """Print ``table`` (markdown lines); write it under ``heading(title)`` to the file
    ``status`` when given."""
    print("\n".join(table))
    if status is not None:
        status.write_text(heading(title) + "\n".join(table) + "\n")


@contextlib.contextmanager
def seeded(mx: Any, run: int) -> Iterator[None]:
    """Seed Python's and numpy's generators with ``SEED`` and ``mx.random`` with ``SEED + run``;
    while inside, every ``mx.random.seed(s)`` the program calls seeds ``s + run``."""
    random.seed(SEED)
    np.random.seed(SEED)
    own = mx.random.seed
    own(SEED + run)
    mx.random.seed = lambda seed_state, *args, **kwargs: own(seed_state + run, *args, **kwargs)
    try:
        yield
    finally:
        mx.random.seed = own


def words(text: str) -> list[str]:
    """The words of ``text`` (letters only; numbers and ``_UNCOMPARED`` left out)."""
    return _WORD.findall(_NUMBER.sub(" ", _UNCOMPARED.sub(" ", text)))


def numbers(text: str) -> list[float]:
    """The numbers of ``text``, in order (``_UNCOMPARED`` left out)."""
    return [float(n) for n in _NUMBER.findall(_UNCOMPARED.sub(" ", text))]


def _close(got: float, want: float, low: float, high: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return low - ATOL - RTOL * abs(low) <= got <= high + ATOL + RTOL * abs(high)


def compare(got: str, runs: Sequence[str]) -> str | None:
    """None when ``got`` matches MXNet's outputs ``runs`` (one per run), else what differs.
    Module paths in ``got`` are read under MXNet's names (``mxnet.X`` is ``sparsegen.X``)."""
    got = got.replace("sparsegen.", "mxnet.")
    want = runs[0]
    if words(got) != words(want):
        return _first_difference(words(got), words(want), "word")
    exact = all(run == want for run in runs)
    per_run = [numbers(run) for run in runs]
    values = numbers(got)
    if any(len(run) != len(per_run[0]) for run in per_run):
        return None  # MXNet's runs printed different counts of numbers: only the words compare
    if len(values) != len(per_run[0]):
        return f"{len(values)} numbers where MXNet printed {len(per_run[0])}"
    for i, (value, seen) in enumerate(zip(values, zip(*per_run))):
        low, high = min(seen), max(seen)
        span = high - low
        if not exact:
            if not 0 < span <= STABLE * max(abs(low), abs(high)):
                continue  # a draw (or draws that coincided), not a statistic: not compared
            low -= max(2 * span, STAT_RTOL * abs(low))
            high += max(2 * span, STAT_RTOL * abs(high))
        if not _close(value, seen[0], low, high):
            where = f"MXNet {seen[0]!r}" if exact else f"MXNet's runs, widened, {low!r}..{high!r}"
            return f"number {i}: {value!r} where {where}"
    return None


def _first_difference(got: list[str], want: list[str], what: str) -> str:
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"{what} {i}: {a!r} where MXNet printed {b!r}"
    return f"{len(got)} {what}s where MXNet printed {len(want)}"
