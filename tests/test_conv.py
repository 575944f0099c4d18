"""Convolution (kernel ``nn_conv``) against a numpy oracle of its own: 1-D, 2-D and 3-D, stride,
dilate, pad, groups, bias, empty batches and channels; MXNet 1.9.1's shapes, dtypes, errors and
storage fallback; the scenario of MXNet's own test_mkldnn_sparse."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

import sparsegen as mx
from sparsegen.errors import (InvalidType, InvalidValue, MXNetError, NotSupported,
                              StorageFallbackWarning)

nd = mx.nd


def conv_oracle(x, w, b, stride, dilate, pad, groups):
    """Convolution in float64 by numpy: zero-pad, take the dilated sliding windows at the strides,
    and sum each group's channels and window against its filters (einsum)."""
    rank = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *((p, p) for p in pad)])
    window = tuple(d * (k - 1) + 1 for k, d in zip(w.shape[2:], dilate))
    views = sliding_window_view(x, window, axis=tuple(range(2, 2 + rank)))
    views = views[(slice(None), slice(None), *(slice(None, None, s) for s in stride),
                   *(slice(None, None, d) for d in dilate))]
    spatial, taps = "xyz"[:rank], "ijk"[:rank]
    rule = f"nc{spatial}{taps},fc{taps}->nf{spatial}"
    per_group, filters = x.shape[1] // groups, w.shape[0] // groups
    out = np.concatenate(
        [np.einsum(rule, views[:, g * per_group:(g + 1) * per_group],
                   w[g * filters:(g + 1) * filters].astype(np.float64))
         for g in range(groups)], axis=1)
    return out if b is None else out + b.astype(np.float64).reshape(-1, *(1,) * rank)


def _conv(x, w, b=None, ctx=None, **params):
    """sparsegen's Convolution of numpy operands (bias ``b`` or none)."""
    arrays = [nd.array(a, ctx=ctx, dtype=a.dtype) for a in (x, w)]
    bias = None if b is None else nd.array(b, ctx=ctx, dtype=b.dtype)
    return nd.Convolution(*arrays, bias, kernel=w.shape[2:], num_filter=w.shape[0],
                          no_bias=b is None, **params)


def test_oracle_matches_a_hand_computed_convolution():
    x = np.array([[[1.0, 2, 3, 4]]])
    w = np.array([[[1.0, 10]]])
    np.testing.assert_array_equal(conv_oracle(x, w, np.array([0.5]), (2,), (1,), (1,), 1),
                                  [[[10.5, 32.5, 4.5]]])  # windows (0,1), (2,3), (4,0)
    x2 = np.arange(16.0).reshape(1, 2, 2, 4)
    w2 = np.ones((2, 1, 1, 2))  # two groups, one channel each; dilate 3 along the width
    np.testing.assert_array_equal(conv_oracle(x2, w2, None, (1, 1), (1, 3), (0, 0), 2),
                                  [[[[0 + 3], [4 + 7]], [[8 + 11], [12 + 15]]]])


@st.composite
def _case(draw):
    """A convolution: rank 1-3, geometry, groups, bias and small shapes (batch or channels 0)."""
    rank = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 3))
    per_group = draw(st.integers(0, 2)) if rank == 1 else draw(st.integers(1, 2))
    filters = groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    dilate = tuple(draw(st.integers(1, 2)) for _ in range(rank))
    pad = tuple(draw(st.integers(0, 2)) for _ in range(rank))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    low = [max(0, d * (k - 1) + 1 - 2 * p) for k, d, p in zip(kernel, dilate, pad)]
    spatial = tuple(draw(st.integers(lo, lo + (6 if rank == 1 else 3))) for lo in low)
    batch = draw(st.integers(0, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal((batch, groups * per_group, *spatial)).astype(np.float32)
    w = rng.standard_normal((filters, per_group, *kernel)).astype(np.float32)
    b = rng.standard_normal(filters).astype(np.float32) if draw(st.booleans()) else None
    return x, w, b, {"stride": stride, "dilate": dilate, "pad": pad, "num_group": groups}


@settings(max_examples=60)
@given(_case())
def test_convolution_matches_numpy(case):
    x, w, b, params = case
    got = _conv(x, w, b, **params)
    want = conv_oracle(x, w, b, params["stride"], params["dilate"], params["pad"],
                       params["num_group"])
    assert got.stype == "default" and got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype, tol", [("float16", 1e-2), ("float64", 1e-12)])
def test_float16_and_float64(dtype, tol):
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (2, 4, 6, 7)).astype(dtype)
    w = rng.uniform(-1, 1, (4, 2, 3, 2)).astype(dtype)
    b = rng.uniform(-1, 1, 4).astype(dtype)
    got = _conv(x, w, b, stride=(2, 1), dilate=(1, 2), pad=(1, 0), num_group=2)
    assert got.dtype == np.dtype(dtype)
    want = conv_oracle(x, w, b, (2, 1), (1, 2), (1, 0), 2)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)
    if dtype == "float16":  # 18-term sums accumulate in float32: only the final rounding is off
        np.testing.assert_array_equal(got.asnumpy(), want.astype(np.float32).astype(dtype))


def test_defaults_and_scalar_geometry_as_mxnet():
    """kernel, stride, dilate and pad take an int for a 1-D convolution; workspace, cudnn_tune,
    cudnn_off, name and the matching layout are accepted and change nothing."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 9)).astype(np.float32), np.ones((4, 3, 2), np.float32)
    got = nd.Convolution(nd.array(x), nd.array(w), kernel=2, stride=3, pad=1, dilate=2,
                         num_filter=4, no_bias=True, workspace=512, cudnn_tune="fastest",
                         cudnn_off=True, layout="NCW", name="conv0")
    np.testing.assert_allclose(got.asnumpy(), conv_oracle(x, w, None, (3,), (2,), (1,), 1),
                               rtol=1e-5, atol=1e-5)
    out = nd.zeros((2, 4, 8))
    assert nd.Convolution(data=nd.array(x), weight=nd.array(w), kernel=(2,), num_filter=4,
                          no_bias=True, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), conv_oracle(x, w, None, (1,), (1,), (0,), 1),
                               rtol=1e-5, atol=1e-5)
    assert not hasattr(nd.sparse, "Convolution")  # as MXNet 1.9.1


def test_sparse_inputs_fall_back_to_dense(fresh_warnings):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2, 5)).astype(np.float32)
    x[1] = 0
    w = rng.standard_normal((2, 2, 3)).astype(np.float32)
    with pytest.warns(StorageFallbackWarning):
        got = nd.Convolution(nd.array(x).tostype("row_sparse"), nd.array(w).tostype("row_sparse"),
                             kernel=(3,), num_filter=2, no_bias=True)
    assert got.stype == "default"
    np.testing.assert_allclose(got.asnumpy(), conv_oracle(x, w, None, (1,), (1,), (0,), 1),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(InvalidValue, match="3-D data"):  # csr data is 2-D: never a convolution
        nd.Convolution(nd.array(x[:, 0]).tostype("csr"), nd.array(w), kernel=(3,),
                       num_filter=2, no_bias=True)


def test_mxnet_mkldnn_sparse_scenario():
    """MXNet's test_mkldnn_sparse: Convolution, then FullyConnected of its result equals numpy's
    product of (result - an all-zero row_sparse array) flattened."""
    mx.random.seed(0)
    arr = nd.random.uniform(shape=(10, 10, 32, 32))
    weight1 = nd.random.uniform(shape=(10, 10, 3, 3))
    arr = nd.Convolution(data=arr, weight=weight1, no_bias=True, kernel=(3, 3), num_filter=10)
    assert arr.shape == (10, 10, 30, 30)
    rs_arr = nd.sparse.row_sparse_array((nd.zeros_like(arr), np.arange(arr.shape[0])))
    weight2 = nd.random.uniform(shape=(10, int(np.prod(arr.shape[1:4]))))
    fc_res = nd.FullyConnected(data=arr, weight=weight2, no_bias=True, num_hidden=10)
    sum_res = nd.elemwise_sub(arr, rs_arr)
    res1 = np.dot(nd.flatten(sum_res).asnumpy(), weight2.asnumpy().T)
    np.testing.assert_allclose(res1, fc_res.asnumpy(), rtol=1e-4)


_X, _W = nd.ones((2, 4, 5, 5)), nd.ones((6, 4, 3, 3))
_BAD = [  # (keywords beside data, weight, kernel=(3, 3), num_filter=6, no_bias=True), error, text
    ({"kernel": None}, InvalidValue, "kernel is required"),
    ({"num_filter": None}, InvalidValue, "num_filter is required"),
    ({"num_filter": 0}, MXNetError, "num_filter must be at least 1"),
    ({"num_filter": 5}, InvalidValue, r"need weight \(5, 4, 3, 3\)"),
    ({"kernel": (2, 2)}, InvalidValue, r"weight \(6, 4, 2, 2\).*got weight \(6, 4, 3, 3\)"),
    ({"kernel": (3,)}, InvalidValue, "1-D kernel takes 3-D data"),
    ({"kernel": (3, 3, 3, 3)}, NotSupported, "1, 2 or 3 dimensions"),
    ({"kernel": (0, 3)}, MXNetError, "kernel must be at least 1"),
    ({"kernel": (3.5, 3)}, MXNetError, "kernel must be an integer"),
    ({"stride": (0, 1)}, MXNetError, "stride must be at least 1"),
    ({"stride": (2,)}, InvalidValue, "stride .* one value per kernel dimension"),
    ({"dilate": (1, 0)}, MXNetError, "dilate must be at least 1"),
    ({"pad": (-1, 0)}, MXNetError, "pad must be at least 0"),
    ({"stride": (2**40, 1)}, InvalidValue, "stride .* at most"),
    ({"dilate": (3, 1)}, InvalidValue, r"dilated kernel \(7 = .*exceeds spatial axis 0"),
    ({"num_group": 0}, MXNetError, "num_group must be at least 1"),
    ({"num_group": 3}, InvalidValue, r"num_group=3 must divide the input channels \(4\)"),
    ({"num_group": 4}, InvalidValue, r"num_group=4 must divide the num_filter \(6\)"),
    ({"no_bias": False}, MXNetError, "no_bias=False takes a bias, got none"),
    ({"bias": nd.ones(6)}, MXNetError, "no_bias=True takes no bias, got one"),
    ({"bias": nd.ones((6, 1)), "no_bias": False}, InvalidValue, r"got weight .* and bias \(6, 1\)"),
    ({"layout": "NHWC"}, NotSupported, "layout 'NHWC' is not supported"),
    ({"layout": "NCW"}, InvalidValue, "does not fit 4-D data"),
    ({"layout": "XYZ"}, InvalidValue, "layout must be None or one of"),
    ({"cudnn_tune": "bad"}, InvalidValue, "cudnn_tune must be one of"),
    ({"workspace": -1}, MXNetError, "workspace must be at least 0"),
    ({"out": nd.zeros((2, 6, 3, 4))}, MXNetError, "out has shape"),
    ({"data": nd.ones((2, 4, 5, 5), dtype="int32"), "weight": nd.ones((6, 4, 3, 3), dtype="int32")},
     InvalidType, "floating point data"),
    ({"weight": nd.ones((6, 4, 3, 3), dtype="float64")}, InvalidType, "one dtype"),
    ({"data": np.ones((2, 4, 5, 5))}, InvalidType, "data must be an NDArray"),
    ({"foo": 1}, InvalidType, "cannot find argument 'foo'"),
]


@pytest.mark.parametrize("change, error, text", _BAD)
def test_bad_arguments_raise_naming_them(change, error, text):
    params = {"data": _X, "weight": _W, "kernel": (3, 3), "num_filter": 6, "no_bias": True}
    params.update(change)
    with pytest.raises(error, match=text):
        nd.Convolution(**params)


def check_conv_on_gpu(ctx) -> None:
    """Kernel ``nn_conv`` on ``ctx`` (tests/test_gpu.py's kernel-family check calls it)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    for bias, (stride, dilate, pad) in itertools.product(
            (None, b), (((1, 1), (1, 1), (0, 0)), ((2, 1), (1, 2), (1, 1)))):
        got = _conv(x, w, bias, ctx=ctx, stride=stride, dilate=dilate, pad=pad, num_group=2)
        assert got.context == ctx
        np.testing.assert_allclose(got.asnumpy(), conv_oracle(x, w, bias, stride, dilate, pad, 2),
                                   rtol=1e-5, atol=1e-5)


def test_convolution_on_emulated_gpu(monkeypatch):
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    check_conv_on_gpu(mx.gpu(0))
