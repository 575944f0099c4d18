"""``mx.nd.contrib``'s index and arithmetic ops against numpy oracles and values MXNet 1.9.1
gives (checked with MXNet by hand): ``index_copy``, ``boolean_mask``, ``arange_like``,
``index_array``, ``allclose``, ``div_sqrt_dim``, ``gradientmultiplier``, ``round_ste``,
``sign_ste``, and the graph ops on csr ``edge_id``, ``dgl_adjacency`` (scipy oracles); their
gradients, ``mx.sym.contrib`` forms and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen import autograd

from conftest import DTYPES

shapes = st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple)
FLOATS = ("float16", "float32", "float64")


def _values(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(-9, 10, size=shape)
    return np.array(values / 2 if np.dtype(dtype).kind == "f" else values, dtype=dtype)


def _nd(values):
    return mx.nd.array(values, dtype=values.dtype)


# -- index_copy --
@settings(max_examples=25, deadline=None)
@given(shapes, st.sampled_from(DTYPES), st.data())
def test_index_copy_sets_the_rows_named_the_last_repeat_winning(shape, dtype, data):
    old = _values(shape, dtype, 1)
    ids = np.array(data.draw(st.lists(st.integers(0, max(shape[0] - 1, 0)),
                                      max_size=6 if shape[0] else 0)), dtype=np.int64)
    new = _values((len(ids), *shape[1:]), dtype, 2)
    want = old.copy()
    for k, i in enumerate(ids):
        want[i] = new[k]
    got = mx.nd.contrib.index_copy(_nd(old), mx.nd.array(ids, dtype="int64"), _nd(new))
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_index_copy_takes_float_ids_and_writes_out():
    old = np.arange(9, dtype=np.float32).reshape(3, 3)
    out = mx.nd.zeros((3, 3))
    mx.nd.contrib.index_copy(_nd(old), mx.nd.array([2.0, 0.0]), mx.nd.array([[1, 1, 1], [2, 2, 2]]),
                             out=out)
    np.testing.assert_array_equal(out.asnumpy(), [[2, 2, 2], [3, 4, 5], [1, 1, 1]])


def test_index_copy_gradients_are_mxnets():
    old, new = mx.nd.array(np.arange(9).reshape(3, 3)), mx.nd.array([[10.0, 11.0, 12.0]])
    old.attach_grad()
    new.attach_grad()
    head = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    with autograd.record():
        y = mx.nd.contrib.index_copy(old, mx.nd.array([1]), new)
    y.backward(mx.nd.array(head))
    np.testing.assert_array_equal(old.grad.asnumpy(), [[1, 2, 3], [0, 0, 0], [7, 8, 9]])
    np.testing.assert_array_equal(new.grad.asnumpy(), [[4, 5, 6]])


def test_index_copy_refuses_bad_input():
    old = mx.nd.zeros((3, 2))
    with pytest.raises(mx.MXNetError, match="index_vector must be 1-D"):
        mx.nd.contrib.index_copy(old, mx.nd.array([[0]]), mx.nd.zeros((1, 2)))
    with pytest.raises(mx.MXNetError, match=r"new_tensor has shape \(1, 3\)"):
        mx.nd.contrib.index_copy(old, mx.nd.array([0]), mx.nd.zeros((1, 3)))
    with pytest.raises(mx.MXNetError, match="new_tensor has dtype float64"):
        mx.nd.contrib.index_copy(old, mx.nd.array([0]), mx.nd.zeros((1, 2), dtype="float64"))
    for bad in (3, -1):
        with pytest.raises(IndexError, match=f"index_vector holds {bad}, outside"):
            mx.nd.contrib.index_copy(old, mx.nd.array([0, bad]), mx.nd.zeros((2, 2)))
    with pytest.raises(TypeError, match="old_tensor must be an NDArray"):
        mx.nd.contrib.index_copy(np.zeros((3, 2)), mx.nd.array([0]), mx.nd.zeros((1, 2)))


# -- boolean_mask --
@settings(max_examples=30, deadline=None)
@given(shapes, st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.data())
def test_boolean_mask_keeps_the_marked_slices_in_order(shape, dtype, mask_dtype, data):
    x = _values(shape, dtype, 3)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    mask = np.array(data.draw(st.lists(st.sampled_from((0, 0, 1, 3)), min_size=shape[axis],
                                       max_size=shape[axis])), dtype=mask_dtype)
    got = mx.nd.contrib.boolean_mask(_nd(x), _nd(mask), axis=axis)
    want = np.compress(mask != 0, x, axis=axis)
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_boolean_mask_counts_nan_and_negatives_as_kept_and_its_gradient_scatters():
    x = mx.nd.array(np.arange(12).reshape(4, 3))
    got = mx.nd.contrib.boolean_mask(x, mx.nd.array([0, np.nan, -1, 0.5]))
    np.testing.assert_array_equal(got.asnumpy(), np.arange(3, 12).reshape(3, 3))
    x.attach_grad()
    with autograd.record():
        y = mx.nd.contrib.boolean_mask(x, mx.nd.array([1, 0, 1, 0]))
    y.backward(mx.nd.ones((2, 3)) * 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2] * 3, [0] * 3, [2] * 3, [0] * 3])


def test_boolean_mask_refuses_bad_input():
    x = mx.nd.zeros((3, 3))
    with pytest.raises(mx.MXNetError, match="index has 2 entries, data 3 along axis 0"):
        mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1]))
    with pytest.raises(mx.MXNetError, match="index must be 1-D"):
        mx.nd.contrib.boolean_mask(x, mx.nd.array([[0, 1, 1]]))
    with pytest.raises(mx.MXNetError, match="axis 2 is out of range"):
        mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1, 1]), axis=2)


# -- arange_like, index_array --
@settings(max_examples=30, deadline=None)
@given(shapes, st.sampled_from(("float32", "float64", "int32", "int64")),
       st.sampled_from((0.0, 1.0, -2.0)), st.sampled_from((1.0, 0.5, -3.0)), st.integers(1, 3),
       st.data())
def test_arange_like_counts_in_the_datas_shape_or_along_an_axis(shape, dtype, start, step, repeat,
                                                              data):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    got = mx.nd.contrib.arange_like(mx.nd.zeros(shape, dtype=dtype), start=start, step=step,
                                    repeat=repeat, axis=axis)
    out_shape = shape if axis is None else (shape[axis],)
    want = (start + (np.arange(int(np.prod(out_shape))) // repeat) * step).reshape(out_shape)
    assert got.dtype == np.dtype(dtype) and got.shape == out_shape
    np.testing.assert_array_equal(got.asnumpy(), want.astype(dtype))


def test_arange_like_values_mxnet_gives():
    x = mx.nd.zeros((3, 3))
    np.testing.assert_array_equal(
        mx.nd.contrib.arange_like(x, start=1, step=0.5, repeat=2).asnumpy(),
        [[1.0, 1.0, 1.5], [1.5, 2.0, 2.0], [2.5, 2.5, 3.0]])
    np.testing.assert_array_equal(mx.nd.contrib.arange_like(x, axis=-1, repeat=2).asnumpy(),
                                  [0, 0, 1])
    with pytest.raises(mx.MXNetError, match="repeat"):
        mx.nd.contrib.arange_like(x, repeat=0)
    with pytest.raises(mx.MXNetError, match="axis 2 is out of range"):
        mx.nd.contrib.arange_like(x, axis=2)


@settings(max_examples=30, deadline=None)
@given(shapes, st.data())
def test_index_array_gives_each_elements_index_along_axes(shape, data):
    ndim = len(shape)
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(-ndim, ndim - 1), max_size=3)))
    got = mx.nd.contrib.index_array(mx.nd.zeros(shape), axes=axes)
    chosen = range(ndim) if axes is None else [a % ndim for a in axes]
    grid = np.indices(shape, dtype=np.int64)
    want = np.stack([grid[a] for a in chosen], axis=-1) if chosen else np.zeros((*shape, 0))
    assert got.dtype == np.int64 and got.shape == (*shape, len(chosen))
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_index_array_refuses_bad_input():
    with pytest.raises(mx.MXNetError, match="at least 1 dimension"):
        mx.nd.contrib.index_array(mx.nd.array(np.float32(1)))
    with pytest.raises(mx.MXNetError, match="axis 2 is out of range"):
        mx.nd.contrib.index_array(mx.nd.zeros((2, 3)), axes=(2,))


# -- allclose --
@settings(max_examples=40, deadline=None)
@given(shapes, st.sampled_from(FLOATS), st.sampled_from((0.0, 1e-3, 1e-5)),
       st.sampled_from((0.0, 1e-2, 1e-8)), st.booleans(), st.data())
def test_allclose_is_numpys(shape, dtype, rtol, atol, equal_nan, data):
    a = _values(shape, dtype, 4)
    b = a + np.array(data.draw(st.sampled_from((0.0, 1e-4, 1e-2, 1.0))), dtype=dtype)
    if a.size and data.draw(st.booleans()):
        a.flat[0] = b.flat[0] = data.draw(st.sampled_from((np.nan, np.inf, -np.inf)))
    got = mx.nd.contrib.allclose(_nd(a), _nd(b), rtol=rtol, atol=atol, equal_nan=equal_nan)
    want = np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                       equal_nan=equal_nan)
    assert got.dtype == np.uint8 and got.shape == ()
    assert got.asscalar() == want


def test_allclose_on_integers_and_bad_input():
    ints = mx.nd.array([1, 2], dtype="int32")
    assert mx.nd.contrib.allclose(ints, ints).asscalar() == 1
    with pytest.raises(TypeError, match="a has dtype int32, b float32"):
        mx.nd.contrib.allclose(ints, mx.nd.array([1, 2]))
    with pytest.raises(mx.MXNetError, match=r"a has shape \(2,\), b \(3,\)"):
        mx.nd.contrib.allclose(mx.nd.array([1, 2]), mx.nd.array([1, 2, 3]))


# -- div_sqrt_dim, gradientmultiplier, the straight-through estimators --
@settings(max_examples=25, deadline=None)
@given(shapes, st.sampled_from(DTYPES))
def test_div_sqrt_dim_divides_by_the_root_of_the_last_axis(shape, dtype):
    x = _values(shape, dtype, 5)
    got = mx.nd.contrib.div_sqrt_dim(_nd(x))
    want = x.astype(np.float64) / np.sqrt(shape[-1]) if shape[-1] else x
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    tol = 1e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), want.astype(dtype), rtol=tol)


def test_div_sqrt_dim_values_mxnet_gives_and_its_gradient():
    np.testing.assert_array_equal(
        mx.nd.contrib.div_sqrt_dim(mx.nd.array([1, 2, 3, 4], dtype="int32")).asnumpy(),
        [0, 1, 1, 2])
    x = mx.nd.ones((2, 4))
    x.attach_grad()
    with autograd.record():
        y = mx.nd.contrib.div_sqrt_dim(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((2, 4), 0.5))


@pytest.mark.parametrize("stype", ["default", "row_sparse", "csr"])
def test_gradientmultiplier_copies_forward_and_scales_the_gradient(stype):
    x = np.array([[1.0, 0.0], [0.0, -3.0]], dtype=np.float32)
    data = mx.nd.array(x).tostype(stype)
    data.attach_grad()
    with autograd.record():
        y = mx.nd.contrib.gradientmultiplier(data, scalar=-2.5)
        loss = (y.tostype("default") * mx.nd.array([[1.0, 2.0], [3.0, 4.0]])).sum()
    loss.backward()
    assert y.stype == stype
    np.testing.assert_array_equal(y.asnumpy(), x)
    np.testing.assert_array_equal(data.grad.asnumpy(), -2.5 * np.array([[1, 2], [3, 4]]))


@settings(max_examples=25, deadline=None)
@given(shapes, st.sampled_from(FLOATS))
def test_straight_through_estimators_round_and_sign_and_pass_the_gradient(shape, dtype):
    x = _values(shape, dtype, 6) * np.array(1.3, dtype=dtype)
    for op, want in (("round_ste", np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))),
                     ("sign_ste", np.sign(x))):
        data = _nd(x)
        data.attach_grad()
        with autograd.record():
            y = getattr(mx.nd.contrib, op)(data)
        y.backward(mx.nd.ones(shape, dtype=dtype) * 3)
        np.testing.assert_array_equal(y.asnumpy(), want.astype(dtype))
        np.testing.assert_array_equal(data.grad.asnumpy(), np.full(shape, 3, dtype))


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_straight_through_estimators_keep_sparse_storage(stype):
    x = np.array([[0.0, 1.4], [0.0, 0.0], [-2.5, 0.0]], dtype=np.float32)
    data = mx.nd.array(x).tostype(stype)
    assert mx.nd.contrib.round_ste(data).stype == stype
    np.testing.assert_array_equal(mx.nd.contrib.round_ste(data).asnumpy(),
                                  [[0, 1], [0, 0], [-3, 0]])
    np.testing.assert_array_equal(mx.nd._internal._sparse__contrib_sign_ste(data).asnumpy(),
                                  np.sign(x))


# -- graph ops on csr --
def _graph(rng, rows, cols, density, dtype="float32"):
    m = scipy.sparse.random(rows, cols, density=density, format="csr", random_state=rng,
                            dtype=np.float64)
    m.data = np.arange(1, m.nnz + 1, dtype=np.float64)
    m = m.astype(dtype)
    graph = mx.nd.sparse.csr_matrix((m.data, m.indices, m.indptr), shape=m.shape, dtype=dtype)
    return m, graph


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 40), st.sampled_from((0.0, 0.1, 0.5, 1.0)),
       st.sampled_from(("float32", "float64", "int64", "int32")), st.integers(0, 60), st.data())
def test_edge_id_reads_the_stored_entry_or_minus_one(rows, cols, density, dtype, k, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    m, graph = _graph(rng, rows, cols, density, dtype)
    u = rng.integers(0, rows, k)
    v = rng.integers(-1, cols + 1, k)  # targets outside the graph have no edge
    dense = m.toarray()
    stored = m.copy()
    stored.data[:] = 1
    stored = stored.toarray()
    want = np.array([dense[a, b] if 0 <= b < cols and stored[a, b] else -1
                     for a, b in zip(u, v)], dtype=dtype)
    got = mx.nd.contrib.edge_id(graph, mx.nd.array(u, dtype="int64"), mx.nd.array(v))
    assert got.dtype == np.dtype(dtype) and got.shape == (k,)
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_edge_id_values_mxnet_gives_and_bad_input():
    graph = mx.nd.sparse.csr_matrix(
        (np.array([1, 2, 3, 4, 5], np.float32), np.array([1, 2, 0, 2, 1]), np.array([0, 2, 3, 5])),
        shape=(3, 3))
    got = mx.nd.contrib.edge_id(graph, mx.nd.array([0, 0, 1, 2, 2, 1]),
                                mx.nd.array([1, 0, 0, 2, 1, 2]))
    np.testing.assert_array_equal(got.asnumpy(), [1, -1, 3, 4, 5, -1])
    with pytest.raises(IndexError, match=r"u holds 3, outside \[0, 3\)"):
        mx.nd.contrib.edge_id(graph, mx.nd.array([3]), mx.nd.array([0]))
    with pytest.raises(mx.MXNetError, match=r"u has shape \(2,\), v \(1,\)"):
        mx.nd.contrib.edge_id(graph, mx.nd.array([0, 1]), mx.nd.array([1]))
    with pytest.raises(TypeError, match="data must be a csr matrix"):
        mx.nd.contrib.edge_id(graph.tostype("default"), mx.nd.array([0]), mx.nd.array([0]))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.sampled_from((0.0, 0.2, 1.0)),
       st.integers(0, 2**32 - 1))
def test_dgl_adjacency_keeps_the_structure_with_ones(rows, cols, density, seed):
    m, graph = _graph(np.random.default_rng(seed), rows, cols, density, "int64")
    got = mx.nd.contrib.dgl_adjacency(graph)
    assert got.stype == "csr" and got.dtype == np.float32 and got.shape == (rows, cols)
    np.testing.assert_array_equal(got.indices.asnumpy(), m.indices)
    np.testing.assert_array_equal(got.indptr.asnumpy(), m.indptr)
    np.testing.assert_array_equal(got.data.asnumpy(), np.ones(m.nnz, np.float32))


def test_dgl_adjacency_refuses_other_data():
    with pytest.raises(TypeError, match="int64 edge ids, got dtype float32"):
        mx.nd.contrib.dgl_adjacency(mx.nd.ones((2, 2)).tostype("csr"))
    with pytest.raises(TypeError, match="data must be a csr matrix"):
        mx.nd.contrib.dgl_adjacency(mx.nd.ones((2, 2), dtype="int64"))


# -- mx.sym.contrib --
def test_symbol_forms_run_the_same_ops():
    a, i, b = mx.sym.Variable("a"), mx.sym.Variable("i"), mx.sym.Variable("b")
    graph = mx.sym.Group([mx.sym.contrib.index_copy(a, i, b), mx.sym.contrib.boolean_mask(a, i),
                          mx.sym.contrib.sign_ste(a), mx.sym.contrib.allclose(a, a)])
    args = {"a": mx.nd.array(np.arange(6).reshape(3, 2)), "i": mx.nd.array([0, 2, 0]),
            "b": mx.nd.array(np.ones((3, 2)))}
    copied, masked, signs, close = graph.eval(ctx=mx.cpu(), **args)
    np.testing.assert_array_equal(copied.asnumpy(), [[1, 1], [2, 3], [1, 1]])
    np.testing.assert_array_equal(masked.asnumpy(), [[2, 3]])
    np.testing.assert_array_equal(signs.asnumpy(), [[0, 1], [1, 1], [1, 1]])
    assert close.asscalar() == 1
    assert "_contrib_index_copy" in graph.tojson()


def test_symbol_gradientmultiplier_scales_the_gradient_through_an_executor():
    a = mx.sym.Variable("a")
    node = mx.sym.contrib.gradientmultiplier(a, scalar=-2.0)
    assert node.infer_shape(a=(2, 2))[1] == [(2, 2)]
    assert mx.sym.contrib.index_array(a).infer_shape(a=(3, 2))[1] == [(3, 2, 2)]
    ex = node.simple_bind(mx.cpu(), a=(2, 2))
    ex.forward(is_train=True, a=mx.nd.ones((2, 2)))
    ex.backward(mx.nd.ones((2, 2)))
    np.testing.assert_array_equal(ex.grad_arrays[0].asnumpy(), np.full((2, 2), -2.0))
