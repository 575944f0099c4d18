"""The fused RNN operator: mx.nd.RNN and mx.sym.RNN (modes rnn_relu, rnn_tanh, lstm, gru; layers,
bidirectional, projection, state clipping, sequence lengths, dropout), forward and gradient,
against MXNet 1.9.1's answers (tests/fixtures/rnn.json, recorded by tests/fixtures/record_rnn.py),
a numpy oracle written here from the cell equations, and finite differences; the cell kernel
``nn_rnn_cell`` directly against the equations; bad input."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import (InvalidType, InvalidValue, MissingValue, MXNetError,
                              NotSupported)
from sparsegen.ops import rnn as rnn_ops

FIXTURE = json.loads((pathlib.Path(__file__).resolve().parent / "fixtures" /
                      "rnn.json").read_text())
CASES = FIXTURE["cases"]
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


# -- the numpy oracle: MXNet's equations, its packed layout read here independently ------------
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def unpack(params, mode, layers, dirs, inputs, hidden, proj):
    """Per layer and direction (wx, wh, whr, bx, bh) from MXNet's packed vector: all weights
    (wx (g*h, in), wh (g*h, p or h), whr (p, h)) layer-major, then all biases (bx, bh)."""
    gh, width, pos, weights = GATES[mode] * hidden, proj or hidden, 0, []

    def take(*shape):
        nonlocal pos
        size = int(np.prod(shape))
        part = params[pos:pos + size].reshape(shape)
        pos += size
        return part

    for layer in range(layers):
        fan_in = inputs if layer == 0 else width * dirs
        for _ in range(dirs):
            weights.append((take(gh, fan_in), take(gh, width),
                            take(proj, hidden) if proj else None))
    units = [(wx, wh, whr, take(gh), take(gh)) for wx, wh, whr in weights]
    assert pos == params.size
    return units


def numpy_rnn(mode, data, params, state, cell, layers, bidirectional, hidden, proj=None,
              clip=None, clip_nan=False, lengths=None):
    """(output, final states, final cells) in float64."""
    t_len, n, inputs = data.shape
    dirs = 2 if bidirectional else 1
    units = unpack(params.astype(np.float64), mode, layers, dirs, inputs, hidden, proj)
    x = data.astype(np.float64)
    hy, cy = [], []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            wx, wh, whr, bx, bh = units[k]
            h = state[k].astype(np.float64)
            c = cell[k].astype(np.float64) if cell is not None else None
            y = np.zeros((t_len, n, h.shape[1]))
            for t in (range(t_len - 1, -1, -1) if d else range(t_len)):
                xw, hw = x[t] @ wx.T + bx, h @ wh.T + bh
                c_new = None
                if mode == "rnn_relu":
                    h_new = np.maximum(xw + hw, 0)
                elif mode == "rnn_tanh":
                    h_new = np.tanh(xw + hw)
                elif mode == "lstm":
                    i, f, g, o = np.split(xw + hw, 4, axis=1)
                    c_new = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
                    if clip is not None:
                        nan = np.isnan(c_new)
                        c_new = np.clip(c_new, *clip)
                        if clip_nan:
                            c_new[nan] = clip[1]
                    h_new = _sigmoid(o) * np.tanh(c_new)
                    if whr is not None:
                        h_new = h_new @ whr.T
                else:
                    xr, xz, xn = np.split(xw, 3, axis=1)
                    hr, hz, hn = np.split(hw, 3, axis=1)
                    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
                    h_new = (1 - z) * np.tanh(xn + r * hn) + z * h
                if lengths is not None:
                    live = (t < lengths)[:, None]
                    y[t] = np.where(live, h_new, 0)
                    h = np.where(live, h_new, h)
                    c = np.where(live, c_new, c) if c is not None else None
                else:
                    y[t], h, c = h_new, h_new, c_new
            outs.append(y)
            hy.append(h)
            cy.append(c)
        x = np.concatenate(outs, axis=2)
    return x, np.stack(hy), (np.stack(cy) if mode == "lstm" else None)


def random_inputs(rng, mode, layers, bidirectional, hidden, t, n, inputs, proj=None,
                  dtype="float32"):
    dirs = 2 if bidirectional else 1
    gh, width = GATES[mode] * hidden, proj or hidden
    size = sum(gh * ((inputs if l == 0 else width * dirs) + width) + (proj or 0) * hidden
               + 2 * gh for l in range(layers) for _ in range(dirs))
    arrays = {"data": rng.standard_normal((t, n, inputs)),
              "parameters": rng.standard_normal(size) * 0.5,
              "state": rng.standard_normal((layers * dirs, n, width)) * 0.5}
    if mode == "lstm":
        arrays["state_cell"] = rng.standard_normal((layers * dirs, n, hidden)) * 0.5
    return {k: v.astype(dtype) for k, v in arrays.items()}


def run(arrays, **kw):
    nds = {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
    return mx.nd.RNN(**nds, state_outputs=True, **kw)


# -- MXNet's record ------------------------------------------------------------------------------
def case_id(case):
    return (f"{case['mode']}-L{case['num_layers']}-{'bi' if case['bidirectional'] else 'uni'}"
            f"-P{case['projection_size']}")


def case_kwargs(case):
    return dict(state_size=case["state_size"], num_layers=case["num_layers"],
                bidirectional=case["bidirectional"], mode=case["mode"],
                projection_size=case["projection_size"])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_mxnet(case):
    """Outputs, and gradients of data, parameters, state and state_cell, as MXNet's."""
    names = ["data", "parameters", "state"] + (["state_cell"] if case["mode"] == "lstm" else [])
    arrays = [mx.nd.array(np.array(case["inputs"][k], dtype=np.float32)) for k in names]
    for a in arrays:
        a.attach_grad()
    with mx.autograd.record():
        outs = mx.nd.RNN(*arrays, state_outputs=True, **case_kwargs(case))
    assert len(outs) == len(case["outputs"])
    for got, want in zip(outs, case["outputs"]):
        np.testing.assert_allclose(got.asnumpy(), np.array(want), rtol=1e-5, atol=1e-5)
    if "grads" not in case:  # MXNet trains no projection on a CPU
        return
    mx.autograd.backward(outs, [mx.nd.array(np.array(h, dtype=np.float32))
                                for h in case["heads"]])
    for name, a in zip(names, arrays):
        np.testing.assert_allclose(a.grad.asnumpy(), np.array(case["grads"][name]),
                                   rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_numpy_oracle_matches_mxnet(case):
    """The oracle agrees with MXNet on its record, so the hypothesis tests below lean on it."""
    inputs = {k: np.array(v, dtype=np.float32) for k, v in case["inputs"].items()}
    out, hy, cy = numpy_rnn(case["mode"], inputs["data"], inputs["parameters"], inputs["state"],
                            inputs.get("state_cell"), case["num_layers"], case["bidirectional"],
                            case["state_size"], case["projection_size"])
    np.testing.assert_allclose(out, np.array(case["outputs"][0]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(hy, np.array(case["outputs"][1]), rtol=1e-5, atol=1e-5)


def test_symbol_matches_mxnet_names_and_shapes():
    """mx.sym.RNN creates MXNet's variables and outputs, infers its shapes (the values MXNet
    1.9.1 prints for these symbols)."""
    s = mx.sym.RNN(mx.sym.var("data"), state_size=4, num_layers=2, mode="lstm",
                   bidirectional=True, state_outputs=True, name="rnn")
    assert s.list_arguments() == ["data", "rnn_parameters", "rnn_state", "rnn_state_cell"]
    assert s.list_outputs() == ["rnn_output", "rnn_state_output", "rnn_statecell_output"]
    assert s.infer_shape(data=(5, 3, 6)) == (
        [(5, 3, 6), (832,), (4, 3, 4), (4, 3, 4)], [(5, 3, 8), (4, 3, 4), (4, 3, 4)], [])
    g = mx.sym.RNN(mx.sym.var("data"), state_size=4, num_layers=1, mode="gru", name="g")
    assert g.list_arguments() == ["data", "g_parameters", "g_state"]
    assert g.list_outputs() == ["g_output"]
    assert g.infer_shape(data=(5, 3, 6))[0][1] == (144,)
    p = mx.sym.RNN(mx.sym.var("data"), state_size=4, num_layers=1, mode="lstm",
                   projection_size=2, state_outputs=True, name="p")
    assert p.infer_shape(data=(5, 3, 6)) == (
        [(5, 3, 6), (168,), (1, 3, 2), (1, 3, 4)], [(5, 3, 2), (1, 3, 2), (1, 3, 4)], [])
    q = mx.sym.RNN(mx.sym.var("data"), state_size=4, num_layers=1, mode="gru",
                   use_sequence_length=True, name="q")
    assert q.list_arguments() == ["data", "q_parameters", "q_state", "q_sequence_length"]
    assert q.infer_shape(data=(5, 3, 6))[0][3] == (3,)


@pytest.mark.parametrize("case", [c for c in CASES if c["projection_size"] is None][4:6],
                         ids=case_id)
def test_symbol_executor_matches_mxnet(case):
    """A bound mx.sym.RNN: MXNet's parameter count inferred, its outputs and gradients."""
    s = mx.sym.RNN(mx.sym.var("data"), state_outputs=True, name="rnn", **case_kwargs(case))
    names = ["data", "parameters", "state"] + (["state_cell"] if case["mode"] == "lstm" else [])
    args = {(k if k == "data" else f"rnn_{k}"): mx.nd.array(np.array(case["inputs"][k],
                                                                     dtype=np.float32))
            for k in names}
    assert dict(zip(s.list_arguments(), s.infer_shape(
        data=args["data"].shape)[0]))["rnn_parameters"] == (case["param_size"],)
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    ex = s.bind(mx.cpu(), args, args_grad=grads)
    for got, want in zip(ex.forward(is_train=True), case["outputs"]):
        np.testing.assert_allclose(got.asnumpy(), np.array(want), rtol=1e-5, atol=1e-5)
    ex.backward([mx.nd.array(np.array(h, dtype=np.float32)) for h in case["heads"]])
    for k in names:
        np.testing.assert_allclose(grads[k if k == "data" else f"rnn_{k}"].asnumpy(),
                                   np.array(case["grads"][k]), rtol=1e-4, atol=1e-5)


# -- the numpy oracle on drawn configurations -----------------------------------------------------
@settings(max_examples=15)
@given(mode=st.sampled_from(sorted(GATES)), layers=st.integers(1, 2), bidirectional=st.booleans(),
       hidden=st.integers(1, 5), t=st.integers(1, 4), n=st.integers(1, 3),
       inputs=st.integers(1, 4), seed=st.integers(0, 2**16), dtype=st.sampled_from(
           ["float32", "float64"]), lengths=st.booleans())
def test_forward_matches_numpy(mode, layers, bidirectional, hidden, t, n, inputs, seed, dtype,
                               lengths):
    rng = np.random.default_rng(seed)
    arrays = random_inputs(rng, mode, layers, bidirectional, hidden, t, n, inputs, dtype=dtype)
    kw = dict(state_size=hidden, num_layers=layers, bidirectional=bidirectional, mode=mode)
    lens = None
    if lengths:
        lens = rng.integers(1, t + 1, n)
        arrays["sequence_length"] = lens.astype(dtype)
        kw["use_sequence_length"] = True
    outs = run(arrays, **kw)
    want = numpy_rnn(mode, arrays["data"], arrays["parameters"], arrays["state"],
                     arrays.get("state_cell"), layers, bidirectional, hidden, lengths=lens)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for got, ref in zip(outs, want):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.asnumpy(), ref, **tol)


@settings(max_examples=6)
@given(layers=st.integers(1, 2), bidirectional=st.booleans(), proj=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_projection_matches_numpy(layers, bidirectional, proj, seed):
    rng = np.random.default_rng(seed)
    hidden = 3
    arrays = random_inputs(rng, "lstm", layers, bidirectional, hidden, 3, 2, 2, proj=proj)
    outs = run(arrays, state_size=hidden, num_layers=layers, bidirectional=bidirectional,
               mode="lstm", projection_size=proj)
    want = numpy_rnn("lstm", arrays["data"], arrays["parameters"], arrays["state"],
                     arrays["state_cell"], layers, bidirectional, hidden, proj)
    for got, ref in zip(outs, want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("clip_nan", [False, True])
def test_lstm_state_clip_matches_numpy(clip_nan):
    """The cell state clamped after each step (cuDNN's clip, which MXNet runs on GPUs only)."""
    rng = np.random.default_rng(3)
    arrays = random_inputs(rng, "lstm", 2, True, 4, 5, 3, 3)
    arrays["parameters"] *= 4
    outs = run(arrays, state_size=4, num_layers=2, bidirectional=True, mode="lstm",
               lstm_state_clip_min=-0.3, lstm_state_clip_max=0.4, lstm_state_clip_nan=clip_nan)
    want = numpy_rnn("lstm", arrays["data"], arrays["parameters"], arrays["state"],
                     arrays["state_cell"], 2, True, 4, clip=(-0.3, 0.4), clip_nan=clip_nan)
    assert outs[2].asnumpy().max() <= 0.4 + 1e-7 and outs[2].asnumpy().min() >= -0.3 - 1e-7
    for got, ref in zip(outs, want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-4, atol=1e-5)


def test_lstm_state_clip_nan_becomes_upper_bound():
    arrays = random_inputs(np.random.default_rng(0), "lstm", 1, False, 2, 1, 1, 1)
    arrays["state_cell"][:] = np.nan
    _, _, c = run(arrays, state_size=2, num_layers=1, mode="lstm", lstm_state_clip_min=-1,
                  lstm_state_clip_max=0.5, lstm_state_clip_nan=True)
    np.testing.assert_array_equal(c.asnumpy(), 0.5)


# -- gradients by finite differences (float64) ---------------------------------------------------
def finite_difference_check(arrays, kw, names, eps=1e-6, seed=0, entries=10):
    """The gradient of sum(heads * outputs) against central differences of ``entries`` drawn
    elements of every input."""
    rng = np.random.default_rng(seed)
    nds = {k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
    for k in names:
        nds[k].attach_grad()
    with mx.autograd.record():
        outs = mx.nd.RNN(**nds, state_outputs=True, **kw)
    heads = [rng.standard_normal(o.shape) for o in outs]
    mx.autograd.backward(outs, [mx.nd.array(h, dtype="float64") for h in heads])

    def loss(values):
        got = mx.nd.RNN(**{k: mx.nd.array(v, dtype=v.dtype) for k, v in values.items()},
                        state_outputs=True, **kw)
        return sum(float((o.asnumpy() * h).sum()) for o, h in zip(got, heads))

    for k in names:
        picked = rng.choice(arrays[k].size, min(entries, arrays[k].size), replace=False)
        numeric = np.zeros(picked.size)
        for j, i in enumerate(picked):
            values = {key: v.copy() for key, v in arrays.items()}
            values[k].reshape(-1)[i] += eps
            up = loss(values)
            values[k].reshape(-1)[i] -= 2 * eps
            numeric[j] = (up - loss(values)) / (2 * eps)
        np.testing.assert_allclose(nds[k].grad.asnumpy().reshape(-1)[picked], numeric,
                                   rtol=1e-5, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("mode,bidirectional,extra", [
    ("rnn_tanh", True, {}), ("rnn_relu", False, {}), ("gru", True, {}), ("lstm", True, {}),
    ("lstm", False, {"projection_size": 2}),
    ("lstm", True, {"lstm_state_clip_min": -0.5, "lstm_state_clip_max": 0.5}),
    ("gru", True, {"use_sequence_length": True}), ("lstm", True, {"use_sequence_length": True}),
])
def test_gradient_matches_finite_differences(mode, bidirectional, extra):
    rng = np.random.default_rng(7)
    hidden = 3
    arrays = random_inputs(rng, mode, 2, bidirectional, hidden, 3, 2, 2,
                           proj=extra.get("projection_size"), dtype="float64")
    if "lstm_state_clip_min" in extra:
        arrays["parameters"] *= 3
    names = [k for k in arrays]
    if extra.get("use_sequence_length"):
        arrays["sequence_length"] = np.array([3.0, 1.0])
    kw = dict(state_size=hidden, num_layers=2, bidirectional=bidirectional, mode=mode, **extra)
    finite_difference_check(arrays, kw, names)


# -- dropout between layers ----------------------------------------------------------------------
def test_dropout_only_in_training_and_between_layers():
    rng = np.random.default_rng(1)
    arrays = random_inputs(rng, "rnn_tanh", 2, False, 4, 3, 2, 3)
    kw = dict(state_size=4, num_layers=2, mode="rnn_tanh", p=0.5)
    want = numpy_rnn("rnn_tanh", arrays["data"], arrays["parameters"], arrays["state"], None,
                     2, False, 4)
    for got, ref in zip(run(arrays, **kw), want):  # inference: no dropout
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    one = random_inputs(rng, "rnn_tanh", 1, False, 4, 3, 2, 3)
    with mx.autograd.train_mode():  # one layer: nothing between layers to drop
        got = run(one, state_size=4, num_layers=1, mode="rnn_tanh", p=0.5)
    ref = numpy_rnn("rnn_tanh", one["data"], one["parameters"], one["state"], None, 1, False, 4)
    np.testing.assert_allclose(got[0].asnumpy(), ref[0], rtol=1e-4, atol=1e-5)


def test_dropout_training_gradient_matches_finite_differences():
    """With the generator seeded before each forward the mask repeats, so the gradient through
    the dropped, rescaled layer outputs can be checked by differences."""
    rng = np.random.default_rng(2)
    arrays = random_inputs(rng, "gru", 2, False, 3, 3, 2, 2, dtype="float64")
    kw = dict(state_size=3, num_layers=2, mode="gru", p=0.4)
    nds = {k: mx.nd.array(v, dtype="float64") for k, v in arrays.items()}
    nds["data"].attach_grad()
    mx.random.seed(11)
    with mx.autograd.record():
        out = mx.nd.RNN(**nds, **kw)
    head = rng.standard_normal(out.shape)
    out.backward(mx.nd.array(head, dtype="float64"))

    def loss(data):
        mx.random.seed(11)
        with mx.autograd.train_mode():
            got = mx.nd.RNN(**{**nds, "data": mx.nd.array(data, dtype="float64")}, **kw)
        return float((got.asnumpy() * head).sum())

    picked = rng.choice(arrays["data"].size, 8, replace=False)
    numeric = np.zeros(picked.size)
    for j, i in enumerate(picked):
        d = arrays["data"].copy()
        d.reshape(-1)[i] += 1e-6
        up = loss(d)
        d.reshape(-1)[i] -= 2e-6
        numeric[j] = (up - loss(d)) / 2e-6
    np.testing.assert_allclose(nds["data"].grad.asnumpy().reshape(-1)[picked], numeric,
                               rtol=1e-5, atol=1e-7)
    with mx.autograd.train_mode():
        mx.random.seed(11)
        dropped = mx.nd.RNN(**nds, **kw).asnumpy()
    inference = mx.nd.RNN(**nds, **kw).asnumpy()
    assert not np.allclose(dropped, inference)


# -- the cell kernel against its equations --------------------------------------------------------
@given(mode=st.sampled_from(sorted(GATES)), n=st.integers(1, 4), h=st.integers(1, 70),
       seed=st.integers(0, 2**16))
def test_cell_kernel_step_and_backward(mode, n, h, seed):
    """One step and its backward on ``nn_rnn_cell`` (every column width, past vector lanes)
    against the equations and their derivatives written here."""
    rng = np.random.default_rng(seed)
    g = GATES[mode]
    xw, hw = (rng.standard_normal((n, g * h)) for _ in range(2))
    hp, cp, dh, dc = (rng.standard_normal((n, h)) for _ in range(4))
    saved = rnn_ops.step(mode, xw, hw, hp, cp)
    dxw, dhw, direct, dcp = rnn_ops.step_backward(mode, dh, saved, hp, cp, dc)
    a = xw + hw
    if mode in ("rnn_relu", "rnn_tanh"):
        out = np.maximum(a, 0) if mode == "rnn_relu" else np.tanh(a)
        dpre = dh * (a > 0) if mode == "rnn_relu" else dh * (1 - out ** 2)
        np.testing.assert_allclose(saved[0], out, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(dxw, dpre, rtol=1e-12, atol=1e-14)
        return
    if mode == "lstm":
        i, f, gg, o = _sigmoid(a[:, :h]), _sigmoid(a[:, h:2 * h]), np.tanh(a[:, 2 * h:3 * h]), \
            _sigmoid(a[:, 3 * h:])
        c = f * cp + i * gg
        np.testing.assert_allclose(saved[1], c, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(saved[0], o * np.tanh(c), rtol=1e-12, atol=1e-14)
        dct = dc + dh * o * (1 - np.tanh(c) ** 2)
        want = np.concatenate([dct * gg * i * (1 - i), dct * cp * f * (1 - f),
                               dct * i * (1 - gg ** 2), dh * np.tanh(c) * o * (1 - o)], axis=1)
        np.testing.assert_allclose(dxw, want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dcp, dct * f, rtol=1e-10, atol=1e-12)
        return
    r, z = _sigmoid(a[:, :h]), _sigmoid(a[:, h:2 * h])
    nn = np.tanh(xw[:, 2 * h:] + r * hw[:, 2 * h:])
    np.testing.assert_allclose(saved[0], (1 - z) * nn + z * hp, rtol=1e-12, atol=1e-14)
    dn = dh * (1 - z) * (1 - nn ** 2)
    dr = dn * hw[:, 2 * h:] * r * (1 - r)
    dz = dh * (hp - nn) * z * (1 - z)
    np.testing.assert_allclose(dxw, np.concatenate([dr, dz, dn], axis=1), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(dhw, np.concatenate([dr, dz, dn * r], axis=1), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(direct, dh * z, rtol=1e-12, atol=1e-14)


# -- bad input -----------------------------------------------------------------------------------
def _good(mode="lstm"):
    return random_inputs(np.random.default_rng(0), mode, 1, False, 2, 2, 1, 2)


@pytest.mark.parametrize("kw,arrays_change,error,words", [
    ({"mode": "lstmx"}, {}, InvalidValue, "mode must be one of"),
    ({"state_size": None}, {}, MissingValue, "state_size is required"),
    ({"num_layers": 0}, {}, MXNetError, "num_layers must be at least 1"),
    ({"projection_size": 1, "mode": "gru"}, {}, InvalidValue, "projection_size is only"),
    ({"projection_size": 3}, {}, InvalidValue, "must not exceed state_size"),
    ({"lstm_state_clip_min": 0.1}, {}, InvalidValue, "specified together"),
    ({"lstm_state_clip_min": 1, "lstm_state_clip_max": 0}, {}, InvalidValue,
     "greater or equal"),
    ({"p": 1.5}, {}, MXNetError, "RNN: p"),
    ({}, {"parameters": np.zeros(5, np.float32)}, InvalidValue, "parameters has shape (5,)"),
    ({}, {"state": np.zeros((2, 1, 2), np.float32)}, InvalidValue, "state has shape (2, 1, 2)"),
    ({}, {"data": np.zeros((2, 2), np.float32)}, InvalidValue, "data must be 3-D"),
    ({}, {"state_cell": None}, InvalidType, "state_cell"),
    ({}, {"data": np.zeros((2, 1, 2), np.int32)}, InvalidType, "data must be one of"),
    ({}, {"sequence_length": np.ones(1, np.float32)}, InvalidValue,
     "needs use_sequence_length=True"),
    ({"use_sequence_length": True}, {"sequence_length": np.ones(3, np.float32)}, InvalidValue,
     "sequence_length has shape (3,)"),
])
def test_bad_input_names_the_argument(kw, arrays_change, error, words):
    arrays = {**_good(), **arrays_change}
    nds = {k: (None if v is None else mx.nd.array(v, dtype=v.dtype)) for k, v in arrays.items()}
    params = {"state_size": 2, "num_layers": 1, "mode": "lstm", **kw}
    with pytest.raises(error, match=None) as caught:
        mx.nd.RNN(**nds, **params)
    assert words in str(caught.value)


def test_state_cell_refused_outside_lstm_and_out_refused():
    arrays = _good("gru")
    nds = {k: mx.nd.array(v) for k, v in arrays.items()}
    with pytest.raises(InvalidValue, match="state_cell is only an input of mode 'lstm'"):
        mx.nd.RNN(**nds, state_cell=nds["state"], state_size=2, num_layers=1, mode="gru")
    with pytest.raises(NotSupported, match="out="):
        mx.nd.RNN(**nds, state_size=2, num_layers=1, mode="gru", out=nds["data"])


def test_single_output_without_state_outputs():
    nds = {k: mx.nd.array(v) for k, v in _good("rnn_tanh").items()}
    out = mx.nd.RNN(**nds, state_size=2, num_layers=1, mode="rnn_tanh")
    assert isinstance(out, mx.nd.NDArray) and out.shape == (2, 1, 2)


# -- on a GPU (tests/test_gpu.py runs this) ------------------------------------------------------
def check_rnn_on_gpu(ctx: mx.Context) -> None:
    """Kernel ``nn_rnn_cell`` (every mode's step and backward) on ``ctx``: outputs and
    gradients of MXNet's recorded single-layer cases and a bidirectional two-layer lstm."""
    for case in CASES[:4] + CASES[5:6]:
        names = ["data", "parameters", "state"] + (["state_cell"] if case["mode"] == "lstm"
                                                   else [])
        arrays = [mx.nd.array(np.array(case["inputs"][k], dtype=np.float32), ctx=ctx)
                  for k in names]
        for a in arrays:
            a.attach_grad()
        with mx.autograd.record():
            outs = mx.nd.RNN(*arrays, state_outputs=True, **case_kwargs(case))
        mx.autograd.backward(outs, [mx.nd.array(np.array(h, dtype=np.float32), ctx=ctx)
                                    for h in case["heads"]])
        for got, want in zip(outs, case["outputs"]):
            assert got.context == ctx
            np.testing.assert_allclose(got.asnumpy(), np.array(want), rtol=1e-4, atol=1e-5)
        for name, a in zip(names, arrays):
            np.testing.assert_allclose(a.grad.asnumpy(), np.array(case["grads"][name]),
                                       rtol=1e-4, atol=1e-5, err_msg=name)
