"""STREAM-style memory bandwidth of this machine, on generated parallel vector kernels."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np


@lru_cache(maxsize=1)
def _kernels(lanes: int = 16) -> Any:
    import tvm
    from tvm.script import tirx as T

    from ..target import host_cpu

    @T.prim_func(s_tir=True)
    def copy(a: T.handle, b: T.handle):
        T.func_attr({"tirx.noalias": True, "global_symbol": "copy"})
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32", align=4)
        B = T.match_buffer(b, (n,), "float32", align=4)
        for io in T.parallel(n // lanes):
            for ii in T.vectorized(lanes):
                B[io * lanes + ii] = A[io * lanes + ii]

    @T.prim_func(s_tir=True)
    def triad(a: T.handle, b: T.handle, c: T.handle, s: T.float32):
        T.func_attr({"tirx.noalias": True, "global_symbol": "triad"})
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32", align=4)
        B = T.match_buffer(b, (n,), "float32", align=4)
        C = T.match_buffer(c, (n,), "float32", align=4)
        for io in T.parallel(n // lanes):
            for ii in T.vectorized(lanes):
                A[io * lanes + ii] = B[io * lanes + ii] + s * C[io * lanes + ii]

    @T.prim_func(s_tir=True)
    def rmw(a: T.handle, b: T.handle, s: T.float32):
        T.func_attr({"tirx.noalias": True, "global_symbol": "rmw"})
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32", align=4)
        B = T.match_buffer(b, (n,), "float32", align=4)
        for io in T.parallel(n // lanes):
            for ii in T.vectorized(lanes):
                A[io * lanes + ii] = A[io * lanes + ii] + s * B[io * lanes + ii]

    mod = tvm.IRModule({"copy": copy, "triad": triad, "rmw": rmw})
    return tvm.compile(mod, host_cpu().to_tvm())


def measure(elements: int = 1 << 27, repeats: int = 5) -> dict[str, float]:
    """GB/s of copy (b = a), triad (a = b + s*c) and read-modify-write (a += s*b), medians.

    The default arrays are 512 MB each, about twice this machine class's 260 MB L3 cache.
    """
    import tvm

    ex = _kernels()
    dev = tvm.cpu(0)
    arrays = [tvm.runtime.tensor(np.full(elements, 1.0, np.float32), dev) for _ in range(3)]
    a, b, c = arrays
    nbytes = elements * 4
    cases = {"copy": ((a, b), 2), "triad": ((a, b, c, 0.5), 3), "rmw": ((a, b, 0.5), 3)}
    result = {}
    for name, (args, streams) in cases.items():
        timer = ex.mod.time_evaluator(name, dev, number=3, repeat=repeats)
        seconds = statistics.median(timer(*args).results)
        result[name] = streams * nbytes / seconds / 1e9
    return result


def triad_limit(elements: int = 1 << 27) -> Callable[[], Any]:
    """The call to time of STREAM triad on three numpy arrays of ``elements`` float32 (512 MB
    each by default): W7's limit, timed in W7's rounds; one call moves ``12 * elements`` bytes."""
    triad = _kernels()["triad"]
    a, b, c = (np.full(elements, 1.0, np.float32) for _ in range(3))
    return lambda: triad(a, b, c, 0.5)
