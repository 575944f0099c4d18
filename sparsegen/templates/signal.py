"""Discrete Fourier transforms of the last axis (MXNet's contrib ``fft`` / ``ifft``): kernel
``signal``. Complex values are interleaved (real, imaginary) pairs, as MXNet lays them out.

- ``twiddles``: ``tw[j] = (cos(2 pi j / d), sin(2 pi j / d))``, computed in float64 (one table
  per call, so every transform reads exact roots of unity).
- ``fft_radix2`` / ``ifft_radix2``: iterative Cooley-Tukey of a power-of-two length ``d = 2**logd``
  per row (bit-reversed load, ``logd`` butterfly stages in place): O(d log d).
- ``fft_direct`` / ``ifft_direct``: the sums themselves, one ``rows`` block per output element,
  for any other length: O(d) per element, O(d^2) per row.

``fft`` of a real row gives ``sum_n x[n] e^{-2 pi i k n / d}``; ``ifft`` of a complex row gives the
real part of ``sum_k z[k] e^{+2 pi i k n / d}``, unnormalised (as MXNet's cuFFT calls).
"""

from __future__ import annotations

import math

import tvm
from tvm.script import tirx as T

from . import element_bytes


@T.macro
def butterflies(buf, r, tw, d, logd, sign, lo, t):
    """The ``logd`` radix-2 stages on the bit-reversed complex row ``buf[r]`` in place, with
    twiddles ``cos - sign * i sin`` (``sign`` 1: forward transform, -1: inverse); ``lo``: local
    int64 (2,) (a butterfly's first element and its twiddle), ``t``: local (4,) of the dtype."""
    for s in T.serial(logd):
        for j in T.serial(d // 2):
            lo[0] = ((j >> s) << (s + 1)) + (j & ((T.int64(1) << s) - 1))
            lo[1] = (j & ((T.int64(1) << s) - 1)) * (d >> (s + 1))
            t[0] = (tw[lo[1], 0] * buf[r, 2 * (lo[0] + (T.int64(1) << s))]
                    + sign * tw[lo[1], 1] * buf[r, 2 * (lo[0] + (T.int64(1) << s)) + 1])
            t[1] = (tw[lo[1], 0] * buf[r, 2 * (lo[0] + (T.int64(1) << s)) + 1]
                    - sign * tw[lo[1], 1] * buf[r, 2 * (lo[0] + (T.int64(1) << s))])
            t[2] = buf[r, 2 * lo[0]]
            t[3] = buf[r, 2 * lo[0] + 1]
            buf[r, 2 * lo[0]] = t[2] + t[0]
            buf[r, 2 * lo[0] + 1] = t[3] + t[1]
            buf[r, 2 * (lo[0] + (T.int64(1) << s))] = t[2] - t[0]
            buf[r, 2 * (lo[0] + (T.int64(1) << s)) + 1] = t[3] - t[1]


@T.macro
def reversed_bits(at, i, logd):
    """``at[0]``: the ``logd`` low bits of ``i`` in reverse order (``at``: a local int64 (1,))."""
    at[0] = T.int64(0)
    for b in T.serial(logd):
        at[0] = (at[0] << 1) | ((i >> b) & 1)


def signal(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every function of kernel ``signal`` in ``dtype`` (module docstring)."""
    elem = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)
    one = tvm.tirx.const(1, dtype)
    turn = tvm.tirx.const(2 * math.pi, "float64")

    @T.prim_func(s_tir=True)
    def twiddles(tw: T.handle):
        T.func_attr({"tirx.noalias": True})
        d = T.int64()
        Tw = T.match_buffer(tw, (d, 2), dtype, align=elem)
        for j in T.serial(d):
            with T.sblock("rows"):
                vj = T.axis.spatial(d, j)
                T.reads()
                T.writes(Tw[vj, 0:2])
                Tw[vj, 0] = T.Cast(dtype, T.cos(turn * T.Cast("float64", vj)
                                                / T.Cast("float64", d)))
                Tw[vj, 1] = T.Cast(dtype, T.sin(turn * T.Cast("float64", vj)
                                                / T.Cast("float64", d)))

    @T.prim_func(s_tir=True)
    def fft_radix2(x: T.handle, tw: T.handle, logd: T.int64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        d = T.int64()
        c = T.int64()
        X = T.match_buffer(x, (m, d), dtype, align=elem)
        Tw = T.match_buffer(tw, (d, 2), dtype, align=elem)
        Out = T.match_buffer(out, (m, c), dtype, align=elem)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(X[vr, 0:d], Tw[0:d, 0:2], Out[vr, 0:c])
                T.writes(Out[vr, 0:c])
                at = T.alloc_buffer((1,), "int64", scope="local")
                lo = T.alloc_buffer((2,), "int64", scope="local")
                t = T.alloc_buffer((4,), dtype, scope="local")
                for i in T.serial(d):
                    reversed_bits(at, i, logd)
                    Out[vr, 2 * at[0]] = X[vr, i]
                    Out[vr, 2 * at[0] + 1] = zero
                butterflies(Out, vr, Tw, d, logd, one, lo, t)

    @T.prim_func(s_tir=True)
    def ifft_radix2(x: T.handle, tw: T.handle, logd: T.int64, work: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        d = T.int64()
        c = T.int64()
        X = T.match_buffer(x, (m, c), dtype, align=elem)
        Tw = T.match_buffer(tw, (d, 2), dtype, align=elem)
        W = T.match_buffer(work, (m, c), dtype, align=elem)
        Out = T.match_buffer(out, (m, d), dtype, align=elem)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(X[vr, 0:c], Tw[0:d, 0:2], W[vr, 0:c])
                T.writes(W[vr, 0:c], Out[vr, 0:d])
                at = T.alloc_buffer((1,), "int64", scope="local")
                lo = T.alloc_buffer((2,), "int64", scope="local")
                t = T.alloc_buffer((4,), dtype, scope="local")
                for i in T.serial(d):
                    reversed_bits(at, i, logd)
                    W[vr, 2 * at[0]] = X[vr, 2 * i]
                    W[vr, 2 * at[0] + 1] = X[vr, 2 * i + 1]
                butterflies(W, vr, Tw, d, logd, -one, lo, t)
                for i in T.serial(d):
                    Out[vr, i] = W[vr, 2 * i]

    @T.prim_func(s_tir=True)
    def fft_direct(x: T.handle, tw: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        d = T.int64()
        c = T.int64()
        X = T.match_buffer(x, (m, d), dtype, align=elem)
        Tw = T.match_buffer(tw, (d, 2), dtype, align=elem)
        Out = T.match_buffer(out, (m, c), dtype, align=elem)
        for rk in T.serial(m * d):
            with T.sblock("rows"):
                v = T.axis.spatial(m * d, rk)
                T.reads(X[v // d, 0:d], Tw[0:d, 0:2])
                T.writes(Out[v // d, 2 * (v % d):2 * (v % d) + 2])
                acc = T.alloc_buffer((2,), dtype, scope="local")
                acc[0] = zero
                acc[1] = zero
                for n in T.serial(d):
                    acc[0] = acc[0] + X[v // d, n] * Tw[((v % d) * n) % d, 0]
                    acc[1] = acc[1] - X[v // d, n] * Tw[((v % d) * n) % d, 1]
                Out[v // d, 2 * (v % d)] = acc[0]
                Out[v // d, 2 * (v % d) + 1] = acc[1]

    @T.prim_func(s_tir=True)
    def ifft_direct(x: T.handle, tw: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        d = T.int64()
        c = T.int64()
        X = T.match_buffer(x, (m, c), dtype, align=elem)
        Tw = T.match_buffer(tw, (d, 2), dtype, align=elem)
        Out = T.match_buffer(out, (m, d), dtype, align=elem)
        for rn in T.serial(m * d):
            with T.sblock("rows"):
                v = T.axis.spatial(m * d, rn)
                T.reads(X[v // d, 0:c], Tw[0:d, 0:2])
                T.writes(Out[v // d, v % d])
                acc = T.alloc_buffer((1,), dtype, scope="local")
                acc[0] = zero
                for k in T.serial(d):
                    acc[0] = (acc[0] + X[v // d, 2 * k] * Tw[(k * (v % d)) % d, 0]
                              - X[v // d, 2 * k + 1] * Tw[(k * (v % d)) % d, 1])
                Out[v // d, v % d] = acc[0]

    return {"twiddles": twiddles, "fft_radix2": fft_radix2, "ifft_radix2": ifft_radix2,
            "fft_direct": fft_direct, "ifft_direct": ifft_direct}
