"""sparsegen.torch: each optimizer against torch's own (SGD, Adam, SparseAdam, AdamW, Adagrad,
maximize too) or a numpy oracle (RowWiseAdagrad, Ftrl, Lion) on Embedding / EmbeddingBag models
with sparse and dense gradients; in place without copies; state_dict round trips and checkpoints
loaded from and into torch's optimizers, parameter groups and their checks, lr schedulers and
tensor lrs; empty parameters; coalescing against torch's coalesce."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import sparsegen.torch as sgt  # noqa: E402
from sparsegen.errors import SparsegenError  # noqa: E402

ROWS, WIDTH = 40, 6

PAIRS = {
    "sparse_adam": (lambda p: torch.optim.SparseAdam(p, lr=0.01),
                    lambda p: sgt.Adam(p, lr=0.01, lazy=True), True),
    "adam": (lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1),
             lambda p: sgt.Adam(p, lr=0.01, weight_decay=0.1), False),
    "adamw": (lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.05),
              lambda p: sgt.AdamW(p, lr=0.01, weight_decay=0.05), False),
    "adagrad_sparse": (lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01,
                                                     initial_accumulator_value=0.1),
                       lambda p: sgt.Adagrad(p, lr=0.1, lr_decay=0.01,
                                             initial_accumulator_value=0.1), True),
    "adagrad_dense": (lambda p: torch.optim.Adagrad(p, lr=0.1, weight_decay=0.1),
                      lambda p: sgt.Adagrad(p, lr=0.1, weight_decay=0.1), False),
    "sgd_momentum": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1,
                                               weight_decay=0.01),
                     lambda p: sgt.SGD(p, lr=0.1, momentum=0.9, dampening=0.1,
                                       weight_decay=0.01), False),
    "sgd_nesterov": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                     lambda p: sgt.SGD(p, lr=0.1, momentum=0.9, nesterov=True), False),
    "sgd_sparse": (lambda p: torch.optim.SGD(p, lr=0.1), lambda p: sgt.SGD(p, lr=0.1), True),
    "sparse_adam_maximize": (lambda p: torch.optim.SparseAdam(p, lr=0.01, maximize=True),
                             lambda p: sgt.Adam(p, lr=0.01, lazy=True, maximize=True), True),
    "sgd_momentum_maximize": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9,
                                                        weight_decay=0.01, maximize=True),
                              lambda p: sgt.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01,
                                                maximize=True), False),
}


def _models(sparse: bool, bag: bool, dtype: torch.dtype) -> tuple[object, object]:
    torch.manual_seed(1)
    make = (lambda: torch.nn.EmbeddingBag(ROWS, WIDTH, mode="sum", sparse=sparse)) if bag \
        else (lambda: torch.nn.Embedding(ROWS, WIDTH, sparse=sparse))
    a, b = make().to(dtype), make().to(dtype)
    b.weight.data.copy_(a.weight.data)
    return a, b


@pytest.mark.parametrize("name", sorted(PAIRS))
@given(data=st.data())
def test_matches_torch(name: str, data) -> None:
    """Three steps of a model trained by torch's optimizer and by sparsegen.torch's agree."""
    make_ref, make_mine, sparse = PAIRS[name]
    bag = data.draw(st.booleans())
    dtype = data.draw(st.sampled_from([torch.float32, torch.float64]))
    a, b = _models(sparse, bag, dtype)
    ref, mine = make_ref(a.parameters()), make_mine(b.parameters())
    gen = torch.Generator().manual_seed(data.draw(st.integers(0, 2**16)))
    for _ in range(3):
        count = data.draw(st.integers(1, 30))
        ids = torch.randint(0, ROWS, (count, 3) if bag else (count,), generator=gen)
        for model, opt in ((a, ref), (b, mine)):
            opt.zero_grad()
            (model(ids) ** 2).sum().backward()
            opt.step()
    # the kernels' hyper-parameters are float32 (as MXNet's operators'): float64 weights see
    # them rounded, a relative 1e-7 per step
    torch.testing.assert_close(b.weight, a.weight, rtol=1e-5, atol=1e-6)


STANDARD = {  # torch's optimizer on the dense gradient, sparsegen's on the sparse one
    "adam": (lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1),
             lambda p: sgt.Adam(p, lr=0.01, weight_decay=0.1, lazy=False)),
    "adamw": (lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.05),
              lambda p: sgt.AdamW(p, lr=0.01, weight_decay=0.05, lazy=False)),
    "sgd_momentum": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
                     lambda p: sgt.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, lazy=False)),
    "adagrad": (lambda p: torch.optim.Adagrad(p, lr=0.1, weight_decay=0.1),
                lambda p: sgt.Adagrad(p, lr=0.1, weight_decay=0.1, lazy=False)),
}


@pytest.mark.parametrize("name", sorted(STANDARD))
def test_standard_update_of_a_sparse_gradient_matches_torch_on_the_dense_one(name: str) -> None:
    """``lazy=False`` with a sparse gradient updates every row, those without a gradient with a
    zero one (weight decay and momentum reach them): torch's update of the same model's dense
    gradient, over steps whose ids repeat and miss rows."""
    make_ref, make_mine = STANDARD[name]
    torch.manual_seed(3)
    a = torch.nn.Embedding(ROWS, WIDTH, sparse=False)
    b = torch.nn.Embedding(ROWS, WIDTH, sparse=True)
    b.weight.data.copy_(a.weight.data)
    ref, mine = make_ref(a.parameters()), make_mine(b.parameters())
    gen = torch.Generator().manual_seed(4)
    for _ in range(4):
        ids = torch.randint(0, ROWS // 2, (12,), generator=gen)
        for model, optimizer in ((a, ref), (b, mine)):
            optimizer.zero_grad()
            (model(ids) ** 2).sum().backward()
            optimizer.step()
    assert b.weight.grad.is_sparse
    torch.testing.assert_close(b.weight, a.weight, rtol=1e-5, atol=1e-6)


def _numpy_run(oracle, weight, grads, state):
    for ids, g in grads:
        oracle(weight, ids, g, state)


def _lion_oracle(lr, b1, b2, wd):
    def step(w, ids, g, state):
        m = state.setdefault("m", np.zeros_like(w))
        rows = np.unique(ids)
        dense = np.zeros_like(w)
        np.add.at(dense, ids, g)
        c = dense[rows]
        w[rows] -= lr * (np.sign(b1 * m[rows] + (1 - b1) * c) + wd * w[rows])
        m[rows] = b2 * m[rows] + (1 - b2) * c
    return step


def _rowwise_oracle(lr, eps):
    def step(w, ids, g, state):
        h = state.setdefault("h", np.zeros(len(w)))
        rows = np.unique(ids)
        dense = np.zeros_like(w)
        np.add.at(dense, ids, g)
        c = dense[rows]
        h[rows] += (c * c).mean(axis=1)
        w[rows] -= lr * c / (np.sqrt(h[rows])[:, None] + eps)
    return step


def _ftrl_oracle(lr, l1, beta, wd):
    def step(w, ids, g, state):
        z = state.setdefault("z", np.zeros_like(w))
        n = state.setdefault("n", np.zeros_like(w))
        rows = np.unique(ids)
        dense = np.zeros_like(w)
        np.add.at(dense, ids, g)
        c = dense[rows]
        z[rows] += c - (np.sqrt(n[rows] + c * c) - np.sqrt(n[rows])) * w[rows] / lr
        n[rows] += c * c
        zr = z[rows]
        w[rows] = (np.sign(zr) * l1 - zr) / ((beta + np.sqrt(n[rows])) / lr + wd) \
            * (np.abs(zr) > l1)
    return step


ORACLES = {
    "lion": (lambda p: sgt.Lion(p, lr=0.01, betas=(0.9, 0.99), weight_decay=0.01),
             _lion_oracle(0.01, 0.9, 0.99, 0.01)),
    "rowwise_adagrad": (lambda p: sgt.RowWiseAdagrad(p, lr=0.1, eps=1e-6),
                        _rowwise_oracle(0.1, 1e-6)),
    "ftrl": (lambda p: sgt.Ftrl(p, lr=0.1, lamda1=0.01, beta=1.0, wd=0.01),
             _ftrl_oracle(0.1, 0.01, 1.0, 0.01)),
}


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_matches_numpy(name: str) -> None:
    """Lazy updates from Embedding's sparse gradients (repeated ids summed) against numpy."""
    make, oracle = ORACLES[name]
    torch.manual_seed(0)
    model = torch.nn.Embedding(ROWS, WIDTH, sparse=True).double()
    weight = model.weight.detach().numpy().copy()
    opt = make(model.parameters())
    state: dict = {}
    gen = torch.Generator().manual_seed(5)
    for _ in range(4):
        ids = torch.randint(0, ROWS, (25,), generator=gen)
        opt.zero_grad()
        out = model(ids)
        (out ** 2).sum().backward()
        oracle(weight, ids.numpy(), 2 * out.detach().numpy(), state)
        opt.step()
        np.testing.assert_allclose(model.weight.detach().numpy(), weight, rtol=1e-6,
                                   atol=1e-8)  # float32 hyper-parameters


def test_updates_in_place_without_copies() -> None:
    """The parameter's storage is the one the kernel wrote (no copy in or out)."""
    model = torch.nn.Embedding(ROWS, WIDTH, sparse=True)
    pointer = model.weight.data_ptr()
    before = model.weight.detach().clone()
    opt = sgt.Adam(model.parameters(), lr=0.1, lazy=True)
    model(torch.tensor([1, 2, 2])).sum().backward()
    opt.step()
    assert model.weight.data_ptr() == pointer
    changed = (model.weight.detach() != before).any(dim=1)
    assert changed.nonzero().flatten().tolist() == [1, 2]


def test_param_groups_and_lr_schedulers() -> None:
    """Each group steps with its own lr, and a scheduler's lr reaches the kernel (SGD:
    ``weight -= lr * grad``, the gradient of ``sum`` counting each id's occurrences)."""
    a, b = torch.nn.Embedding(ROWS, WIDTH, sparse=True), torch.nn.Embedding(ROWS, WIDTH)
    opt = sgt.SGD([{"params": a.parameters(), "lr": 0.5}, {"params": b.parameters()}], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    ids = torch.tensor([3, 4, 4])
    for lrs in ((0.5, 0.1), (0.25, 0.05)):
        before = a.weight.detach().clone(), b.weight.detach().clone()
        opt.zero_grad()
        (a(ids).sum() + b(ids).sum()).backward()
        opt.step()
        sched.step()
        for model, old, lr in zip((a, b), before, lrs):
            delta = (old - model.weight.detach())[[3, 4]]
            torch.testing.assert_close(delta[:, 0], torch.tensor([1.0, 2.0]) * lr)


def test_state_dict_continues_identically() -> None:
    """Two optimizers, one restored from the other's state_dict, step to the same weights."""
    torch.manual_seed(0)
    a = torch.nn.Embedding(ROWS, WIDTH, sparse=True)
    opt = sgt.Adagrad(a.parameters(), lr=0.1)
    for ids in ([1, 2], [2, 5]):
        opt.zero_grad()
        a(torch.tensor(ids)).sum().backward()
        opt.step()
    b = torch.nn.Embedding(ROWS, WIDTH, sparse=True)
    b.load_state_dict(a.state_dict())
    restored = sgt.Adagrad(b.parameters(), lr=0.1)
    restored.load_state_dict(copy.deepcopy(opt.state_dict()))  # as torch.save / torch.load
    for model, o in ((a, opt), (b, restored)):
        o.zero_grad()
        model(torch.tensor([2, 7])).sum().backward()
        o.step()
    torch.testing.assert_close(a.weight, b.weight, rtol=0, atol=0)


@given(data=st.data())
def test_coalesce_matches_torch(data) -> None:
    """Sorted unique rows, repeated rows summed (generated kernels) as torch's coalesce."""
    count = data.draw(st.integers(0, 60))
    rows = data.draw(st.integers(1, 30))
    gen = torch.Generator().manual_seed(data.draw(st.integers(0, 2**16)))
    ids = torch.randint(0, rows, (count,), generator=gen)
    values = torch.randn(count, 4, generator=gen, dtype=torch.float64)
    grad = torch.sparse_coo_tensor(ids[None], values, (rows, 4))
    got_ids, got_values = sgt.coalesce(grad, rows)
    want = grad.coalesce()
    np.testing.assert_array_equal(np.asarray(got_ids), want.indices()[0].numpy())
    np.testing.assert_allclose(np.asarray(got_values), want.values().numpy(), rtol=1e-12)


@given(count=st.integers(0, 80), rows=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_coalesce_sums_float16_rows_within_the_summation_bound(count, rows, seed) -> None:
    """float16 gradients (an ``nn.Embedding`` in half precision) are coalesced too: the rows as
    torch's coalesce gives them, each sum within the recursive-summation error bound
    ``gamma(n - 1) * sum(|x|)`` (``gamma(m) = m u / (1 - m u)``, ``u = 2**-11``; plus half a
    subnormal step per addition) of the exact float64 sum of its ``n`` repeated rows."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, rows, (count,), generator=gen)
    values = torch.randn(count, 3, generator=gen).to(torch.float16)
    grad = torch.sparse_coo_tensor(ids[None], values, (rows, 3))
    got_ids, got_values = sgt.coalesce(grad, rows)
    assert np.asarray(got_values).dtype == np.float16
    np.testing.assert_array_equal(np.asarray(got_ids), grad.coalesce().indices()[0].numpy())
    exact = np.zeros((rows, 3))
    magnitude = np.zeros((rows, 3))
    np.add.at(exact, ids.numpy(), values.double().numpy())
    np.add.at(magnitude, ids.numpy(), values.double().abs().numpy())
    repeats = np.bincount(ids.numpy(), minlength=rows)[:, None]
    kept = np.asarray(got_ids)
    steps = (repeats - 1)[kept]
    gamma = steps * 2.0**-11 / (1 - steps * 2.0**-11)
    bound = gamma * magnitude[kept] + steps * 2.0**-25
    error = np.abs(np.asarray(got_values, dtype=np.float64) - exact[kept])
    assert (error <= bound).all(), (error - bound).max()


@given(st.lists(st.integers(-3, 12), max_size=12), st.sampled_from([1, 10]))
def test_a_gradient_told_coalesced_is_checked(ids, rows) -> None:
    """A gradient torch is told is coalesced (which it takes on trust) is returned as it is
    only when its ids lie in ``[0, rows)`` and rise strictly (numpy's oracle); otherwise the
    refusal names an id that does not."""
    grad = torch.sparse_coo_tensor(torch.tensor(ids, dtype=torch.int64).reshape(1, -1),
                                   torch.ones(len(ids), 2), (max(rows, 13), 2),
                                   check_invariants=False, is_coalesced=True)
    arr = np.array(ids, dtype=np.int64)
    if ((arr >= 0) & (arr < rows)).all() and (np.diff(arr) > 0).all():
        got_ids, got_values = sgt.coalesce(grad, rows)
        assert got_ids.tolist() == ids and got_values.data_ptr() == grad._values().data_ptr()
        return
    with pytest.raises(SparsegenError, match=r"at position \d+$") as refusal:
        sgt.coalesce(grad, rows)
    at = int(str(refusal.value).rsplit(" ", 1)[1])
    assert not 0 <= arr[at] < rows or (at > 0 and arr[at] <= arr[at - 1])


def test_bad_arguments_are_refused() -> None:
    model = torch.nn.Embedding(ROWS, WIDTH, sparse=True)
    with pytest.raises(SparsegenError, match="lr"):
        sgt.Adam(model.parameters(), lr=-1)
    with pytest.raises(SparsegenError, match="betas"):
        sgt.Adam(model.parameters(), betas=(0.9, 1.5))
    with pytest.raises(SparsegenError, match="needs hyper-parameters"):
        sgt.TorchRuleOptimizer(model.parameters(), "lion", lr=0.1)
    grad = torch.sparse_coo_tensor(torch.tensor([[0, ROWS + 3]]), torch.ones(2, WIDTH),
                                   (ROWS + 5, WIDTH))
    with pytest.raises(SparsegenError, match="row ids"):
        sgt.coalesce(grad, ROWS)
    half = torch.nn.Parameter(torch.zeros(3, 2, dtype=torch.bfloat16))
    half.grad = torch.ones_like(half)
    with pytest.raises(SparsegenError, match="float16, float32 or float64 .* got torch.bfloat16"):
        sgt.SGD([half], lr=0.1).step()
    assert (half == 0).all()


BAD_GRADIENTS = {  # row ids, whether torch is told they are coalesced, the refusal
    "out of range": ([1, 1, ROWS + 2], False, rf"\[0, {ROWS}\), got {ROWS + 2} at position 2"),
    "coalesced, out of range": ([1, 4, ROWS + 2], True,
                                rf"\[0, {ROWS}\), got {ROWS + 2} at position 2"),
    "coalesced, negative": ([-1, 4, 7], True, rf"\[0, {ROWS}\), got -1 at position 0"),
    "coalesced, unsorted": ([1, 7, 4], True, "sorted and unique, got 7 then 4 at position 2"),
    "coalesced, repeated": ([1, 4, 4], True, "sorted and unique, got 4 then 4 at position 2"),
}


@pytest.mark.parametrize("steps_before", [0, 2])
@pytest.mark.parametrize("bad", BAD_GRADIENTS)
def test_refused_gradient_leaves_weight_and_state(steps_before: int, bad: str) -> None:
    """A sparse gradient with a row id out of range, or told coalesced (which torch takes on
    trust) with ids that do not rise, is refused before anything is written: the weight, the
    states and the step count stay as they were (none made on a first step)."""
    ids, coalesced, refusal = BAD_GRADIENTS[bad]
    model = torch.nn.Embedding(ROWS, WIDTH, sparse=True)
    optimizer = sgt.Adam(model.parameters(), lr=0.1)
    for _ in range(steps_before):
        optimizer.zero_grad()
        model(torch.tensor([1, 4, 4])).sum().backward()
        optimizer.step()
    state = {k: v.clone() if torch.is_tensor(v) else v
             for k, v in optimizer.state[model.weight].items()}
    weight = model.weight.detach().clone()
    model.weight.grad = torch.sparse_coo_tensor(  # torch checks no ids unless asked
        torch.tensor([ids]), torch.ones(3, WIDTH), (ROWS, WIDTH), check_invariants=False,
        is_coalesced=coalesced)
    with pytest.raises(SparsegenError, match=refusal):
        optimizer.step()
    torch.testing.assert_close(model.weight.detach(), weight, rtol=0, atol=0)
    after = optimizer.state[model.weight]
    assert sorted(after) == sorted(state)
    for key, value in state.items():
        if torch.is_tensor(value):
            torch.testing.assert_close(after[key], value, rtol=0, atol=0)
        else:
            assert after[key] == value


def test_any_rule_as_a_torch_optimizer() -> None:
    """TorchRuleOptimizer runs a user rule with hyper-parameters from the param group."""
    import sparsegen.updates as U

    rule = U.register(U.define_update(
        "torch_test_decay", lambda x, h, g, f: x.weight * (f.one - h.decay) - h.lr * g,
        hyper=("lr", "decay")))
    w = torch.nn.Parameter(torch.ones(3, 2))
    opt = sgt.TorchRuleOptimizer([w], rule, lr=0.5, decay=0.25)
    w.grad = torch.full((3, 2), 2.0)
    opt.step()
    torch.testing.assert_close(w.detach(), torch.full((3, 2), 0.75 - 1.0))


def _train(model, optimizer, batches) -> None:
    for ids in batches:
        optimizer.zero_grad()
        (model(ids) ** 2).sum().backward()
        optimizer.step()


@pytest.mark.parametrize("torch_first", [True, False], ids=["torch-to-sgt", "sgt-to-torch"])
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_checkpoints_load_across_torch_and_sparsegen(name: str, torch_first: bool) -> None:
    """Two steps by one optimizer, its ``state_dict`` loaded into the other (torch's into
    sparsegen.torch's and back), two more steps: the weights are those of four steps of torch's
    optimizer alone."""
    make_ref, make_mine, sparse = PAIRS[name]
    oracle, model = _models(sparse, False, torch.float32)
    gen = torch.Generator().manual_seed(7)
    batches = [torch.randint(0, ROWS, (12,), generator=gen) for _ in range(4)]
    _train(oracle, make_ref(oracle.parameters()), batches)
    first, second = (make_ref, make_mine) if torch_first else (make_mine, make_ref)
    before = first(model.parameters())
    _train(model, before, batches[:2])
    after = second(model.parameters())
    after.load_state_dict(copy.deepcopy(before.state_dict()))
    _train(model, after, batches[2:])
    torch.testing.assert_close(model.weight, oracle.weight, rtol=1e-5, atol=1e-6)


def test_group_entries_are_checked_wherever_groups_come_from() -> None:
    """The constructor's groups, ``add_param_group`` and ``load_state_dict`` refuse entries out
    of range or settings the optimizer does not run, naming them; nothing changes."""
    a, b = torch.nn.Embedding(ROWS, WIDTH), torch.nn.Embedding(ROWS, WIDTH)
    with pytest.raises(SparsegenError, match=r"lr must be a number >= 0, got -1"):
        sgt.Adam([{"params": a.parameters(), "lr": -1}])
    opt = sgt.Adam(a.parameters(), lr=0.1)
    for group, message in (({"betas": (0.9, 1.0)}, r"betas must be two numbers in \[0, 1\)"),
                           ({"maximize": 1}, "maximize must be True or False, got 1"),
                           ({"eps": "small"}, "eps must be a number, got 'small'"),
                           ({"amsgrad": True}, "Adam runs only amsgrad=False, got amsgrad=True")):
        with pytest.raises(SparsegenError, match=message):
            opt.add_param_group({"params": b.parameters(), **group})
    assert len(opt.param_groups) == 1
    a.weight.grad = torch.ones(ROWS, WIDTH)
    opt.step()
    saved = copy.deepcopy(opt.state_dict())
    torch_adamw = torch.optim.AdamW(b.parameters())
    with pytest.raises(SparsegenError, match="decoupled_weight_decay=True"):
        opt.load_state_dict(torch_adamw.state_dict())
    torch.testing.assert_close(opt.state_dict(), saved, rtol=0, atol=0)
    with pytest.raises(SparsegenError, match="nesterov must be True or False, got 'yes'"):
        sgt.SGD(a.parameters(), momentum=0.9, nesterov="yes")
    with pytest.raises(SparsegenError, match=r"nesterov momentum .* got momentum=0"):
        sgt.SGD(a.parameters(), nesterov=True)
    import sparsegen.updates as U

    rule = U.define_update("torch_test_plain", lambda x, h, g, f: x.weight - h.lr * g,
                           hyper=("lr",))
    with pytest.raises(SparsegenError, match="maximize needs a rule that takes rescale_grad"):
        sgt.TorchRuleOptimizer(a.parameters(), rule, lr=0.5, maximize=True)


def test_tensor_lr_steps_as_the_float_lr() -> None:
    """An lr given as a tensor (as torch takes it) updates bit for bit as the same float."""
    a, b = _models(True, False, torch.float32)
    batches = [torch.tensor([1, 3, 3]), torch.tensor([3, 9])]
    _train(a, sgt.Adam(a.parameters(), lr=0.01, lazy=True), batches)
    _train(b, sgt.Adam(b.parameters(), lr=torch.tensor(0.01), lazy=True), batches)
    torch.testing.assert_close(b.weight, a.weight, rtol=0, atol=0)


def test_state_that_does_not_fit_the_parameter_is_refused() -> None:
    """A loaded state missing one of the rule's states, or of another shape, is refused with
    its key named; the weight and the state stay as they were."""
    model = torch.nn.Embedding(ROWS, WIDTH, sparse=True)
    opt = sgt.Adam(model.parameters(), lr=0.1, lazy=True)
    _train(model, opt, [torch.tensor([2, 5])])
    for change, message in (
            (lambda s: s.pop("exp_avg_sq"), r"holds \['exp_avg'\] but not \['exp_avg_sq'\]"),
            (lambda s: s.update(exp_avg=torch.zeros(ROWS // 2, 2 * WIDTH)),
             rf"state 'exp_avg' of a \({ROWS}, {WIDTH}\) torch.float32 parameter .* got "
             rf"\({ROWS // 2}, {2 * WIDTH}\)")):
        saved = copy.deepcopy(opt.state_dict())
        change(saved["state"][0])
        broken = sgt.Adam(model.parameters(), lr=0.1, lazy=True)
        broken.load_state_dict(saved)
        state = copy.deepcopy(broken.state[model.weight])
        weight = model.weight.detach().clone()
        model.zero_grad()
        model(torch.tensor([1])).sum().backward()
        with pytest.raises(SparsegenError, match=message):
            broken.step()
        torch.testing.assert_close(model.weight.detach(), weight, rtol=0, atol=0)
        torch.testing.assert_close(broken.state[model.weight], state, rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(0, WIDTH), (ROWS, 0)])
@pytest.mark.parametrize("name", ["adagrad_sparse", "adam", "sparse_adam"])
def test_empty_parameters_step_and_still_check_row_ids(name: str, shape) -> None:
    """A parameter with no elements takes a step (its step counts, as torch's) without a
    kernel, and a sparse gradient's out-of-range row is still refused."""
    _, make_mine, sparse = PAIRS[name]
    p = torch.nn.Parameter(torch.zeros(shape))
    opt = make_mine([p])
    p.grad = (torch.sparse_coo_tensor(torch.tensor([[shape[0] - 1]] if shape[0] else [[]]),
                                      torch.ones(1 if shape[0] else 0, shape[1]), shape)
              if sparse else torch.ones(shape))
    opt.step()
    opt.step()
    assert opt.state[p]["step"] == 2 and p.shape == shape
    if sparse:
        p.grad = torch.sparse_coo_tensor(torch.tensor([[shape[0]]]), torch.ones(1, shape[1]),
                                         shape, check_invariants=False)
        with pytest.raises(SparsegenError, match=rf"\[0, {shape[0]}\), got {shape[0]} at"):
            opt.step()
        assert opt.state[p]["step"] == 2


def test_grad_scaler_steps_as_with_torchs_optimizer() -> None:
    """torch.amp.GradScaler unscales the sparse gradients and calls ``step``: weighted bags of
    an EmbeddingBag with a padding row train as with torch.optim.SparseAdam."""
    torch.manual_seed(3)
    a = torch.nn.EmbeddingBag(ROWS, WIDTH, mode="sum", sparse=True, padding_idx=0)
    b = torch.nn.EmbeddingBag(ROWS, WIDTH, mode="sum", sparse=True, padding_idx=0)
    b.load_state_dict(a.state_dict())
    runs = [(a, torch.optim.SparseAdam(a.parameters(), lr=0.1)),
            (b, sgt.Adam(b.parameters(), lr=0.1, lazy=True))]
    scalers = [torch.amp.GradScaler("cpu", init_scale=1024.0) for _ in runs]
    for _ in range(3):
        ids, weights = torch.randint(0, ROWS, (8, 5)), torch.rand(8, 5)
        for (model, opt), scaler in zip(runs, scalers):
            opt.zero_grad()
            scaler.scale((model(ids, per_sample_weights=weights) ** 2).sum()).backward()
            scaler.step(opt)
            scaler.update()
    torch.testing.assert_close(b.weight, a.weight, rtol=1e-5, atol=1e-5)
