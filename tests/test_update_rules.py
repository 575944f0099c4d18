"""Update rules (sparsegen.updates, update_rules/language.py): the built-in families rewritten as
rules give the recorded bits of the kernels they replace; user rules (Lion, AdamW,
RowWiseAdagrad, per-row LAMB) against numpy oracles on every function; rules that cannot compile
are refused at definition with the user's file:line; a changed rule gets a new cache key;
elementwise ops keep the storage type."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
import sparsegen.kernels as K
import sparsegen.updates as U
from sparsegen.cachekey import KernelKey
from sparsegen.registry import kernel_def
from sparsegen.target import host_cpu
from sparsegen.update_rules.builtin import BUILT_IN

FIXTURE = Path(__file__).parent / "fixtures" / "optim_outputs.npz"
INF = float("inf")


# -- the built-ins, bit for bit -------------------------------------------------------------
def _fixture_cases() -> list[str]:
    with np.load(FIXTURE) as fx:
        return sorted({k.rsplit("/", 1)[0] for k in fx.files})


@pytest.mark.parametrize("case", _fixture_cases())
def test_builtin_rules_give_the_recorded_bits(case: str) -> None:
    """Each family/dtype/function gives the outputs recorded before the rewrite (same bits)."""
    name, dtype, function = case.split("/")
    family = BUILT_IN[name[len("optim_"):]]
    with np.load(FIXTURE) as fx:
        count = 1 + (1 if function == "dense" else 2) + len(family.states)
        arrays = [fx[f"{case}/in{i}"].copy() for i in range(count)]
        hyper = [float(v) for v in fx[f"{case}/hyper"]]
        getattr(K.get(name, dtype), function)(*arrays, *hyper)
        written = [arrays[0], *arrays[count - len(family.states):]]
        for i, array in enumerate(written):
            expected = fx[f"{case}/out{i}"]
            assert array.dtype == expected.dtype
            np.testing.assert_array_equal(array.view(np.uint8), expected.view(np.uint8))


ORACLE_TESTS = {"ftml": "test_optimizers_more.py", "dcasgd": "test_optimizers_more.py",
                "group_adagrad": "test_optimizers_more.py",
                "accumulate": "test_optimizers_more.py",
                "quantize_2bit": "test_kvstore_compression.py"}
"""Built-ins added after the rewrite (no hand-written kernel to record): each is checked
against a numpy oracle of MXNet's equations in its test module instead."""


def test_every_family_is_a_rule_with_a_fixture() -> None:
    """The fixture covers every built-in family and each of its functions, or the family's
    numpy-oracle test module names it."""
    cases = set(_fixture_cases())
    for family in BUILT_IN.values():
        assert isinstance(family, U.UpdateRule)
        if family.name in ORACLE_TESTS:
            source = (Path(__file__).parent / ORACLE_TESTS[family.name]).read_text()
            assert family.name in source, family.name
            continue
        for function in family.functions:
            assert f"optim_{family.name}/float32/{function}" in cases


# -- user rules against numpy oracles ---------------------------------------------------------
def _clip(x: np.ndarray, bound: float) -> np.ndarray:
    return np.clip(x, -bound, bound)


def _lion(w, g, mom, lr, b1, b2, wd, rescale, clip):
    c = _clip(g * rescale, clip)
    step = np.sign(b1 * mom + (1 - b1) * c)
    return [w - lr * (step + wd * w), b2 * mom + (1 - b2) * c]


def _adamw(w, g, m, v, lr, eta, b1, b2, eps, wd, rescale, clip):
    c = _clip(g * rescale, clip)
    m = b1 * m + (1 - b1) * c
    v = b2 * v + (1 - b2) * c * c
    return [w - eta * (lr * m / (np.sqrt(v) + eps) + wd * w), m, v]


def _rowwise_adagrad(w, g, hist, lr, eps, rescale, clip):
    c = _clip(g * rescale, clip)
    hist = hist + (c * c).mean(axis=1)
    return [w - lr * c / (np.sqrt(hist)[:, None] + eps), hist]


def _lamb_rows(w, g, m, v, lr, b1, b2, eps, wd, rescale, clip, ms, vs):
    c = _clip(g * rescale, clip)
    m = b1 * m + (1 - b1) * c
    v = b2 * v + (1 - b2) * c * c
    step = m * ms / (np.sqrt(v * vs) + eps) + wd * w
    wn = np.linalg.norm(w, axis=1, keepdims=True)
    sn = np.linalg.norm(step, axis=1, keepdims=True)
    with np.errstate(all="ignore"):
        ratio = np.where((wn > 0) & (sn > 0), wn / sn, 1.0)
    return [w - lr * ratio * step, m, v]


USER_RULES = {
    "lion": (U.lion, _lion, (0.05, 0.9, 0.99, 0.01, 0.5, 0.8)),
    "adamw": (U.adamw, _adamw, (0.05, 0.9, 0.9, 0.999, 1e-6, 0.01, 0.5, 0.8)),
    "rowwise_adagrad": (U.rowwise_adagrad, _rowwise_adagrad, (0.1, 1e-6, 0.5, 0.8)),
    "lamb_rows": (U.lamb_rows, _lamb_rows, (0.05, 0.9, 0.999, 1e-6, 0.01, 0.5, 0.8, 1.1, 1.2)),
}


def _oracle_update(rule, oracle, hyper, weight, states, grad, rows, function):
    """The oracle in float64 on the rows the function updates (lazy: the gradient's rows; std:
    every row, zero gradient where none; dense: every row)."""
    w = weight.astype(np.float64)
    s = [a.astype(np.float64) for a in states]
    if function == "dense":
        g, touched = grad.astype(np.float64), np.arange(len(w))
    else:
        g = np.zeros_like(w)
        g[rows] = grad
        touched = rows if function == "lazy" else np.arange(len(w))
    outs = oracle(w[touched], g[touched], *[a[touched] for a in s], *hyper)
    result = [w, *s]
    for full, new in zip(result, outs):
        full[touched] = new
    return result


@pytest.mark.parametrize("name", sorted(USER_RULES))
@given(data=st.data())
def test_user_rules_match_numpy(name: str, data) -> None:
    """Lion, AdamW, RowWiseAdagrad, per-row LAMB: every function, float32/float64, empty
    gradients, every row, one column."""
    rule, oracle, hyper = USER_RULES[name]
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    function = data.draw(st.sampled_from(rule.functions))
    n = data.draw(st.integers(1, 12))
    d = data.draw(st.sampled_from([1, 3, 8, 19]))
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=n))), np.int64)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    weight = rng.standard_normal((n, d)).astype(dtype)
    states = [(np.abs(rng.standard_normal((n, d))) + 0.1).astype(dtype) for _ in rule.states]
    states += [(np.abs(rng.standard_normal(n)) + 0.1).astype(dtype) for _ in rule.row_states]
    grad = rng.standard_normal((n if function == "dense" else len(rows), d)).astype(dtype)
    as_float32 = [float(np.float32(v)) for v in hyper]  # the kernels' parameters are float32
    expected = _oracle_update(rule, oracle, as_float32, weight, states, grad, rows, function)
    grads = [grad] if function == "dense" else [grad, rows]
    getattr(U.kernel(rule, dtype), function)(weight, *grads, *states, *hyper)
    tol = 2e-5 if dtype == "float32" else 1e-12
    for got, want in zip([weight, *states], expected):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_rule_runs_on_torch_tensors_in_place() -> None:
    """A rule's kernel writes torch tensors in place (DLPack, no copy)."""
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(5)
    w = torch.randn(5, 4, generator=gen)
    mom = torch.zeros(5, 4)
    grad = torch.randn(2, 4, generator=gen)
    rows = torch.tensor([1, 3])
    # the kernel takes float32 hyper-parameters: 1 - float32(0.99) is 0.01 * (1 - 9.5e-7)
    lr, beta1, beta2 = (float(np.float32(v)) for v in (0.1, 0.9, 0.99))
    expected = _lion(w.numpy().astype(np.float64)[[1, 3]], grad.numpy().astype(np.float64),
                     np.zeros((2, 4)), lr, beta1, beta2, 0.0, 1.0, INF)
    pointer = w.data_ptr()
    U.kernel("lion", "float32").lazy(w, grad, rows, mom, 0.1, 0.9, 0.99, 0.0, 1.0, INF)
    assert w.data_ptr() == pointer
    np.testing.assert_allclose(w.numpy()[[1, 3]], expected[0], rtol=1e-6)
    np.testing.assert_allclose(mom.numpy()[[1, 3]], expected[1], rtol=1e-6)


def test_builtin_rule_written_by_a_user_gives_the_same_bits() -> None:
    """SGD with momentum written as a user rule: the same bits as the built-in kernel."""

    @U.update_rule(states=("mom",), hyper=("lr", "momentum", "wd", "rescale_grad",
                                           "clip_gradient"))
    def user_sgd_mom(x, h, g, f):
        mom = (h.momentum * x.mom - h.lr * h.wd * x.weight
               - h.lr * f.clip(h.rescale_grad * g, h.clip_gradient))
        return x.weight + mom, mom

    rng = np.random.default_rng(3)
    for dtype in ("float16", "float32"):
        w = rng.standard_normal((7, 13)).astype(dtype)
        mom = rng.standard_normal((7, 13)).astype(dtype)
        g = rng.standard_normal((3, 13)).astype(dtype)
        rows = np.array([0, 4, 6])
        hyper = (0.1, 0.9, 0.01, 0.5, 0.7)
        mine = [w.copy(), mom.copy()]
        U.kernel(user_sgd_mom, dtype).lazy(mine[0], g, rows, mine[1], *hyper)
        K.get("optim_sgd_mom", dtype).lazy(w, g, rows, mom, *hyper)
        np.testing.assert_array_equal(mine[0].view(np.uint8), w.view(np.uint8))
        np.testing.assert_array_equal(mine[1].view(np.uint8), mom.view(np.uint8))


def test_a_changed_rule_gets_a_new_cache_key() -> None:
    """Registering a rule again with another body changes its kernel's key and its results."""

    def key() -> str:
        definition = kernel_def("optim_scaled").definition
        return KernelKey("optim_scaled", ("float32",), host_cpu(), (), definition).digest()

    U.register(U.define_update("scaled", lambda x, h, g, f: x.weight - 0.5 * g,
                               functions=("dense",)))
    first, w = key(), np.ones((2, 3), np.float32)
    U.kernel("scaled", "float32").dense(w, np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(w, 0.5)
    U.register(U.define_update("scaled", lambda x, h, g, f: x.weight - 0.25 * g,
                               functions=("dense",)))
    assert key() != first
    U.kernel("scaled", "float32").dense(w, np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(w, 0.25)
    assert kernel_def("optim_scaled").definition == U.get_rule("scaled").digest


def test_a_builtin_cannot_be_replaced() -> None:
    """A user rule named after a built-in family is refused."""
    with pytest.raises(mx.SparsegenError, match="built-in"):
        U.register(U.define_update("adam", lambda x, h, g, f: x.weight))


# -- one registration derives the kernel, the op and the rule table ---------------------------
def test_registration_derives_kernel_op_rules_and_table() -> None:
    """``register`` (the path the built-ins take too) gives a rule its kernel definition, its
    ``<name>_update`` storage rules from its functions, and its row in the rule table."""
    from sparsegen.registry import KERNELS, UPDATE_RULES, update_kernel
    from sparsegen.storage_rules import storage_rule

    stypes = [(w, g) for w in ("default", "row_sparse") for g in ("default", "row_sparse")]
    for rule in [*BUILT_IN.values(), U.register(U.define_update(
            "dense_only", lambda x, h, g, f: x.weight - h.lr * g, hyper=("lr",),
            functions=("dense",)))]:
        assert UPDATE_RULES[rule.name] is rule
        assert KERNELS[f"optim_{rule.name}"] == update_kernel(rule)
        assert KERNELS[f"optim_{rule.name}"].rule is rule
        served = [s for s in stypes if storage_rule(f"{rule.name}_update", s) is not None]
        assert served == (stypes if "lazy" in rule.functions
                          else [("default", "default"), ("row_sparse", "default")]), rule.name
    assert storage_rule("no_such_rule_update", ("default", "default")) is None


def test_hyper_parameters_are_passed_by_name() -> None:
    """The same values by name give the same update whatever order a rule declares them in;
    a missing or unknown name is refused, naming it, before anything changes."""
    from sparsegen.ndarray.optim_run import never, run

    def step(x, h, g, f):
        return x.weight * h.a - h.b * g

    weights = []
    for name, hyper in (("by_name_ab", ("a", "b")), ("by_name_ba", ("b", "a"))):
        rule = U.register(U.define_update(name, step, hyper=hyper, functions=("dense",)))
        weight = mx.nd.ones((3, 2))
        run("test", name, weight, mx.nd.full((3, 2), 2.0), (), {"a": 3.0, "b": 1.0}, never)
        weights.append(weight.asnumpy())
        assert rule.arguments({"b": 1.0, "a": 3.0}) == tuple({"a": 3.0, "b": 1.0}[n]
                                                              for n in hyper)
        with pytest.raises(U.UpdateRuleError, match=r"missing \['b'\]"):
            rule.arguments({"a": 3.0})
        with pytest.raises(U.UpdateRuleError, match=r"unknown \['c'\]"):
            rule.arguments({"a": 3.0, "b": 1.0, "c": 0.0})
        before = weight.asnumpy()
        with pytest.raises(U.UpdateRuleError, match="missing"):
            run("test", name, weight, mx.nd.ones((3, 2)), (), {"a": 3.0}, never)
        np.testing.assert_array_equal(weight.asnumpy(), before)  # refused: nothing changed
    np.testing.assert_array_equal(weights[0], 1.0)  # 1 * 3 - 1 * 2
    np.testing.assert_array_equal(weights[1], 1.0)


# -- refusals at definition ---------------------------------------------------------------------
def _line_of(fn, text: str) -> str:
    lines, first = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(fn)}:{first + offset}"


def _refused(fn, text: str, match: str, **kwargs) -> None:
    with pytest.raises(U.UpdateRuleError, match=match) as err:
        U.define_update("bad", fn, **kwargs)
    assert str(err.value).startswith(_line_of(fn, text) + ": "), str(err.value)


def test_refused_non_elementwise_access() -> None:
    def bad(x, h, g, f):
        shifted = x.weight[1]
        return shifted

    _refused(bad, "x.weight[1]", "non-elementwise")


def test_refused_python_control_flow() -> None:
    def bad(x, h, g, f):
        if g > 0:
            return x.weight - h.lr * g
        return x.weight

    _refused(bad, "if g > 0", "control flow", hyper=("lr",))

    def bad_max(x, h, g, f):
        return max(x.weight, g)

    _refused(bad_max, "return max(", "control flow")


def test_refused_wrong_number_of_outputs() -> None:
    def bad(x, h, g, f):
        mom = 0.9 * x.mom + g
        return x.weight - mom

    _refused(bad, "return", "wrong number of outputs.*2", states=("mom",))


def test_refused_dtype_mismatches() -> None:
    def stores_condition(x, h, g, f):
        return x.weight > g

    _refused(stores_condition, "return", "dtype mismatch")

    def adds_condition(x, h, g, f):
        return x.weight + (g > 0)

    _refused(adds_condition, "(g > 0)", "dtype mismatch")

    def complex_constant(x, h, g, f):
        return x.weight * 1j

    _refused(complex_constant, "1j", "dtype mismatch")

    def numpy_call(x, h, g, f):
        return np.sin(x.weight)

    _refused(numpy_call, "np.sin", "numpy's sin on a value")

    def fractional_power(x, h, g, f):
        return x.weight - g ** 0.5

    _refused(fractional_power, "g ** 0.5", r"x \*\* 0.5: .* whole-number powers .* f.sqrt")

    def power_of_a_value(x, h, g, f):
        return x.weight - 2 ** g

    _refused(power_of_a_value, "2 ** g", r"2 \*\* x: .* f.exp")


def _body(rule) -> list[str]:
    """A rule's traced definition without its name line: equal bodies, equal kernels."""
    return rule.definition.splitlines()[1:]


def test_python_and_numpy_operators_trace_to_fs_functions() -> None:
    """``abs(v)``, ``v ** n`` (whole ``n``) and numpy's sqrt / absolute / exp / log / negative /
    power on a value trace to the rule written with f's functions and products."""
    from sparsegen.update_rules.language import define_update

    def plain(x, h, g, f):
        return x.weight - h.lr * (f.abs(g) * (g * g) + 1.0 / (g * g) + f.sqrt(f.abs(g))
                                  + f.exp(-g) * f.log(f.abs(g)) + g * g)

    def operators(x, h, g, f):
        return x.weight - h.lr * (abs(g) * g ** 2 + g ** -2 + np.sqrt(np.abs(g))
                                  + np.exp(np.negative(g)) * np.log(np.absolute(g))
                                  + np.power(g, 2))

    assert _body(define_update("ops_a", operators, hyper=("lr",))) == \
        _body(define_update("ops_b", plain, hyper=("lr",)))


@given(n=st.integers(-64, 64), v=st.one_of(
    st.floats(-3, 3), st.sampled_from([0.0, -0.0, INF, -INF, float("nan"), 1e-30, -7.5])))
def test_whole_powers_match_numpys(n: int, v: float) -> None:
    """``g ** n`` is square and multiply: within n ulps of numpy's power (exact for 0, 1, inf,
    NaN, signed zeros; 1 for ``n == 0``, NaN too)."""
    from sparsegen.update_rules.language import define_update, evaluate

    rule = define_update("power", lambda x, h, g, f: g ** n)
    got = evaluate(rule.outputs[0], {"weight": 0.0, "grad": v})
    with np.errstate(all="ignore"):
        want = np.float64(v) ** np.float64(n)
    if np.isnan(want) or np.isinf(want) or want == 0:
        np.testing.assert_array_equal(got, want)  # NaN equals NaN here; the zero's sign too
        assert np.signbit(got) == np.signbit(want)
    else:
        np.testing.assert_allclose(got, want, rtol=(abs(n) + 1) * 2.0**-52)


def test_refused_row_state_from_an_element() -> None:
    def bad(x, h, g, f):
        return x.weight, x.history + g

    _refused(bad, "x.history + g", "row state 'history'", row_states=("history",))


def test_refused_unknown_names_and_assignment() -> None:
    def unknown(x, h, g, f):
        return x.weight - h.learning_rate * g

    _refused(unknown, "h.learning_rate", "no hyper-parameter 'learning_rate'", hyper=("lr",))

    def assigns(x, h, g, f):
        x.weight = x.weight - g
        return x.weight

    _refused(assigns, "x.weight = ", "returns its new values")


def test_refused_swap_and_nested_reduction() -> None:
    def swap(x, h, g, f):
        return x.mom, x.weight

    _refused(swap, "return", "cycle", states=("mom",))

    def nested(x, h, g, f):
        return x.weight - f.row_sum(f.row_norm(g) * g)

    _refused(nested, "f.row_sum", "one level")


def test_refused_bad_declarations() -> None:
    with pytest.raises(U.UpdateRuleError, match="functions"):
        U.define_update("x1", lambda x, h, g, f: x.weight, functions=("sparse",))
    with pytest.raises(U.UpdateRuleError, match="differ"):
        U.define_update("x2", lambda x, h, g, f: x.weight, states=("lr",), hyper=("lr",))


# -- elementwise ops ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def softsign():
    """A user elementwise op, defined when a test needs it (not at collection, where it would
    join the registry other modules parametrize over)."""
    return U.elementwise("test_softsign", lambda v, f: v / (f.one + f.abs(v)))


@given(data=st.data())
def test_elementwise_keeps_the_storage_type(softsign, data) -> None:
    """A user elementwise op on row_sparse / csr / dense: the stored values mapped, the storage
    type and indices kept (numpy oracle on the dense values)."""
    stype = data.draw(st.sampled_from(["row_sparse", "csr", "default"]))
    n, d = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 7))
    density = data.draw(st.sampled_from([0.0, 0.3, 1.0]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    dense = rng.standard_normal((n, d)).astype(np.float32)
    dense[rng.random((n, d)) > density] = 0
    if stype == "row_sparse":
        dense[rng.random(n) > density] = 0
    x = mx.nd.array(dense).tostype(stype)
    y = softsign(x)
    assert y.stype == stype
    np.testing.assert_allclose(y.asnumpy(), dense / (1 + np.abs(dense)), rtol=1e-6)
    if stype == "row_sparse":
        np.testing.assert_array_equal(y.indices.asnumpy(), x.indices.asnumpy())
    if stype == "csr":
        np.testing.assert_array_equal(y.indptr.asnumpy(), x.indptr.asnumpy())


def test_elementwise_refuses_an_op_that_moves_zero() -> None:
    with pytest.raises(U.UpdateRuleError, match="not zero-preserving"):
        U.elementwise("plus_one", lambda v, f: v + 1)
    with pytest.raises(U.UpdateRuleError, match="not zero-preserving: fn\\(0\\) = nan"):
        U.elementwise("log_op", lambda v, f: f.log(v) * 0)


# -- export and CUDA ------------------------------------------------------------------------------
def test_user_rules_export_to_the_c_library(tmp_path) -> None:
    """A user rule's kernel exports like a built-in: its symbols in the library and header."""
    from sparsegen.export import export

    result = export(tmp_path / "out", "cpu", ["optim_lion", "optim_rowwise_adagrad"],
                    ["float32"])
    header = result.header.read_text()
    for symbol in ("sg_optim_lion_float32_lazy", "sg_optim_lion_float32_std",
                   "sg_optim_lion_float32_dense", "sg_optim_rowwise_adagrad_float32_lazy"):
        assert symbol in header
    assert "history" in header  # the row state is an argument of its own


def test_user_rules_compile_for_cuda() -> None:
    """Every function of the example rules builds for CUDA and nvcc compiles it; a rule with a
    row reduction or row states runs one thread per row (its space allows nothing else)."""
    from sparsegen import cuda_runtime
    from sparsegen.compiler import build_many, cuda_source
    from sparsegen.target import cuda

    names = ["optim_lion", "optim_adamw", "optim_rowwise_adagrad", "optim_lamb_rows",
             "optim_torch_sgd_momentum", "optim_torch_adagrad"]
    parts = [(kernel_def(k), ("float32",), kernel_def(k).space("cuda").config({}))
             for k in names]
    source = cuda_source(build_many(parts, cuda("sm_90"))[1])
    for k in names:
        for function in ("lazy", "std", "dense"):
            assert f"sg_{k}_float32_{function}" in source
    assert cuda_runtime.compile_cubin(source, "sm_90")[:4] == b"\x7fELF"
    from test_cuda import _check_launches, _kernels

    kernels = _kernels(source)
    _check_launches(kernels, 32)  # the default mapping: a warp per row, block size declared
    for name, code in kernels.items():
        if "rowwise_adagrad" in name or "lamb_rows" in name:
            assert "threadIdx.y" not in code, name  # one thread per row
    for k in ("optim_rowwise_adagrad", "optim_lamb_rows"):
        row_threads = next(knob for knob in kernel_def(k).space("cuda").knobs
                           if knob.name == "row_threads")
        assert row_threads.values == (1,)


def test_user_rules_tune_like_builtins(tmp_path) -> None:
    """The tuner times a user rule's kernel on its own workload and records its candidates."""
    from sparsegen.tune.tuner import tune_one, tuning_target

    outcome = tune_one("optim_rowwise_adagrad", ("float32",), tuning_target(None), "small", 2,
                       tmp_path / "log.jsonl", rounds=1)
    records = (tmp_path / "log.jsonl").read_text().splitlines()
    assert len(records) == 2
    assert all('"optim_rowwise_adagrad"' in r for r in records)
    assert outcome is not None


def test_nan_and_inf_pass_through_a_user_rule() -> None:
    """A NaN gradient element gives a NaN weight and states there (no clipping with an inf
    bound), an inf one an inf state, as numpy computes; the other elements are untouched by
    them."""
    w = np.ones((2, 3), np.float32)
    mean, var = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)
    g = np.array([[np.nan, np.inf, 1.0]], np.float32)
    hyper = (0.1, 1.0, 0.9, 0.999, 1e-8, 0.0, 1.0, INF)
    with np.errstate(invalid="ignore"):
        expected = _adamw(w[[1]].astype(np.float64), g.astype(np.float64), mean[[1]],
                          var[[1]], *[float(np.float32(v)) for v in hyper])
    U.kernel("adamw", "float32").lazy(w, g, np.array([1]), mean, var, *hyper)
    for got, want in zip((w[[1]], mean[[1]], var[[1]]), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)
    np.testing.assert_array_equal(w[0], 1.0)
    assert np.isnan(w[1, 0]) and np.isinf(var[1, 1])
