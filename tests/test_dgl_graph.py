"""MXNet's DGL graph ops on csr (``dgl_subgraph``, ``dgl_graph_compact``,
``dgl_csr_neighbor_uniform_sample``, ``dgl_csr_neighbor_non_uniform_sample``) against
pure-Python references over small graphs, MXNet 1.9.1's recorded outputs
(tests/fixtures/record_dgl_graph.py), and, for the random draws, the exact probabilities of
drawing without replacement; their ``mx.sym.contrib`` forms and bad input."""

from __future__ import annotations

import itertools
import json
import math
import pathlib
import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "dgl_graph.json").read_text())
UNIFORM = mx.nd.contrib.dgl_csr_neighbor_uniform_sample
NON_UNIFORM = mx.nd.contrib.dgl_csr_neighbor_non_uniform_sample


# -- helpers and pure-Python references ------------------------------------------------------------
def _csr(graph):
    data, indices, indptr, shape = graph
    return mx.nd.sparse.csr_matrix((np.array(data, np.int64), np.array(indices, np.int64),
                                    np.array(indptr, np.int64)), shape=tuple(shape))


def _ids(values):
    return mx.nd.array(np.array(values, np.int64), dtype="int64")


def _stored(m):
    return [m.data.asnumpy().tolist(), m.indices.asnumpy().tolist(), m.indptr.asnumpy().tolist(),
            list(m.shape)]


def _random_graph(rng, n, density, cols=None):
    """A scipy csr graph of ``n`` rows (``cols`` columns, square by default) with edge ids 0, 1,
    ... in a random order, and the same as a CSRNDArray."""
    m = scipy.sparse.random(n, cols if cols is not None else n, density=density, format="csr",
                            random_state=rng)
    m.sort_indices()
    m.data = rng.permutation(m.nnz).astype(np.float64)
    graph = [m.data.astype(np.int64).tolist(), m.indices.tolist(), m.indptr.tolist(),
             [n, cols if cols is not None else n]]
    return graph, _csr(graph)


def ref_subgraph(graph, v):
    """(new, old) as [data, indices, indptr, shape] lists: the subgraph induced by ``v``."""
    data, indices, indptr, _ = graph
    where = {u: j for j, u in enumerate(v)}
    cols, old, ptr = [], [], [0]
    for u in v:
        for p in range(indptr[u], indptr[u + 1]):
            if indices[p] in where:
                cols.append(where[indices[p]])
                old.append(data[p])
        ptr.append(len(cols))
    k = len(v)
    return [list(range(len(cols))), cols, ptr, [k, k]], [old, cols, ptr, [k, k]]


def ref_sample(graph, seeds, hops, fanout, limit, picks):
    """MXNet's breadth-first sampling (dgl_graph.cc: SampleSubgraph) with the neighbour
    positions each expanded vertex draws given by ``picks(u, degree)`` (all of them when the
    degree is at most ``fanout``): (vertex ids, layers, [data, indices, indptr, shape])."""
    data, indices, indptr, shape = graph
    layer, queue = {}, []
    for s in seeds:
        if s not in layer:
            layer[s] = 0
            queue.append(s)
    drawn, i = {}, 0
    while i < len(queue) and len(layer) < limit:
        u = queue[i]
        i += 1
        if layer[u] >= hops:
            continue
        degree = indptr[u + 1] - indptr[u]
        positions = list(range(degree)) if degree <= fanout else sorted(picks(u, degree))
        drawn[u] = [indptr[u] + p for p in positions]
        for p in drawn[u]:
            if len(layer) >= limit:
                break
            if indices[p] not in layer:
                layer[indices[p]] = layer[u] + 1
                queue.append(indices[p])
    ids = sorted(layer)
    edges = [p for u in ids for p in drawn.get(u, [])]
    ptr = np.cumsum([0] + [len(drawn.get(u, [])) for u in ids]
                    + [0] * (limit - len(ids))).tolist()
    csr = [[data[p] for p in edges], [indices[p] for p in edges], ptr, [limit, shape[1]]]
    return ids, [layer[u] for u in ids], csr


def _drawn_positions(graph, out_csr, ids):
    """``picks`` for ``ref_sample`` read from a sampler's output: the positions (in its row of
    ``graph``) of each vertex's drawn neighbours."""
    _, indices, indptr, _ = graph
    got_cols, got_ptr = out_csr.indices.asnumpy(), out_csr.indptr.asnumpy()
    rows = {u: got_cols[got_ptr[i]:got_ptr[i + 1]].tolist() for i, u in enumerate(ids)}

    def picks(u, degree):
        row = indices[indptr[u]:indptr[u + 1]]
        return [row.index(c) for c in rows[u]]

    return picks


def _check_sample(graph, seeds, out, hops, fanout, limit, prob=None):
    """``out`` (one seed array's ids, csr, [prob,] layer) is MXNet's walk for the draws it holds:
    each expanded vertex's drawn neighbours are ``min(degree, fanout)`` distinct neighbours in
    column order with their edge ids, and ids, layers and edges follow from them."""
    ids_arr, csr, *rest = out
    layer_arr = rest[-1]
    count = int(ids_arr.asnumpy()[-1])
    ids = ids_arr.asnumpy()[:count].tolist()
    assert ids_arr.shape == (limit + 1,) and ids_arr.dtype == np.int64
    assert csr.stype == "csr" and csr.shape == (limit, graph[3][1]) and csr.dtype == np.int64
    assert layer_arr.shape == (limit,) and layer_arr.dtype == np.int64
    got_cols, got_ptr = csr.indices.asnumpy(), csr.indptr.asnumpy()
    for i, u in enumerate(ids):  # each row: distinct neighbours, rising, at most fanout
        row = got_cols[got_ptr[i]:got_ptr[i + 1]].tolist()
        degree = graph[2][u + 1] - graph[2][u]
        assert row == sorted(set(row)) and set(row) <= set(graph[1][graph[2][u]:graph[2][u + 1]])
        assert len(row) in (0, min(degree, fanout))
    want_ids, want_layers, want_csr = ref_sample(graph, seeds, hops, fanout, limit,
                                                 _drawn_positions(graph, csr, ids))
    assert ids == want_ids
    assert layer_arr.asnumpy()[:count].tolist() == want_layers
    assert _stored(csr) == want_csr
    assert not ids_arr.asnumpy()[count:-1].any() and not layer_arr.asnumpy()[count:].any()
    if prob is not None:
        got = rest[0].asnumpy()
        assert rest[0].dtype == np.float32 and rest[0].shape == (limit,)
        np.testing.assert_array_equal(got[:count], np.float32(prob)[ids])
        assert not got[count:].any()


# -- MXNet's recorded outputs ----------------------------------------------------------------------
@pytest.mark.parametrize("case", RECORD["subgraph"], ids=lambda c: c["name"])
def test_dgl_subgraph_gives_mxnets_outputs(case):
    out = mx.nd.contrib.dgl_subgraph(_csr(case["graph"]), *map(_ids, case["sets"]),
                                     return_mapping=case["return_mapping"])
    out = out if isinstance(out, list) else [out]
    assert [_stored(o) for o in out] == case["outputs"]
    assert all(o.stype == "csr" and o.dtype == np.int64 for o in out)
    for o in out:  # and the pure-Python reference agrees with MXNet
        o.check_format(full_check=True)
    refs = [ref_subgraph(case["graph"], v) for v in case["sets"]]
    want = [r[0] for r in refs] + ([r[1] for r in refs] if case["return_mapping"] else [])
    assert want == case["outputs"]


@pytest.mark.parametrize("case", RECORD["sample"], ids=lambda c: c["name"])
def test_samplers_give_mxnets_outputs_where_every_neighbour_is_taken(case):
    arrays = [_csr(case["graph"])]
    if case["prob"] is not None:
        arrays.append(mx.nd.array(case["prob"], dtype="float32"))
    arrays += [_ids(s) for s in case["seeds"]]
    op = UNIFORM if case["prob"] is None else NON_UNIFORM
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the truncation warning, as MXNet logs
        out = op(*arrays, **case["kwargs"])
    sets = len(case["seeds"])
    assert len(out) == sets * (3 if case["prob"] is None else 4)
    ids, csrs, layers = out[:sets], out[sets:2 * sets], out[-sets:]
    counts = [int(i[-1].asscalar()) for i in ids]
    assert counts == case["counts"]
    assert [i.asnumpy()[:c].tolist() for i, c in zip(ids, counts)] == case["ids"]
    assert [x.asnumpy()[:c].tolist() for x, c in zip(layers, counts)] == case["layers"]
    assert [_stored(c) for c in csrs] == case["edges"]
    assert ids[0].shape == (case["ids_length"],) and layers[0].shape == (case["layer_length"],)
    if case["prob"] is not None:
        probs = out[2 * sets:3 * sets]
        assert [p.asnumpy()[:c].tolist() for p, c in zip(probs, counts)] == case["probs"]
        assert all(p.dtype == np.float32 and not p.asnumpy()[c:].any()
                   for p, c in zip(probs, counts))
    if "compact" in case:
        compact = mx.nd.contrib.dgl_graph_compact(*csrs, *ids, graph_sizes=tuple(counts),
                                                  return_mapping=False)
        compact = compact if isinstance(compact, list) else [compact]
        assert [_stored(c) for c in compact] == case["compact"]


@pytest.mark.parametrize("case", RECORD["symbols"], ids=lambda c: c["name"])
def test_symbols_list_infer_and_save_as_mxnet(case):
    sym = mx.sym.load_json(case["json"])
    assert sym.list_outputs() == case["outputs"]
    _, shapes, _ = sym.infer_shape(**{k: tuple(v) for k, v in case["shapes"].items()})
    assert [list(s) for s in shapes] == case["out_shapes"]
    _, dtypes, _ = sym.infer_type(**case["dtypes"])
    assert [np.dtype(t).name for t in dtypes] == case["out_dtypes"]


def test_symbol_runs_the_op():
    case = RECORD["subgraph"][1]
    g, v, w = (mx.sym.var(n) for n in "gvw")
    sym = mx.sym.contrib.dgl_subgraph(g, v, w, return_mapping=False)
    args = {"g": _csr(case["graph"]), "v": _ids(case["sets"][0]), "w": _ids(case["sets"][1])}
    outs = sym.bind(mx.cpu(), args).forward()
    assert [_stored(o) for o in outs] == case["outputs"]


# -- references over random graphs -----------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 25), st.integers(0, 30), st.sampled_from((0.0, 0.1, 0.3, 1.0)),
       st.integers(1, 3), st.booleans(), st.integers(0, 2**32 - 1))
def test_dgl_subgraph_matches_the_reference(rows, cols, density, sets, mapping, seed):
    rng = np.random.default_rng(seed)
    graph, g = _random_graph(rng, rows, density, cols)
    vertex_sets = [sorted(rng.choice(rows, rng.integers(0, rows + 1), replace=False).tolist())
                   for _ in range(sets)]
    out = mx.nd.contrib.dgl_subgraph(g, *map(_ids, vertex_sets), return_mapping=mapping)
    out = out if isinstance(out, list) else [out]
    refs = [ref_subgraph(graph, v) for v in vertex_sets]
    want = [r[0] for r in refs] + ([r[1] for r in refs] if mapping else [])
    assert [_stored(o) for o in out] == want


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 30), st.sampled_from((0.0, 0.05, 0.2, 0.6)), st.integers(0, 3),
       st.integers(0, 4), st.integers(0, 12), st.booleans(), st.integers(0, 2**32 - 1))
def test_samplers_follow_mxnets_walk_for_their_draws(n, density, hops, fanout, extra, weighted,
                                                     seed):
    rng = np.random.default_rng(seed)
    graph, g = _random_graph(rng, n, density)
    seeds = rng.integers(0, n, rng.integers(0, 4)).tolist() if n else []
    limit = len(seeds) + extra
    prob = rng.random(n).astype(np.float32) if weighted else None
    arrays = [g, *([mx.nd.array(prob)] if weighted else []), _ids(seeds), _ids(seeds[::-1])]
    mx.random.seed(seed % 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = (NON_UNIFORM if weighted else UNIFORM)(
            *arrays, num_hops=hops, num_neighbor=fanout, max_num_vertices=limit)
    per = 4 if weighted else 3
    assert len(out) == 2 * per
    for s, order in enumerate((seeds, seeds[::-1])):
        _check_sample(graph, order, out[s::2], hops, fanout, limit, prob)
        ids = out[s]
        count = int(ids[-1].asscalar())
        closed = set(out[2 + s].indices.asnumpy().tolist()) <= set(ids.asnumpy()[:count])
        if closed and count:  # compact: columns renumbered by position, new edge ids
            new, old = mx.nd.contrib.dgl_graph_compact(out[2 + s], ids, graph_sizes=count,
                                                       return_mapping=True)
            where = {u: j for j, u in enumerate(ids.asnumpy()[:count].tolist())}
            edges = out[2 + s]
            nnz = int(edges.indptr.asnumpy()[count])
            assert new.shape == old.shape == (count, count)
            assert new.indptr.asnumpy().tolist() == edges.indptr.asnumpy()[:count + 1].tolist()
            assert new.indices.asnumpy().tolist() == [
                where[c] for c in edges.indices.asnumpy()[:nnz].tolist()]
            assert new.data.asnumpy().tolist() == list(range(nnz))
            assert old.data.asnumpy().tolist() == edges.data.asnumpy()[:nnz].tolist()


def test_seeded_sampling_repeats_and_seeds_differ():
    rng = np.random.default_rng(0)
    _, g = _random_graph(rng, 60, 0.3)
    seeds = _ids([1, 7, 30])

    def run(seed):
        mx.random.seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return [_stored(o) if o.stype == "csr" else o.asnumpy().tolist()
                    for o in UNIFORM(g, seeds, num_hops=2, num_neighbor=3, max_num_vertices=40)]

    assert run(3) == run(3)
    assert run(3) != run(4)


# -- the draws' distribution -----------------------------------------------------------------------
def _bipartite(k, hubs):
    """Vertices 0..k-1 each with edges to the hubs k..k+hubs-1 (and nothing else)."""
    indices = [k + h for _ in range(k) for h in range(hubs)]
    indptr = [hubs * i for i in range(k + 1)] + [hubs * k] * hubs
    return [list(range(len(indices))), indices, indptr, [k + hubs, k + hubs]]


def _pair_frequencies(out, k, hubs):
    csr = out[1]
    cols = csr.indices.asnumpy().reshape(k, 2) - k
    counts = np.zeros((hubs, hubs))
    for a, b in cols:
        counts[a, b] += 1
    return counts / k


def _successive(weights, a, b):
    """P({a, b}) when two of ``weights`` are drawn without replacement, each in proportion to
    the weights left (MXNet's ArrayHeap draws)."""
    total = sum(weights)
    return (weights[a] / total * weights[b] / (total - weights[a])
            + weights[b] / total * weights[a] / (total - weights[b]))


@pytest.mark.parametrize("weights", [None, [0.9, 0.8, 0.2, 0.4, 0.1], [1.0, 0.0, 3.0, 0.5, 0.5]])
def test_draws_have_the_distribution_of_drawing_without_replacement(weights):
    k, hubs = 6000, 5
    g = _csr(_bipartite(k, hubs))
    mx.random.seed(21)
    seeds = _ids(range(k))
    if weights is None:
        out = UNIFORM(g, seeds, num_hops=1, num_neighbor=2,
                      max_num_vertices=k + hubs + 1)
    else:
        prob = mx.nd.array(np.float32([0.0] * k + weights))
        out = NON_UNIFORM(g, prob, seeds, num_hops=1, num_neighbor=2,
                      max_num_vertices=k + hubs + 1)
    freq = _pair_frequencies(out, k, hubs)
    w = [1.0] * hubs if weights is None else weights
    for a, b in itertools.combinations(range(hubs), 2):
        p = _successive(w, a, b)
        assert freq[b, a] == 0  # columns rise within a row
        assert abs(freq[a, b] - p) <= 5 * math.sqrt(p * (1 - p) / k) + 1e-12, (a, b, freq[a, b], p)


def test_zero_probability_neighbours_are_drawn_last():
    g = _csr(_bipartite(50, 4))
    prob = mx.nd.array(np.float32([0.0] * 50 + [0.0, 1.0, 0.0, 0.0]))
    out = NON_UNIFORM(g, prob, _ids(range(50)), num_hops=1, num_neighbor=2, max_num_vertices=60)
    cols = out[1].indices.asnumpy().reshape(50, 2) - 50
    assert (cols[:, 0] == 0).all() and (cols[:, 1] == 1).all()  # weight 1, then the first left


# -- edges: empty graphs and sets ------------------------------------------------------------------
def test_empty_graphs_and_vertex_sets():
    empty = mx.nd.sparse.csr_matrix((0, 0), dtype="int64")
    out = mx.nd.contrib.dgl_subgraph(empty, _ids([]), return_mapping=True)
    assert [o.shape for o in out] == [(0, 0), (0, 0)]
    out = UNIFORM(empty, _ids([]), max_num_vertices=3)
    assert out[0].asnumpy().tolist() == [0, 0, 0, 0] and out[1].shape == (3, 0)
    assert out[1].indptr.asnumpy().tolist() == [0, 0, 0, 0]
    g = _csr(RECORD["subgraph"][0]["graph"])
    (new,) = [mx.nd.contrib.dgl_subgraph(g, _ids([]), return_mapping=False)]
    assert new.shape == (0, 0) and new.indptr.asnumpy().tolist() == [0]
    compact = mx.nd.contrib.dgl_graph_compact(
        mx.nd.sparse.csr_matrix((3, 5), dtype="int64"), _ids([0, 0, 0, 0]), graph_sizes=0,
        return_mapping=False)
    assert compact.shape == (0, 0) and compact.indptr.asnumpy().tolist() == [0]


# -- bad input -------------------------------------------------------------------------------------
FIVE = RECORD["sample"][0]["graph"]


@pytest.mark.parametrize("call, error, message", [
    (lambda g: mx.nd.contrib.dgl_subgraph(g.tostype("default"), _ids([0]), return_mapping=True),
     TypeError, "graph must be a csr matrix"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g.astype("float32"), _ids([0]), return_mapping=True),
     TypeError, "graph must hold int64 edge ids, got dtype float32"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g, _ids([2, 1]), return_mapping=True),
     ValueError, r"varray0 must be sorted, unique vertex ids in \[0, 5\); position 1 holds 1"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g, _ids([1]), _ids([1, 1]), return_mapping=True),
     ValueError, "varray1 must be sorted, unique.*position 1"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g, _ids([0, 5]), return_mapping=True),
     ValueError, "position 1 holds 5"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g, mx.nd.array([0, 1]), return_mapping=True),
     TypeError, "varray0 must be a 1-D dense int64 array.*dtype float32"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g, _ids([0]), return_mapping=2),
     mx.MXNetError, "return_mapping must be a boolean"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g, _ids([0]), _ids([1]), return_mapping=True,
                                          num_args=2),
     ValueError, "num_args is 2 but 3 arrays"),
    (lambda g: mx.nd.contrib.dgl_subgraph(g, return_mapping=True),
     ValueError, "at least 2 arrays, got 1"),
    (lambda g: mx.nd.contrib.dgl_graph_compact(g, _ids([0, 1, 2, 3, 4, 5]), graph_sizes=(5, 5),
                                               return_mapping=False),
     ValueError, "graph_sizes has 2 sizes for 1 graphs"),
    (lambda g: mx.nd.contrib.dgl_graph_compact(g, _ids([0, 1, 2, 3, 4]), graph_sizes=4,
                                               return_mapping=False),
     ValueError, r"varray0 must be int64 of shape \(6,\)"),
    (lambda g: mx.nd.contrib.dgl_graph_compact(g, _ids([0, 1, 2, 3, 4, 4]), graph_sizes=5,
                                               return_mapping=False),
     ValueError, "graph_sizes\\[0\\] is 5; .*counts 4 vertices"),
    (lambda g: mx.nd.contrib.dgl_graph_compact(g, _ids([0, 1, 2, 3, 4, 4]), graph_sizes=4,
                                               return_mapping=False),
     ValueError, "graph0 stores edges in rows past graph_sizes\\[0\\] = 4"),
    (lambda g: mx.nd.contrib.dgl_graph_compact(g, _ids([0, 1, 2, 3, 4, 5]), g,
                                               graph_sizes=5, return_mapping=False),
     ValueError, "as many vertex arrays as graphs, got 3"),
    (lambda g: UNIFORM(g, _ids([5])), IndexError, r"seed_arrays\[0\] holds 5, outside \[0, 5\)"),
    (lambda g: UNIFORM(g, _ids([0, 1, 2]), max_num_vertices=2),
     ValueError, r"max_num_vertices is 2, below the 3 vertices of seed_arrays\[0\]"),
    (lambda g: UNIFORM(g, _ids([0]), num_neighbor=-1), mx.MXNetError,
     "num_neighbor must be at least 0"),
    (lambda g: UNIFORM(g, _ids([0]), num_hops=1.5), mx.MXNetError, "num_hops must be an integer"),
    (lambda g: UNIFORM(g.astype("float32"), _ids([0])), TypeError,
     "csr_matrix must hold int64 edge ids"),
    (lambda g: UNIFORM(g, _ids([0])[:0].tostype("default").astype("float32").reshape((0, 1))),
     ValueError, r"seed_arrays\[0\] must be 1-D"),
    (lambda g: NON_UNIFORM(g, mx.nd.ones((4,)), _ids([0])), ValueError,
     r"probability must have shape \(5,\)"),
    (lambda g: NON_UNIFORM(g, mx.nd.array([1, -1, 1, 1, 1]), _ids([0])), ValueError,
     "probability must not be negative"),
    (lambda g: NON_UNIFORM(g, mx.nd.ones((5,))), ValueError, "at least 3 arrays, got 2"),
])
def test_bad_input_raises_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(_csr(FIVE))


def test_compact_refuses_an_edge_to_a_vertex_not_sampled_and_non_square_samplers():
    edges = _csr([[13, 14, 15, 16], [0, 1, 2, 4], [0, 0, 0, 4], [3, 5]])
    with pytest.raises(ValueError, match=r"graph0 has an edge to vertex [24], which varray0"):
        mx.nd.contrib.dgl_graph_compact(edges, _ids([0, 1, 3, 3]), graph_sizes=3,
                                        return_mapping=False)  # five_truncated's edges
    with pytest.raises(ValueError, match=r"csr_matrix must be square .* shape \(3, 5\)"):
        UNIFORM(edges, _ids([0]))
    with pytest.raises(TypeError, match="return_mapping"):
        mx.nd.contrib.dgl_subgraph(_csr(FIVE), _ids([0]))
