"""random: samples of MXNet's distributions from a counter-based generator (Philox-4x32-10).

Every element's random bits are a pure function of (key, counter): the key is the 64-bit seed
(``k0``, ``k1``, 32 bits each), the counter the element's position (words 0 and 1), the call's
stream number (word 2, ``c2``) and ``c3 + draw`` (word 3: the call's stream high bits, shifted
left by 8, plus the draw index 0..255 of a rejection loop). So a seed gives the same numbers on
every run, thread count, schedule and device. One rows block per element; each draws one Philox
block of four 32-bit words per attempt, and computes in float64 whatever the output dtype.

Distribution parameters are arrays ``p[m]`` in the output dtype and the output is ``out[m, w]``:
row ``i`` holds ``w`` samples of the parameters ``p[i]`` (a scalar parameter is an array of one).

Transforms (the bounds are documented in docs/operators.md, "Random"):
- uniform: 53-bit ``u`` in [0, 1): ``low + (high - low) * u``;
- normal: Box-Muller from two 53-bit uniforms (the cosine branch);
- exponential: ``-log(u) * scale``, ``u`` in (0, 1];
- gamma: Marsaglia-Tsang, at most ``GAMMA_ATTEMPTS`` attempts (each is accepted with
  probability above 0.95), boosted by ``u ** (1 / alpha)`` for ``alpha < 1``;
- poisson: for ``lam < POISSON_SMALL`` the multiplication method over at most
  ``POISSON_UNIFORMS`` uniforms; else Hormann's transformed rejection (PTRS), at most
  ``POISSON_ATTEMPTS`` attempts (each accepted with probability above 0.85);
- negative_binomial(k, p): poisson of a gamma(k, (1 - p) / p) rate; generalized_negative_binomial
  (mu, alpha): poisson of a gamma(1 / alpha, alpha * mu) rate (of mu for alpha = 0); the
  poisson's draws start at ``MIXTURE_DRAW``;
- randint: 64 random bits modulo ``high - low``;
- multinomial: a uniform against the running sum of one row of probabilities;
- shuffle: random 64-bit keys (``keys``) sorted by the index phases' radix passes
  (``sort_pass``), then ``gather`` of the rows in that order.
"""

from __future__ import annotations

import math

import tvm
from tvm.script import tirx as T

from . import element_bytes, radix
from .columns import cols

GAMMA_ATTEMPTS = 32
POISSON_SMALL = 12.0
POISSON_UNIFORMS = 128
POISSON_ATTEMPTS = 32
MIXTURE_DRAW = 128

_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # Philox-4x32 multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # Philox-4x32 key increments (Weyl sequence)
_F64 = "float64"


@T.macro
def philox(s, t, e, k0, k1, c2, c3):
    # s: uint32[6] local (counter words, then key words), t: uint64[2] local; afterwards
    # s[0:4] are the 4 random words of counter (e low, e high, c2, c3) under key (k0, k1)
    s[0] = T.Cast("uint32", e & T.int64(0xFFFFFFFF))
    s[1] = T.Cast("uint32", e >> T.int64(32))
    s[2] = T.Cast("uint32", c2)
    s[3] = T.Cast("uint32", c3)
    s[4] = T.Cast("uint32", k0)
    s[5] = T.Cast("uint32", k1)
    for _r in T.serial(10):
        t[0] = T.Cast("uint64", s[0]) * T.uint64(_M0)
        t[1] = T.Cast("uint64", s[2]) * T.uint64(_M1)
        s[0] = T.Cast("uint32", t[1] >> T.uint64(32)) ^ s[1] ^ s[4]
        s[1] = T.Cast("uint32", t[1] & T.uint64(0xFFFFFFFF))
        s[2] = T.Cast("uint32", t[0] >> T.uint64(32)) ^ s[3] ^ s[5]
        s[3] = T.Cast("uint32", t[0] & T.uint64(0xFFFFFFFF))
        s[4] = s[4] + T.uint32(_W0)
        s[5] = s[5] + T.uint32(_W1)


def _bits53(hi: tvm.tirx.PrimExpr, lo: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """53 random bits of two words, as a float64 integer in [0, 2**53)."""
    return (T.Cast(_F64, hi >> T.uint32(5)) * T.float64(67108864.0)
            + T.Cast(_F64, lo >> T.uint32(6)))


def closed_open(hi: tvm.tirx.PrimExpr, lo: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """A float64 uniform in [0, 1) of two words."""
    return _bits53(hi, lo) * T.float64(2.0 ** -53)


def open_closed(hi: tvm.tirx.PrimExpr, lo: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """A float64 uniform in (0, 1] of two words (safe under ``log``)."""
    return (_bits53(hi, lo) + T.float64(1.0)) * T.float64(2.0 ** -53)


def box_muller(s: tvm.tirx.Buffer) -> tvm.tirx.PrimExpr:
    """A standard normal of the four words ``s[0:4]``."""
    return (T.sqrt(T.float64(-2.0) * T.log(open_closed(s[0], s[1])))
            * T.cos(T.float64(2.0 * math.pi) * closed_open(s[2], s[3])))


def _log_factorial(k: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """``log(k!)`` for float64 ``k >= 10`` (Stirling's series to ``x**-5``, error below 1e-12)."""
    x = k + T.float64(1.0)
    return ((x - T.float64(0.5)) * T.log(x) - x + T.float64(0.5 * math.log(2 * math.pi))
            + T.float64(1.0 / 12) / x - T.float64(1.0 / 360) / (x * x * x)
            + T.float64(1.0 / 1260) / (x * x * x * x * x))


def _sampler(dtype: str, params: int, sample) -> tvm.tirx.PrimFunc:
    """``(p0[m], [p1[m],] out[m,w], k0, k1, c2, c3)``: ``out[i, j]`` is the float64 that
    ``sample(res, e, ...)`` leaves in ``res[0]`` for counter ``e = i * w + j`` and the parameters
    of row ``i`` (one or two), cast to ``dtype``."""
    align = element_bytes(dtype)

    if params == 1:
        @T.prim_func(s_tir=True)
        def func(p0: T.handle, out: T.handle, k0: T.int64, k1: T.int64, c2: T.int64,
                 c3: T.int64):
            T.func_attr({"tirx.noalias": True})
            m = T.int64()
            w = T.int64()
            P0 = T.match_buffer(p0, (m,), dtype, align=align)
            Out = T.match_buffer(out, (m, w), dtype, align=align)
            for i in T.serial(m * w):
                with T.sblock("rows"):
                    vi = T.axis.spatial(m * w, i)
                    T.reads(P0[vi // w])
                    T.writes(Out[vi // w, vi % w])
                    s = T.alloc_buffer((6,), "uint32", scope="local")
                    t = T.alloc_buffer((2,), "uint64", scope="local")
                    r = T.alloc_buffer((1,), _F64, scope="local")
                    sample(r, vi, s, t, k0, k1, c2, c3, T.Cast(_F64, P0[vi // w]))
                    Out[vi // w, vi % w] = T.Cast(dtype, r[0])
        return func

    @T.prim_func(s_tir=True)
    def func2(p0: T.handle, p1: T.handle, out: T.handle, k0: T.int64, k1: T.int64,
              c2: T.int64, c3: T.int64):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        w = T.int64()
        P0 = T.match_buffer(p0, (m,), dtype, align=align)
        P1 = T.match_buffer(p1, (m,), dtype, align=align)
        Out = T.match_buffer(out, (m, w), dtype, align=align)
        for i in T.serial(m * w):
            with T.sblock("rows"):
                vi = T.axis.spatial(m * w, i)
                T.reads(P0[vi // w], P1[vi // w])
                T.writes(Out[vi // w, vi % w])
                s = T.alloc_buffer((6,), "uint32", scope="local")
                t = T.alloc_buffer((2,), "uint64", scope="local")
                r = T.alloc_buffer((1,), _F64, scope="local")
                sample(r, vi, s, t, k0, k1, c2, c3,
                       T.Cast(_F64, P0[vi // w]), T.Cast(_F64, P1[vi // w]))
                Out[vi // w, vi % w] = T.Cast(dtype, r[0])
    return func2


def _continuous(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """uniform, normal, exponential: one Philox block per element."""

    @T.macro
    def uniform(out, e, s, t, k0, k1, c2, c3, low, high):
        philox(s, t, e, k0, k1, c2, c3)
        out[0] = low + (high - low) * closed_open(s[0], s[1])

    @T.macro
    def normal(out, e, s, t, k0, k1, c2, c3, loc, scale):
        philox(s, t, e, k0, k1, c2, c3)
        out[0] = loc + scale * box_muller(s)

    @T.macro
    def exponential(out, e, s, t, k0, k1, c2, c3, scale):
        philox(s, t, e, k0, k1, c2, c3)
        out[0] = -T.log(open_closed(s[0], s[1])) * scale

    return {"uniform": _sampler(dtype, 2, uniform), "normal": _sampler(dtype, 2, normal),
            "exponential": _sampler(dtype, 1, exponential)}


@T.macro
def gamma_sample(out, e, s, t, k0, k1, c2, c3, alpha, beta):
    # g: d, c, z, v (the attempt's normal and (1 + c z)^3), result; f: attempt, accepted
    g = T.alloc_buffer((5,), _F64, scope="local")
    f = T.alloc_buffer((2,), "int64", scope="local")
    g[0] = T.if_then_else(alpha < T.float64(1.0), alpha + T.float64(1.0), alpha) - (
        T.float64(1.0 / 3.0))
    g[1] = T.float64(1.0) / T.sqrt(T.float64(9.0) * g[0])
    g[4] = g[0]  # when every attempt is rejected: d, near the mode
    f[0] = T.int64(0)
    f[1] = T.int64(0)
    while f[1] == T.int64(0) and f[0] < T.int64(GAMMA_ATTEMPTS):
        philox(s, t, e, k0, k1, c2, c3 + f[0] + T.int64(1))
        g[2] = box_muller(s)
        g[3] = (T.float64(1.0) + g[1] * g[2]) * (T.float64(1.0) + g[1] * g[2]) * (
            T.float64(1.0) + g[1] * g[2])
        if g[3] > T.float64(0.0):
            # a fresh uniform: the low half of a second Philox block (words 0, 1 went to z)
            philox(s, t, e, k0, k1, c2, c3 + f[0] + T.int64(1 + GAMMA_ATTEMPTS))
            if T.log(open_closed(s[0], s[1])) < (
                    T.float64(0.5) * g[2] * g[2] + g[0] - g[0] * g[3] + g[0] * T.log(g[3])):
                g[4] = g[0] * g[3]
                f[1] = T.int64(1)
        f[0] = f[0] + T.int64(1)
    if alpha < T.float64(1.0):
        philox(s, t, e, k0, k1, c2, c3)
        g[4] = g[4] * T.exp(T.log(open_closed(s[0], s[1])) / alpha)
    out[0] = g[4] * beta



@T.macro
def poisson_sample(out, e, s, t, k0, k1, c2, c3, lam):
    # g: product / b, a, 1/alpha, v_r, u, v, k, log-factorial; f: uniform/attempt, done
    g = T.alloc_buffer((9,), _F64, scope="local")
    f = T.alloc_buffer((2,), "int64", scope="local")
    f[0] = T.int64(0)
    f[1] = T.int64(0)
    g[6] = T.float64(0.0)
    if lam < T.float64(POISSON_SMALL):
        g[0] = T.float64(1.0)
        while f[1] == T.int64(0) and f[0] < T.int64(POISSON_UNIFORMS):
            if f[0] % T.int64(2) == T.int64(0):
                philox(s, t, e, k0, k1, c2, c3 + f[0] // T.int64(2))
            g[0] = g[0] * closed_open(s[(f[0] % T.int64(2)) * T.int64(2)],
                                      s[(f[0] % T.int64(2)) * T.int64(2) + T.int64(1)])
            if g[0] <= T.exp(-lam):
                f[1] = T.int64(1)
            else:
                g[6] = g[6] + T.float64(1.0)
            f[0] = f[0] + T.int64(1)
    else:
        g[0] = T.float64(0.931) + T.float64(2.53) * T.sqrt(lam)
        g[1] = T.float64(-0.059) + T.float64(0.02483) * g[0]
        g[2] = T.float64(1.1239) + T.float64(1.1328) / (g[0] - T.float64(3.4))
        g[3] = T.float64(0.9277) - T.float64(3.6224) / (g[0] - T.float64(2.0))
        g[6] = T.floor(lam)  # when every attempt is rejected
        while f[1] == T.int64(0) and f[0] < T.int64(POISSON_ATTEMPTS):
            philox(s, t, e, k0, k1, c2, c3 + f[0])
            g[4] = closed_open(s[0], s[1]) - T.float64(0.5)
            g[5] = closed_open(s[2], s[3])
            g[7] = T.floor((T.float64(2.0) * g[1] / (T.float64(0.5) - T.abs(g[4])) + g[0])
                           * g[4] + lam + T.float64(0.43))
            if T.float64(0.5) - T.abs(g[4]) >= T.float64(0.07) and g[5] <= g[3]:
                g[6] = g[7]
                f[1] = T.int64(1)
            elif g[7] >= T.float64(0.0):
                if T.float64(0.5) - T.abs(g[4]) >= T.float64(0.013) or g[5] <= (
                        T.float64(0.5) - T.abs(g[4])):
                    g[8] = T.float64(0.0)
                    if g[7] >= T.float64(10.0):
                        g[8] = _log_factorial(g[7])
                    else:
                        for j in T.serial(T.Cast("int64", g[7]) - T.int64(1)):
                            g[8] = g[8] + T.log(T.Cast(_F64, j + T.int64(2)))
                    if T.log(g[5] * g[2] / (g[1] / ((T.float64(0.5) - T.abs(g[4]))
                                                   * (T.float64(0.5) - T.abs(g[4])))
                                            + g[0])) <= -lam + g[7] * T.log(lam) - g[8]:
                        g[6] = g[7]
                        f[1] = T.int64(1)
            f[0] = f[0] + T.int64(1)
    out[0] = g[6]



def _gamma(dtype: str) -> tvm.tirx.PrimFunc:
    """``gamma(alpha, beta)``: Marsaglia-Tsang (draws 1.., boost ``u ** (1/alpha)`` on draw 0)."""
    return _sampler(dtype, 2, gamma_sample)


def _poisson(dtype: str) -> tvm.tirx.PrimFunc:
    """``poisson(lam)``: multiplication method below ``POISSON_SMALL``, else PTRS."""
    return _sampler(dtype, 1, poisson_sample)


def _mixtures(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """negative_binomial and generalized_negative_binomial: Poisson samples of a gamma-
    distributed rate (the gamma on draws 0.., the Poisson on draws ``MIXTURE_DRAW``..)."""

    @T.macro
    def negative_binomial(out, e, s, t, k0, k1, c2, c3, k, p):
        gamma_sample(out, e, s, t, k0, k1, c2, c3, k, (T.float64(1.0) - p) / p)
        poisson_sample(out, e, s, t, k0, k1, c2, c3 + T.int64(MIXTURE_DRAW), out[0])

    @T.macro
    def generalized_negative_binomial(out, e, s, t, k0, k1, c2, c3, mu, alpha):
        # alpha = 0 is Poisson(mu); the gamma then runs on a stand-in shape of 1, unused
        gamma_sample(out, e, s, t, k0, k1, c2, c3,
                     T.if_then_else(alpha == T.float64(0.0), T.float64(1.0),
                                    T.float64(1.0) / alpha), alpha * mu)
        poisson_sample(out, e, s, t, k0, k1, c2, c3 + T.int64(MIXTURE_DRAW),
                       T.if_then_else(alpha == T.float64(0.0), mu, out[0]))

    return {"negative_binomial": _sampler(dtype, 2, negative_binomial),
            "generalized_negative_binomial": _sampler(dtype, 2, generalized_negative_binomial)}


def _randint(dtype: str) -> tvm.tirx.PrimFunc:
    """``randint(out, low, high, k0, k1, c2, c3)``: ``low + bits64 % (high - low)`` (``low``
    when ``high <= low``: the front end refuses that)."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def randint(out: T.handle, low: T.int64, high: T.int64, k0: T.int64, k1: T.int64,
                c2: T.int64, c3: T.int64):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        Out = T.match_buffer(out, (n,), dtype, align=align)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads()
                T.writes(Out[vi])
                s = T.alloc_buffer((6,), "uint32", scope="local")
                t = T.alloc_buffer((2,), "uint64", scope="local")
                philox(s, t, vi, k0, k1, c2, c3)
                Out[vi] = T.Cast(dtype, T.Cast("int64", T.Cast("uint64", low) + (
                    (T.Cast("uint64", s[0]) << T.uint64(32)) | T.Cast("uint64", s[1])) % T.max(
                    T.Cast("uint64", high) - T.Cast("uint64", low), T.uint64(1))))

    return randint


def _shuffle(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``keys``: random sort keys of ``bits`` bits and the identity order; ``gather``: rows
    of ``x`` in the order ``src``."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def keys(keys: T.handle, src: T.handle, bits: T.int64, k0: T.int64, k1: T.int64,
             c2: T.int64, c3: T.int64):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        Keys = T.match_buffer(keys, (n,), "int64", align=8)
        Src = T.match_buffer(src, (n,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads()
                T.writes(Keys[vi], Src[vi])
                s = T.alloc_buffer((6,), "uint32", scope="local")
                t = T.alloc_buffer((2,), "uint64", scope="local")
                philox(s, t, vi, k0, k1, c2, c3)
                Keys[vi] = T.Cast("int64", ((T.Cast("uint64", s[0]) << T.uint64(32))
                                            | T.Cast("uint64", s[1]))
                                  >> T.Cast("uint64", T.int64(64) - T.max(T.min(bits, 63), 1)))
                Src[vi] = vi

    @T.macro
    def copy(out, r, x, p, j):
        out[r, j] = x[p, j]

    @T.prim_func(s_tir=True)
    def gather(x: T.handle, src: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        X = T.match_buffer(x, (n, d), dtype, align=align)
        Src = T.match_buffer(src, (n,), "int64", align=8)
        Out = T.match_buffer(out, (n, d), dtype, align=align)
        for r in T.serial(n):
            with T.sblock("rows"):
                vr = T.axis.spatial(n, r)
                T.reads(X[0:n, 0:d], Src[vr])
                T.writes(Out[vr, 0:d])
                cols.each(d, copy, Out, vr, X, Src[vr])

    return {"keys": keys, "gather": gather}


def random(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """The samplers for output ``dtype`` (float dtypes sample every distribution; integer
    dtypes serve randint and shuffle, the float functions cast), and shuffle's phases."""
    return {**_continuous(dtype), "gamma": _gamma(dtype), "poisson": _poisson(dtype),
            **_mixtures(dtype),
            "randint": _randint(dtype), **_shuffle(dtype), **radix.phases("sort_pass")}


def multinomial(dtype: str, otype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``sample(probs[m,k], out[m,s], logp[m,s], k0, k1, c2, c3)``: ``out[i, j]`` is the first
    outcome whose running sum of row ``i`` exceeds a uniform (the last one when rounding leaves
    the row's sum below it), ``logp`` its log-probability."""
    align, oalign = element_bytes(dtype), element_bytes(otype)

    @T.prim_func(s_tir=True)
    def sample(probs: T.handle, out: T.handle, logp: T.handle, k0: T.int64, k1: T.int64,
               c2: T.int64, c3: T.int64):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        k = T.int64()
        w = T.int64()
        P = T.match_buffer(probs, (m, k), dtype, align=align)
        Out = T.match_buffer(out, (m, w), otype, align=oalign)
        LogP = T.match_buffer(logp, (m, w), dtype, align=align)
        for e in T.serial(m * w):
            with T.sblock("rows"):
                ve = T.axis.spatial(m * w, e)
                T.reads(P[ve // w, 0:k])
                T.writes(Out[ve // w, ve % w], LogP[ve // w, ve % w])
                s = T.alloc_buffer((6,), "uint32", scope="local")
                t = T.alloc_buffer((2,), "uint64", scope="local")
                acc = T.alloc_buffer((2,), _F64, scope="local")  # uniform, running sum
                pick = T.alloc_buffer((1,), "int64", scope="local")
                philox(s, t, ve, k0, k1, c2, c3)
                acc[0] = closed_open(s[0], s[1])
                acc[1] = T.float64(0.0)
                pick[0] = k - T.int64(1)
                for j in T.serial(k):
                    acc[1] = acc[1] + T.Cast(_F64, P[ve // w, j])
                    if acc[1] > acc[0] and pick[0] == k - T.int64(1):
                        pick[0] = j
                Out[ve // w, ve % w] = T.Cast(otype, pick[0])
                if k > T.int64(0):
                    LogP[ve // w, ve % w] = T.Cast(dtype, T.log(T.Cast(_F64, P[ve // w, pick[0]])))

    return {"sample": sample}


def unique_zipfian() -> dict[str, tvm.tirx.PrimFunc]:
    """``sample(out[m,w], tries[m], seen[m,r], log_range, k0, k1, c2, c3)``: row ``i`` of ``out``
    holds ``w`` distinct classes of ``[0, r)`` drawn from the log-uniform distribution
    (``round(exp(u * log_range)) - 1``, ``u`` uniform in [0, 1)) by drawing until ``w`` are
    distinct, and ``tries[i]`` the number of draws; ``seen`` is scratch (cleared per row). Draw
    ``d`` of row ``i`` is Philox counter ``(d, i, c2, c3)``."""

    @T.prim_func(s_tir=True)
    def sample(out: T.handle, tries: T.handle, seen: T.handle, log_range: T.float64,
               k0: T.int64, k1: T.int64, c2: T.int64, c3: T.int64):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        w = T.int64()
        r = T.int64()
        Out = T.match_buffer(out, (m, w), "int64", align=8)
        Tries = T.match_buffer(tries, (m,), "int64", align=8)
        Seen = T.match_buffer(seen, (m, r), "uint8", align=1)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads()
                T.writes(Out[vi, 0:w], Tries[vi], Seen[vi, 0:r])
                s = T.alloc_buffer((6,), "uint32", scope="local")
                t = T.alloc_buffer((2,), "uint64", scope="local")
                st = T.alloc_buffer((3,), "int64", scope="local")  # taken, draws, class
                for j in T.serial(r):
                    Seen[vi, j] = T.uint8(0)
                st[0] = T.int64(0)
                st[1] = T.int64(0)
                while st[0] < w:
                    philox(s, t, (vi << T.int64(32)) | st[1], k0, k1, c2, c3)
                    st[2] = T.min(T.Cast("int64", T.floor(
                        T.exp(closed_open(s[0], s[1]) * log_range) + T.float64(0.5)))
                        - T.int64(1), r - T.int64(1))
                    if Seen[vi, st[2]] == T.uint8(0):
                        Seen[vi, st[2]] = T.uint8(1)
                        Out[vi, st[0]] = st[2]
                        st[0] = st[0] + T.int64(1)
                    st[1] = st[1] + T.int64(1)
                Tries[vi] = st[1]

    return {"sample": sample}
