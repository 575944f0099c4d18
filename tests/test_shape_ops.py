"""Shape and slicing ops of ``mx.nd`` against numpy / scipy oracles (MXNet 1.9.1 semantics:
output storage types, the errors, csr ``slice`` and ``concat``), on kernels ``strided`` and
``shape``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import StorageFallbackWarning

shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)
nonempty = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


def _values(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    return np.array(rng.integers(-9, 10, size=shape) / 2, dtype=dtype)


def _nd(values):
    return mx.nd.array(values, dtype=values.dtype)


def _csr(rng, rows, cols, density):
    dense = np.where(rng.random((rows, cols)) < density,
                     rng.integers(1, 9, (rows, cols)), 0).astype(np.float32)
    return dense, mx.nd.array(dense).tostype("csr")


@settings(max_examples=30, deadline=None)
@given(shapes, st.data())
def test_transpose_swapaxes_and_T(shape, data):
    x = _values(shape)
    axes = tuple(data.draw(st.permutations(range(len(shape)))))
    a = _nd(x)
    got = mx.nd.transpose(a, axes=axes)
    assert got.stype == "default" and got.shape == x.transpose(axes).shape
    np.testing.assert_array_equal(got.asnumpy(), x.transpose(axes))
    np.testing.assert_array_equal(a.T.asnumpy(), x.T)
    np.testing.assert_array_equal(a.transpose(*axes).asnumpy(), x.transpose(axes))
    i, j = data.draw(st.integers(0, len(shape) - 1)), data.draw(st.integers(0, len(shape) - 1))
    np.testing.assert_array_equal(mx.nd.swapaxes(a, i, j).asnumpy(), np.swapaxes(x, i, j))


@settings(max_examples=30, deadline=None)
@given(shapes, st.data())
def test_flip_tile_repeat(shape, data):
    x = _values(shape, seed=1)
    a = _nd(x)
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                              unique=True))
    np.testing.assert_array_equal(mx.nd.flip(a, axis=tuple(axes)).asnumpy(), np.flip(x, axes))
    np.testing.assert_array_equal(a.flip(axis=axes[0]).asnumpy(), np.flip(x, axes[0]))
    reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=5)))
    np.testing.assert_array_equal(mx.nd.tile(a, reps=reps).asnumpy(), np.tile(x, reps))
    count = data.draw(st.integers(0, 3))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    np.testing.assert_array_equal(mx.nd.repeat(a, repeats=count, axis=axis).asnumpy(),
                                  np.repeat(x, count, axis=axis))


def test_reshapes_copy_as_mxnet_ops():
    x = _values((2, 3, 4), seed=2)
    a = _nd(x)
    r = mx.nd.reshape(a, shape=(-1, 0))
    np.testing.assert_array_equal(r.asnumpy(), x.reshape(8, 3))
    r[:] = 0  # a copy: the input is untouched
    np.testing.assert_array_equal(a.asnumpy(), x)
    np.testing.assert_array_equal(mx.nd.reshape(a, shape=(-4, 1, 2, -2)).asnumpy(),
                                  x.reshape(1, 2, 3, 4))
    np.testing.assert_array_equal(mx.nd.reshape(a, shape=(-1, 0), reverse=True).asnumpy(),
                                  x.reshape(6, 4))  # MXNet: 0 copies the last dimension
    np.testing.assert_array_equal(mx.nd.expand_dims(a, axis=-1).asnumpy(), x[..., None])
    np.testing.assert_array_equal(a.expand_dims(0).asnumpy(), x[None])
    np.testing.assert_array_equal(mx.nd.flatten(a).asnumpy(), x.reshape(2, 12))
    np.testing.assert_array_equal(mx.nd.flatten(mx.nd.ones((3,))).asnumpy(), np.ones((3, 1)))
    ones = mx.nd.ones((1, 2, 1))
    assert mx.nd.squeeze(ones).shape == (2,) and ones.squeeze(axis=(0, 2)).shape == (2,)
    assert mx.nd.squeeze(mx.nd.ones((1, 1))).shape == (1,)  # as MXNet, not ()


@st.composite
def slices(draw):
    """A shape and a ``slice`` call on its leading dimensions (None entries, negative bounds
    and steps, out-of-range bounds that clip)."""
    shape = draw(nonempty)
    k = draw(st.integers(1, len(shape)))
    bound = st.one_of(st.none(), st.integers(-6, 6))
    begin = [draw(bound) for _ in range(k)]
    end = [draw(bound) for _ in range(k)]
    step = draw(st.one_of(st.none(), st.lists(st.sampled_from((None, 1, 2, -1, -3)),
                                              min_size=k, max_size=k)))
    return shape, begin, end, step


@settings(max_examples=40, deadline=None)
@given(slices())
def test_slice_against_python_slicing(case):
    shape, begin, end, step = case
    x = _values(shape, seed=3)
    steps = step or [None] * len(begin)
    expect = x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, steps))]
    got = mx.nd.slice(_nd(x), begin=tuple(begin), end=tuple(end), step=step)
    assert got.shape == expect.shape
    np.testing.assert_array_equal(got.asnumpy(), expect)
    np.testing.assert_array_equal(mx.nd.crop(_nd(x), begin=tuple(begin), end=tuple(end),
                                             step=step).asnumpy(), expect)


def test_slice_axis_slice_like_and_split():
    x = _values((2, 3, 4), seed=4)
    a = _nd(x)
    np.testing.assert_array_equal(mx.nd.slice_axis(a, axis=2, begin=-3, end=None).asnumpy(),
                                  x[:, :, 1:])
    np.testing.assert_array_equal(a.slice_axis(axis=0, begin=0, end=1).asnumpy(), x[:1])
    like = mx.nd.ones((1, 2, 3))
    np.testing.assert_array_equal(mx.nd.slice_like(a, like).asnumpy(), x[:1, :2, :3])
    np.testing.assert_array_equal(a.slice_like(like, axes=(0, -1)).asnumpy(), x[:1, :, :3])
    smaller = mx.nd.ones((1, 2))  # negative axes count from data's end, as MXNet's
    np.testing.assert_array_equal(a.slice_like(smaller, axes=(0, -2)).asnumpy(), x[:1, :2])
    with pytest.raises(mx.MXNetError, match=r"axis 2 \(of axes \(2,\)\) is beyond"):
        a.slice_like(smaller, axes=(2,))
    parts = mx.nd.split(a, num_outputs=3, axis=1)
    for got, expect in zip(parts, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(got.asnumpy(), expect)
    squeezed = mx.nd.SliceChannel(a, num_outputs=3, axis=1, squeeze_axis=True)
    np.testing.assert_array_equal(squeezed[2].asnumpy(), x[:, 2])
    one = a.split(num_outputs=1, axis=-1)
    assert isinstance(one, mx.nd.NDArray) and one.shape == x.shape  # one part: no list


@settings(max_examples=25, deadline=None)
@given(nonempty, st.data())
def test_concat_and_stack(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    count = data.draw(st.integers(1, 3))
    parts = []
    for k in range(count):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        parts.append(_values(tuple(s), seed=k))
    got = mx.nd.concat(*map(_nd, parts), dim=axis)
    np.testing.assert_array_equal(got.asnumpy(), np.concatenate(parts, axis=axis))
    same = [_values(shape, seed=k) for k in range(count)]
    new_axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    np.testing.assert_array_equal(mx.nd.stack(*map(_nd, same), axis=new_axis).asnumpy(),
                                  np.stack(same, axis=new_axis))
    np.testing.assert_array_equal(mx.nd.Concat(*map(_nd, same), dim=0).asnumpy(),
                                  np.concatenate(same, axis=0))


def test_broadcasts():
    x = _values((2, 1, 4), seed=5)
    a = _nd(x)
    np.testing.assert_array_equal(mx.nd.broadcast_to(a, shape=(2, 3, 4)).asnumpy(),
                                  np.broadcast_to(x, (2, 3, 4)))
    np.testing.assert_array_equal(a.broadcast_to((0, 3, 0)).asnumpy(),  # 0 keeps the size
                                  np.broadcast_to(x, (2, 3, 4)))
    np.testing.assert_array_equal(mx.nd.broadcast_like(a, mx.nd.ones((2, 5, 4))).asnumpy(),
                                  np.broadcast_to(x, (2, 5, 4)))
    np.testing.assert_array_equal(
        a.broadcast_like(mx.nd.ones((5, 6)), lhs_axes=(1,), rhs_axes=(0,)).asnumpy(),
        np.broadcast_to(x, (2, 5, 4)))
    y = _values((1, 3, 1), seed=6)
    np.testing.assert_array_equal(mx.nd.broadcast_axis(_nd(y), axis=(0, 2), size=(2, 4)).asnumpy(),
                                  np.broadcast_to(y, (2, 3, 4)))
    np.testing.assert_array_equal(_nd(y).broadcast_axes(axis=0, size=3).asnumpy(),
                                  np.broadcast_to(y, (3, 3, 1)))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 3, 4, 3)])
def test_pad_against_numpy(mode, shape):
    x = _values(shape, seed=7)
    rng = np.random.default_rng(len(shape))
    spatial = [(int(rng.integers(0, n)), int(rng.integers(0, n))) for n in shape[2:]]
    widths = [(0, 0), (0, 0), *spatial]
    flat = tuple(w for pair in widths for w in pair)
    got = mx.nd.pad(_nd(x), mode=mode, pad_width=flat, constant_value=2.5)
    kwargs = {"constant_values": 2.5} if mode == "constant" else {}
    np.testing.assert_array_equal(got.asnumpy(), np.pad(x, widths, mode=mode, **kwargs))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 7), st.integers(0, 6), st.sampled_from((0.0, 0.3, 1.0)), st.data())
def test_csr_slice_and_concat_stay_csr(rows, cols, density, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    dense, c = _csr(rng, rows, cols, density)
    bound = st.one_of(st.none(), st.integers(-8, 8))
    begin, end = (data.draw(bound), data.draw(bound)), (data.draw(bound), data.draw(bound))
    got = mx.nd.slice(c, begin=begin, end=end)
    expect = dense[slice(begin[0], end[0]), slice(begin[1], end[1])]
    assert got.stype == "csr" and got.shape == expect.shape
    np.testing.assert_array_equal(got.asnumpy(), expect)
    got.check_format()
    other, d = _csr(rng, data.draw(st.integers(0, 4)), cols, density)
    joined = mx.nd.concat(c, d, c, dim=0)
    assert joined.stype == "csr"
    np.testing.assert_array_equal(joined.asnumpy(), np.concatenate([dense, other, dense]))
    joined.check_format()
    ref = scipy.sparse.vstack([scipy.sparse.csr_matrix(dense), scipy.sparse.csr_matrix(other),
                               scipy.sparse.csr_matrix(dense)]).tocsr()
    np.testing.assert_array_equal(joined.indptr.asnumpy(), ref.indptr)


def test_sparse_inputs_fall_back_to_dense_as_mxnet():
    dense = np.array([[1, 0, 2], [0, 0, 3]], np.float32)
    c = mx.nd.array(dense).tostype("csr")
    r = mx.nd.array(dense).tostype("row_sparse")
    with pytest.warns(StorageFallbackWarning):
        t = mx.nd.transpose(c)
    assert t.stype == "default"
    np.testing.assert_array_equal(t.asnumpy(), dense.T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StorageFallbackWarning)
        for got, expect in (
            (c.T, dense.T),
            (mx.nd.slice(c, begin=(0, 0), end=(2, 3), step=(2, 1)), dense[::2]),  # steps: dense
            (mx.nd.slice_axis(c, axis=1, begin=1, end=3), dense[:, 1:]),
            (mx.nd.concat(c, c, dim=1), np.concatenate([dense, dense], 1)),
            (mx.nd.concat(r, r, dim=0), np.concatenate([dense, dense])),
            (mx.nd.concat(c, mx.nd.array(dense), dim=0), np.concatenate([dense, dense])),
            (mx.nd.expand_dims(r, axis=0), dense[None]),
        ):
            assert got.stype == "default"
            np.testing.assert_array_equal(got.asnumpy(), expect)


def test_out_is_written_and_checked():
    x = _values((2, 3), seed=8)
    out = mx.nd.zeros((3, 2))
    assert mx.nd.transpose(_nd(x), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), x.T)
    rsp_out = mx.nd.zeros((4, 3), stype="row_sparse")
    mx.nd.concat(_nd(x), _nd(x), dim=0, out=rsp_out)
    assert rsp_out.stype == "row_sparse"
    np.testing.assert_array_equal(rsp_out.asnumpy(), np.concatenate([x, x]))
    with pytest.raises(mx.MXNetError, match="out has shape"):
        mx.nd.transpose(_nd(x), out=mx.nd.zeros((2, 3)))


@pytest.mark.parametrize("call, match", [
    (lambda a: mx.nd.transpose(a, axes=(1, 0)), "each of the 3"),
    (lambda a: mx.nd.transpose(a, axes=(1, 1, 0)), "repeats"),
    (lambda a: mx.nd.expand_dims(a, axis=4), "out of range"),
    (lambda a: mx.nd.squeeze(a, axis=0), "size 2, not 1"),
    (lambda a: mx.nd.swapaxes(a, 0, 3), "dim2 3 is out of range"),
    (lambda a: mx.nd.flip(a, axis=3), "out of range"),
    (lambda a: mx.nd.reshape(a, shape=(5, -1)), "cannot reshape"),
    (lambda a: mx.nd.reshape(a, shape=(-1, -1)), "only one dimension"),
    (lambda a: mx.nd.tile(a, reps=(0,)), "at least 1"),
    (lambda a: mx.nd.repeat(a, repeats=-1), "at least 0"),
    (lambda a: mx.nd.split(a, num_outputs=2, axis=1), "does not divide"),
    (lambda a: mx.nd.slice(a, begin=(0,), end=(2,), step=(0,)), "cannot be 0"),
    (lambda a: mx.nd.slice(a, begin=(0, 0, 0, 0), end=(1, 1, 1, 1)), "more entries"),
    (lambda a: mx.nd.slice_axis(a, axis=2, begin=3, end=1), "begin < end"),
    (lambda a: mx.nd.slice_axis(a, axis=2, begin=0, end=10), "begin < end"),
    (lambda a: mx.nd.slice_like(a, mx.nd.ones((3, 3, 3))), "exceeds"),
    (lambda a: mx.nd.broadcast_to(a, shape=(2, 3, 5)), "cannot be broadcast"),
    (lambda a: mx.nd.broadcast_axis(a, axis=0, size=2), "only size-1"),
    (lambda a: mx.nd.concat(a, mx.nd.ones((2, 3)), dim=0), "ranks differ"),
    (lambda a: mx.nd.concat(a, mx.nd.ones((2, 2, 4)), dim=0), "differ only in dimension 0"),
    (lambda a: mx.nd.concat(a, a.astype("float64")), "one dtype"),
    (lambda a: mx.nd.stack(a, a, axis=4), "out of range"),
    (lambda a: mx.nd.pad(a, mode="edge", pad_width=(0,) * 6), "4-D and 5-D"),
    (lambda a: mx.nd.pad(a.reshape((1, 2, 3, 4)), mode="constant", pad_width=(1,) + (0,) * 7),
     "first two dimensions"),
    (lambda a: mx.nd.pad(a.reshape((1, 2, 3, 4)), mode="reflect", pad_width=(0,) * 4 + (3, 0, 0, 0)),
     "smaller than"),
    (lambda a: mx.nd.pad(a.reshape((1, 2, 3, 4)), mode="wrap", pad_width=(0,) * 8), "mode"),
])
def test_bad_arguments_raise_mxnet_errors(call, match):
    with pytest.raises(mx.MXNetError, match=match):
        call(_nd(_values((2, 3, 4))))


def test_on_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    x = _values((2, 3, 4), seed=9)
    a = mx.nd.array(x, ctx=mx.gpu(0))
    for got, expect in (
        (mx.nd.transpose(a, axes=(2, 0, 1)), x.transpose(2, 0, 1)),
        (mx.nd.concat(a, a, dim=1), np.concatenate([x, x], 1)),
        (mx.nd.slice(a, begin=(1, None, 3), end=(None, None, 0), step=(1, 2, -1)), x[1:, ::2, 3:0:-1]),
        (mx.nd.pad(a.reshape((1, 2, 3, 4)), mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
         np.pad(x.reshape(1, 2, 3, 4), [(0, 0), (0, 0), (1, 1), (2, 2)], mode="edge")),
    ):
        assert got.context == mx.gpu(0)
        np.testing.assert_array_equal(got.asnumpy(), expect)
    c = mx.nd.array(x[0]).tostype("csr").as_in_context(mx.gpu(0))
    got = mx.nd.slice(c, begin=(1, 1), end=(3, 3))
    assert got.stype == "csr" and got.context == mx.gpu(0)
    np.testing.assert_array_equal(got.asnumpy(), x[0, 1:3, 1:3])
    np.testing.assert_array_equal(mx.nd.concat(c, c, dim=0).asnumpy(), np.concatenate([x[0]] * 2))


@settings(max_examples=30, deadline=None)
@given(dims=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_reshape_like_against_numpy(dims, data):
    """MXNet's reshape_like: lhs's dimensions [lhs_begin, lhs_end) become rhs's
    [rhs_begin, rhs_end) (by default the whole of each); numpy's reshape is the oracle."""
    x = _values(tuple(dims), seed=len(dims))
    lb = data.draw(st.integers(0, len(dims)))
    le = data.draw(st.integers(lb, len(dims)))
    middle = int(np.prod(dims[lb:le]))
    rhs_dims = data.draw(st.sampled_from([(middle,), (1, middle), (middle, 1, 2)]))
    rhs = mx.nd.zeros(rhs_dims)
    rb, re_ = (0, 1) if len(rhs_dims) == 1 else (0, 2)
    want = tuple(dims[:lb]) + tuple(rhs_dims[rb:re_]) + tuple(dims[le:])
    got = mx.nd.reshape_like(_nd(x), rhs, lhs_begin=lb, lhs_end=le, rhs_begin=rb, rhs_end=re_)
    np.testing.assert_array_equal(got.asnumpy(), x.reshape(want))
    whole = _nd(x).reshape_like(mx.nd.zeros((x.size,)))
    np.testing.assert_array_equal(whole.asnumpy(), x.ravel())


def test_reshape_like_refuses_a_shape_of_another_size_naming_it():
    with pytest.raises(mx.MXNetError, match=r"lhs of shape \(2, 3\) \(6 elements\) cannot take "
                                            r"the shape \(4,\)"):
        mx.nd.reshape_like(mx.nd.zeros((2, 3)), mx.nd.zeros((4,)))
    with pytest.raises(mx.MXNetError, match="lhs_begin 3 is out of range for 2 dimensions"):
        mx.nd.reshape_like(mx.nd.zeros((2, 3)), mx.nd.zeros((6,)), lhs_begin=3)
