"""The log-likelihood of marked Hawkes processes with exponential decay (MXNet's contrib
``hawkesll``): kernel ``hawkes``, one ``rows`` block per sample (a sequence is a recurrence).

For sample ``i`` with ``K`` marks, events ``j < valid_length[i]`` at times ``t_j`` (running sums of
``lags``) of marks ``c_j``, intensity ``lda[i, c] + alpha[c] beta[c] phi_c e^{-beta[c] d}`` (``phi``
the state, ``d`` the time since mark ``c``'s last event):

- ``forward``: ``out[i]`` = the sum of the log intensities at the events minus the compensators
  (the intensities' integrals over ``(0, max_time[i]]``, the rest of each mark's after its last
  event subtracted once at the end, as MXNet sums them), ``out_state[i]`` the states at
  ``max_time[i]``; ``last`` is scratch (each mark's last event time);
- ``backward``: the gradients of ``lda`` (per sample), of ``alpha`` and ``beta`` (per sample, the
  caller sums them), and of ``state``, times the head gradients of ``out`` and ``out_state``
  (``last``, ``phi``, ``dphi``, ``q``: scratch for the recurrence, the state's derivative by
  ``beta`` and by the initial state).

The caller checks marks in ``[0, K)`` and ``valid_length <= T``.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes


def hawkes(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every function of kernel ``hawkes`` in ``dtype`` (module docstring)."""
    elem = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)
    one = tvm.tirx.const(1, dtype)

    @T.prim_func(s_tir=True)
    def forward(lda: T.handle, alpha: T.handle, beta: T.handle, state: T.handle,
                lags: T.handle, marks: T.handle, valid_length: T.handle, max_time: T.handle,
                last: T.handle, out: T.handle, out_state: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        t = T.int64()
        Mu = T.match_buffer(lda, (n, k), dtype, align=elem)
        A = T.match_buffer(alpha, (k,), dtype, align=elem)
        B = T.match_buffer(beta, (k,), dtype, align=elem)
        S0 = T.match_buffer(state, (n, k), dtype, align=elem)
        L = T.match_buffer(lags, (n, t), dtype, align=elem)
        M = T.match_buffer(marks, (n, t), "int64", align=8)
        V = T.match_buffer(valid_length, (n,), dtype, align=elem)
        Tm = T.match_buffer(max_time, (n,), dtype, align=elem)
        Last = T.match_buffer(last, (n, k), dtype, align=elem)
        Out = T.match_buffer(out, (n,), dtype, align=elem)
        S = T.match_buffer(out_state, (n, k), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Mu[vi, 0:k], A[0:k], B[0:k], S0[vi, 0:k], L[vi, 0:t], M[vi, 0:t], V[vi],
                        Tm[vi], Last[vi, 0:k], S[vi, 0:k])
                T.writes(Last[vi, 0:k], Out[vi], S[vi, 0:k])
                # v: time, log-likelihood, time since the mark's last event, its decay, the
                # intensity; c: the mark
                v = T.alloc_buffer((5,), dtype, scope="local")
                c = T.alloc_buffer((1,), "int64", scope="local")
                for m in T.serial(k):
                    S[vi, m] = S0[vi, m]
                    Last[vi, m] = zero
                v[0] = zero
                v[1] = zero
                for j in T.serial(t):
                    if T.Cast(dtype, j) < V[vi]:
                        c[0] = M[vi, j]
                        v[0] = v[0] + L[vi, j]
                        v[2] = v[0] - Last[vi, c[0]]
                        v[3] = T.exp(-B[c[0]] * v[2])
                        v[4] = Mu[vi, c[0]] + A[c[0]] * B[c[0]] * S[vi, c[0]] * v[3]
                        v[1] = v[1] + (T.log(v[4]) - (Mu[vi, c[0]] * v[2]
                                                      + A[c[0]] * S[vi, c[0]] * (one - v[3])))
                        S[vi, c[0]] = one + S[vi, c[0]] * v[3]
                        Last[vi, c[0]] = v[0]
                v[0] = zero  # now the sum of the remaining compensators
                for m in T.serial(k):
                    v[2] = Tm[vi] - Last[vi, m]
                    v[3] = T.exp(-B[m] * v[2])
                    v[0] = v[0] + (Mu[vi, m] * v[2] + A[m] * S[vi, m] * (one - v[3]))
                    S[vi, m] = v[3] * S[vi, m]
                Out[vi] = v[1] - v[0]

    @T.prim_func(s_tir=True)
    def backward(lda: T.handle, alpha: T.handle, beta: T.handle, state: T.handle,
                 lags: T.handle, marks: T.handle, valid_length: T.handle, max_time: T.handle,
                 g_out: T.handle, g_state: T.handle, last: T.handle, phi: T.handle,
                 dphi: T.handle, q: T.handle, grad_lda: T.handle, grad_alpha: T.handle,
                 grad_beta: T.handle, grad_state: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        t = T.int64()
        Mu = T.match_buffer(lda, (n, k), dtype, align=elem)
        A = T.match_buffer(alpha, (k,), dtype, align=elem)
        B = T.match_buffer(beta, (k,), dtype, align=elem)
        S0 = T.match_buffer(state, (n, k), dtype, align=elem)
        L = T.match_buffer(lags, (n, t), dtype, align=elem)
        M = T.match_buffer(marks, (n, t), "int64", align=8)
        V = T.match_buffer(valid_length, (n,), dtype, align=elem)
        Tm = T.match_buffer(max_time, (n,), dtype, align=elem)
        Go = T.match_buffer(g_out, (n,), dtype, align=elem)
        Gs = T.match_buffer(g_state, (n, k), dtype, align=elem)
        Last = T.match_buffer(last, (n, k), dtype, align=elem)
        P = T.match_buffer(phi, (n, k), dtype, align=elem)
        DP = T.match_buffer(dphi, (n, k), dtype, align=elem)
        Q = T.match_buffer(q, (n, k), dtype, align=elem)
        GMu = T.match_buffer(grad_lda, (n, k), dtype, align=elem)
        GA = T.match_buffer(grad_alpha, (n, k), dtype, align=elem)
        GB = T.match_buffer(grad_beta, (n, k), dtype, align=elem)
        GS = T.match_buffer(grad_state, (n, k), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Mu[vi, 0:k], A[0:k], B[0:k], S0[vi, 0:k], L[vi, 0:t], M[vi, 0:t], V[vi],
                        Tm[vi], Go[vi], Gs[vi, 0:k], Last[vi, 0:k], P[vi, 0:k], DP[vi, 0:k],
                        Q[vi, 0:k], GMu[vi, 0:k], GA[vi, 0:k], GB[vi, 0:k], GS[vi, 0:k])
                T.writes(Last[vi, 0:k], P[vi, 0:k], DP[vi, 0:k], Q[vi, 0:k], GMu[vi, 0:k],
                         GA[vi, 0:k], GB[vi, 0:k], GS[vi, 0:k])
                # v: time, time since the mark's last event, its decay, the intensity
                v = T.alloc_buffer((4,), dtype, scope="local")
                c = T.alloc_buffer((1,), "int64", scope="local")
                for m in T.serial(k):
                    Last[vi, m] = zero
                    P[vi, m] = S0[vi, m]
                    DP[vi, m] = zero
                    Q[vi, m] = one
                    GMu[vi, m] = zero
                    GA[vi, m] = zero
                    GB[vi, m] = zero
                    GS[vi, m] = zero
                v[0] = zero
                for j in T.serial(t):
                    if T.Cast(dtype, j) < V[vi]:
                        c[0] = M[vi, j]
                        v[0] = v[0] + L[vi, j]
                        v[1] = v[0] - Last[vi, c[0]]
                        v[2] = T.exp(-B[c[0]] * v[1])
                        v[3] = Mu[vi, c[0]] + A[c[0]] * B[c[0]] * P[vi, c[0]] * v[2]
                        GMu[vi, c[0]] = GMu[vi, c[0]] + (one / v[3] - v[1])
                        GA[vi, c[0]] = GA[vi, c[0]] + (B[c[0]] * P[vi, c[0]] * v[2] / v[3]
                                                       - P[vi, c[0]] * (one - v[2]))
                        GB[vi, c[0]] = GB[vi, c[0]] + (
                            A[c[0]] * v[2] * (P[vi, c[0]] * (one - B[c[0]] * v[1])
                                              + B[c[0]] * DP[vi, c[0]]) / v[3]
                            - A[c[0]] * (DP[vi, c[0]] * (one - v[2])
                                         + P[vi, c[0]] * v[1] * v[2]))
                        GS[vi, c[0]] = GS[vi, c[0]] + (
                            A[c[0]] * B[c[0]] * v[2] * Q[vi, c[0]] / v[3]
                            - A[c[0]] * (one - v[2]) * Q[vi, c[0]])
                        DP[vi, c[0]] = v[2] * (DP[vi, c[0]] - v[1] * P[vi, c[0]])
                        P[vi, c[0]] = one + P[vi, c[0]] * v[2]
                        Q[vi, c[0]] = v[2] * Q[vi, c[0]]
                        Last[vi, c[0]] = v[0]
                for m in T.serial(k):
                    v[1] = Tm[vi] - Last[vi, m]
                    v[2] = T.exp(-B[m] * v[1])
                    GMu[vi, m] = Go[vi] * (GMu[vi, m] - v[1])
                    GA[vi, m] = Go[vi] * (GA[vi, m] - P[vi, m] * (one - v[2]))
                    GB[vi, m] = (Go[vi] * (GB[vi, m] - A[m] * (DP[vi, m] * (one - v[2])
                                                               + P[vi, m] * v[1] * v[2]))
                                 + Gs[vi, m] * v[2] * (DP[vi, m] - v[1] * P[vi, m]))
                    GS[vi, m] = (Go[vi] * (GS[vi, m] - A[m] * (one - v[2]) * Q[vi, m])
                                 + Gs[vi, m] * v[2] * Q[vi, m])

    return {"forward": forward, "backward": backward}
