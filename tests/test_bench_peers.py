"""sparsegen bench's peers (numba kernels, MKL), its random-row limits, the oracle check that
refuses a wrong peer, issue 17's verdict and the scaling table."""

import statistics

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsegen.bench import harness, limits, peers, scaling, suite

nb = peers.numba_kernels()
needs_numba = pytest.mark.skipif(nb is None, reason="numba is not installed (the [bench] extra)")


def sorted_ids(rng, universe, size):
    return np.sort(rng.choice(universe, size=size, replace=False)).astype(np.int64)


@needs_numba
@given(k=st.integers(0, 60), m=st.integers(0, 60), d=st.sampled_from((1, 16, 37)),
       seed=st.integers(0, 2**32 - 1))
def test_numba_retain_matches_numpy(k, m, d, seed):
    rng = np.random.default_rng(seed)
    indices, req = sorted_ids(rng, 100, k), sorted_ids(rng, 100, m)
    data = rng.random((k, d), dtype=np.float32)
    out = np.full((m, d), 7, np.float32)
    nb.retain(data, indices, req, out)
    expected = np.zeros((m, d), np.float32)
    hit = np.isin(req, indices)
    expected[hit] = data[np.searchsorted(indices, req[hit])]
    np.testing.assert_array_equal(out, expected)


@needs_numba
@pytest.mark.parametrize("ahead", [0, 8])
@given(n=st.integers(1, 50), k=st.integers(0, 50), d=st.sampled_from((1, 16, 37)),
       seed=st.integers(0, 2**32 - 1))
def test_numba_optimizers_match_numpy(ahead, n, k, d, seed):
    rng = np.random.default_rng(seed)
    ids = sorted_ids(rng, max(n, k), k)
    rows = max(n, k)
    grad = rng.standard_normal((k, d)).astype(np.float32)
    w = rng.standard_normal((rows, d)).astype(np.float32)
    m = rng.standard_normal((rows, d)).astype(np.float32)
    v = rng.random((rows, d)).astype(np.float32)
    w_sgd, m_sgd = w.copy(), m.copy()
    nb.sgd_mom(w_sgd, m_sgd, ids, grad, 0.1, 0.9, 1e-3, ahead)
    mom = 0.9 * m[ids] - 0.1 * 1e-3 * w[ids] - 0.1 * grad
    expected_w, expected_m = w.copy(), m.copy()
    expected_m[ids], expected_w[ids] = mom, w[ids] + mom
    np.testing.assert_allclose(w_sgd, expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m_sgd, expected_m, rtol=1e-5, atol=1e-6)
    w_adam, mean, var = w.copy(), m.copy(), v.copy()
    nb.adam(w_adam, mean, var, ids, grad, 0.01, 0.9, 0.999, 1e-8, ahead)
    mu = 0.9 * m[ids] + 0.1 * grad
    nu = 0.999 * v[ids] + 0.001 * grad * grad
    expected_w = w.copy()
    expected_w[ids] -= 0.01 * mu / (np.sqrt(nu) + 1e-8)
    np.testing.assert_allclose(w_adam, expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean[ids], mu, rtol=1e-5, atol=1e-6)


@needs_numba
@pytest.mark.parametrize("ahead", [0, 8])
@given(rows=st.integers(0, 30), cols=st.integers(1, 40), d=st.sampled_from((1, 16, 37)),
       density=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_numba_products_match_scipy(ahead, rows, cols, d, density, seed):
    rng = np.random.default_rng(seed)
    a = scipy.sparse.random(rows, cols, density=density, format="csr", dtype=np.float32,
                            random_state=rng)
    a.sort_indices()
    indices, indptr = a.indices.astype(np.int64), a.indptr.astype(np.int64)
    b = rng.random((cols, d), dtype=np.float32)
    out = np.full((rows, d), 7, np.float32)
    nb.csr_dense(a.data, indices, indptr, b, out, ahead)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    rhs = rng.random((rows, d), dtype=np.float32)
    ids, got = nb.csr_t_dense(a.data, indices, indptr, cols, rhs)
    np.testing.assert_array_equal(ids, np.unique(indices))
    np.testing.assert_allclose(got, (a.T @ rhs)[ids], rtol=1e-5, atol=1e-5)


@needs_numba
@given(ka=st.integers(0, 40), kb=st.integers(0, 40), d=st.sampled_from((1, 16)),
       seed=st.integers(0, 2**32 - 1))
def test_numba_rsp_add_matches_numpy(ka, kb, d, seed):
    rng = np.random.default_rng(seed)
    ids_a, ids_b = sorted_ids(rng, 60, ka), sorted_ids(rng, 60, kb)
    data_a, data_b = (rng.random((k, d), dtype=np.float32) for k in (ka, kb))
    ids, rows = nb.rsp_add(ids_a, data_a, ids_b, data_b)
    dense = np.zeros((60, d), np.float32)
    dense[ids_a] += data_a
    dense[ids_b] += data_b
    np.testing.assert_array_equal(ids, np.union1d(ids_a, ids_b))
    np.testing.assert_array_equal(rows, dense[ids])


@needs_numba
@given(rows=st.integers(0, 40), d=st.sampled_from((1, 16, 37)), seed=st.integers(0, 2**32 - 1))
def test_numba_dense_to_rsp_stores_nan_and_not_negative_zero(rows, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.choice(np.array([0.0, -0.0, np.nan, 1.0], np.float32), size=(rows, d),
                   p=[0.6, 0.3, 0.05, 0.05])
    ids, got = nb.dense_to_rsp(x)
    expected = np.flatnonzero((x != 0).any(axis=1))
    np.testing.assert_array_equal(ids, expected)
    np.testing.assert_array_equal(got, x[expected])


def test_mkl_peer_matches_scipy_when_installed():
    sdm = peers.mkl()
    if sdm is None:
        pytest.skip("sparse_dot_mkl with libmkl_rt is not installed (the [bench] extra)")
    a = scipy.sparse.random(30, 50, density=0.2, format="csr", dtype=np.float32, random_state=1)
    b = np.random.default_rng(2).random((50, 8), dtype=np.float32)
    np.testing.assert_allclose(sdm.dot_product_mkl(a, b), a @ b, rtol=1e-5, atol=1e-5)


def test_a_wrong_peer_raises_before_anything_is_timed():
    timed = []

    def good():
        return lambda: np.arange(4.0)

    def wrong():
        def run():
            timed.append(1)
            return np.arange(4.0) + 1
        return run

    workload = harness.Workload("WX", "test", 32, {"sparsegen": good, "numpy": good,
                                                   "bad peer": wrong},
                                lambda e, g: np.testing.assert_array_equal(g, e))
    with pytest.raises(AssertionError, match="WX: bad peer disagrees with numpy"):
        harness.run(workload, repeats=5, warmup=1)
    assert len(timed) == 1  # its warm-up call only


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(1, 300), touched=st.integers(0, 300), d=st.sampled_from((16, 128)),
       ordered=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_limit_kernels_move_the_right_rows(rows, touched, d, ordered, seed):
    """The limit kernels against numpy (gather and reduce at sorted or independent ids, update
    at sorted distinct ids), as ``prepare`` checks them before timing."""
    import tvm

    ex, dev = limits._kernels(), tvm.cpu(0)
    rng = np.random.default_rng(seed)
    touched = min(touched, rows) if ordered else touched
    ids = (sorted_ids(rng, rows, touched) if ordered
           else rng.integers(0, rows, touched).astype(np.int64))
    src = rng.random((rows, d), dtype=np.float32)
    small = rng.random((touched, d), dtype=np.float32)
    out = tvm.runtime.tensor(np.zeros((touched, d), np.float32), dev)
    ex["gather"](tvm.runtime.tensor(src, dev), tvm.runtime.tensor(ids, dev), out)
    np.testing.assert_array_equal(out.numpy(), src[ids])
    group = 1 + seed % min(touched, 70) if touched else 1  # entries summed per output row
    kept = ids[: touched - touched % group]
    sums = tvm.runtime.tensor(np.full((kept.size // group, d), np.nan, np.float32), dev)
    ex["reduce"](tvm.runtime.tensor(src, dev), tvm.runtime.tensor(kept, dev), sums)
    expected = src[kept].reshape(-1, group, d).sum(axis=1)
    np.testing.assert_allclose(sums.numpy(), expected, rtol=1e-5, atol=1e-6)
    if ordered:  # the rows of 1-3 arrays (weight and optimizer states) at each id
        planes = np.stack([src + k for k in range(1 + seed % 3)])
        dst = tvm.runtime.tensor(planes, dev)
        ex["update"](dst, tvm.runtime.tensor(ids, dev), tvm.runtime.tensor(small, dev), 0.5)
        expected = planes.copy()
        expected[:, ids] += np.float32(0.5) * small
        np.testing.assert_allclose(dst.numpy(), expected, rtol=1e-6)


def test_limit_bytes_follow_the_formula():
    gather, update = limits.Pattern("gather", 10, 4, 128), limits.Pattern("update", 10, 4, 128)
    assert gather.bytes_moved() == 4 * (2 * 128 * 4 + 8)
    assert update.bytes_moved() == 4 * (3 * 128 * 4 + 8)
    adam = limits.Pattern("update", 10, 4, 128, arrays=3)  # grad read; 3 arrays read + written
    assert adam.bytes_moved() == 4 * (7 * 128 * 4 + 8)
    reduce = limits.Pattern("reduce", 10, 6, 128, ordered=False, group=3)
    assert reduce.bytes_moved() == 6 * (128 * 4 + 8) + 2 * 128 * 4  # rows read, sums written
    assert set(limits.PATTERNS) == {"W1", "W2", "W3", "W4", "W5", "W6"}
    with pytest.raises(ValueError, match="group must be a positive divisor of touched"):
        limits.Pattern("reduce", 10, 7, group=3)
    with pytest.raises(ValueError, match="kind must be one of"):
        limits.Pattern("scatter", 10, 7)
    with pytest.raises(ValueError, match="arrays must be 1, or more for an update; got 2"):
        limits.Pattern("gather", 10, 7, arrays=2)


@pytest.mark.parametrize("workload", sorted(limits.PATTERNS))
def test_a_quick_pattern_is_a_smaller_pattern_of_the_same_kind(workload):
    full = limits.PATTERNS[workload]
    quick = full.shrunk(100)
    assert (quick.kind, quick.width, quick.ordered, quick.group, quick.arrays) == (
        full.kind, full.width, full.ordered, full.group, full.arrays)
    assert 64 <= quick.rows < full.rows and 0 < quick.touched < full.touched
    assert quick.touched % quick.group == 0 and (not quick.ordered or quick.touched <= quick.rows)


def test_the_limit_runs_in_the_workloads_rounds_and_is_not_an_implementation():
    """The limit kernel is timed once per round beside the implementations, its result is not
    checked against theirs, and its GB/s is its pattern's bytes over its median time."""
    pattern = limits.Pattern("update", 64, 32, 16)
    calls = []

    def numpy_impl():
        return lambda: calls.append(1) or np.arange(3.0)

    workload = harness.Workload("WL", "test", 100, {"numpy": numpy_impl},
                                lambda e, g: np.testing.assert_array_equal(g, e),
                                limit={"pattern": pattern.describe(),
                                       "bytes": pattern.bytes_moved()},
                                limit_impl=limits.prepare(pattern))
    result = harness.run(workload, repeats=4, warmup=1)
    assert set(result.seconds) == {"numpy"} and len(result.limit_seconds) == 4
    limit = result.as_dict()["limit"]
    expected = pattern.bytes_moved() / statistics.median(result.limit_seconds) / 1e9
    assert limit["gbps"] == pytest.approx(expected) and limit["gbps"] > 0
    assert limit["pattern"].startswith("dst[ids[r]] += s * src[r]: 32 rows of 16 float32")


def test_peer_verdict_takes_the_best_peer_and_the_limit():
    w = {"median_ms": {"sparsegen": 10.0, "numba": 12.0, "numpy": 30.0},
         "gbps": {"sparsegen": 4.0, "numba": 3.3, "numpy": 1.3}, "limit": {"gbps": 5.0}}
    v = suite.peer_verdict(w)
    assert v["best_peer"] == "numba" and v["ratio"] == pytest.approx(1.2)
    assert v["fraction"] == pytest.approx(0.8) and not v["met"]
    w["gbps"]["sparsegen"] = 4.5  # 90% of the limit
    assert suite.peer_verdict(w)["met"]
    w["median_ms"]["sparsegen"], w["gbps"]["sparsegen"] = 6.0, 1.0  # 2x the best peer
    assert suite.peer_verdict(w)["met"]
    assert suite.peer_verdict({"median_ms": {"sparsegen": 1.0}, "gbps": {}, "limit": {}}) is None


def test_scaling_quick_spans_100x_against_the_best_peer():
    rows = scaling.run(quick=True, repeats=1)
    for wid in ("W3", "W4"):
        sizes = [row["size"] for row in rows if row["id"] == wid]
        assert sizes == list(scaling.QUICK_SIZES[wid]) and sizes[-1] == 100 * sizes[0]
        assert list(scaling.SIZES[wid])[-1] >= 99 * list(scaling.SIZES[wid])[0]
    for row in rows:
        ms = row["median_ms"]
        assert row["best_peer"] != "sparsegen" and row["ratio"] == ms[row["best_peer"]] / ms[
            "sparsegen"]
        assert {"numba", "numba+prefetch"} <= set(ms) if nb is not None else "numba" not in ms
    assert "| W3 |" in "\n".join(scaling.markdown(rows))
