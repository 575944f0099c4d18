"""Common-expression elimination in executors (``MXNET_ELIMINATE_COMMON_EXPR``): the graph
sizes MXNet 1.9.1's test_eliminate_common_expr states, values and gradients against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import sparsegen as mx

A, B, C = (mx.sym.Variable(name) for name in "abc")
D = A + 1
CASES = [  # (symbol, internals saved: MXNet's figures)
    ((A + 1) + (A + 2), 0),
    ((A + B) + (A + B), 1),
    (((A + B) + C) + ((A + B) + C), 2),
    (mx.sym.Group([A * D, A * D]), 0),  # merged, then a copy keeps the two outputs apart
    (mx.sym.Group([A * D + B, A * D + B]), 1),
    (mx.sym.Dropout(A) + mx.sym.Dropout(A), 0),  # each Dropout draws its own mask
]


def _run(symbol, values, eliminate: str, monkeypatch):
    monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", eliminate)
    names = symbol.list_arguments()
    executor = symbol.simple_bind(mx.cpu(), **{n: values[n].shape for n in names})
    outputs = executor.forward(is_train=True, **{n: mx.nd.array(values[n]) for n in names})
    executor.backward([mx.nd.ones_like(o) for o in outputs])
    return executor, [o.asnumpy() for o in outputs], [g.asnumpy() for g in executor.grad_arrays]


@pytest.mark.parametrize("symbol, saved", CASES)
def test_graph_sizes_as_mxnet(symbol, saved, monkeypatch) -> None:
    rng = np.random.default_rng(0)
    values = {name: rng.random((3, 4)) for name in "abc"}
    plain, outs, grads = _run(symbol, values, "0", monkeypatch)
    merged, outs_cse, grads_cse = _run(symbol, values, "1", monkeypatch)
    assert len(plain.get_optimized_symbol().get_internals()) == \
        len(merged.get_optimized_symbol().get_internals()) + saved
    if saved:  # deterministic graphs: the same values
        for got, want in zip(outs_cse + grads_cse, outs + grads):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_values_against_numpy(monkeypatch) -> None:
    rng = np.random.default_rng(1)
    values = {name: rng.random((2, 3)) for name in "abc"}
    a, b = values["a"], values["b"]
    _, outs, grads = _run(mx.sym.Group([A * D + B, A * D + B]), values, "1", monkeypatch)
    for out in outs:
        np.testing.assert_allclose(out, a * (a + 1) + b, rtol=1e-6)
    np.testing.assert_allclose(grads[0], 2 * (2 * a + 1), rtol=1e-6)  # two heads of ones
    np.testing.assert_allclose(grads[1], 2 * np.ones_like(b))
