"""Optimizer hyper-parameters are checked where they are set and where an update uses them, and
every failed update or create_state changes nothing: weights, states (values and storage),
update counts and the Updater's states. Ranges are docs/optimizers.md's."""

import math

import numpy as np
import pytest

import sparsegen as mx
from sparsegen.ops import optim as ops_optim

NAN, INF = float("nan"), float("inf")
NOT_REAL = [None, "0.1", 1j, True, np.bool_(False), [0.1], np.array(0.1)]
NOT_FINITE = [NAN, INF, -INF, 10**400, -(10**400)]

# (optimizer, constructor argument, attribute it sets, values out of range)
RANGES = [
    *[(name, "learning_rate", "lr", [-0.1, -1e-30]) for name in ("sgd", "adam", "adagrad")],
    ("ftrl", "learning_rate", "lr", [0, 0.0, -0.1]),
    *[(name, "wd", "wd", [-0.1]) for name in ("sgd", "adam", "adagrad", "ftrl")],
    *[(name, "rescale_grad", "rescale_grad", [-1.0])
      for name in ("sgd", "adam", "adagrad", "ftrl")],
    ("sgd", "momentum", "momentum", [-0.5, 1.0, 1.5]),
    ("adam", "beta1", "beta1", [-0.1, 1.0, 1.5]),
    ("adam", "beta2", "beta2", [-0.1, 1.0, 1.5]),
    ("adam", "epsilon", "epsilon", [0.0, -1e-8]),
    ("adagrad", "eps", "float_stable_eps", [0.0, -1e-8]),
    ("ftrl", "lamda1", "lamda1", [-0.1]),
    ("ftrl", "beta", "beta", [-1.0]),
]
LABELS = {"lr": "learning_rate", "float_stable_eps": "eps"}


def _message(attr):
    return LABELS.get(attr, attr) + r".* must be"


@pytest.mark.parametrize("name, arg, attr, out_of_range", RANGES)
def test_bad_values_are_refused_by_constructor_and_attribute(name, arg, attr, out_of_range):
    opt = mx.optimizer.create(name)
    good = getattr(opt, attr)
    for value in [*NOT_REAL, *NOT_FINITE, *out_of_range]:
        if value is None and arg == "learning_rate":
            continue  # None: the default (or the scheduler's) learning rate
        with pytest.raises(mx.MXNetError, match=_message(attr)) as err:
            mx.optimizer.create(name, **{arg: value})
        assert repr(value)[:8] in str(err.value)  # the message prints the value given
        with pytest.raises(mx.MXNetError, match=_message(attr)):
            setattr(opt, attr, value)
        assert getattr(opt, attr) == good  # a refused assignment keeps the old value


@pytest.mark.parametrize("name, arg, attr, values", [
    ("sgd", "learning_rate", "lr", [0, 0.0, 1e30, np.float32(0.5), np.float64(2), 3]),
    ("sgd", "momentum", "momentum", [0, 0.999]),
    ("adam", "beta1", "beta1", [0.0, 0.999999]),
    ("adam", "epsilon", "epsilon", [1e-30, 1]),
    ("ftrl", "beta", "beta", [0.0]),
    ("sgd", "clip_gradient", "clip_gradient", [None, INF, -1.0, 0.0, 5]),
])
def test_values_in_range_are_kept_as_numbers(name, arg, attr, values):
    for value in values:
        opt = mx.optimizer.create(name, **{arg: value})
        assert getattr(opt, attr) == (None if value is None else float(value))


def test_clip_gradient_flags_and_counts():
    for value in ["1", NAN, True, 1j]:
        with pytest.raises(mx.MXNetError, match="clip_gradient must be"):
            mx.optimizer.SGD(clip_gradient=value)
    for arg in ("lazy_update", "multi_precision"):
        for value in ["no", 2, None, 0.5]:
            with pytest.raises(mx.MXNetError, match=f"{arg} must be a boolean, got"):
                mx.optimizer.SGD(**{arg: value})
    assert mx.optimizer.SGD(lazy_update=0).lazy_update is False
    for value in [-1, "1", 1.5, True]:
        with pytest.raises(mx.MXNetError, match="begin_num_update must be"):
            mx.optimizer.Adam(begin_num_update=value)
    with pytest.raises(mx.MXNetError, match="lr_scheduler must be None or a callable"):
        mx.optimizer.SGD(lr_scheduler=0.1)


def test_setters_check_their_values():
    opt = mx.optimizer.SGD(learning_rate=0.5)
    for value in ["0.1", NAN, 1e400, -1]:
        with pytest.raises(mx.MXNetError, match="learning_rate"):
            opt.set_learning_rate(value)
    assert opt.learning_rate == 0.5
    with pytest.raises(mx.MXNetError, match=r"lr_mult must be a dict"):
        opt.set_lr_mult([1])
    for setter, name in ((opt.set_lr_mult, "lr_mult"), (opt.set_wd_mult, "wd_mult")):
        for value in [NAN, "x", None, -1.0, INF]:
            with pytest.raises(mx.MXNetError, match=rf"{name}\[0\] must be"):
                setter({0: value})
    assert opt.lr_mult == {} and opt.wd_mult == {}
    with pytest.raises(mx.MXNetError, match="optimizer name must be a str"):
        mx.optimizer.create(3)


# -- values checked where an update uses them -----------------------------------------------------


def _arrays(name, opt, dtype="float32", stype="row_sparse"):
    weight = mx.nd.array(np.arange(8.0).reshape(4, 2), dtype=dtype).tostype(stype)
    grad = mx.nd.sparse.row_sparse_array(([[1.0, -2.0]], [2]), shape=(4, 2), dtype=dtype)
    return weight, grad, opt.create_state(0, weight)


def _states(state):
    if state is None:
        return ()
    return tuple(state) if isinstance(state, tuple) else (state,)


def _snapshot(opt, *arrays):
    """Everything a failed update must leave as it was: stored values, stored row ids, storage
    types, and the optimizer's update counts."""
    taken = []
    for a in (a for a in arrays if isinstance(a, mx.nd.NDArray)):
        if a.stype == "default":
            taken.append((a.stype, a.asnumpy(), None))
        else:
            taken.append((a.stype, a.data.asnumpy(), a.indices.asnumpy()))
    return taken, dict(opt._index_update_count), opt.num_update


def _assert_unchanged(before, after):
    (arrays0, counts0, num0), (arrays1, counts1, num1) = before, after
    assert counts0 == counts1 and num0 == num1
    for (s0, v0, i0), (s1, v1, i1) in zip(arrays0, arrays1):
        assert s0 == s1
        np.testing.assert_array_equal(v0, v1)
        np.testing.assert_array_equal(i0, i1)


def _fails_without_change(opt, weight, grad, state, message, index=0):
    before = _snapshot(opt, weight, grad, *_states(state))
    with pytest.raises(mx.MXNetError, match=message):
        opt.update(index, weight, grad, state)
    _assert_unchanged(before, _snapshot(opt, weight, grad, *_states(state)))


ALL = [("sgd", {"momentum": 0.9}), ("sgd", {}), ("adam", {}), ("adagrad", {}), ("ftrl", {}),
       ("adam", {"lazy_update": False})]


@pytest.mark.parametrize("name, kwargs", ALL)
@pytest.mark.parametrize("bad", [NAN, "0.1", -0.5, 1e40, None])
def test_scheduler_output_is_checked_at_update(name, kwargs, bad):
    opt = mx.optimizer.create(name, lr_scheduler=lambda n: bad, **kwargs)
    weight, grad, state = _arrays(name, opt)
    _fails_without_change(opt, weight, grad, state, r"lr_scheduler\(1\) .* must be|not finite")


@pytest.mark.parametrize("name, kwargs", ALL)
def test_values_used_by_an_update_are_checked(name, kwargs):
    # multipliers that overflow float32, a param_dict multiplier set behind the optimizer's
    # back, an lr cleared without a scheduler: all refused before anything is written
    opt = mx.optimizer.create(name, learning_rate=1e30, **kwargs)
    opt.set_lr_mult({0: 1e10})
    weight, grad, state = _arrays(name, opt)
    _fails_without_change(opt, weight, grad, state, r"lr.* = [0-9.e+]+ is not finite in float32")

    class Param:
        lr_mult, wd_mult = 1.0, float("nan")

    opt = mx.optimizer.create(name, param_dict={0: Param()}, **kwargs)
    weight, grad, state = _arrays(name, opt)
    _fails_without_change(opt, weight, grad, state, r"param_dict\[0\]\.wd_mult must be")
    opt = mx.optimizer.create(name, **kwargs)
    opt.lr = None
    weight, grad, state = _arrays(name, opt)
    _fails_without_change(opt, weight, grad, state, "learning_rate is None")


@pytest.mark.parametrize("name, kwargs", ALL)
def test_learning_rate_that_overflows_float16_weights(name, kwargs):
    # MXNet 1.9.1 turns every float16 weight into nan with lr=1e5 (SGD); 1e6 also exceeds
    # float16 after Adam's bias correction (3.2e5 at t = 1)
    opt = mx.optimizer.create(name, learning_rate=1e6, **kwargs)
    weight, grad, state = _arrays(name, opt, dtype="float16")
    _fails_without_change(opt, weight, grad, state, "not finite in float16")
    weight, grad, state = _arrays(name, opt, dtype="float32")
    opt.update(0, weight, grad, state)  # the same value is fine for float32 weights
    assert opt._index_update_count == {0: 1}


def test_adam_bias_corrected_rate_is_checked():
    # lr itself is a float32, lr * sqrt(1 - beta2) / (1 - beta1) at t = 1 is not
    opt = mx.optimizer.Adam(learning_rate=3e38, beta1=0.99)
    weight, grad, state = _arrays("adam", opt)
    _fails_without_change(opt, weight, grad, state, r"lr \(bias-corrected\) = .* not finite")


def test_ftrl_learning_rate_of_zero_at_use():
    # Ftrl divides by lr: MXNet 1.9.1 gives nan weights for lr=0
    opt = mx.optimizer.Ftrl()
    opt.set_lr_mult({0: 0.0})
    weight, grad, state = _arrays("ftrl", opt)
    _fails_without_change(opt, weight, grad, state, "the update divides by it")


def test_issue_reproducers():
    weight = mx.nd.ones((3, 2))
    for kwargs, message in [({"rescale_grad": None}, "rescale_grad must be a real number"),
                            ({"learning_rate": "0.1"}, "learning_rate .* must be a real number"),
                            ({"learning_rate": NAN}, "must be a finite number, got nan")]:
        with pytest.raises(mx.MXNetError, match=message):
            mx.optimizer.SGD(momentum=0.9, **kwargs)
    with pytest.raises(mx.MXNetError, match=r"beta1 must be in \[0, 1\), got 1.0"):
        mx.optimizer.Adam(beta1=1.0)
    opt = mx.optimizer.SGD(learning_rate=1e40)
    with pytest.raises(mx.MXNetError, match="not finite in float32"):
        opt.update(0, weight, mx.nd.ones((3, 2)), None)
    np.testing.assert_array_equal(weight.asnumpy(), 1.0)


# -- failures change nothing ----------------------------------------------------------------------


@pytest.mark.parametrize("name, kwargs", ALL)
def test_failed_kernel_leaves_states_storage_and_counts(name, kwargs, monkeypatch):
    # the kernel itself fails (as a failed build would): row_sparse states that store no rows
    # must still store none, and nothing is counted
    opt = mx.optimizer.create(name, **kwargs)
    weight, grad, state = _arrays(name, opt)

    def broken(*args, **kw):
        raise mx.MXNetError("kernel failed")

    monkeypatch.setattr(ops_optim, "kernel", broken)
    _fails_without_change(opt, weight, grad, state, "kernel failed")
    monkeypatch.undo()
    opt.update(0, weight, grad, state)  # and the same call then works, counted once
    assert opt._index_update_count == {0: 1} and opt.num_update == 1
    for s in _states(state):
        if s.stype == "row_sparse":
            np.testing.assert_array_equal(s.indices.asnumpy(), np.arange(4))


@pytest.mark.parametrize("name, kwargs", ALL)
def test_adam_count_does_not_advance_on_failures(name, kwargs):
    opt = mx.optimizer.create(name, **kwargs)
    weight, grad, state = _arrays(name, opt)
    opt.update(0, weight, grad, state)
    for bad_grad in (mx.nd.ones((5, 2)), mx.nd.ones((4, 2), dtype="float64"), np.ones((4, 2))):
        _fails_without_change(opt, weight, bad_grad, state, "grad")
    _fails_without_change(opt, weight, grad, state, "aggregated update", index=[0, 1])
    _fails_without_change(opt, weight, grad, state, "index must be an int or a name",
                          index={0: 1})
    assert opt._index_update_count == {0: 1}


@pytest.mark.parametrize("name, kwargs", ALL)
@pytest.mark.parametrize("weight", [
    np.ones((4, 2)), mx.nd.ones((4, 2), dtype="int32"),
    mx.nd.array(np.float32(1.0).reshape(())), None,
])
def test_create_state_refuses_weights_it_cannot_update(name, kwargs, weight):
    opt = mx.optimizer.create(name, **kwargs)
    with pytest.raises(mx.MXNetError, match="weight"):
        opt.create_state(0, weight)
    assert opt._index_update_count == {} and opt.num_update == 0


def test_updater_keeps_no_state_of_a_failed_first_update():
    updater = mx.optimizer.get_updater(mx.optimizer.Adam())
    weight = mx.nd.ones((4, 2))
    with pytest.raises(mx.MXNetError, match="grad has shape"):
        updater(0, mx.nd.ones((5, 2)), weight)
    assert updater.states == {} and updater.optimizer._index_update_count == {}
    updater(0, mx.nd.ones((4, 2)), weight)
    assert list(updater.states) == [0]
    np.testing.assert_array_less(weight.asnumpy(), 1.0)


def test_aggregated_updates_take_lists_as_mxnets_multi_updates():
    # SGD with momentum, by hand: m = 0.9 m - lr g; w += m (two steps, three tensors)
    shapes = [(3, 2), (4,), (1, 1)]
    rng = np.random.default_rng(0)
    w0 = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(2)]
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    weights = [mx.nd.array(w) for w in w0]
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    through_updater = [mx.nd.array(w) for w in w0]
    want, moms = [w.copy() for w in w0], [np.zeros(s, np.float32) for s in shapes]
    for step in grads:
        opt.update_multi_precision([0, 1, 2], weights, [mx.nd.array(g) for g in step], states)
        updater([0, 1, 2], [mx.nd.array(g) for g in step], through_updater)
        for k, g in enumerate(step):
            moms[k] = 0.9 * moms[k] - 0.1 * g
            want[k] = want[k] + moms[k]
    for got, other, expected in zip(weights, through_updater, want):
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(other.asnumpy(), expected, rtol=1e-6, atol=1e-7)
    assert opt._index_update_count == {0: 2, 1: 2, 2: 2} and sorted(updater.states) == [0, 1, 2]


@pytest.mark.parametrize("weights, grads, message", [
    ([mx.nd.ones((2,))], [mx.nd.ones((2,)), mx.nd.ones((2,))],
     "list of 2 for weight, got list of 1"),
    ([mx.nd.ones((2,)), mx.nd.ones((3,))], [mx.nd.ones((2,)), mx.nd.ones((2,))],
     r"weight 1 has shape \(3,\), its grad \(2,\)"),
    (mx.nd.ones((2,)), [mx.nd.ones((2,)), mx.nd.ones((2,))], "for weight, got NDArray"),
])
def test_a_refused_aggregated_update_changes_no_weight(weights, grads, message):
    opt = mx.optimizer.SGD(learning_rate=0.5)
    listed = weights if isinstance(weights, list) else [weights]
    before = [w.asnumpy().copy() for w in listed]
    with pytest.raises(mx.MXNetError, match=message):
        opt.update_multi_precision([0, 1], weights, grads, [None, None])
    for w, b in zip(listed, before):
        np.testing.assert_array_equal(w.asnumpy(), b)
    assert opt._index_update_count == {}


def test_state_count_errors_name_what_was_given():
    opt = mx.optimizer.Adam()
    weight, grad, _ = _arrays("adam", opt)
    _fails_without_change(opt, weight, grad, None, "Adam takes 2 states .*got None")


def test_valid_edge_values_update_as_the_formula():
    # lr = 0 changes nothing but counts; clip_gradient = inf does not clip; an int lr works
    weight = mx.nd.ones((2, 2))
    opt = mx.optimizer.SGD(learning_rate=0)
    opt.update(0, weight, mx.nd.ones((2, 2)), None)
    np.testing.assert_array_equal(weight.asnumpy(), 1.0)
    assert opt._index_update_count == {0: 1}
    opt = mx.optimizer.SGD(learning_rate=1, clip_gradient=INF)
    opt.update(0, weight, mx.nd.full((2, 2), 3.0), None)
    np.testing.assert_array_equal(weight.asnumpy(), -2.0)
    opt = mx.optimizer.Adam(beta1=0.0, beta2=0.0, learning_rate=0.5, epsilon=1e-8)
    weight = mx.nd.zeros((1, 1))
    opt.update(0, weight, mx.nd.full((1, 1), 2.0), opt.create_state(0, weight))
    # t = 1: lr_t = 0.5, mean = 2, var = 4: w = -0.5 * 2 / (2 + 1e-8)
    np.testing.assert_allclose(weight.asnumpy(), [[-0.5 * 2 / (2 + 1e-8)]], rtol=1e-6)
    assert math.isfinite(float(weight.asnumpy()[0, 0]))
