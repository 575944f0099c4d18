"""The strided core (kernel ``strided``, sparsegen/ops/strided.py) against numpy's own views:
``as_strided`` for arbitrary strides, ``transpose``, steps and flips, ``broadcast_to`` and
numpy's broadcasting arithmetic and comparisons."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from sparsegen import device
from sparsegen.device import DeviceArray
from sparsegen.errors import SparsegenError
from sparsegen.ops import strided as S
from sparsegen.opnames import STRIDED_BINARY_OPS

shapes = st.lists(st.integers(0, 5), min_size=0, max_size=5).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 5), min_size=1, max_size=5).map(tuple)


def _values(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    return np.array(rng.integers(-50, 50, size=shape) / 4, dtype=dtype)


def _numpy_view(x: np.ndarray, shape, view: S.View) -> np.ndarray:
    """The numpy oracle of a view: ``as_strided`` over the flat buffer, strides in bytes."""
    flat = x.reshape(-1)
    base = flat[view.offset:] if flat.size else flat
    return as_strided(base, shape, [s * x.itemsize for s in view.strides]).copy()


@st.composite
def views(draw):
    """A buffer and an in-bounds view of it: random shape, signed strides (0 included), offset."""
    shape = draw(shapes)
    strides = [draw(st.integers(-7, 7)) for _ in shape]
    low = sum(min(0, s * (n - 1)) for s, n in zip(strides, shape) if n)
    high = sum(max(0, s * (n - 1)) for s, n in zip(strides, shape) if n)
    offset = -low + draw(st.integers(0, 3))
    size = offset + high + 1 + draw(st.integers(0, 3))
    return _values((size,), seed=draw(st.integers(0, 99))), shape, S.View(tuple(strides), offset)


@settings(max_examples=60, deadline=None)
@given(views())
def test_copy_of_any_view(case):
    x, shape, view = case
    out = S.copy_view(x, shape, view)
    assert out.shape == shape and out.flags.c_contiguous
    np.testing.assert_array_equal(out, _numpy_view(x, shape, view))


@settings(max_examples=40, deadline=None)
@given(nonempty_shapes, st.data())
def test_transpose_step_and_flip(shape, data):
    x = _values(shape)
    axes = data.draw(st.permutations(range(len(shape))))
    got = S.copy_view(x, [shape[a] for a in axes], S.transposed(shape, axes))
    np.testing.assert_array_equal(got, x.transpose(axes))
    # a flipped, stepped slice of every axis: offset at the first element picked
    steps = [data.draw(st.sampled_from((1, 2, -1, -2))) for _ in shape]
    expect = x[tuple(slice(None, None, s) for s in steps)]
    strides = S.contiguous_strides(shape)
    offset = sum((n - 1) * st_ for n, s, st_ in zip(shape, steps, strides) if s < 0)
    view = S.View(tuple(s * st_ for s, st_ in zip(steps, strides)), offset)
    np.testing.assert_array_equal(S.copy_view(x, expect.shape, view), expect)


CORE_OPS = ("add", "sub", "mul", "div", "equal", "not_equal", "greater", "greater_equal",
            "lesser", "lesser_equal")
assert set(CORE_OPS) <= set(STRIDED_BINARY_OPS)


@st.composite
def broadcast_pairs(draw):
    """Two shapes that numpy broadcasts together, and the broadcast shape."""
    out = draw(shapes)
    def operand():
        keep = draw(st.integers(0, len(out)))
        return tuple(n if draw(st.booleans()) else 1 for n in out[len(out) - keep:])
    a, b = operand(), operand()
    return a, b, np.broadcast_shapes(a, b)


@settings(max_examples=50, deadline=None)
@given(broadcast_pairs(), st.sampled_from(CORE_OPS), st.sampled_from(("float32", "int32")))
def test_broadcast_binary(pair, fn, dtype):
    """The arithmetic of templates/elemwise/arith.py's MORE_BINARY (power, hypot, ...) is checked
    through the front end in tests/test_broadcast.py."""
    a_shape, b_shape, out_shape = pair
    a, b = _values(a_shape, dtype, 1), _values(b_shape, dtype, 2)
    if dtype == "int32":
        b[b == 0] = 3  # integer division by zero is the front end's to refuse
    got = S.binary_view(fn, a, S.broadcast(a_shape, out_shape), b, S.broadcast(b_shape, out_shape),
                        out_shape)
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "equal": np.equal,
           "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
           "lesser": np.less, "lesser_equal": np.less_equal}
    if fn == "div":
        expect = np.trunc(a / b).astype(dtype) if dtype == "int32" else a / b
    else:
        expect = ops[fn](a, b).astype(dtype)
    assert got.shape == out_shape and got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, expect)
    # broadcast_to is the copy of a broadcast view
    np.testing.assert_array_equal(S.copy_view(a, out_shape, S.broadcast(a_shape, out_shape)),
                                  np.broadcast_to(a, out_shape))


def test_binary_of_two_transposed_views_with_nan():
    a = _values((3, 4, 5), "float32", 3)
    a[0, 0, :] = np.nan
    b = _values((5, 4, 3), "float32", 4)
    view_a = S.transposed(a.shape, (2, 1, 0))
    got = S.binary_view("not_equal", a, view_a, b, S.contiguous(b.shape), (5, 4, 3))
    np.testing.assert_array_equal(got, (a.transpose(2, 1, 0) != b).astype(np.float32))


def test_collapse_merges_contiguous_dims_and_drops_ones():
    shape = (2, 1, 3, 4)
    assert S.collapse(shape, [S.contiguous(shape)]) == ([24], [[1]])
    assert S.collapse((2, 3, 4), [S.transposed((2, 4, 3), (0, 2, 1))]) == ([2, 3, 4], [[12, 1, 3]])
    assert S.collapse((1, 1), [S.View((5, 7))]) == ([1], [[0]])


def test_out_of_range_views_are_refused():
    x = np.zeros(10, np.float32)
    with pytest.raises(SparsegenError, match="reaches elements"):
        S.copy_view(x, (3, 4), S.View((4, 1)))
    with pytest.raises(SparsegenError, match="reaches elements -1"):
        S.copy_view(x, (2,), S.View((-1,), 0))
    with pytest.raises(SparsegenError, match="dtypes differ"):
        S.binary_view("add", x, S.contiguous((10,)), x.astype(np.float64), S.contiguous((10,)), (10,))


def test_views_of_emulated_gpu_buffers(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    x = _values((4, 6), "float32", 5)
    buf = DeviceArray.from_numpy(x, device.gpu_device(0))
    out = S.copy_view(buf, (6, 4), S.transposed((4, 6), (1, 0)))
    assert isinstance(out, DeviceArray)
    np.testing.assert_array_equal(out.numpy(), x.T)
    row = DeviceArray.from_numpy(x[0].copy(), device.gpu_device(0))
    out = S.binary_view("mul", buf, S.contiguous((4, 6)), row, S.broadcast((6,), (4, 6)), (4, 6))
    np.testing.assert_array_equal(out.numpy(), x * x[0])
