"""SequenceMask, SequenceLast and SequenceReverse (mx.nd and mx.sym) against plain numpy loops
over each sequence, their gradients against finite differences, and their refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue
from sparsegen.test_utils import check_numeric_gradient


def _mask(x, lengths, axis, value):
    out = x.copy()
    for n, length in enumerate(lengths):
        if axis == 0:
            out[int(length):, n] = value
        else:
            out[n, int(length):] = value
    return out


def _last(x, lengths, axis):
    return np.stack([x[int(length) - 1, n] if axis == 0 else x[n, int(length) - 1]
                     for n, length in enumerate(lengths)])


def _reverse(x, lengths):
    out = x.copy()
    for n, length in enumerate(lengths):
        out[:int(length), n] = x[:int(length), n][::-1]
    return out


@st.composite
def batches(draw):
    steps, batch = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    trailing = draw(st.sampled_from([(), (1,), (3,), (2, 2)]))
    axis = draw(st.sampled_from([0, 1]))
    shape = ((steps, batch) if axis == 0 else (batch, steps)) + trailing
    x = draw(st.sampled_from([np.float32, np.float64]))
    values = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape).astype(x)
    lengths = np.array(draw(st.lists(st.integers(1, steps), min_size=batch, max_size=batch)))
    return values, lengths, axis


@given(batches(), st.sampled_from([0.0, -2.5, np.nan, -np.inf]),
       st.sampled_from(["float32", "int32"]))
def test_sequence_mask(case, value, length_dtype):
    x, lengths, axis = case
    got = mx.nd.SequenceMask(mx.nd.array(x, dtype=x.dtype),
                             mx.nd.array(lengths, dtype=length_dtype),
                             use_sequence_length=True, value=value, axis=axis)
    np.testing.assert_array_equal(got.asnumpy(), _mask(x, lengths, axis, value))
    assert got.dtype == x.dtype
    whole = mx.nd.SequenceMask(mx.nd.array(x, dtype=x.dtype), axis=axis, value=value)
    np.testing.assert_array_equal(whole.asnumpy(), x)


@given(batches())
def test_sequence_last(case):
    x, lengths, axis = case
    data = mx.nd.array(x, dtype=x.dtype)
    got = mx.nd.SequenceLast(data, mx.nd.array(lengths), use_sequence_length=True, axis=axis)
    np.testing.assert_array_equal(got.asnumpy(), _last(x, lengths, axis))
    steps = x.shape[axis]
    np.testing.assert_array_equal(mx.nd.SequenceLast(data, axis=axis).asnumpy(),
                                  np.take(x, steps - 1, axis=axis))


@given(batches())
def test_sequence_reverse(case):
    x, lengths, axis = case
    if axis == 1:
        x = np.swapaxes(x, 0, 1).copy()
    got = mx.nd.SequenceReverse(mx.nd.array(x, dtype=x.dtype), mx.nd.array(lengths),
                                use_sequence_length=True)
    np.testing.assert_array_equal(got.asnumpy(), _reverse(x, lengths))
    np.testing.assert_array_equal(mx.nd.SequenceReverse(mx.nd.array(x, dtype=x.dtype)).asnumpy(),
                                  x[::-1])


def test_mxnet_values():
    # MXNet 1.9.1's answers for data arange(24).reshape(4, 3, 2), lengths [1, 4, 2]
    d = mx.nd.array(np.arange(24).reshape(4, 3, 2))
    lengths = mx.nd.array([1, 4, 2])
    np.testing.assert_array_equal(
        mx.nd.SequenceMask(d, lengths, use_sequence_length=True, value=-1).asnumpy()[:, :, 0],
        [[0, 2, 4], [-1, 8, 10], [-1, 14, -1], [-1, 20, -1]])
    np.testing.assert_array_equal(
        mx.nd.SequenceLast(d, lengths, use_sequence_length=True).asnumpy(),
        [[0, 1], [20, 21], [10, 11]])
    np.testing.assert_array_equal(
        mx.nd.SequenceReverse(d, lengths, use_sequence_length=True).asnumpy()[:, :, 0],
        [[0, 20, 10], [6, 14, 4], [12, 8, 16], [18, 2, 22]])


@pytest.mark.parametrize("op, axis", [("SequenceMask", 0), ("SequenceMask", 1),
                                      ("SequenceLast", 0), ("SequenceLast", 1),
                                      ("SequenceReverse", 0)])  # time first only, as MXNet's
def test_gradients_and_symbols(op, axis):
    x = np.random.default_rng(3).uniform(-1, 1, (4, 3, 2) if axis == 0 else (3, 4, 2))
    lengths = np.array([2.0, 4.0, 1.0])
    check_numeric_gradient(
        lambda data: getattr(mx.nd, op)(data, mx.nd.array(lengths), use_sequence_length=True,
                                        axis=axis), [x.astype(np.float32)], numeric_eps=1e-2)
    sym = getattr(mx.sym, op)(mx.sym.var("data"), mx.sym.var("sequence_length"),
                              use_sequence_length=True, axis=axis)
    assert sym.list_arguments() == ["data", "sequence_length"]
    args, outs, _ = sym.infer_shape(data=x.shape)
    assert args[1] == (3,) and outs[0] == (x.shape if op != "SequenceLast" else (3, 2))
    run = sym.bind(mx.cpu(), {"data": mx.nd.array(x), "sequence_length": mx.nd.array(lengths)})
    expected = {"SequenceMask": lambda: _mask(x, lengths, axis, 0.0),
                "SequenceLast": lambda: _last(x, lengths, axis),
                "SequenceReverse": lambda: _reverse(x, lengths)}[op]()
    np.testing.assert_allclose(run.forward()[0].asnumpy(), expected, rtol=1e-6)
    assert getattr(mx.sym, op)(mx.sym.var("data")).list_arguments() == ["data"]


def test_refusals():
    d = mx.nd.ones((4, 3))
    for bad in ([0, 4, 2], [1, 5, 2], [1.5, 2, 2]):  # MXNet reads past the array or truncates
        with pytest.raises(InvalidValue, match=r"sequence_length must hold integers in \[1, 4\]"):
            mx.nd.SequenceLast(d, mx.nd.array(bad), use_sequence_length=True)
    with pytest.raises(InvalidValue, match=r"\[0, 4\], got \[5.0\]"):
        mx.nd.SequenceMask(d, mx.nd.array([1, 5, 2]), use_sequence_length=True)
    with pytest.raises(InvalidValue, match=r"shape \(3,\)"):
        mx.nd.SequenceMask(d, mx.nd.array([1, 2]), use_sequence_length=True)
    with pytest.raises(InvalidValue, match="use_sequence_length is False"):
        mx.nd.SequenceMask(d, mx.nd.array([1, 2, 3]))
    with pytest.raises(InvalidValue, match="axis must be 0"):
        mx.nd.SequenceReverse(d, axis=1)
    with pytest.raises(InvalidValue, match="2 or more dimensions"):
        mx.nd.SequenceLast(mx.nd.ones((4,)))
    with pytest.raises(mx.MXNetError, match="value must be a number"):
        mx.nd.SequenceMask(d, value="0")
