"""Gradients of ``mx.nd.contrib``'s signal ops (``ndarray/contrib_signal.py``), as MXNet 1.9.1's
backward passes: ``fft``'s is ``ifft`` of the head gradient and ``ifft``'s is ``fft`` of it (each
the other's adjoint, unnormalised); ``count_sketch``'s gathers the head gradient back through the
hash (``h`` and ``s`` get none); ``hawkesll``'s runs the likelihood's recurrence with its
derivatives (kernel ``hawkes``)."""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ndarray import contrib_signal as signal
from ...ndarray.dispatch import densified
from ...tape import Node
from .registry import gradient


@gradient("_contrib_fft")
def _fft(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (signal.ifft(densified(out_grads[0])),)


@gradient("_contrib_ifft")
def _ifft(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (signal.fft(densified(out_grads[0])),)


@gradient("_contrib_count_sketch")
def _count_sketch(node: Node, out_grads: list[Any]) -> tuple[Any, None, None]:
    _, h, s = node.inputs
    return signal._count_sketch_grad(out_grads[0], h, s), None, None


@gradient("_count_sketch_grad")
def _count_sketch_grad(node: Node, out_grads: list[Any]) -> tuple[Any, None, None]:
    """The data gradient is linear in the head gradient: its adjoint is the sketch itself."""
    g, h, s = node.inputs
    head = densified(out_grads[0])
    return (signal._sketch(head, h, s, g.shape[-1]) if node.wanted[0]
            else None), None, None


@gradient("_contrib_hawkesll")
def _hawkesll(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    """lda, alpha, beta (summed over samples) and state; the observations (lags, marks,
    valid_length, max_time) get none (MXNet refuses to differentiate them)."""
    g_lda, g_alpha, g_beta, g_state = signal._hawkesll_grad(node.inputs, *out_grads)
    return (g_lda, nd.sum(g_alpha, axis=0), nd.sum(g_beta, axis=0), g_state,
            None, None, None, None)
