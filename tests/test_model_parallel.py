"""Model parallelism as MXNet 1.9.1 places it: ops and variables of a ``ctx_group``
(``mx.AttrScope(ctx_group=...)``) on the context ``group2ctx`` gives that group, in
``simple_bind`` and in ``Module(group2ctxs=...)``; copies between contexts differentiable.
numpy computes the values and gradients the placed graphs must give."""

from __future__ import annotations

import numpy as np
import pytest

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue


def _two_groups():
    """``c = 2 a + b`` with ``a * 2`` in group dev1 and ``+ b`` in dev2 (MXNet's test graph)."""
    with mx.AttrScope(ctx_group="dev1"):
        a = mx.sym.Variable("a") * 2
    with mx.AttrScope(ctx_group="dev2"):
        return a + mx.sym.Variable("b")


def test_as_in_context_is_differentiable():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        moved = (a * a).as_in_context(mx.cpu(1))
        out = moved * 3
    out.backward()
    assert moved.context == mx.cpu(1) and a.grad.context == mx.cpu(0)
    np.testing.assert_allclose(a.grad.asnumpy(), 6 * x)


def test_simple_bind_places_each_group_on_its_context():
    rng = np.random.default_rng(1)
    x, y, head = (rng.standard_normal((2, 5)).astype(np.float32) for _ in range(3))
    exe = _two_groups().simple_bind(mx.cpu(0), a=(2, 5), b=(2, 5),
                                    group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)})
    assert exe.arg_dict["a"].context == mx.cpu(1) and exe.arg_dict["b"].context == mx.cpu(2)
    assert exe.grad_dict["a"].context == mx.cpu(1)
    out = exe.forward(is_train=True, a=mx.nd.array(x), b=mx.nd.array(y))[0]
    assert out.context == mx.cpu(2)
    np.testing.assert_allclose(out.asnumpy(), 2 * x + y, rtol=1e-6)
    exe.backward(mx.nd.array(head))
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), 2 * head, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), head, rtol=1e-6)
    reshaped = exe.reshape(a=(3, 5), b=(3, 5))
    assert reshaped.arg_dict["a"].context == mx.cpu(1)


@pytest.mark.parametrize("contexts, group2ctxs, grad_contexts", [
    ([mx.cpu(0)], {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, [mx.cpu(1), mx.cpu(2)]),
    ([mx.cpu(0), mx.cpu(1)], [{"dev1": mx.cpu(2), "dev2": mx.cpu(3)},
                              {"dev1": mx.cpu(4), "dev2": mx.cpu(5)}], [mx.cpu(2), mx.cpu(3)]),
    ([mx.cpu(0), mx.cpu(1)], {"dev1": mx.cpu(2), "dev2": [mx.cpu(3)]}, [mx.cpu(2), mx.cpu(3)]),
    ([mx.cpu(0), mx.cpu(1)], {"dev1": [mx.cpu(2), mx.cpu(4)], "dev2": [mx.cpu(3), mx.cpu(5)]},
     [mx.cpu(2), mx.cpu(3)]),
])
def test_module_group2ctxs_forms(contexts, group2ctxs, grad_contexts):
    """Every form MXNet takes; the input gradients (merged on the first context's groups)
    equal numpy's, and the per-context ones live on that context's group contexts."""
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    head = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    mod = mx.mod.Module(_two_groups(), context=contexts, data_names=["a", "b"],
                        label_names=None, group2ctxs=group2ctxs)
    mod.bind(data_shapes=[("a", (4, 5)), ("b", (4, 5))], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.array(x), mx.nd.array(x + 1)]), is_train=True)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), 3 * x + 1, rtol=1e-6)
    mod.backward([mx.nd.array(head)])
    grads = mod.get_input_grads()
    assert [g.context for g in grads] == grad_contexts
    np.testing.assert_allclose(grads[0].asnumpy(), 2 * head, rtol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(), head, rtol=1e-6)
    per_context = mod.get_input_grads(merge_multi_context=False)
    assert len(per_context[0]) == len(contexts)


@pytest.mark.parametrize("group2ctxs, error, match", [
    ([{"dev1": mx.cpu(1)}], InvalidValue, "1 dicts for 2 contexts"),
    ({"dev1": [mx.cpu(1), mx.cpu(2), mx.cpu(3)]}, InvalidValue, r"group2ctxs\['dev1'\] has 3"),
    ("dev1", InvalidType, "group2ctxs must be a dict or a list of dicts, got 'dev1'"),
])
def test_bad_group2ctxs_is_refused_naming_it(group2ctxs, error, match):
    with pytest.raises(error, match=match):
        mx.mod.Module(_two_groups(), context=[mx.cpu(0), mx.cpu(1)], data_names=["a", "b"],
                      label_names=None, group2ctxs=group2ctxs)
    with pytest.raises(InvalidType, match="group2ctx must map ctx_group names to Contexts"):
        _two_groups().simple_bind(mx.cpu(), a=(1, 2), b=(1, 2), group2ctx={"dev1": "cpu"})
