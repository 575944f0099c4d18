"""Optimizers: a numpy reference of MXNet's update rules, values checked against real MXNet 1.9.1,
and bad input that must leave weight, states and counts unchanged."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx

# -- the reference -----------------------------------------------------------------------------
# MXNet's update rules (optimizer.py docstrings, optimizer_op-inl.h kernels), written here from
# the formulas: arithmetic in the weight's precision (float32 for float16), each stored value
# rounded to the array dtype, hyperparameters rounded to float32 (MXNet's operator parameters
# are C floats). Only ``rows`` change.


def _reference(name, hyper, weight, grad, states, rows):
    dtype = weight.dtype
    ct = np.float64 if dtype == np.float64 else np.float32
    h = {k: ct(np.float32(v)) for k, v in hyper.items()}
    one = ct(1)

    def store(x):
        return x.astype(dtype).astype(ct)

    def clip(x):
        return np.clip(x, -h["clip"], h["clip"])

    w = weight.astype(ct)[rows]
    g = grad.astype(ct)[rows]
    s = [x.astype(ct)[rows] for x in states]
    if name == "sgd" and not s:
        w = store((one - h["lr"] * h["wd"]) * w - h["lr"] * clip(h["rescale"] * g))
    elif name == "sgd":
        s[0] = store(h["momentum"] * s[0] - h["lr"] * h["wd"] * w
                     - h["lr"] * clip(h["rescale"] * g))
        w = store(w + s[0])
    elif name == "adam":
        r = clip(g * h["rescale"] + w * h["wd"])
        s[0] = store(h["beta1"] * s[0] + (one - h["beta1"]) * r)
        s[1] = store(h["beta2"] * s[1] + (one - h["beta2"]) * r * r)
        w = store(w - h["lr"] * s[0] / (np.sqrt(s[1]) + h["epsilon"]))
    elif name == "adagrad":
        r = clip(g * h["rescale"])
        s[0] = store(s[0] + r * r)
        w = store(w - h["lr"] * (r / np.sqrt(s[0] + h["epsilon"]) + h["wd"] * w))
    else:  # ftrl: s = (z, n)
        r = clip(g * h["rescale"])
        s[0] = store(s[0] + (r - (np.sqrt(s[1] + r * r) - np.sqrt(s[1])) * w / h["lr"]))
        s[1] = store(s[1] + r * r)
        w = store((np.sign(s[0]) * h["lamda1"] - s[0]) / ((h["beta"] + np.sqrt(s[1])) / h["lr"]
                                                          + h["wd"]) * (np.abs(s[0]) > h["lamda1"]))
    out = [weight.copy(), *(x.copy() for x in states)]
    for target, value in zip(out, (w, *s)):
        target[rows] = value.astype(dtype)
    return out[0], out[1:]


def _reference_hyper(name, kwargs, t):
    """The kernel-level hyperparameters MXNet's optimizer passes at update count ``t``."""
    lr = kwargs.get("learning_rate", {"adam": 0.001, "ftrl": 0.1}.get(name, 0.01))
    clip = kwargs.get("clip_gradient")
    hyper = {"lr": lr, "wd": kwargs.get("wd", 0.0), "rescale": kwargs.get("rescale_grad", 1.0),
             "clip": clip if clip is not None and clip > 0 else math.inf}
    if name == "sgd":
        hyper["momentum"] = max(kwargs.get("momentum", 0.0), 0.0)
    if name == "adam":
        b1, b2 = kwargs.get("beta1", 0.9), kwargs.get("beta2", 0.999)
        hyper.update(beta1=b1, beta2=b2, epsilon=kwargs.get("epsilon", 1e-8),
                     lr=lr * math.sqrt(1 - b2**t) / (1 - b1**t))
    if name == "adagrad":
        hyper["epsilon"] = kwargs.get("eps", 1e-7)
    if name == "ftrl":
        hyper.update(lamda1=kwargs.get("lamda1", 0.01), beta=kwargs.get("beta", 1.0))
    return hyper


def _updated_rows(name, kwargs, weight_stype, grad_rows, n):
    """Which rows an update touches: MXNet's lazy rule for a row_sparse gradient."""
    if grad_rows is None:
        return np.arange(n)
    lazy = {
        "sgd": kwargs.get("lazy_update", True),
        "adam": kwargs.get("lazy_update", True),
        "adagrad": True,
        "ftrl": weight_stype == "row_sparse",
    }[name]
    return grad_rows if lazy else np.arange(n)


def _states(state):
    if state is None:
        return []
    return list(state) if isinstance(state, tuple) else [state]


def _tolerance(dtype, scale=1.0):
    """A few ulps of the operands' magnitude ``scale``: kernels may fuse multiply-adds (FMA), so
    a result that cancels to near zero differs from numpy's by the rounding of its operands."""
    eps = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[np.dtype(dtype).name]
    return dict(rtol=eps, atol=eps * max(1.0, scale))


def _check_steps(name, kwargs, weight_np, weight_stype, grads):
    """Run ``grads`` (each (dense values, row ids or None for a dense gradient)) through the
    optimizer and the reference; compare weight and states after every step."""
    opt = mx.optimizer.create(name, **kwargs)
    dtype = weight_np.dtype
    weight = mx.nd.array(weight_np, dtype=dtype).tostype(weight_stype)
    state = opt.create_state(0, weight)
    ref_w, ref_s = weight_np.copy(), [np.zeros_like(weight_np) for _ in _states(state)]
    for t, (values, rows) in enumerate(grads, start=1):
        if rows is None:
            grad = mx.nd.array(values, dtype=dtype)
            dense = values
        else:
            grad = mx.nd.sparse.row_sparse_array((values[rows], rows), shape=values.shape,
                                                 dtype=dtype)
            dense = np.zeros_like(values)
            dense[rows] = values[rows]
        opt.update(0, weight, grad, state)
        updated = _updated_rows(name, kwargs, weight_stype, rows, weight_np.shape[0])
        ref_w, ref_s = _reference(name, _reference_hyper(name, kwargs, t), ref_w, dense, ref_s,
                                  updated)
        assert weight.stype == weight_stype and weight.dtype == dtype.type
        scale = float(np.abs(ref_w).max(initial=0))
        np.testing.assert_allclose(weight.asnumpy(), ref_w, **_tolerance(dtype, scale))
        for got, want in zip(_states(state), ref_s):
            assert got.dtype == dtype.type and got.shape == weight_np.shape
            np.testing.assert_allclose(got.asnumpy(), want,
                                       **_tolerance(dtype, float(np.abs(want).max(initial=0))))
    assert opt._index_update_count == {0: len(grads)} and opt.num_update == len(grads)
    if weight_stype == "row_sparse":
        np.testing.assert_array_equal(weight.indices.asnumpy(), np.arange(weight_np.shape[0]))


# -- hand-checked against MXNet 1.9.1 ------------------------------------------------------------


def test_tutorial_sgd_example():
    weight = mx.nd.ones((4, 2)).tostype("row_sparse")
    grad = mx.nd.sparse.row_sparse_array(([[1, 2], [4, 5]], [1, 2]), shape=(4, 2))
    sgd = mx.optimizer.SGD(learning_rate=0.01, momentum=0.01)
    momentum = sgd.create_state(0, weight)
    assert momentum.stype == "row_sparse" and momentum.indices.asnumpy().size == 0
    sgd.update(0, weight, grad, momentum)
    # values printed by MXNet 1.9.1 (float32, exact)
    np.testing.assert_array_equal(
        weight.asnumpy(),
        np.array([[1, 1], [0.99, 0.98], [0.96, 0.95], [1, 1]], dtype=np.float32))
    np.testing.assert_array_equal(
        momentum.asnumpy(),
        np.array([[0, 0], [-0.01, -0.02], [-0.04, -0.049999997], [0, 0]], dtype=np.float32))
    assert weight.stype == momentum.stype == "row_sparse"
    np.testing.assert_array_equal(weight.indices.asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(momentum.indices.asnumpy(), [0, 1, 2, 3])
    sgd.update(0, weight, grad, momentum)
    np.testing.assert_array_equal(
        weight.asnumpy().ravel(),
        np.array([1.0, 1.0, 0.9799000024795532, 0.9598000049591064, 0.9196000099182129,
                  0.8995000123977661, 1.0, 1.0], dtype=np.float32))


_W = np.arange(1, 13, dtype=np.float32).reshape(6, 2) / 4
_Z = [0.0, 0.0]
# (optimizer, kwargs, weight stype, grad stype, weight after 2 steps, states after 2 steps)
# printed by MXNet 1.9.1 for weight _W and gradient rows 1, 4 = [[1, -2], [3, 4]]
_MXNET_CASES = [
    ("sgd", dict(momentum=0.9, wd=0.1, learning_rate=0.1), "default", "row_sparse",
     [0.25, 0.5, 0.4393249750137329, 1.5491000413894653, 1.25, 1.5, 1.75, 2.0,
      1.3179750442504883, 1.2717500925064087, 2.75, 3.0],
     [_Z + [-0.20317500829696655, 0.35909998416900635] + _Z * 2
      + [-0.6095250248908997, -0.8032499551773071] + _Z]),
    ("sgd", dict(momentum=0.9, wd=0.1, learning_rate=0.1, lazy_update=False), "row_sparse",
     "row_sparse",
     [0.24277500808238983, 0.48555001616477966, 0.4393249750137329, 1.5491000413894653,
      1.2138749361038208, 1.4566500186920166, 1.6994249820709229, 1.9422000646591187,
      1.3179750442504883, 1.2717500925064087, 2.670525074005127, 2.913300037384033], None),
    ("sgd", dict(wd=0.1, learning_rate=0.1, lazy_update=False), "default", "row_sparse",
     [0.24502500891685486, 0.4900500178337097, 0.5360749363899231, 1.3781001567840576,
      1.2251249551773071, 1.4701499938964844, 1.7151750326156616, 1.9602000713348389,
      1.6082251071929932, 1.6542497873306274, 2.695275068283081, 2.9402999877929688], None),
    ("adam", dict(wd=0.1, learning_rate=0.1), "row_sparse", "row_sparse",
     [0.25, 0.5, 0.5500242114067078, 1.1999871730804443, 1.25, 1.5, 1.75, 2.0,
      2.050006866455078, 2.3000049591064453, 2.75, 3.0],
     [_Z + [0.20325005054473877, -0.3600000739097595] + _Z * 2
      + [0.6117501258850098, 0.8065001964569092] + _Z,
      _Z + [0.002288664923980832, 0.007178397849202156] + _Z * 2
      + [0.02072618156671524, 0.03602157160639763] + _Z]),
    ("adam", dict(wd=0.1, learning_rate=0.1, lazy_update=False), "default", "row_sparse",
     [0.054251931607723236, 0.3011872172355652, 0.5500242114067078, 1.1999871730804443,
      1.0503028631210327, 1.300238013267517, 1.5501954555511475, 1.8001654148101807,
      2.050006866455078, 2.3000049591064453, 2.55011248588562, 2.8001015186309814], None),
    ("adagrad", dict(learning_rate=0.1), "row_sparse", "row_sparse",
     [0.25, 0.5, 0.5792893171310425, 1.1707106828689575, 1.25, 1.5, 1.75, 2.0,
      2.079289436340332, 2.329289436340332, 2.75, 3.0],
     [_Z + [2.0, 8.0] + _Z * 2 + [18.0, 32.0] + _Z]),
    ("adagrad", dict(wd=0.1, learning_rate=0.1), "default", "default",
     [0.24502500891685486, 0.4900500178337097, 0.5653643012046814, 1.1498106718063354,
      1.2251249551773071, 1.4701499938964844, 1.715174913406372, 1.9602000713348389,
      2.0355143547058105, 2.2805392742156982, 2.695275068283081, 2.9402999877929688], None),
    ("ftrl", dict(wd=0.1), "row_sparse", "row_sparse",
     [0.25, 0.5, 0.2816350758075714, 0.7826694846153259, 1.25, 1.5, 1.75, 2.0,
      1.5511153936386108, 1.855969786643982, 2.75, 3.0],
     [_Z + [-6.837435722351074, -30.052196502685547] + _Z * 2
      + [-81.48451232910156, -123.74479675292969] + _Z,
      _Z + [2.0, 8.0] + _Z * 2 + [18.0, 32.0] + _Z]),
    ("ftrl", dict(wd=0.1), "default", "row_sparse",  # MXNet's dense fallback: every row
     [0.0, 0.0, 0.2816350758075714, 0.7826694846153259, 0.0, 0.0, 0.0, 0.0,
      1.5511153936386108, 1.855969786643982, 0.0, 0.0], None),
]


@pytest.mark.parametrize("name, kwargs, wstype, gstype, weight_after, states_after", _MXNET_CASES)
def test_matches_mxnet(name, kwargs, wstype, gstype, weight_after, states_after):
    opt = mx.optimizer.create(name, **kwargs)
    weight = mx.nd.array(_W).tostype(wstype)
    grad = mx.nd.sparse.row_sparse_array(([[1.0, -2.0], [3.0, 4.0]], [1, 4]), shape=(6, 2))
    grad = grad if gstype == "row_sparse" else grad.tostype("default")
    state = opt.create_state(0, weight)
    for _ in range(2):
        opt.update(0, weight, grad, state)
    assert weight.stype == wstype
    np.testing.assert_allclose(weight.asnumpy().ravel(), weight_after, rtol=1e-6, atol=1e-7)
    for got, want in zip(_states(state), states_after or []):
        np.testing.assert_allclose(got.asnumpy().ravel(), want, rtol=1e-6, atol=1e-7)


# one step on ones((6, 2)) stored as row_sparse, gradient rows 1, 4 = [[1, -2], [3, 4]]: weight
# row 1 as MXNet 1.9.1 printed it (AdaGrad and Ftrl with states made in the weight's dtype, since
# MXNet's own create_state makes float32 states that its kernels then refuse)
_DTYPE_CASES = [
    ("sgd", dict(momentum=0.9), "float16", [0.990234375, 1.01953125]),
    ("sgd", dict(momentum=0.9), "float64", [0.9900000002235174, 1.0199999995529652]),
    ("adam", {}, "float16", [0.9990234375, 1.0009765625]),
    ("adam", {}, "float64", [0.9989999936685219, 1.001000006489594]),
    ("adagrad", {}, "float16", [0.990234375, 1.009765625]),
    ("adagrad", {}, "float64", [0.9900000007235173, 1.0099999996514826]),
    ("ftrl", {}, "float16", [0.44970703125, 0.73291015625]),
    ("ftrl", {}, "float64", [0.44949999925866724, 0.7330000009958942]),
]


@pytest.mark.parametrize("name, kwargs, dtype, row1", _DTYPE_CASES)
def test_dtypes_match_mxnet(name, kwargs, dtype, row1):
    opt = mx.optimizer.create(name, **kwargs)
    weight = mx.nd.ones((6, 2), dtype=dtype).tostype("row_sparse")
    grad = mx.nd.sparse.row_sparse_array(([[1.0, -2.0], [3.0, 4.0]], [1, 4]), shape=(6, 2),
                                         dtype=dtype)
    state = opt.create_state(0, weight)
    assert all(s.dtype == np.dtype(dtype).type for s in _states(state))
    opt.update(0, weight, grad, state)
    assert weight.dtype == np.dtype(dtype).type
    # float16: MXNet rounds after every operation, sparsegen once per stored value
    tol = dict(rtol=1e-3) if dtype == "float16" else dict(rtol=1e-15)
    np.testing.assert_allclose(weight.asnumpy()[1], row1, **tol)
    np.testing.assert_array_equal(weight.asnumpy()[[0, 2, 3, 5]], 1)


# -- properties against the reference ------------------------------------------------------------

_OPTIMIZERS = ("sgd", "adam", "adagrad", "ftrl")


@st.composite
def _cases(draw, name, dtypes=("float32", "float32", "float64")):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    rows = draw(st.integers(0, 12))
    trailing = draw(st.sampled_from([(), (1,), (3,), (5,), (2, 3)]))
    shape = (rows, *trailing)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([0.1, 1.0, 10.0]))
    weight = (rng.standard_normal(shape) * scale).astype(dtype)
    steps = draw(st.integers(1, 3))
    dense_grad = draw(st.booleans())
    grads = []
    for _ in range(steps):
        values = (rng.standard_normal(shape) * scale).astype(dtype)
        density = draw(st.sampled_from([0.0, 0.3, 1.0]))
        ids = None if dense_grad else np.flatnonzero(rng.random(rows) < density)
        grads.append((values, ids))
    positive = st.floats(0.01, 1.0)
    kwargs = {
        "learning_rate": draw(positive),
        "wd": draw(st.sampled_from([0.0, 0.0, 1e-4, 0.1])),
        "rescale_grad": draw(st.sampled_from([1.0, 0.5, 1.7])),
        "clip_gradient": draw(st.sampled_from([None, 0.0, -1.0, 0.3, 2.0])),
    }
    if name == "sgd":
        kwargs["momentum"] = draw(st.sampled_from([0.0, 0.5, 0.9]))
    if name in ("sgd", "adam"):
        kwargs["lazy_update"] = draw(st.booleans())
    if name == "adam":
        kwargs.update(beta1=draw(st.floats(0.0, 0.99)), beta2=draw(st.floats(0.5, 0.9999)),
                      epsilon=draw(st.sampled_from([1e-8, 1e-3])))
    if name == "adagrad":
        kwargs["eps"] = draw(st.sampled_from([1e-7, 1e-2]))
        if not dense_grad:
            kwargs["wd"] = 0.0  # refused with a row_sparse gradient (tested below)
    if name == "ftrl":
        kwargs.update(lamda1=draw(st.sampled_from([0.0, 0.01, 0.5])),
                      beta=draw(st.sampled_from([0.5, 1.0])))
    weight_stype = draw(st.sampled_from(["default", "row_sparse"]))
    return kwargs, weight, weight_stype, grads


@pytest.mark.parametrize("name", _OPTIMIZERS)
@given(data=st.data())
def test_matches_reference(name, data):
    kwargs, weight, weight_stype, grads = data.draw(_cases(name))
    _check_steps(name, kwargs, weight, weight_stype, grads)


@pytest.mark.parametrize("name", _OPTIMIZERS)
@pytest.mark.parametrize("weight_stype", ["default", "row_sparse"])
def test_parallel_builds_match_reference(name, weight_stype):
    # above the schedule's serial_below (4096 elements): the parallel kernels, and lazy updates
    # long enough to prefetch rows ahead
    rng = np.random.default_rng(2)
    weight = rng.standard_normal((700, 24)).astype(np.float32)
    ids = np.sort(rng.choice(700, 300, replace=False))
    grads = [(rng.standard_normal((700, 24)).astype(np.float32), rows) for rows in (ids, None)]
    extra = {"sgd": {"momentum": 0.9, "wd": 0.01}, "adam": {"wd": 0.01}}.get(name, {})
    _check_steps(name, {"learning_rate": 0.05, **extra}, weight, weight_stype, grads)
    if name in ("sgd", "adam"):  # the standard update over every row
        _check_steps(name, {"learning_rate": 0.05, "lazy_update": False, **extra}, weight,
                     weight_stype, grads[:1])


@pytest.mark.parametrize("name", _OPTIMIZERS)
def test_float16_matches_reference(name):
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((9, 4)).astype(np.float16)
    grads = [(rng.standard_normal((9, 4)).astype(np.float16), ids)
             for ids in (np.array([0, 3, 8]), None, np.array([2]))]
    extra = {"sgd": {"momentum": 0.9}, "adam": {"lazy_update": False}}.get(name, {})
    for stype in ("default", "row_sparse"):
        _check_steps(name, {"learning_rate": 0.1, **extra}, weight, stype, grads)


# -- lazy and standard updates -------------------------------------------------------------------


@pytest.mark.parametrize("weight_stype", ["default", "row_sparse"])
def test_lazy_update_touches_only_gradient_rows(weight_stype):
    weight_np = np.full((8, 3), 2.0, np.float32)
    weight = mx.nd.array(weight_np).tostype(weight_stype)
    grad = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [2, 5]), shape=(8, 3))
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.5)
    mom = opt.create_state(0, weight)
    opt.update(0, weight, grad, mom)
    untouched = [0, 1, 3, 4, 6, 7]
    np.testing.assert_array_equal(weight.asnumpy()[untouched], 2.0)  # no weight decay there
    np.testing.assert_array_equal(mom.asnumpy()[untouched], 0.0)
    np.testing.assert_allclose(weight.asnumpy()[[2, 5]], 2.0 - 0.1 * 0.5 * 2.0 - 0.1, rtol=1e-6)


@pytest.mark.parametrize("weight_stype", ["default", "row_sparse"])
def test_standard_update_decays_every_row(weight_stype):
    weight = mx.nd.array(np.full((8, 3), 2.0, np.float32)).tostype(weight_stype)
    grad = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [2, 5]), shape=(8, 3))
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.5, lazy_update=False)
    mom = opt.create_state(0, weight)
    assert mom.stype == "default"
    opt.update(0, weight, grad, mom)
    opt.update(0, weight, mx.nd.sparse.zeros("row_sparse", (8, 3)), mom)  # no gradient rows
    m1 = -0.1 * 0.5 * 2.0
    w1 = 2.0 + m1
    m2 = 0.9 * m1 - 0.1 * 0.5 * w1  # momentum keeps moving the rows without gradient
    np.testing.assert_allclose(weight.asnumpy()[[0, 7]], w1 + m2, rtol=1e-6)
    np.testing.assert_allclose(mom.asnumpy()[[0, 7]], m2, rtol=1e-6)


def test_empty_gradient_lazy_changes_nothing():
    weight = mx.nd.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    state = mx.optimizer.Adam(wd=0.1).create_state(0, weight)
    opt = mx.optimizer.Adam(wd=0.1)
    opt.update(0, weight, mx.nd.sparse.zeros("row_sparse", (3, 2)), state)
    np.testing.assert_array_equal(weight.asnumpy(), np.arange(6).reshape(3, 2))
    assert opt._index_update_count == {0: 1}


def test_row_sparse_states_get_every_row_on_first_update():
    weight = mx.nd.ones((5, 2)).tostype("row_sparse")
    opt = mx.optimizer.Ftrl()
    z, n = opt.create_state(0, weight)
    assert z.stype == n.stype == "row_sparse" and z.indices.asnumpy().size == 0
    opt.update(0, weight, mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [3]), shape=(5, 2)), (z, n))
    for state in (z, n):
        np.testing.assert_array_equal(state.indices.asnumpy(), np.arange(5))
    np.testing.assert_array_equal(n.asnumpy(), [[0, 0], [0, 0], [0, 0], [1, 4], [0, 0]])


def test_partially_stored_row_sparse_state_keeps_its_values():
    weight = mx.nd.zeros((4, 2))
    mom = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [2]), shape=(4, 2))
    opt = mx.optimizer.SGD(learning_rate=1.0, momentum=0.5)
    opt.update(0, weight, mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [0]), shape=(4, 2)), mom)
    # a dense weight with a row_sparse state is a standard update (MXNet's dense fallback)
    np.testing.assert_array_equal(mom.asnumpy(), [[-1, -1], [0, 0], [0.5, 0.5], [0, 0]])
    np.testing.assert_array_equal(weight.asnumpy(), [[-1, -1], [0, 0], [0.5, 0.5], [0, 0]])


@pytest.mark.parametrize("shape", [(0, 3), (4, 0), (0,)])
def test_empty_weights(shape):
    for name in _OPTIMIZERS:
        opt = mx.optimizer.create(name)
        weight = mx.nd.zeros(shape)
        state = opt.create_state(0, weight)
        opt.update(0, weight, mx.nd.sparse.zeros("row_sparse", shape), state)
        opt.update(0, weight, mx.nd.zeros(shape), state)
        assert weight.shape == shape


# -- the optimizer API ---------------------------------------------------------------------------


def test_create_by_name_and_class():
    assert isinstance(mx.optimizer.create("SGD", momentum=0.9), mx.optimizer.SGD)
    assert isinstance(mx.optimizer.create("adam"), mx.optimizer.Adam)
    assert isinstance(mx.optimizer.Optimizer.create_optimizer("AdaGrad"), mx.optimizer.AdaGrad)
    assert isinstance(mx.optimizer.create("ftrl"), mx.optimizer.Ftrl)
    with pytest.raises(mx.MXNetError, match="Cannot find optimizer nope"):
        mx.optimizer.create("nope")


def test_defaults_and_learning_rate():
    assert mx.optimizer.SGD().learning_rate == 0.01
    assert mx.optimizer.Adam().learning_rate == 0.001
    assert mx.optimizer.Ftrl().learning_rate == 0.1
    opt = mx.optimizer.SGD(learning_rate=0.5)
    opt.set_learning_rate(0.25)
    assert opt.learning_rate == 0.25
    scheduled = mx.optimizer.SGD(lr_scheduler=lambda n: 1.0 / (n + 1))
    assert scheduled.learning_rate == 1.0
    with pytest.raises(UserWarning):
        scheduled.set_learning_rate(0.1)


def test_scheduler_follows_num_update():
    opt = mx.optimizer.SGD(lr_scheduler=lambda n: 1.0 / (n + 1))
    weight = mx.nd.zeros((1, 1))
    for _ in range(2):
        opt.update(0, weight, mx.nd.ones((1, 1)), None)
    # lr at count 1 is 1/2, at count 2 is 1/3
    np.testing.assert_allclose(weight.asnumpy(), [[-(1 / 2 + 1 / 3)]], rtol=1e-6)


def test_adam_bias_correction_per_index():
    opt = mx.optimizer.Adam(learning_rate=0.1)
    a, b = mx.nd.zeros((1, 1)), mx.nd.zeros((1, 1))
    sa, sb = opt.create_state(0, a), opt.create_state(1, b)
    for _ in range(3):
        opt.update(0, a, mx.nd.ones((1, 1)), sa)
    opt.update(1, b, mx.nd.ones((1, 1)), sb)
    assert opt._index_update_count == {0: 3, 1: 1} and opt.num_update == 3
    # index 1's first step uses t = 1: lr * sqrt(1 - 0.999) / (1 - 0.9) * 0.1 / sqrt(0.001)
    np.testing.assert_allclose(b.asnumpy(), [[-0.1]], rtol=1e-5)


def test_lr_and_wd_multipliers():
    opt = mx.optimizer.SGD(learning_rate=1.0, wd=1.0,
                           param_idx2name={0: "fc_weight", 1: "fc_bias"})
    opt.set_lr_mult({0: 0.5})
    assert opt._get_lr(0) == 0.5 and opt._get_lr(1) == 1.0
    assert opt._get_wd(0) == 1.0 and opt._get_wd(1) == 0.0  # names not *_weight: no decay
    opt.set_wd_mult({"fc_bias": 2.0})
    assert opt._get_wd(1) == 2.0


def test_updater_creates_states():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0, momentum=0.5))
    weight = mx.nd.zeros((2, 2))
    for _ in range(2):
        updater(3, mx.nd.ones((2, 2)), weight)
    np.testing.assert_allclose(weight.asnumpy(), -2.5)
    assert list(updater.states) == [3]


@pytest.mark.parametrize("name, lazy, wstype, expected", [
    ("sgd", True, "row_sparse", "row_sparse"), ("sgd", False, "row_sparse", "default"),
    ("sgd", True, "default", "default"), ("adam", True, "row_sparse", "row_sparse"),
    ("adam", False, "row_sparse", "default"), ("adagrad", None, "row_sparse", "row_sparse"),
    ("ftrl", None, "row_sparse", "row_sparse"), ("ftrl", None, "default", "default"),
])
def test_state_storage_types(name, lazy, wstype, expected):
    kwargs = {} if lazy is None else {"lazy_update": lazy}
    if name == "sgd":
        kwargs["momentum"] = 0.9
    weight = mx.nd.ones((3, 2)).tostype(wstype)
    states = _states(mx.optimizer.create(name, **kwargs).create_state(0, weight))
    assert states and all(s.stype == expected and s.shape == (3, 2) for s in states)
    assert mx.optimizer.SGD().create_state(0, weight) is None


# -- bad input leaves everything unchanged -------------------------------------------------------


def _snapshot(*arrays):
    """Storage type, stored values and stored row ids of each NDArray."""
    return [(a.stype, a.data.asnumpy(), a.indices.asnumpy()) if a.stype != "default"
            else (a.stype, a.asnumpy(), None) for a in arrays if isinstance(a, mx.nd.NDArray)]


def _bad_cases():
    rsp = mx.nd.sparse.row_sparse_array
    good = rsp(([[1.0, 2.0]], [1]), shape=(4, 2))
    partial = rsp(([[1.0, 1.0]], [0]), shape=(4, 2))
    return [
        ("grad shape", "sgd", {"momentum": 0.9}, None, rsp(([[1.0, 2.0]], [1]), shape=(5, 2)),
         None, "grad has shape"),
        ("grad dtype", "adam", {}, None, good.astype("float64"), None, "grad has dtype"),
        ("grad row id out of range", "adam", {}, None, rsp(([[1.0, 2.0]], [9]), shape=(10, 2)),
         None, r"grad has shape \(10, 2\)"),
        ("grad numpy", "sgd", {}, None, np.ones((4, 2)), None, "grad must be an NDArray"),
        ("state shape", "sgd", {"momentum": 0.9}, None, good, [mx.nd.zeros((4, 3))],
         "state 0 has shape"),
        ("state dtype", "ftrl", {}, None, good, [mx.nd.zeros((4, 2)),
                                                mx.nd.zeros((4, 2), dtype="float16")],
         "state 1 has dtype"),
        ("state count", "adam", {}, None, good, [mx.nd.zeros((4, 2))], "takes 2 states"),
        ("state is weight", "sgd", {"momentum": 0.9}, None, good, "weight", "share memory"),
        ("partial weight", "adagrad", {}, partial, good, None, "must store every row"),
        ("int weight", "sgd", {}, mx.nd.zeros((4, 2), dtype="int32"), good.astype("int32"), None,
         "floating-point"),
        ("adagrad wd", "adagrad", {"wd": 0.1}, None, good, None, "does not support weight decay"),
        # slicing copies now (MXNet's views); a strided buffer handed to NDArray itself stays
        ("strided weight", "adam", {}, mx.nd.NDArray(np.ones((4, 3), np.float32)[:, 1:],
                                                     mx.cpu()), good, None,
         "weight must be C-contiguous"),
        ("strided state", "sgd", {"momentum": 0.9}, None, good,
         [mx.nd.NDArray(np.zeros((4, 3), np.float32)[:, 1:], mx.cpu())],
         "state 0 must be C-contiguous"),
    ]


@pytest.mark.parametrize("case", _bad_cases(), ids=lambda c: c[0])
def test_bad_input_leaves_arrays_unchanged(case):
    _, name, kwargs, weight, grad, states, message = case
    opt = mx.optimizer.create(name, **kwargs)
    weight = weight if weight is not None else mx.nd.array(np.arange(8.0).reshape(4, 2))
    if states is None:
        state = opt.create_state(0, weight) if weight.dtype != np.int32 else None
        # states holding values and stored rows, so that a stray write would show
        if isinstance(state, tuple):
            state = tuple(mx.nd.array(np.full((4, 2), 3.0)).tostype(s.stype) for s in state)
    elif states == "weight":
        state = weight
    else:
        state = states[0] if len(states) == 1 and name != "adam" else tuple(states)
    before = _snapshot(weight, grad, *_states(state))
    with pytest.raises(mx.MXNetError, match=message):
        opt.update(0, weight, grad, state)
    after = _snapshot(weight, grad, *_states(state))
    for (s0, v0, i0), (s1, v1, i1) in zip(before, after):
        assert s0 == s1
        np.testing.assert_array_equal(v0, v1)
        np.testing.assert_array_equal(i0, i1)
    assert opt._index_update_count == {} and opt.num_update == 0
