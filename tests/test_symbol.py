"""mx.sym: graphs, naming, attributes, MXNet's JSON format and shape / dtype / storage
inference, against files and answers recorded from MXNet 1.9.1 (tests/fixtures/record_symbols.py)
and hand-computed shapes.

``python tests/test_symbol.py`` writes sparsegen's JSON of the recorded models
(tests/data/symbols/sparsegen-*-symbol.json) for the recording script to load in MXNet.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import json
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidIndex, InvalidType, InvalidValue
from sparsegen.symbol.ops import OPS
from test_elemwise import DOMAINS, NUMPY_UNARY

DATA = pathlib.Path(__file__).resolve().parent / "data" / "symbols"
_spec = importlib.util.spec_from_file_location(
    "record_symbols", pathlib.Path(__file__).resolve().parent / "fixtures" / "record_symbols.py")
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)


def build(model: str) -> mx.sym.Symbol:
    """The recorded model built by sparsegen, named from fresh counters as in the recording."""
    with mx.name.NameManager():
        return record.MODELS[model](mx)


def graph(text: str) -> dict:
    """A JSON graph without its ``mxnet_version`` (the rest is what both must agree on)."""
    parsed = json.loads(text)
    parsed.pop("attrs")
    return parsed


@pytest.mark.parametrize("model", sorted(record.MODELS))
def test_recorded_models_match_mxnet(model):
    symbol = build(model)
    answers = json.loads((DATA / f"{model}.json").read_text())
    assert graph(symbol.tojson()) == graph((DATA / f"{model}-symbol.json").read_text())
    assert symbol.list_arguments() == answers["list_arguments"]
    assert symbol.list_outputs() == answers["list_outputs"]
    assert symbol.attr_dict() == answers["attr_dict"]
    shapes, stypes = record.INPUTS[model]
    arg_shapes, out_shapes, aux = symbol.infer_shape(**shapes)
    assert [list(s) for s in arg_shapes] == answers["arg_shapes"]
    assert [list(s) for s in out_shapes] == answers["out_shapes"]
    assert [list(s) for s in aux] == answers["aux_shapes"]
    assert symbol.list_auxiliary_states() == answers["list_auxiliary_states"]
    assert symbol.get_internals().list_outputs() == answers["internals"]
    arg_types, out_types, aux_types = symbol.infer_type(**{name: "float32" for name in shapes})
    assert [np.dtype(t).name for t in arg_types] == answers["arg_types"]
    assert [np.dtype(t).name for t in out_types] == answers["out_types"]
    assert [np.dtype(t).name for t in aux_types] == answers["aux_types"]
    arg_stypes, _, _ = symbol.infer_storage_type(**stypes)
    assert dict(zip(symbol.list_arguments(), arg_stypes)) == answers["arg_stypes"]
    executor = symbol.simple_bind(mx.cpu(), stype_dict=stypes, **shapes)
    assert {n: a.stype for n, a in executor.arg_dict.items()} == answers["arg_stypes"]
    assert {n: g.stype for n, g in executor.grad_dict.items()} == answers["grad_stypes"]


@pytest.mark.parametrize("model", sorted(record.MODELS))
def test_mxnet_written_file_loads(model, tmp_path):
    loaded = mx.sym.load(str(DATA / f"{model}-symbol.json"))
    answers = json.loads((DATA / f"{model}.json").read_text())
    assert loaded.list_arguments() == answers["list_arguments"]
    assert graph(loaded.tojson()) == graph((DATA / f"{model}-symbol.json").read_text())
    loaded.save(str(tmp_path / "again.json"))
    assert graph(mx.sym.load(str(tmp_path / "again.json")).tojson()) == graph(loaded.tojson())


@pytest.mark.parametrize("model", sorted(record.MODELS))
def test_mxnet_loads_sparsegen_json(model):
    """MXNet loaded sparsegen's file (recorded as loaded-<model>.json) and answered as for
    its own; the file is what sparsegen writes today."""
    ours = DATA / f"sparsegen-{model}-symbol.json"
    assert json.loads(build(model).tojson()) == json.loads(ours.read_text())
    mxnet_answers = json.loads((DATA / f"{model}.json").read_text())
    loaded_answers = json.loads((DATA / f"loaded-{model}.json").read_text())
    assert loaded_answers == mxnet_answers


def test_auto_names_and_created_variables():
    with mx.name.NameManager():
        data = mx.sym.var("data")
        fc = mx.sym.FullyConnected(data, num_hidden=4)
        fc2 = mx.sym.FullyConnected(fc, num_hidden=2, no_bias=True)
        out = mx.sym.SoftmaxOutput(fc2)
    assert out.list_arguments() == ["data", "fullyconnected0_weight", "fullyconnected0_bias",
                                    "fullyconnected1_weight", "softmaxoutput0_label"]
    assert fc.name == "fullyconnected0" and out.list_outputs() == ["softmaxoutput0_output"]
    with mx.name.Prefix("enc_"):
        emb = mx.sym.Embedding(data, input_dim=3, output_dim=2, name="emb")
        act = mx.sym.Activation(emb, act_type="relu")
    assert emb.list_arguments() == ["data", "enc_emb_weight"]
    assert act.name == "enc_activation0"


def test_operators_write_mxnet_ops():
    """Each operator's op, name hint and scalar as MXNet 1.9.1 writes them (recorded by hand
    from MXNet's tojson)."""
    z = mx.sym.var("z")
    cases = [(z + z, "elemwise_add", "_plus0", None), (z - 1, "_minus_scalar", "_minusscalar0", "1"),
             (1 - z, "_rminus_scalar", "_rminusscalar0", "1"), (z * 2.5, "_mul_scalar", "_mulscalar0", "2.5"),
             (z / z, "elemwise_div", "_div0", None), (3 / z, "_rdiv_scalar", "_rdivscalar0", "3"),
             (z ** 2, "_power_scalar", "_powerscalar0", "2"), (2 ** z, "_rpower_scalar", "_rpower_scalar0", "2"),
             (-z, "_mul_scalar", "_mulscalar1", "-1.0"), (z >= z, "_greater_equal", "_greater_equal0", None),
             (z < 1, "_lesser_scalar", "_lesser_scalar0", "1"), (z == 2, "_equal_scalar", "_equal_scalar0", "2"),
             (z % 2, "_mod_scalar", "_modscalar0", "2"), (z != z, "_not_equal", "_not_equal0", None)]
    with mx.name.NameManager():
        built = [(f(), op, name, scalar) for f, op, name, scalar in
                 [(lambda c=c: c[0], *c[1:]) for c in cases]]
    for symbol, op, name, scalar in built:
        node = json.loads(symbol.tojson())["nodes"][-1]
        assert (node["op"], node.get("attrs", {}).get("scalar")) == (op, scalar)
    with mx.name.NameManager():
        names = [(z + z).name, (z - 1).name, (1 - z).name, (z * 2.5).name, (z / z).name,
                 (3 / z).name, (z ** 2).name, (2 ** z).name, (-z).name, (z >= z).name,
                 (z < 1).name, (z == 2).name, (z % 2).name, (z != z).name]
    assert names == [name for _, _, name, _ in cases]


def test_variable_attributes_and_attr_scope():
    with mx.AttrScope(ctx_group="dev1"):
        w = mx.sym.Variable("w", shape=(3, 2), lr_mult=2.0, wd_mult=0.5, dtype="float64",
                            init=mx.init.Normal(0.1), stype="row_sparse", __extra__="x")
        with mx.AttrScope(group="g"):
            fc = mx.sym.FullyConnected(mx.sym.var("d"), weight=w, num_hidden=3, no_bias=True)
    assert w.attr("__shape__") == "(3, 2)" and w.attr("lr_mult") == "2.0"
    assert w.attr("__dtype__") == "1" and w.attr("__storage_type__") == "1"
    assert w.attr("__init__") == '["normal", {"sigma": 0.1}]' and w.attr("ctx_group") == "dev1"
    assert w.attr("__extra__") == "x"
    assert fc.attr("group") == "g" and fc.attr("ctx_group") == "dev1"
    assert fc.attr("num_hidden") == "3" and fc.attr("no_bias") == "True"
    assert fc.list_arguments() == ["d", "w"]
    with pytest.raises(InvalidValue, match="stype"):
        mx.sym.Variable("x", stype="dense")
    with pytest.raises(InvalidValue, match="double underscores"):
        mx.sym.Variable("x", extra=1)
    with pytest.raises(InvalidValue, match="AttrScope: attribute a"):
        mx.AttrScope(a=1)


def test_group_internals_children_getitem_and_compose():
    with mx.name.NameManager():
        a, b = mx.sym.var("a"), mx.sym.var("b")
        s = mx.sym.broadcast_mul(a, b)
        t = mx.sym.sum(s, axis=1)
        group = mx.sym.Group([s, t])
    assert group.list_outputs() == ["broadcast_mul0_output", "sum0_output"] and len(group) == 2
    assert group["sum0_output"].name == "sum0" and group[0].name == "broadcast_mul0"
    assert t.get_internals().list_outputs() == ["a", "b", "broadcast_mul0_output", "sum0_output"]
    assert t.get_children().list_outputs() == ["broadcast_mul0_output"]
    assert a.get_children() is None
    with pytest.raises(InvalidIndex):
        group[2]
    with pytest.raises(InvalidValue, match="no output named"):
        group["nope"]
    composed = t(a=mx.sym.var("x") * 2)
    assert composed.list_arguments() == ["x", "b"] and t.list_arguments() == ["a", "b"]
    assert t(mx.sym.var("p"), mx.sym.var("q")).list_arguments() == ["p", "q"]
    with pytest.raises(InvalidValue, match="not an argument"):
        t(c=a)
    with pytest.raises(InvalidType):
        a + "x"
    with pytest.raises(InvalidValue, match="outputs"):
        mx.sym.square(group)


def test_fluent_methods_and_namespaces():
    x = mx.sym.var("x")
    assert json.loads(x.square().sum(axis=1, keepdims=True).tojson())["nodes"][-1]["attrs"] == \
        {"axis": "1", "keepdims": "True"}
    assert json.loads(x.tostype("csr").tojson())["nodes"][-1]["op"] == "cast_storage"
    assert mx.symbol.sparse.dot is mx.sym.dot
    assert json.loads(mx.sym._internal._square_sum(x, axis=1).tojson())["nodes"][-1]["op"] == \
        "_square_sum"
    sample = mx.sym.random.uniform(low=0, high=1, shape=(2, 3))
    assert sample.infer_shape()[1] == [(2, 3)] and sample.list_arguments() == []


def test_load_json_rejects_garbage():
    with pytest.raises(InvalidValue, match="json_str"):
        mx.sym.load_json('{"nodes": [{"op": "null"}]}')


@given(rows=st.integers(1, 6), cols=st.integers(1, 6), hidden=st.integers(1, 5),
       keepdims=st.booleans(), axis=st.sampled_from([0, 1, -1, None, (0, 1)]))
def test_infer_shape_rules(rows, cols, hidden, keepdims, axis):
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=hidden, name="fc")
    reduced = mx.sym.sum(fc, axis=axis, keepdims=keepdims)
    arg_shapes, out_shapes, _ = reduced.infer_shape(x=(rows, cols))
    assert arg_shapes == [(rows, cols), (hidden, cols), (hidden,)]
    assert out_shapes == [np.sum(np.zeros((rows, hidden)), axis=axis, keepdims=keepdims).shape or (1,)]
    b = mx.sym.broadcast_add(mx.sym.var("p"), mx.sym.var("q"))
    assert b.infer_shape(p=(rows, 1), q=(1, cols))[1] == [(rows, cols)]
    d = mx.sym.dot(mx.sym.var("l"), mx.sym.var("r"), transpose_a=True)
    assert d.infer_shape(l=(rows, cols), r=(rows, hidden))[1] == [(cols, hidden)]
    c = mx.sym.Concat(fc, fc, dim=1)
    assert c.infer_shape(x=(rows, cols))[1] == [(rows, 2 * hidden)]
    e = mx.sym.Embedding(mx.sym.var("i"), input_dim=cols, output_dim=hidden, name="e")
    assert e.infer_shape(i=(rows,))[0] == [(rows,), (cols, hidden)]


def test_infer_shape_partial_and_errors():
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc")
    assert fc.infer_shape() == (None, None, None)
    assert fc.infer_shape_partial() == ([(), (), ()], [()], [])
    assert fc.infer_shape((3, 4))[0] == [(3, 4), (2, 4), (2,)]
    with pytest.raises(InvalidValue, match="not arguments"):
        fc.infer_shape(y=(1,))
    with pytest.raises(InvalidValue, match="needs"):
        fc.infer_shape(x=(3, 4), fc_weight=(2, 5))
    with pytest.raises(InvalidValue, match="does not match"):
        mx.sym.dot(mx.sym.var("a"), mx.sym.var("b")).infer_shape(a=(2, 3), b=(4, 2))


def test_infer_type_and_storage_type():
    x, w = mx.sym.var("x"), mx.sym.var("w", dtype="float64")
    y = mx.sym.dot(x, w)
    assert y.infer_type() == ([np.float64, np.float64], [np.float64], [])
    assert mx.sym.Cast(x, dtype="int32").infer_type(x="float32")[1] == [np.int32]
    assert mx.sym.square(x).infer_type() == (None, None, None)
    emb = mx.sym.Embedding(x, input_dim=3, output_dim=2, dtype="float16", name="e")
    assert emb.infer_type(x="int64")[0] == [np.int64, np.float16]
    csr = mx.sym.var("c", stype="csr")
    rsp = mx.sym.var("r", stype="row_sparse")
    cases = [(mx.sym.dot(csr, x), "default"), (mx.sym.dot(csr, x, transpose_a=True), "row_sparse"),
             (csr * 2, "csr"), (csr + 1, "default"), (mx.sym.elemwise_add(rsp, rsp), "row_sparse"),
             (mx.sym.elemwise_mul(rsp, x), "row_sparse"), (mx.sym.square(csr), "csr"),
             (mx.sym._internal._square_sum(rsp, axis=1, keepdims=True), "row_sparse"),
             (mx.sym._internal._square_sum(rsp, axis=0), "default"),
             (mx.sym.cast_storage(x, stype="csr"), "csr"), (mx.sym.Activation(csr, act_type="relu"), "default")]
    for symbol, stype in cases:
        assert symbol.infer_storage_type()[1] == [stype], symbol.tojson()


if __name__ == "__main__":
    for _model in record.MODELS:
        (DATA / f"sparsegen-{_model}-symbol.json").write_text(build(_model).tojson())


@pytest.mark.parametrize("name", sorted(NUMPY_UNARY))
def test_every_unary_op_is_a_symbol_op_matching_numpy(name):
    """mx.sym has every unary op of the vocabularies (derived, not listed), forward and
    backward through a bound executor, values against numpy."""
    low, high = DOMAINS.get(name, (-3, 3))
    x = np.random.default_rng(0).uniform(low, high, (3, 4))
    x = np.where(np.abs(x) < 0.1, 0.5, x).astype(np.float32)  # away from kinks and poles
    grad = mx.nd.zeros(x.shape)
    exe = getattr(mx.sym, name)(mx.sym.Variable("x")).bind(mx.cpu(), {"x": mx.nd.array(x)},
                                                           args_grad={"x": grad})
    out = exe.forward(is_train=True)[0].asnumpy()
    with np.errstate(all="ignore"):
        expected = NUMPY_UNARY[name](x.astype(np.float64))
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=2e-5, atol=1e-6)
    exe.backward(mx.nd.ones(x.shape))
    assert grad.shape == x.shape and np.isfinite(grad.asnumpy()).all()


@pytest.mark.parametrize("name", ["mod", "logical_and", "logical_or", "logical_xor",
                                  "power", "hypot"])
def test_broadcast_ops_of_the_vocabulary_are_symbol_ops(name):
    """mx.sym's broadcast_<op> follow the strided kernel's binary ops, values against numpy."""
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 4, (2, 3)).astype(np.float32), rng.integers(1, 4, (1, 3)).astype(
        np.float32)
    oracle = {"mod": np.mod, "logical_and": np.logical_and, "logical_or": np.logical_or,
              "logical_xor": np.logical_xor, "power": np.power, "hypot": np.hypot}[name]
    sym = getattr(mx.sym, f"broadcast_{name}")(mx.sym.Variable("a"), mx.sym.Variable("b"))
    assert sym.infer_shape(a=a.shape, b=b.shape)[1] == [a.shape]
    exe = sym.bind(mx.cpu(), {"a": mx.nd.array(a), "b": mx.nd.array(b)})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), oracle(a, b).astype(np.float32),
                               rtol=1e-6)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_symbol_op_runs_an_nd_function_that_takes_its_inputs_by_name(name):
    # the symbol table binds a node's inputs to the mx.nd function by keyword
    opdef = OPS[name]
    function = functools.reduce(getattr, opdef.nd_function.split("."), mx.nd)
    parameters = inspect.signature(function).parameters
    if opdef.variadic:
        assert any(p.kind == p.VAR_POSITIONAL for p in parameters.values()), name
    else:
        assert [i for i in opdef.inputs if i not in parameters] == [], (name, list(parameters))
    assert set(opdef.created) <= set(opdef.inputs)


@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(1, 3))
def test_infer_shape_of_shape_changing_ops_is_numpys(shape, reps):
    # ops without a written shape rule are run on zeros to see their shapes: never the first
    # input's shape where the op changes it (it once was: wide & deep's slice)
    shape = tuple(shape)
    x = np.zeros(shape, np.float32)
    a = mx.sym.var("a")
    cases = {
        "flatten": (mx.sym.flatten(a), x.reshape(shape[0], -1).shape),
        "swapaxes": (mx.sym.swapaxes(a, dim1=0, dim2=1), np.swapaxes(x, 0, 1).shape),
        "slice_axis": (mx.sym.slice_axis(a, axis=1, begin=0, end=1), x[:, :1].shape),
        "slice": (mx.sym.slice(a, begin=(0, 0), end=(None, 1)), x[:, :1].shape),
        "tile": (mx.sym.tile(a, reps=(reps,) + (1,) * (len(shape) - 1)),
                 np.tile(x, (reps,) + (1,) * (len(shape) - 1)).shape),
        "repeat": (mx.sym.repeat(a, repeats=reps, axis=0), np.repeat(x, reps, axis=0).shape),
        "one_hot": (mx.sym.one_hot(a, depth=reps + 2), shape + (reps + 2,)),
        "expand_dims": (mx.sym.expand_dims(a, axis=0), (1,) + shape),
    }
    for name, (symbol, expected) in cases.items():
        assert symbol.infer_shape(a=shape)[1] == [expected], name


def test_infer_shape_of_wide_and_deep_is_mxnets():
    # MXNet 1.9.1's example/sparse/wide_deep model: the first FullyConnected sees the 4
    # continuous features and 3 embeddings of 8 (4 + 3 * 8 = 28 inputs), as MXNet infers
    csr_data = mx.sym.Variable("csr_data", stype="csr")
    weight = mx.sym.Variable("linear_weight", shape=(20, 2), stype="row_sparse")
    linear = mx.sym.broadcast_add(mx.sym.sparse.dot(csr_data, weight),
                                  mx.sym.Variable("linear_bias", shape=(2,)))
    dns = mx.sym.Variable("dns_data")
    x = mx.sym.slice(data=dns, begin=(0, 0), end=(None, 3))
    embeds = mx.sym.split(data=x, num_outputs=3, squeeze_axis=1)
    features = [mx.sym.slice(data=dns, begin=(0, 3), end=(None, 7))]
    for i, embed in enumerate(embeds):
        features.append(mx.sym.sparse.Embedding(
            data=embed, weight=mx.sym.Variable(f"embed_{i}_weight", stype="row_sparse"),
            input_dim=5 + i, output_dim=8, sparse_grad=True))
    hidden = mx.sym.FullyConnected(data=mx.sym.concat(*features, dim=1), num_hidden=50,
                                   name="hidden")
    out = mx.sym.SoftmaxOutput(linear + mx.sym.FullyConnected(data=hidden, num_hidden=2),
                               mx.sym.Variable("softmax_label"), name="model")
    args, outs, _ = out.infer_shape(csr_data=(10, 20), dns_data=(10, 7), softmax_label=(10,))
    shapes = dict(zip(out.list_arguments(), args))
    assert shapes["hidden_weight"] == (50, 28)
    assert shapes["embed_2_weight"] == (7, 8) and outs == [(10, 2)]


@pytest.mark.parametrize("kw, data, weight, out", [
    ({"kernel": (3, 3), "num_filter": 4}, (2, 1, 8, 8), (4, 1, 3, 3), (2, 4, 6, 6)),
    ({"kernel": (3, 3), "num_filter": 6, "stride": (2, 1), "pad": (1, 0), "num_group": 2},
     (1, 4, 9, 7), (6, 2, 3, 3), (1, 6, 5, 5)),
    ({"kernel": (2,), "num_filter": 3, "dilate": (3,), "no_bias": True}, (2, 5, 10),
     (3, 5, 2), (2, 3, 7)),
])
def test_convolution_creates_its_weight_and_infers_its_shapes(kw, data, weight, out):
    # MXNet 1.9.1 gives these: (x + 2 pad - dilate (k - 1) - 1) // stride + 1 per axis
    conv = mx.sym.Convolution(mx.sym.Variable("data"), name="conv", **kw)
    names = ["data", "conv_weight"] + ([] if kw.get("no_bias") else ["conv_bias"])
    assert conv.list_arguments() == names
    args, outs, _ = conv.infer_shape(data=data)
    assert args[:2] == [data, weight] and outs == [out]
    executor = conv.simple_bind(mx.cpu(), data=data)
    assert executor.forward()[0].shape == out


@pytest.mark.parametrize("name, oracle", [("maximum", np.maximum), ("minimum", np.minimum),
                                          ("power", np.power), ("pow", np.power)])
def test_pairwise_functions_of_symbols_and_numbers(name, oracle):
    # MXNet's mx.sym.maximum / minimum / power / pow: two symbols, a symbol and a number
    # either side, or two numbers
    function = getattr(mx.sym, name)
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    xs, ys = np.array([3.0, 5.0, 2.0, 1.5]), np.array([1.0, 6.0, 2.5, 2.0])
    for made, want in ((function(x, y), oracle(xs, ys)), (function(x, 2), oracle(xs, 2)),
                       (function(2, x), oracle(2, xs))):
        graph = mx.sym.load_json(made.tojson())  # the scalar op's name and scalar round-trip
        args = {k: mx.nd.array(v) for k, v in (("x", xs), ("y", ys))
                if k in graph.list_arguments()}
        np.testing.assert_allclose(graph.eval(**args)[0].asnumpy(), want, rtol=1e-6)
    assert function(2, 3) == oracle(2, 3)
    with pytest.raises(mx.MXNetError, match=f"mx.sym.{function.__name__}: operands"):
        function(x, "2")


def test_retain_infers_its_data_shape():
    # MXNet's test_sparse_retain infers shapes of a retain graph: not by running retain on
    # dense zeros, which retain refuses
    data = mx.sym.Variable("data", stype="row_sparse")
    out = mx.sym.sparse.retain(data=data, indices=mx.sym.Variable("indices"))
    args, outs, _ = out.infer_shape(data=(4, 4), indices=(1,))
    assert args == [(4, 4), (1,)] and outs == [(4, 4)]
