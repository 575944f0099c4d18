"""``mx.mod.Module`` against oracles: ``Module.fit`` runs recorded from MXNet 1.9.1
(tests/fixtures/record_module.py, the same program run here), numpy for forward, predict,
score and the updates, MXNet-written checkpoints, and the errors of bad calls."""

from __future__ import annotations

import importlib.util
import json
import logging
import pathlib
import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue, MissingValue, NotReady

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("record_module",
                                               HERE / "fixtures" / "record_module.py")
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)
FIXTURE = json.loads(record.FIXTURE.read_text())


# -- Module.fit reproduces MXNet 1.9.1 -----------------------------------------------------------
@pytest.mark.parametrize("case", sorted(record.CASES))
def test_fit_matches_mxnet(case):
    """The metric after every batch, the trained parameters (and their storage types), the
    auxiliary states (BatchNorm's moving statistics), predict and score match MXNet 1.9.1's
    run of the same program."""
    expected = FIXTURE["cases"][case]
    got, _ = record.run_case(mx, case, FIXTURE["data"])
    np.testing.assert_allclose(got["curve"], expected["curve"], rtol=1e-4, atol=1e-5)
    assert got["stypes"] == expected["stypes"]
    for name, value in {**expected["params"], **expected["aux"]}.items():
        np.testing.assert_allclose({**got["params"], **got["aux"]}[name], value, rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    assert sorted(got["aux"]) == sorted(expected["aux"])
    np.testing.assert_allclose(got["predict"], expected["predict"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["score"], expected["score"], rtol=1e-4, atol=1e-5)


def test_mxnet_checkpoint_loads_into_module():
    """Module.load of the checkpoint MXNet wrote after training predicts what MXNet did."""
    prefix = str(record.CHECKPOINT)
    mod = mx.mod.Module.load(prefix, record.EPOCHS, data_names=["data"],
                             label_names=["softmax_label"])
    it, _ = record.arrays(mx, "linear_sgd_local", FIXTURE["data"])
    mod.bind(it.provide_data, it.provide_label, for_training=False)
    np.testing.assert_allclose(mod.predict(it).asnumpy(),
                               FIXTURE["cases"]["linear_sgd_local"]["predict"], rtol=1e-5,
                               atol=1e-6)
    arg_params, aux_params = mod.get_params()
    assert sorted(arg_params) == ["fc_bias", "fc_weight"] and aux_params == {}
    np.testing.assert_allclose(arg_params["fc_weight"].asnumpy(),
                               FIXTURE["cases"]["linear_sgd_local"]["params"]["fc_weight"],
                               rtol=1e-6)


# -- numpy oracles -------------------------------------------------------------------------------
def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _linear_module(features, classes, batch, weight, bias, for_training=False):
    """A bound linear classifier Module with the given parameters."""
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("fc_weight", shape=(features, classes), stype="row_sparse")
    b = mx.sym.Variable("fc_bias", shape=(classes,))
    net = mx.sym.SoftmaxOutput(mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), b), name="softmax")
    mod = mx.mod.Module(net)
    mod.bind([("data", (batch, features))], [("softmax_label", (batch,))],
             for_training=for_training)
    mod.init_params(arg_params={"fc_weight": mx.nd.array(weight).tostype("row_sparse"),
                                "fc_bias": mx.nd.array(bias)})
    return mod


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 9), st.floats(0.0, 1.0),
       st.integers(0, 2 ** 16))
def test_forward_predict_score_against_numpy(batches, batch, features, density, seed):
    """forward / get_outputs, predict (merged over batches) and score (accuracy) are numpy's
    softmax(x·w + b) on csr data of any density, empty rows and empty batches included."""
    rng = np.random.default_rng(seed)
    n, classes = batches * batch, 3
    x = (rng.normal(size=(n, features)) * (rng.random((n, features)) < density)).astype("f")
    y = rng.integers(0, classes, n).astype("f")
    weight = rng.normal(size=(features, classes)).astype("f")
    bias = rng.normal(size=classes).astype("f")
    expected = _softmax(x @ weight + bias)
    mod = _linear_module(features, classes, batch, weight, bias)
    it = _iterator(x, y, batch)
    mod.forward(next(iter(it)), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expected[:batch], rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(mod.predict(it).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    parts = mod.predict(it, merge_batches=False)
    assert len(parts) == batches and all(len(p) == 1 for p in parts)
    ((name, accuracy),) = mod.score(it, "acc")
    assert name == "accuracy"
    np.testing.assert_allclose(accuracy, np.mean(expected.argmax(1) == y), rtol=1e-6)
    outputs = [out[0].asnumpy() for out, _, _ in mod.iter_predict(it)]
    np.testing.assert_allclose(np.concatenate(outputs), expected, rtol=1e-5, atol=1e-6)


def _iterator(x, y, batch):
    """csr batches of ``batch`` samples (the fixture's iterator, sized here)."""
    return mx.io.NDArrayIter(mx.nd.sparse.csr_matrix(scipy.sparse.csr_matrix(x)),
                             mx.nd.array(y), batch_size=batch, last_batch_handle="discard")


def test_predict_drops_padding_and_reshapes():
    """A padded last batch comes back without its padding; a batch of another size reshapes
    the module (outputs of that size)."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(10, 4)).astype("f"), np.zeros(10, "f")
    weight, bias = rng.normal(size=(4, 3)).astype("f"), np.zeros(3, "f")
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                               name="softmax")
    mod = mx.mod.Module(net)
    it = mx.io.NDArrayIter(x, y, batch_size=4, last_batch_handle="pad")
    mod.bind(it.provide_data, it.provide_label, for_training=False)
    mod.init_params(arg_params={"fc_weight": mx.nd.array(weight.T), "fc_bias": mx.nd.array(bias)})
    np.testing.assert_allclose(mod.predict(it).asnumpy(), _softmax(x @ weight), rtol=1e-5)
    with pytest.warns(UserWarning, match="label_shapes don't match"):  # no labels: MXNet's
        mod.forward(mx.io.DataBatch([mx.nd.array(x[:3])]), is_train=False)
    assert mod.get_outputs()[0].shape == (3, 3)
    assert mod.data_shapes[0].shape == (3, 4) and mod.output_shapes == [("softmax_output",
                                                                          (3, 3))]
    with pytest.warns(UserWarning, match="label_shapes don't match"):
        single = mod.predict(mx.nd.array(x[:2]))
    np.testing.assert_allclose(single.asnumpy(), _softmax(x[:2] @ weight), rtol=1e-5)


def test_manual_steps_against_numpy_sgd():
    """forward_backward + update with plain SGD moves the weights by -lr * the gradient of
    the softmax cross-entropy (numpy), rescaled by 1 / batch size; input gradients too."""
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(6, 4)).astype("f"), rng.integers(0, 3, 6).astype("f")
    weight, bias = rng.normal(size=(3, 4)).astype("f"), rng.normal(size=3).astype("f")
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                               name="softmax")
    mod = mx.mod.Module(net)
    mod.bind([("data", (6, 4))], [("softmax_label", (6,))], inputs_need_grad=True)
    mod.init_params(arg_params={"fc_weight": mx.nd.array(weight), "fc_bias": mx.nd.array(bias)})
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    assert mod._kvstore is None and mod._update_on_kvstore is False  # 'local', one context
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    head = _softmax(x @ weight.T + bias) - np.eye(3)[y.astype(int)]
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), head @ weight, rtol=1e-5)
    mod.update()
    arg_params, _ = mod.get_params()
    np.testing.assert_allclose(arg_params["fc_weight"].asnumpy(),
                               weight - 0.5 / 6 * head.T @ x, rtol=1e-5)
    np.testing.assert_allclose(arg_params["fc_bias"].asnumpy(),
                               bias - 0.5 / 6 * head.sum(0), rtol=1e-5)


def test_fixed_params_and_kvstore_rows():
    """A fixed parameter takes no gradient and keeps its value; with a kvstore object the
    row_sparse weight is updated on the kvstore and reaches the executor by prepare's
    row_sparse_pull (only the rows the batch names), and get_params returns it whole."""
    rng = np.random.default_rng(3)
    x = np.zeros((4, 6), "f")
    x[:, [1, 4]] = rng.normal(size=(4, 2))
    y = np.array([0, 1, 2, 1], "f")
    weight, bias = rng.normal(size=(6, 3)).astype("f"), rng.normal(size=3).astype("f")
    xs = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("fc_weight", shape=(6, 3), stype="row_sparse")
    b = mx.sym.Variable("fc_bias", shape=(3,))
    net = mx.sym.SoftmaxOutput(mx.sym.broadcast_add(mx.sym.sparse.dot(xs, w), b),
                               name="softmax")
    mod = mx.mod.Module(net, fixed_param_names=["fc_bias"])
    mod.bind([("data", (4, 6))], [("softmax_label", (4,))])
    mod.init_params(arg_params={"fc_weight": mx.nd.array(weight).tostype("row_sparse"),
                                "fc_bias": mx.nd.array(bias)})
    kv = mx.kv.create("local")
    mod.init_optimizer(kvstore=kv, optimizer="sgd", optimizer_params={"learning_rate": 1.0})
    assert mod._update_on_kvstore is True
    batch = mx.io.DataBatch([mx.nd.sparse.csr_matrix(scipy.sparse.csr_matrix(x))],
                            [mx.nd.array(y)])
    mod.forward_backward(batch)
    mod.update()
    head = _softmax(x @ weight + bias) - np.eye(3)[y.astype(int)]
    expected = weight - 1.0 / 4 * x.T @ head  # rows 1 and 4 only change
    mod.prepare(batch, sparse_row_id_fn=lambda b: {"fc_weight": b.data[0].indices})
    pulled = mod._exec_group.param_arrays[0][0]
    assert pulled.stype == "row_sparse" and pulled.indices.asnumpy().tolist() == [1, 4]
    np.testing.assert_allclose(pulled.asnumpy()[[1, 4]], expected[[1, 4]], rtol=1e-5)
    arg_params, _ = mod.get_params()
    np.testing.assert_allclose(arg_params["fc_weight"].asnumpy(), expected, rtol=1e-5)
    np.testing.assert_array_equal(arg_params["fc_bias"].asnumpy(), bias)
    with pytest.warns(UserWarning, match="not 'row_sparse'"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: {"fc_bias": mx.nd.array([0])})
    # MXNet's FM example pulls every row before scoring with no batch at hand
    mod.prepare(None, lambda b: {"fc_weight": mx.nd.arange(0, 6, dtype="int64")})
    pulled = mod._exec_group.param_arrays[0][0]
    assert pulled.indices.asnumpy().tolist() == list(range(6))
    np.testing.assert_allclose(pulled.asnumpy(), expected, rtol=1e-5)


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 8), cols=st.integers(1, 40), density=st.floats(0, 1),
       seed=st.integers(0, 2**31))
def test_prepare_pulls_a_batchs_columns_before_its_forward(rows, cols, density, seed):
    """prepare before the batch's forward (as fit runs them): the pulled rows are the batch's
    distinct columns (taken from the csr's column sort, which the product then reuses), and the
    outputs are softmax(x·w + b) on the full weight."""
    rng = np.random.default_rng(seed)
    matrix = scipy.sparse.random(rows, cols, density=density, random_state=rng, format="csr",
                                 dtype=np.float32)
    weight, bias = rng.normal(size=(cols, 2)).astype("f"), rng.normal(size=2).astype("f")
    xs = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("fc_weight", shape=(cols, 2), stype="row_sparse")
    b = mx.sym.Variable("fc_bias", shape=(2,))
    net = mx.sym.SoftmaxOutput(mx.sym.broadcast_add(mx.sym.sparse.dot(xs, w), b),
                               name="softmax")
    mod = mx.mod.Module(net)
    mod.bind([("data", (rows, cols))], [("softmax_label", (rows,))])
    mod.init_params(arg_params={"fc_weight": mx.nd.array(weight).tostype("row_sparse"),
                                "fc_bias": mx.nd.array(bias)})
    mod.init_optimizer(kvstore=mx.kv.create("local"), optimizer="sgd")
    batch = mx.io.DataBatch([mx.nd.sparse.csr_matrix(matrix)], [mx.nd.zeros(rows)])
    mod.prepare(batch, sparse_row_id_fn=lambda b: {"fc_weight": b.data[0].indices})
    pulled = mod._exec_group.param_arrays[0][0]
    wanted = np.unique(matrix.indices)
    np.testing.assert_array_equal(pulled.indices.asnumpy(), wanted)
    np.testing.assert_array_equal(pulled.data.asnumpy(), weight[wanted])
    mod.forward(batch, is_train=True)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               _softmax(matrix.toarray() @ weight + bias), rtol=1e-5, atol=1e-6)


# -- checkpoints ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kvstore", ["local", "object"])
def test_checkpoint_round_trip_with_optimizer_states(tmp_path, kvstore):
    """save_checkpoint(save_optimizer_states=True) then Module.load(load_optimizer_states=True)
    continues training exactly as the original module does (momentum states restored)."""
    case = "linear_sgd_kvstore" if kvstore == "object" else "linear_sgd_local"
    data = FIXTURE["data"]

    def fitted(mod, it, epochs, begin=0, **kw):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mod.fit(it, num_epoch=epochs, begin_epoch=begin, optimizer="sgd",
                    optimizer_params={"learning_rate": 0.5, "momentum": 0.9},
                    kvstore=mx.kv.create("local") if kvstore == "object" else "local",
                    sparse_row_id_fn=record.row_ids("linear") if kvstore == "object" else None,
                    **kw)
        # parameters set before fit (a trained or loaded module) are kept, as MXNet says
        assert any("already initialized" in str(w.message) for w in caught) == (begin > 0)
        return mod

    it, params = record.arrays(mx, case, data)
    first = fitted(mx.mod.Module(record.linear(mx)), it, 1, arg_params=params)
    prefix = str(tmp_path / "lin")
    first.save_checkpoint(prefix, 1, save_optimizer_states=True)
    assert (tmp_path / "lin-symbol.json").exists() and (tmp_path / "lin-0001.states").exists()
    fitted(first, it, 2, begin=1)
    loaded = mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    fitted(loaded, it, 2, begin=1)
    for name, value in first.get_params()[0].items():
        np.testing.assert_allclose(loaded.get_params()[0][name].asnumpy(), value.asnumpy(),
                                   rtol=1e-6, err_msg=name)
    saved = mx.model.load_checkpoint(prefix, 1)[1]
    assert saved["fc_weight"].stype == "row_sparse"


def test_save_and_load_params(tmp_path):
    """save_params writes arg:/aux: arrays MXNet's loader reads; load_params sets them."""
    rng = np.random.default_rng(4)
    weight, bias = rng.normal(size=(5, 3)).astype("f"), rng.normal(size=3).astype("f")
    mod = _linear_module(5, 3, 2, weight, bias)
    mod.save_params(str(tmp_path / "p.params"))
    saved = mx.nd.load(str(tmp_path / "p.params"))
    assert sorted(saved) == ["arg:fc_bias", "arg:fc_weight"]
    other = _linear_module(5, 3, 2, np.zeros((5, 3), "f"), np.zeros(3, "f"))
    other.load_params(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(other.get_params()[0]["fc_weight"].asnumpy(), weight)


# -- fit's logging and callbacks -----------------------------------------------------------------
def test_fit_logs_mxnet_lines_and_calls_back(caplog, tmp_path):
    """fit logs Epoch[%d] Train-/Time cost/Validation- lines and calls the epoch-end callbacks
    with the symbol and parameters of each epoch (module_checkpoint writes each epoch's)."""
    it, params = record.arrays(mx, "linear_sgd_local", FIXTURE["data"])
    seen = []
    mod = mx.mod.Module(record.linear(mx))
    with caplog.at_level(logging.INFO):
        mod.fit(it, eval_data=it, num_epoch=2, arg_params=params, eval_metric="acc",
                epoch_end_callback=[lambda e, s, a, x: seen.append((e, s is mod.symbol,
                                                                    sorted(a))),
                                    mx.callback.module_checkpoint(mod, str(tmp_path / "m"))])
    text = caplog.text
    for line in ("Epoch[0] Train-accuracy=", "Epoch[1] Time cost=",
                 "Epoch[1] Validation-accuracy="):
        assert line in text
    assert seen == [(0, True, ["fc_bias", "fc_weight"]), (1, True, ["fc_bias", "fc_weight"])]
    saved = mx.model.load_checkpoint(str(tmp_path / "m"), 2)[1]
    np.testing.assert_array_equal(saved["fc_weight"].asnumpy(),
                                  mod.get_params()[0]["fc_weight"].asnumpy())


# -- bad calls -----------------------------------------------------------------------------------
def test_bad_calls_raise_clear_errors():
    """Unbound or uninitialized modules, wrong data names and shapes, bad arguments."""
    net = record.linear(mx)
    with pytest.raises(InvalidValue, match="data_names=.*'features'"):
        mx.mod.Module(net, data_names=["features"])
    with pytest.raises(InvalidType, match="context"):
        mx.mod.Module(net, context="cpu")
    with pytest.raises(InvalidValue, match="work_load_list"):
        mx.mod.Module(net, work_load_list=[1, 1])
    mod = mx.mod.Module(net)
    batch = mx.io.DataBatch([mx.nd.zeros((2, record.FEATURES)).tostype("csr")])
    for call in (lambda: mod.forward(batch), lambda: mod.get_outputs(), lambda: mod.update(),
                 lambda: mod.init_params(), lambda: mod.data_shapes,
                 lambda: mod.init_optimizer(), lambda: mod.predict(batch.data[0])):
        with pytest.raises(NotReady, match="not bound|bind"):
            call()
    with pytest.raises(InvalidValue, match="data_shapes don't match names"):
        mod.bind([("x", (2, record.FEATURES))])
    with pytest.raises(InvalidType, match="data_shapes"):
        mod.bind([(2, record.FEATURES)])
    with pytest.raises(InvalidValue, match="does not match"):
        mod.bind([("data", (2,))], [("softmax_label", (2,))])
    mod.bind([("data", (2, record.FEATURES))], [("softmax_label", (2,))])
    with pytest.raises(NotReady, match="init_params"):
        mod.forward(batch)
    with pytest.raises(MissingValue, match="fc_bias is not presented"):
        mod.init_params(arg_params={"fc_weight": mx.nd.zeros((record.FEATURES, 3))})
    mod.init_params()
    with pytest.raises(NotReady, match="init_optimizer"):
        mod.update()
    with pytest.raises(InvalidValue, match="unsupported asynchronous"):
        mod.init_optimizer(kvstore="dist_async")
    with pytest.raises(InvalidType, match="kvstore must be"):
        mod.init_optimizer(kvstore=3)
    with pytest.raises(InvalidValue, match="Cannot find optimizer"):
        mod.init_optimizer(optimizer="nope")
    with pytest.raises(InvalidValue, match="2 data arrays"):
        mod.forward(mx.io.DataBatch([batch.data[0], batch.data[0]]))
    with pytest.raises(InvalidValue, match="num_epoch"):
        mod.fit(_iterator(np.zeros((2, record.FEATURES), "f"), np.zeros(2, "f"), 2))
    with pytest.raises(InvalidType, match="DataIter"):
        mod.predict([1, 2])
    with pytest.raises(NotReady, match="inputs_need_grad"):
        mod.get_input_grads()


def test_factorization_machine_example_trains(caplog):
    """examples/module_factorization_machine.py, small: Module.fit logs MXNet's lines, the
    training log loss falls and the accuracy rises; w and v come back row_sparse."""
    import runpy

    example = runpy.run_path(str(HERE.parent / "examples" / "module_factorization_machine.py"))
    with caplog.at_level(logging.INFO):
        mod = example["main"](["--samples", "1200", "--features", "2000", "--factors", "4",
                               "--batch-size", "100", "--epochs", "3", "--lr", "0.05"])
    losses = [float(r.getMessage().split("=")[1]) for r in caplog.records
              if "Train-log_loss" in r.getMessage()]
    accuracies = [float(r.getMessage().split("=")[1]) for r in caplog.records
                  if "Train-accuracy" in r.getMessage()]
    assert len(losses) == 3 and losses[0] > losses[1] > losses[2]
    assert accuracies[2] > accuracies[0]
    assert any("samples/sec" in r.getMessage() for r in caplog.records)  # Speedometer
    arg_params, _ = mod.get_params()
    assert arg_params["w"].stype == "row_sparse" and arg_params["v"].shape == (2000, 4)


@pytest.mark.parametrize("on_kvstore", ["1", "0"])
@pytest.mark.parametrize("case", ["mlp_sgd", "linear_sgd_kvstore", "fm_adam_kvstore"])
def test_two_contexts_match_one(case, on_kvstore, monkeypatch):
    """Two CPU contexts with an uneven work load (a 'local' kvstore sums their gradients and
    updates, or with MXNET_UPDATE_ON_KVSTORE=0 sums them and each context updates its copy):
    the metric curve (accuracy) and parameters of MXNet's one-context run."""
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", on_kvstore)
    model, optimizer, optimizer_params, _, metric = record.CASES[case]
    it, params = record.arrays(mx, case, FIXTURE["data"])
    mod = mx.mod.Module(record.MODELS[model](mx), context=[mx.cpu(0), mx.cpu(1)],
                        work_load_list=[1, 3])
    curve = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the row ids are not needed without on_kvstore
        mod.fit(it, num_epoch=record.EPOCHS, optimizer=optimizer,
                optimizer_params=optimizer_params, kvstore="local", eval_metric=metric,
                arg_params=params,
                batch_end_callback=lambda p: curve.append(p.eval_metric.get_name_value()[0][1]),
                sparse_row_id_fn=None if model == "mlp" else record.row_ids(model))
    assert mod._update_on_kvstore is (on_kvstore == "1")
    assert [s.stop - s.start for s in mod._exec_group.slices] == [2, 6]
    expected = FIXTURE["cases"][case]
    if metric != "mse":  # MSE averages per update call (per context), as MXNet's does
        np.testing.assert_allclose(curve, expected["curve"], rtol=1e-4, atol=1e-5)
    for name, value in expected["params"].items():
        np.testing.assert_allclose(mod.get_params()[0][name].asnumpy(), value, rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    outputs = mod.get_outputs(merge_multi_context=False)
    assert [o.shape[0] for o in outputs[0]] == [2, 6]


def test_batchnorm_module_checkpoint_keeps_auxiliary_states(tmp_path):
    """A trained module with BatchNorm saves its moving statistics as aux: arrays; the loaded
    module predicts what MXNet's trained one did (inference uses the moving statistics)."""
    expected = FIXTURE["cases"]["mlp_batchnorm_sgd"]
    _, mod = record.run_case(mx, "mlp_batchnorm_sgd", FIXTURE["data"])
    prefix = str(tmp_path / "bn")
    mod.save_checkpoint(prefix, 3)
    saved = mx.nd.load(f"{prefix}-0003.params")
    assert {"aux:bn_moving_mean", "aux:bn_moving_var", "arg:bn_gamma"} <= set(saved)
    loaded = mx.mod.Module.load(prefix, 3)
    it, _ = record.arrays(mx, "mlp_batchnorm_sgd", FIXTURE["data"])
    loaded.bind(it.provide_data, it.provide_label, for_training=False)
    np.testing.assert_allclose(loaded.predict(it).asnumpy(), expected["predict"], rtol=1e-4,
                               atol=1e-5)
    for name, value in expected["aux"].items():
        np.testing.assert_allclose(loaded.get_params()[1][name].asnumpy(), value, rtol=1e-5)


def test_symbol_lr_and_wd_multipliers_reach_the_optimizer():
    """A variable's lr_mult / wd_mult (the symbol's attributes) scale its update, as MXNet's
    Optimizer(sym=...) reads them: lr_mult=0 freezes the bias; wd_mult=0 on the weight leaves
    only the gradient step (numpy)."""
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(4, 3)).astype("f"), np.array([0, 1, 1, 0], "f")
    weight, bias = rng.normal(size=(2, 3)).astype("f"), rng.normal(size=2).astype("f")
    data = mx.sym.Variable("data")
    w = mx.sym.Variable("fc_weight", wd_mult=0.0)
    b = mx.sym.Variable("fc_bias", lr_mult=0.0)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, w, b, num_hidden=2, name="fc"),
                               name="softmax")
    mod = mx.mod.Module(net)
    mod.bind([("data", (4, 3))], [("softmax_label", (4,))])
    mod.init_params(arg_params={"fc_weight": mx.nd.array(weight), "fc_bias": mx.nd.array(bias)})
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 1.0, "wd": 0.5})
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    mod.update()
    head = _softmax(x @ weight.T + bias) - np.eye(2)[y.astype(int)]
    arg_params, _ = mod.get_params()
    np.testing.assert_array_equal(arg_params["fc_bias"].asnumpy(), bias)
    np.testing.assert_allclose(arg_params["fc_weight"].asnumpy(), weight - head.T @ x / 4,
                               rtol=1e-5)


def test_shared_module_grad_add_and_score_callbacks():
    """A module bound with shared_module uses the same parameter arrays and optimizer; with
    grad_req='add' two backward passes sum the gradients (numpy); score stops at num_batch
    and calls its callbacks with the batch count."""
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(8, 3)).astype("f"), rng.integers(0, 2, 8).astype("f")
    weight, bias = rng.normal(size=(2, 3)).astype("f"), np.zeros(2, "f")
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name="fc"),
                               name="softmax")
    first = mx.mod.Module(net)
    first.bind([("data", (4, 3))], [("softmax_label", (4,))], grad_req="add")
    first.init_params(arg_params={"fc_weight": mx.nd.array(weight), "fc_bias": mx.nd.array(bias)})
    first.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    second = mx.mod.Module(net)
    second.bind([("data", (2, 3))], [("softmax_label", (2,))], shared_module=first)
    assert second.params_initialized and second.optimizer_initialized
    assert second._exec_group.param_arrays[0][0] is first._exec_group.param_arrays[0][0]
    batch = mx.io.DataBatch([mx.nd.array(x[:4])], [mx.nd.array(y[:4])])
    first.forward_backward(batch)
    first.forward_backward(batch)
    head = _softmax(x[:4] @ weight.T) - np.eye(2)[y[:4].astype(int)]
    np.testing.assert_allclose(first._exec_group.grad_arrays[0][0].asnumpy(),
                               2 * head.T @ x[:4], rtol=1e-5)
    calls = []
    it = mx.io.NDArrayIter(x, y, batch_size=2)
    result = second.score(it, "acc", num_batch=3, batch_end_callback=lambda p: calls.append(
        p.nbatch), score_end_callback=lambda p: calls.append(("end", p.nbatch)))
    assert calls == [0, 1, 2, ("end", 3)]
    expected = np.mean(np.argmax(x[:6] @ weight.T, 1) == y[:6])
    np.testing.assert_allclose(result[0][1], expected, rtol=1e-6)


def test_fit_holds_one_batch_at_a_time_and_base_prepare_warns():
    """BaseModule.fit (every step stubbed) reads each batch's label before fetching the next
    (C++ iterators free a batch at next()); BaseModule.prepare has no rows to pull."""
    current = {"i": None}

    class Batch:
        def __init__(self, i):
            self.i = i

        @property
        def label(self):
            assert self.i == current["i"], "a batch was read after the next one was fetched"

    class Batches:
        provide_data = provide_label = None

        def __init__(self, count):
            self.count, self.position = count, 0

        def reset(self):
            pass

        def __iter__(self):
            self.position = 0
            return self

        def __next__(self):
            if self.position == self.count:
                raise StopIteration
            current["i"], self.position = self.position, self.position + 1
            return Batch(current["i"])

    module = mx.mod.BaseModule()
    for name in ("bind", "init_params", "init_optimizer", "forward", "backward", "update",
                 "update_metric"):
        setattr(module, name, lambda *args, **kwargs: None)
    module.get_params = lambda: (None, None)
    module.fit(Batches(3), num_epoch=1)
    with pytest.warns(UserWarning, match="sparse_row_id_fn is not invoked for BaseModule"):
        module.prepare(None, sparse_row_id_fn=lambda batch: {})
