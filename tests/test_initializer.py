"""``mx.init``: initializers' values against their formulas (bounds, moments within statistical
tolerance, orthogonality), the name dispatch, row_sparse targets and the registry; MXNet's names,
``dumps`` strings and error classes from tests/fixtures/init_metric.json (recorded by
tests/fixtures/record_init_metric.py)."""

from __future__ import annotations

import json
import logging
import math
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.initializer import InitDesc

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "init_metric.json")
                     .read_text())["init"]
MXNET_ERRORS = {"ValueError": ValueError, "NotImplementedError": NotImplementedError}


def _init(init: mx.init.Initializer, name: str, shape: tuple[int, ...],
          dtype: str = "float32") -> np.ndarray:
    arr = mx.nd.zeros(shape, dtype=dtype)
    init(InitDesc(name), arr)
    return arr.asnumpy()


def _moments_match(x: np.ndarray, mean: float, std: float) -> None:
    """The sample mean and standard deviation of ``x`` agree with ``mean`` / ``std`` (5 standard
    errors for the mean, 5% for the deviation: for the sizes here, far beyond chance)."""
    n = x.size
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(n)
    assert x.std() == pytest.approx(std, rel=0.05)


def test_uniform_values_and_moments():
    mx.random.seed(11)
    x = _init(mx.init.Uniform(0.5), "fc_weight", (100, 200))
    assert x.min() >= -0.5 and x.max() < 0.5
    _moments_match(x, 0.0, 0.5 / math.sqrt(3))
    default = _init(mx.init.Uniform(), "fc_weight", (30, 30))
    assert np.abs(default).max() <= 0.07 and np.abs(default).max() > 0.05


def test_normal_moments_and_dtype():
    mx.random.seed(12)
    x = _init(mx.init.Normal(2.0), "fc_weight", (100, 200), "float64")
    _moments_match(x, 0.0, 2.0)
    assert x.dtype == np.float64


def _fans(shape: tuple[int, ...]) -> tuple[float, float]:
    receptive = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
    return shape[1] * receptive, shape[0] * receptive


@settings(max_examples=15)
@given(shape=st.lists(st.integers(1, 6), min_size=2, max_size=4).map(tuple),
       factor=st.sampled_from(["avg", "in", "out"]), magnitude=st.floats(0.5, 6.0))
def test_xavier_uniform_bound(shape, factor, magnitude):
    fan_in, fan_out = _fans(shape)
    n = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor]
    bound = math.sqrt(magnitude / n)
    x = _init(mx.init.Xavier(factor_type=factor, magnitude=magnitude), "conv_weight", shape)
    assert np.all(np.abs(x) <= bound * (1 + 1e-6))


def test_xavier_moments_gaussian_and_msra():
    mx.random.seed(13)
    shape = (64, 32, 3, 3)
    fan_in, fan_out = _fans(shape)
    x = _init(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), "w_weight",
              shape)
    _moments_match(x, 0.0, math.sqrt(2 / fan_in))
    u = _init(mx.init.Xavier(), "w_weight", shape)
    _moments_match(u, 0.0, math.sqrt(3 / ((fan_in + fan_out) / 2)) / math.sqrt(3))
    m = _init(mx.init.MSRAPrelu(factor_type="out", slope=0.5), "w_weight", shape)
    _moments_match(m, 0.0, math.sqrt(2 / (1 + 0.25) / fan_out))


def test_xavier_refuses_vectors_and_bad_options():
    expected = MXNET_ERRORS[FIXTURE["errors"]["Xavier 1-D"]]
    with pytest.raises(expected, match="at least 2D") as info:
        _init(mx.init.Xavier(), "fc_weight", (5,))
    assert isinstance(info.value, mx.MXNetError)
    with pytest.raises(ValueError, match="factor_type"):
        mx.init.Xavier(factor_type="fan")
    with pytest.raises(ValueError, match="rnd_type"):
        mx.init.Xavier(rnd_type="normal")


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 2)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, rand_type):
    x = _init(mx.init.Orthogonal(scale=2.0, rand_type=rand_type), "fc_weight", shape)
    flat = x.reshape(shape[0], -1).astype(np.float64) / 2.0
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-5)


def test_name_dispatch_as_mxnet():
    """Each name ending takes MXNet's pattern (fixture); other names raise ValueError."""
    mx.random.seed(1)
    for name, outcome in FIXTURE["patterns"].items():
        arr = mx.nd.ones((2, 3)) * 5
        if outcome in MXNET_ERRORS:
            with pytest.raises(MXNET_ERRORS[outcome], match="Unknown initialization pattern"):
                mx.init.Uniform()(InitDesc(name), arr)
            continue
        mx.init.Uniform()(InitDesc(name), arr)
        values = sorted(set(arr.asnumpy().ravel().tolist()))
        if outcome == "random":
            assert len(values) == 6 and max(abs(v) for v in values) <= 0.07
        else:
            assert str(values) == outcome


def test_quantized_names():
    mx.random.seed(2)
    ints = _init(mx.init.Zero(), "fc_weight_quantize", (40, 10), "int32")
    assert ints.min() >= -127 and ints.max() < 127 and len(np.unique(ints)) > 100
    assert np.all(_init(mx.init.One(), "fc_bias_quantize", (3,), "int32") == 0)


def test_legacy_string_names_with_deprecation():
    for name, value in (("bn_moving_mean", 0.0), ("bn_moving_var", 1.0), ("x_moving_avg", 0.0),
                        ("fc_bias", 0.0), ("stn_loc_weight", 0.0)):
        arr = mx.nd.ones((3,)) * 5
        with pytest.warns(DeprecationWarning):
            mx.init.Uniform()(name, arr)
        assert np.all(arr.asnumpy() == value), name
    loc = mx.nd.zeros((6,))
    with pytest.warns(DeprecationWarning):
        mx.init.Uniform()("stn_loc_bias", loc)
    assert loc.asnumpy().tolist() == [1, 0, 0, 0, 1, 0]
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError):
        mx.init.Uniform()(3, mx.nd.zeros((2,)))
    with pytest.raises(TypeError, match="arr must be NDArray"):
        mx.init.Uniform()(InitDesc("w_weight"), np.zeros(3))


def test_init_attribute_and_global_init():
    desc = InitDesc("x", attrs={"__init__": mx.init.Constant(3.5).dumps()})
    arr = mx.nd.zeros((2, 2))
    mx.init.Uniform()(desc, arr)
    assert np.all(arr.asnumpy() == 3.5) and isinstance(desc.global_init, mx.init.Uniform)
    named = mx.nd.zeros((2, 2))
    mx.init.Zero()(InitDesc("y", attrs={"__init__": "ones"}), named)
    assert np.all(named.asnumpy() == 1)


@pytest.mark.parametrize("init, value", [(mx.init.Zero(), 0.0), (mx.init.One(), 1.0),
                                         (mx.init.Constant(2.5), 2.5)])
def test_constant_initializers_on_dense_and_row_sparse(init, value):
    dense = _init(init, "emb_weight", (3, 4))
    assert np.all(dense == value)
    rsp = mx.nd.sparse.zeros("row_sparse", (4, 3))
    init(InitDesc("emb_weight"), rsp)
    assert rsp.stype == "row_sparse"
    assert rsp.indices.asnumpy().tolist() == list(range(4))  # MXNet stores every row
    assert np.all(rsp.asnumpy() == value)


def test_row_sparse_random_init_stores_every_row():
    """MXNet: random (and zero) initialization of a row_sparse array stores all its rows."""
    mx.random.seed(3)
    for key, rows in FIXTURE["rsp_rows"].items():
        label, name = key.rsplit(" ", 1)
        rsp = mx.nd.sparse.zeros("row_sparse", (4, 3))
        eval(f"mx.init.{label}")(InitDesc(name), rsp)  # noqa: S307 - fixture keys are constructors
        assert rsp.stype == "row_sparse" and rsp.indices.shape[0] == rows, key
    rsp = mx.nd.sparse.zeros("row_sparse", (50, 40))
    mx.init.Uniform(0.3)(InitDesc("w_weight"), rsp)
    x = rsp.asnumpy()
    assert np.abs(x).max() < 0.3 and np.count_nonzero(x) == x.size


def test_constant_with_arrays_and_dumps():
    for value in (mx.nd.array([[1.0, 2.0]]), np.array([[1.0, 2.0]])):
        init = mx.init.Constant(value)
        assert np.all(_init(init, "w_weight", (3, 2)) == [[1, 2]] * 3)
        assert init.dumps() == '["constant", {"value": [[1.0, 2.0]]}]'


def test_dumps_and_create_as_mxnet():
    assert mx.initializer is mx.init and mx.init.InitDesc is InitDesc
    for text, dumped in FIXTURE["dumps"].items():
        init = eval(f"mx.init.{text}")  # noqa: S307 - fixture keys are constructors
        assert init.dumps() == dumped
        assert mx.init.create(dumped) == init
    for name, klass in FIXTURE["classes"].items():
        assert type(mx.init.create(name)).__name__ == klass
    xavier = mx.init.Xavier(magnitude=2)
    assert mx.init.create(xavier) is xavier
    assert mx.init.create({"initializer": "normal", "sigma": 0.2}) == mx.init.Normal(0.2)
    with pytest.raises(ValueError, match="nosuchinit is not registered") as info:
        mx.init.create("nosuchinit")
    assert isinstance(info.value, mx.MXNetError)
    with pytest.raises(ValueError, match="already an instance"):
        mx.init.create(xavier, 3)


def test_register_custom_initializer():
    @mx.init.register
    @mx.init.alias("my_halves")
    class MyInit(mx.init.Initializer):
        """Weights 0.5, biases 2."""

        def _init_weight(self, _, arr):
            arr[:] = 0.5

        def _init_bias(self, _, arr):
            arr[:] = 2

    for name in ("myinit", "MyInit", "my_halves"):
        assert np.all(_init(mx.init.create(name), "fc_weight", (2, 2)) == 0.5)
    assert np.all(_init(mx.init.create("myinit"), "fc_bias", (2,)) == 2)
    with pytest.warns(UserWarning, match="overriding"):
        mx.init.register(type("MyInit", (mx.init.Initializer,), {}))
    with pytest.raises(TypeError):
        mx.init.register(int)
    abstract = MXNET_ERRORS[FIXTURE["errors"]["abstract _init_weight"]]
    with pytest.raises(abstract):
        _init(mx.init.Initializer(), "w_weight", (2, 2))


def test_mixed_and_load(tmp_path):
    mixed = mx.init.Mixed(["fc1", ".*"], [mx.init.Constant(7), mx.init.One()])
    weight, bias = mx.nd.zeros((2, 2)), mx.nd.zeros((2,))
    mixed(InitDesc("fc1_weight"), bias)
    mixed(InitDesc("fc2_weight"), weight)
    assert np.all(bias.asnumpy() == 7) and np.all(weight.asnumpy() == 1)
    no_match = MXNET_ERRORS[FIXTURE["errors"]["Mixed no match"]]
    with pytest.raises(no_match, match="fc_weight"):
        mx.init.Mixed(["bias"], [mx.init.Zero()])("fc_weight", weight)
    saved = {"arg:fc_weight": mx.nd.array([[1.0, 2.0], [3.0, 4.0]])}
    mx.nd.save(str(tmp_path / "p.params"), saved)
    load = mx.init.Load(str(tmp_path / "p.params"), default_init=mx.init.Constant(9))
    load(InitDesc("fc_weight"), weight)
    load(InitDesc("fc2_weight"), bias)
    assert weight.asnumpy().tolist() == [[1, 2], [3, 4]] and np.all(bias.asnumpy() == 9)
    with pytest.raises(ValueError, match="Shape mismatch"):
        mx.init.Load(saved)("fc_weight", mx.nd.zeros((3,)))
    with pytest.raises(ValueError, match="no default"):
        mx.init.Load(saved)("other", bias)


def test_lstm_bias_and_bilinear():
    bias = mx.nd.ones((12,))  # as a Parameter's init: the descriptor's __init__ attribute
    mx.init.Zero()(InitDesc("lstm_i2h_bias", {"__init__": mx.init.LSTMBias(1.5).dumps()}), bias)
    assert bias.asnumpy().tolist() == [0.0] * 3 + [1.5] * 3 + [0.0] * 6
    # MXNet's test_bilinear_init: the outer product of [1/4, 3/4, 3/4, 1/4]
    weight = mx.nd.zeros((1, 1, 4, 4))
    mx.init.Bilinear()._init_weight(None, weight)
    one = np.array([0.25, 0.75, 0.75, 0.25])
    np.testing.assert_array_equal(weight.asnumpy()[0, 0], np.outer(one, one))


def test_same_seed_same_values():
    mx.random.seed(42)
    first = _init(mx.init.Xavier(), "w_weight", (8, 5))
    mx.random.seed(42)
    assert np.array_equal(first, _init(mx.init.Xavier(), "w_weight", (8, 5)))


def test_set_verbosity_logs(caplog):
    init = mx.init.One().set_verbosity(True)
    with caplog.at_level(logging.INFO):
        _init(init, "fc_weight", (2, 8))
    assert "Initialized fc_weight as weight: 1.0" in caplog.text


def test_initializers_on_emulated_gpu(monkeypatch):
    """The samplers and fills run on GPU arrays (SPARSEGEN_GPU=host) and stay there."""
    monkeypatch.setenv("SPARSEGEN_GPU", "host")
    mx.random.seed(5)
    arrays = {}
    for init in (mx.init.Xavier(), mx.init.Orthogonal(scale=1.0), mx.init.One()):
        arrays[type(init).__name__] = arr = mx.nd.zeros((6, 4), ctx=mx.gpu(0))
        init(InitDesc("fc_weight"), arr)
        assert arr.context == mx.gpu(0)
    assert np.abs(arrays["Xavier"].asnumpy()).max() <= math.sqrt(3 / 5)
    q = arrays["Orthogonal"].asnumpy()
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    assert np.all(arrays["One"].asnumpy() == 1)
    rsp = mx.nd.sparse.zeros("row_sparse", (4, 3), ctx=mx.gpu(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", mx.StorageFallbackWarning)
        mx.init.Zero()(InitDesc("emb_weight"), rsp)
    assert rsp.indices.shape == (4,) and np.all(rsp.asnumpy() == 0)
