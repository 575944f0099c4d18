"""The registry's references resolve, every ops family's storage rules are merged, and every
front-end op runs through ``dispatch.invoke``."""

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest

import sparsegen as mx
import sparsegen.ops
from sparsegen.errors import StorageFallbackWarning
from sparsegen.ndarray import dispatch
from sparsegen.registry import KERNELS
from sparsegen.ops.rule import VARIADIC
from sparsegen.storage_rules import FAMILIES, STORAGE_RULES

STYPES = ("default", "row_sparse", "csr")


def _load(ref: str):
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("key", sorted(STORAGE_RULES), ids=str)
def test_every_rule_holds_an_implementation_that_takes_its_inputs(key):
    op, stypes = key
    rule = STORAGE_RULES[key]
    assert rule.output_stype is None or rule.output_stype in STYPES
    assert all(s in STYPES for s in stypes if s != VARIADIC)
    implementation = rule.function
    assert callable(implementation)
    parameters = inspect.signature(implementation).parameters.values()
    if stypes[-1:] == (VARIADIC,):  # any number of inputs: the implementation takes *inputs
        assert any(p.kind == p.VAR_POSITIONAL for p in parameters), implementation
        return
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert len(positional) >= len(stypes), (implementation, stypes)


def test_every_ops_module_that_declares_rules_is_merged_and_no_key_twice():
    declaring = []
    for info in pkgutil.iter_modules(sparsegen.ops.__path__):
        module = importlib.import_module(f"sparsegen.ops.{info.name}")
        if hasattr(module, "STORAGE_RULES"):
            declaring.append(module)
    assert set(declaring) == set(FAMILIES)
    keys = [key for family in FAMILIES for key in family.STORAGE_RULES]
    assert len(keys) == len(set(keys)) == len(STORAGE_RULES)


def test_a_family_declares_the_rules_of_its_own_implementations():
    # the rule sits beside the function it runs: a family's table holds its own functions
    # (add_n's copy of one input and cast_storage's to the same type hold device.deep_copy)
    for family in FAMILIES:
        for key, rule in family.STORAGE_RULES.items():
            assert rule.function.__module__ in (family.__name__, "sparsegen.device"), key


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_names_a_template_and_schedules_that_exist(name):
    kernel = KERNELS[name]
    assert callable(_load(kernel.template))
    assert kernel.schedules
    for _, ref in kernel.schedules:
        assert _load(ref) is not None


def test_dot_rules_without_forward_stype_are_the_forward_rule_of_their_output():
    # ``dot<flags>`` is ``dot<flags>-><its output stype>``: one rule, spelt two ways
    plain = {k: r for k, r in STORAGE_RULES.items() if k[0].startswith("dot") and "->" not in k[0]}
    assert len(plain) == 10
    for (op, stypes), rule in plain.items():
        assert STORAGE_RULES[(f"{op}->{rule.output_stype}", stypes)] == rule


def _rsp(shape=(4, 3), rows=(1, 3)):
    data = np.arange(1, len(rows) * shape[1] + 1, dtype="float32").reshape(len(rows), shape[1])
    return mx.nd.sparse.row_sparse_array((data, list(rows)), shape=shape)


def _update(name, **kwargs):
    def call():
        opt = mx.optimizer.create(name, **kwargs)
        weight = mx.nd.ones((4, 3))
        opt.update(0, weight, _rsp(), opt.create_state(0, weight))
    return call


# (front-end call, the (op, input storage types) invoke must see)
CALLS = [
    (lambda: _rsp() + _rsp(), ("elemwise_add", ("row_sparse", "row_sparse"))),
    (lambda: _rsp() * 2, ("_mul_scalar", ("row_sparse",))),
    (lambda: mx.nd.sqrt(_rsp()), ("sqrt", ("row_sparse",))),
    (lambda: mx.nd.clip(_rsp(), 0, 2), ("clip", ("row_sparse",))),
    (lambda: mx.nd.ones((4, 3)).__iadd__(_rsp()), ("_inplace_add", ("default", "row_sparse"))),
    (lambda: mx.nd.ones((2, 2)) == mx.nd.zeros((2, 2)), ("equal", ("default", "default"))),
    (lambda: _rsp() > 1, ("_greater_scalar", ("row_sparse",))),
    (lambda: mx.nd.sparse.dot(mx.nd.ones((2, 4)).tostype("csr"), mx.nd.ones((4, 3))),
     ("dot", ("csr", "default"))),
    (lambda: mx.nd.sparse.dot(mx.nd.ones((2, 4)).tostype("csr"), mx.nd.ones((2, 3)),
                              transpose_a=True, forward_stype="default"),
     ("dot_transpose_a->default", ("csr", "default"))),
    (lambda: mx.nd.sparse.cast_storage(mx.nd.ones((2, 2)), "csr"),
     ("cast_storage->csr", ("default",))),
    (lambda: _rsp().tostype("default"), ("cast_storage->default", ("row_sparse",))),
    (lambda: _rsp().tostype("row_sparse"), ("cast_storage->row_sparse", ("row_sparse",))),
    (lambda: mx.nd.sparse.retain(_rsp(), [3, 0]), ("retain", ("row_sparse",))),
    (lambda: _rsp().retain(mx.nd.array([0, 3], dtype="int64")),
     ("_retain_check", ("row_sparse", "default"))),
    (_update("sgd"), ("sgd_update", ("default", "row_sparse"))),
    (_update("sgd", momentum=0.9), ("sgd_mom_update", ("default", "row_sparse"))),
    (_update("adam"), ("adam_update", ("default", "row_sparse"))),
    (_update("adagrad"), ("adagrad_update", ("default", "row_sparse"))),
    (_update("ftrl"), ("ftrl_update", ("default", "row_sparse"))),
]


@pytest.mark.parametrize("call, expected", CALLS, ids=[f"{op}{stypes}" for _, (op, stypes) in CALLS])
def test_front_end_ops_run_through_invoke(call, expected, monkeypatch):
    # invoke is the only caller of storage_rule in the dispatch module: each lookup it makes is seen
    seen = []
    lookup = dispatch.storage_rule

    def spy(op, stypes):
        seen.append((op, stypes))
        return lookup(op, stypes)

    monkeypatch.setattr(dispatch, "storage_rule", spy)
    call()
    assert expected in seen


def test_rules_without_an_output_have_no_dense_fallback():
    # an in-place update must not run on dense copies of its inputs: csr weights raise
    weight = mx.nd.ones((2, 2)).tostype("csr")
    grad = mx.nd.ones((2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", StorageFallbackWarning)
        with pytest.raises(mx.MXNetError, match="no implementation"):
            dispatch.invoke("sgd_update", (weight, grad), family="sgd", states=[],
                            hyper=(0.1, 0.0, 1.0, float("inf")), lazy=False)
    np.testing.assert_array_equal(weight.asnumpy(), 1.0)
