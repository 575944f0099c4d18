"""The dist_sync kvstore on torch.distributed: 1, 2 and 4 worker processes on 127.0.0.1 (each
started as ``python tests/dist_worker.py``) give the weights of one process applying the summed
gradients (numpy oracles of lazy Adam and lazy SGD with momentum); row_sparse_pull returns
exactly the rows asked for; a killed worker makes the others fail within the timeout naming it;
bad calls raise on their worker naming the key; the launcher; the error without torch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidValue, SparsegenError
from sparsegen.kvstore import rendezvous, shard
from sparsegen.launch import free_port, host_commands

sys.path.insert(0, str(Path(__file__).parent))
import dist_worker as worker  # noqa: E402  (the worker's data, for the oracles)

WORKER = str(Path(__file__).with_name("dist_worker.py"))


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, TVM_NUM_THREADS="1", **extra)
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                 "TORCHELASTIC_USE_AGENT_STORE", rendezvous.TIMEOUT_VARIABLE):
        env.pop(name, None)
    return {**env, **extra}


def _launch(workers: int, scenario: str, out: Path, timeout: float = 120) -> None:
    done = subprocess.run([sys.executable, "-m", "sparsegen.cli", "launch", "-n", str(workers),
                           "--", sys.executable, WORKER, scenario, str(out)],
                          env=_env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


# -- numpy oracles ---------------------------------------------------------------------------
def _adam(w, m, v, rows, g, t, learning_rate, rescale_grad, wd, b1=0.9, b2=0.999, eps=1e-8):
    """MXNet's Adam on ``rows`` of ``w`` (lazy for a row_sparse gradient)."""
    step = learning_rate * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    grad = rescale_grad * g + wd * w[rows]
    m[rows] = b1 * m[rows] + (1 - b1) * grad
    v[rows] = b2 * v[rows] + (1 - b2) * grad * grad
    w[rows] -= step * m[rows] / (np.sqrt(v[rows]) + eps)


def _sgd(w, mom, rows, g, lr, momentum, wd, rescale_grad):
    """MXNet's SGD with momentum on ``rows`` of ``w``."""
    mom[rows] = momentum * mom[rows] - lr * (rescale_grad * g + wd * w[rows])
    w[rows] += mom[rows]


def _raw_oracle(workers: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The embedding after each step and the final bias, pushes summed over ``workers``."""
    start = worker.initial(0)
    w, b = start["raw_emb"].astype(np.float64), start["raw_bias"].astype(np.float64)
    state = [np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)]
    after = []
    for step in range(worker.STEPS):
        total, dense = np.zeros_like(w), np.zeros_like(b)
        touched = np.zeros(worker.N, bool)
        for rank in range(workers):
            ids, rows, g = worker.push_gradient(step, rank)
            total[ids] += rows
            touched[ids] = True
            dense += g
        rows = np.flatnonzero(touched)
        _adam(w, state[0], state[1], rows, total[rows], step + 1, **worker.ADAM)
        _adam(b, state[2], state[3], slice(None), dense, step + 1, **worker.ADAM)
        after.append(w.copy())
    return after, b


def _trainer_oracle(workers: int) -> dict[str, np.ndarray]:
    """The Trainer model's weights after the steps: SparseEmbedding then Dense(1), loss
    sum(y * y / 2 + y), gradients summed over ``workers``, lazy SGD on the embedding."""
    start = worker.initial(0)
    emb, wd, bd = (start[k].astype(np.float64) for k in ("emb", "dense_w", "dense_b"))
    moms = [np.zeros_like(emb), np.zeros_like(wd), np.zeros_like(bd)]
    for step in range(worker.STEPS):
        g_emb, g_w, g_b = np.zeros_like(emb), np.zeros_like(wd), np.zeros_like(bd)
        touched = np.zeros(worker.N, bool)
        for rank in range(workers):
            ids = worker.batch(step, rank)
            e = emb[ids]
            dy = e @ wd.T + bd + 1  # d loss / d y
            g_w += dy.T @ e
            g_b += dy.sum(0)
            np.add.at(g_emb, ids, dy @ wd)
            touched[ids] = True
        rows = np.flatnonzero(touched)
        hyper = dict(worker.SGD, rescale_grad=1 / worker.BATCH)
        lr, momentum, decay = hyper["learning_rate"], hyper["momentum"], hyper["wd"]
        _sgd(emb, moms[0], rows, g_emb[rows], lr, momentum, decay, hyper["rescale_grad"])
        _sgd(wd, moms[1], slice(None), g_w, lr, momentum, decay, hyper["rescale_grad"])
        _sgd(bd, moms[2], slice(None), g_b, lr, momentum, decay, hyper["rescale_grad"])
    return {"emb": emb, "dense_w": wd, "dense_b": bd}


# -- training over 1, 2, 4 processes ---------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_training_gives_the_weights_of_one_process_applying_the_summed_gradients(workers,
                                                                                 tmp_path):
    if workers == 1:
        worker.train(tmp_path)  # in this process: one worker needs no launcher
    else:
        _launch(workers, "train", tmp_path)
    raw_after, raw_bias = _raw_oracle(workers)
    trained = _trainer_oracle(workers)
    owned = []
    for rank in range(workers):
        seen = np.load(tmp_path / f"train-{rank}.npz")
        assert int(seen["workers"]) == workers and str(seen["type"]) == "dist_sync"
        owned.append(tuple(seen["owned"]))
        for step in range(worker.STEPS):
            want_ids = np.unique(worker.asked_rows(step, rank))
            np.testing.assert_array_equal(seen[f"pulled_ids_{step}"], want_ids)
            np.testing.assert_allclose(seen[f"pulled_rows_{step}"], raw_after[step][want_ids],
                                       rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(seen["raw_emb"], raw_after[-1], rtol=1e-5, atol=1e-5)
        # a dense key pushed the same row_sparse gradients is updated as lazily
        np.testing.assert_allclose(seen["dense_emb"], raw_after[-1], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(seen["raw_bias"], raw_bias, rtol=1e-5, atol=1e-5)
        for name, want in trained.items():
            np.testing.assert_allclose(seen[name], want, rtol=1e-4, atol=1e-4, err_msg=name)
    assert owned == [(worker.N * r // workers, worker.N * (r + 1) // workers)
                     for r in range(workers)]


def _module_oracle(workers: int) -> tuple[np.ndarray, np.ndarray]:
    """The Module model's weights after one epoch: squared error on ``x @ w + b``, gradients
    of every worker's batch summed, rescaled by 1 / (batch x workers), lazy SGD with momentum
    on the rows of ``w`` the step's batches touch (MXNet 1.9.1 gives these weights on one
    process: checked with its Module and a local kvstore)."""
    start = worker.initial(0)
    w, b = start["emb"][:, :1].astype(np.float64), start["dense_b"].astype(np.float64)
    moms = [np.zeros_like(w), np.zeros_like(b)]
    data = [worker.module_data(rank) for rank in range(workers)]
    hyper = dict(worker.SGD, rescale_grad=1 / (worker.BATCH * workers))
    lr, momentum = hyper["learning_rate"], hyper["momentum"]
    decay = 0.0  # MXNet: no weight decay on a parameter named neither *_weight nor *_gamma
    for step in range(worker.STEPS):
        g_w, g_b = np.zeros_like(w), np.zeros_like(b)
        touched = np.zeros(worker.N, bool)
        for x, y in data:
            xs, ys = x[step * worker.BATCH:(step + 1) * worker.BATCH], y[step * worker.BATCH:][
                :worker.BATCH]
            dy = (xs @ w + b)[:, 0] - ys
            g_w += xs.T @ dy[:, None]
            g_b += dy.sum(keepdims=True)
            touched |= (xs != 0).any(0)
        rows = np.flatnonzero(touched)
        _sgd(w, moms[0], rows, g_w[rows], lr, momentum, decay, hyper["rescale_grad"])
        _sgd(b, moms[1], slice(None), g_b, lr, momentum, decay, hyper["rescale_grad"])
    return w, b


def test_module_fit_on_dist_sync_gives_the_weights_of_the_summed_gradients(tmp_path):
    _launch(2, "module", tmp_path)
    want_w, want_b = _module_oracle(2)
    for rank in range(2):
        seen = np.load(tmp_path / f"module-{rank}.npz")
        assert int(seen["workers"]) == 2
        np.testing.assert_allclose(seen["w"], want_w, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(seen["b"], want_b, rtol=1e-4, atol=1e-5)


# -- faults ----------------------------------------------------------------------------------
def test_a_killed_worker_makes_the_others_fail_within_the_timeout_naming_it(tmp_path):
    workers, timeout, port = 3, 5.0, free_port()
    env = _env(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(workers),
               TEST_TIMEOUT=str(timeout))
    started = time.monotonic()
    procs = [subprocess.Popen([sys.executable, WORKER, "kill", str(tmp_path)],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for r in range(workers)]
    codes = [p.wait(timeout=90) for p in procs]
    assert codes[1] == -9 and codes[0] == codes[2] == 0, [p.stderr.read()[-2000:] for p in procs]
    assert time.monotonic() - started < 60
    for rank in (0, 2):
        waited, message = (tmp_path / f"kill-{rank}.txt").read_text().split("\n", 1)
        assert float(waited) < timeout + 5, message  # the timeout, and the heartbeats read
        assert f"on rank {rank} of 3: dead rank 1" in message
        assert "kvstore.push: key 'emb'" in message


def test_a_worker_late_past_the_timeout_is_named_alive_but_behind(tmp_path):
    timeout = 2.0
    done = subprocess.run([sys.executable, "-m", "sparsegen.cli", "launch", "-n", "2", "--",
                           sys.executable, WORKER, "slow", str(tmp_path)],
                          env=_env(TEST_TIMEOUT=str(timeout)), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    waited, message = (tmp_path / "slow-0.txt").read_text().split("\n", 1)
    assert timeout <= float(waited) < timeout + 5, message
    assert "on rank 0 of 2: rank 1 alive but not at this collective within 2 s" in message
    waited, message = (tmp_path / "slow-1.txt").read_text().split("\n", 1)
    assert float(waited) < timeout + 5 and "on rank 1 of 2: dead rank 0" in message


def test_bad_calls_raise_on_their_worker_naming_the_key_and_change_nothing(tmp_path):
    _launch(2, "bad", tmp_path)
    zero, one = ((tmp_path / f"bad-{r}.txt").read_text().splitlines() for r in (0, 1))
    assert one[:6] == [
        "InvalidValue: kvstore.push: key 'emb' holds shape (23, 4) and dtype float32, got a "
        "value of shape (23, 5) and dtype float32",
        "InvalidValue: kvstore.push: key 'emb' holds shape (23, 4) and dtype float32, got a "
        "value of shape (23, 4) and dtype float64",
        "InvalidValue: kvstore.push: key 'nokey' has not been initialized (init it first)",
        "InvalidValue: kvstore.pull: key 'bias' holds shape (4,), got an out array of shape (6,)",
        "InvalidValue: kvstore.row_sparse_pull: key 'emb' holds shape (23, 4), got an out array "
        "of shape (23, 1)",
        "SparsegenError: row_ids of key 'emb' out of range [0, 23): [23] at positions [0]"]
    # the bad calls sent nothing: the next push sums ranks 0 and 1 alone (1 + 2 in row 2)
    assert zero[0] == one[6] == "rows 3 3 3 3 0 0 0 0"
    assert zero[1].startswith("PeerFailure: kvstore.push: key 'emb': rank 1 made another call")
    assert one[7].startswith("PeerFailure: kvstore.push: key 'other': rank 0 made another call")


# -- without torch, types, timeouts ------------------------------------------------------------
def test_without_torch_create_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch.distributed", None)
    with pytest.raises(SparsegenError, match=r'pip install "sparsegen\[distributed\]"'):
        mx.kv.create("dist_sync")


@pytest.mark.parametrize("given, variable, match", [
    (0, None, "timeout must be a positive finite number of seconds, got 0"),
    (float("nan"), None, "timeout must be a positive"),
    ("soon", None, "timeout must be a number of seconds, got 'soon'"),
    (None, "-3", r"\$SPARSEGEN_KV_TIMEOUT must be a positive finite number of seconds, got '-3'"),
])
def test_bad_timeouts_raise_naming_them(monkeypatch, given, variable, match):
    if variable is not None:
        monkeypatch.setenv(rendezvous.TIMEOUT_VARIABLE, variable)
    with pytest.raises(InvalidValue, match=match):
        mx.kv.create("dist_sync", timeout=given)


def test_timeout_comes_from_the_argument_then_the_environment(monkeypatch):
    monkeypatch.delenv(rendezvous.TIMEOUT_VARIABLE, raising=False)
    assert rendezvous.timeout_seconds(None) == 60.0
    monkeypatch.setenv(rendezvous.TIMEOUT_VARIABLE, "7.5")
    assert rendezvous.timeout_seconds(None) == 7.5
    assert rendezvous.timeout_seconds(3) == 3.0


@pytest.mark.parametrize("name", ["dist_async", "dist_device_async", "dist"])
def test_unsupported_distributed_types_name_the_supported_ones(name):
    with pytest.raises(InvalidValue, match="dist_sync, dist_device_sync, dist_sync_device"):
        mx.kv.create(name)


# -- shards ------------------------------------------------------------------------------------
@given(st.integers(0, 10_000), st.integers(1, 64), st.data())
def test_row_ranges_cover_the_rows_and_split_sorted_ids_by_owner(rows, workers, data):
    edges = shard.bounds(rows, workers)
    assert edges[0] == 0 and edges[-1] == rows and np.all(np.diff(edges) >= 0)
    assert max(np.diff(edges)) - min(np.diff(edges)) <= 1
    ids = np.unique(np.array(data.draw(st.lists(st.integers(0, max(rows - 1, 0)), max_size=50)),
                             np.int64)) if rows else np.zeros(0, np.int64)
    counts = shard.counts(ids, edges)
    want = [int(((ids >= a) & (ids < b)).sum()) for a, b in zip(edges[:-1], edges[1:])]
    assert counts == want and shard.offsets(counts)[-1] == ids.size


# -- one worker, in this process -----------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(st.integers(1, 40), st.integers(1, 5), st.sampled_from(["float32", "float64"]),
       st.floats(0.0, 1.0), st.data())
def test_one_worker_push_and_row_sparse_pull_match_numpy(rows, cols, dtype, density, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    kv = mx.kv.create("dist_sync")
    assert (kv.rank, kv.num_workers) == (0, 1)
    start = rng.standard_normal((rows, cols)).astype(dtype)
    key = f"w{data.draw(st.integers(0, 10**9))}"
    kv.init(key, mx.nd.array(start, dtype=dtype).tostype("row_sparse"))
    assert kv.owned_rows(key) == (0, rows)
    ids = np.flatnonzero(rng.random(rows) < density)
    pushes = [rng.standard_normal((ids.size, cols)).astype(dtype) for _ in range(2)]
    kv.push(key, [mx.nd.sparse.row_sparse_array((p, ids), shape=(rows, cols), dtype=dtype)
                  for p in pushes])
    asked = rng.integers(0, rows, data.draw(st.integers(0, 8)))
    out = mx.nd.sparse.zeros("row_sparse", (rows, cols), dtype=dtype)
    kv.row_sparse_pull(key, out=out, row_ids=mx.nd.array(asked, dtype="int64"))
    total = np.zeros((rows, cols), np.float64)
    total[ids] = pushes[0].astype(np.float64) + pushes[1]  # no optimizer: the sum is stored
    np.testing.assert_array_equal(out.indices.asnumpy(), np.unique(asked))
    np.testing.assert_allclose(out.data.asnumpy(), total[np.unique(asked)], rtol=1e-6,
                               atol=1e-6)


# -- the launcher ----------------------------------------------------------------------------------
def test_a_failing_worker_fails_the_launch_and_stops_the_others(tmp_path):
    script = tmp_path / "w.py"
    script.write_text("import os, sys, time\nrank = int(os.environ['RANK'])\n"
                      "open(os.path.join(sys.argv[1], f'env-{rank}'), 'w').write(' '.join("
                      "os.environ[k] for k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', "
                      "'MASTER_ADDR')))\n"
                      "time.sleep(1)\nsys.exit(3) if rank == 1 else time.sleep(120)\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "sparsegen.cli", "launch", "-n", "3", "--",
                           sys.executable, str(script), str(tmp_path)],
                          env=_env(), capture_output=True, text=True, timeout=100)
    assert done.returncode == 3, done.stderr
    assert time.monotonic() - started < 60  # the sleeping workers were stopped
    assert "worker 1 exited with status 3; stopping the others" in done.stderr
    assert [(tmp_path / f"env-{r}").read_text() for r in range(3)] == [
        f"{r} {r} 3 127.0.0.1" for r in range(3)]


def test_launch_with_hosts_prints_each_hosts_command(tmp_path, capsys):
    from sparsegen.cli import main

    hosts = tmp_path / "hosts"
    hosts.write_text("# the cluster\nnode-a\n\nnode-b  # second\n")
    assert main(["launch", "-n", "2", "--hosts", str(hosts), "--port", "4000", "--", "python",
                 "train.py", "--lr", "0.1"]) == 0
    assert capsys.readouterr().out.splitlines() == host_commands(
        ["node-a", "node-b"], 2, 4000, ["python", "train.py", "--lr", "0.1"]) == [
        "torchrun --nnodes=2 --node-rank=0 --nproc-per-node=2 --master-addr=node-a "
        "--master-port=4000 train.py --lr 0.1   # on node-a",
        "torchrun --nnodes=2 --node-rank=1 --nproc-per-node=2 --master-addr=node-a "
        "--master-port=4000 train.py --lr 0.1   # on node-b"]


@pytest.mark.parametrize("argv, message", [
    (["launch", "-n", "0", "--", "python"], "must be a positive integer, got '0'"),
    (["launch", "-n", "2", "--port", "70000", "--", "python"], "must be a port"),
    (["launch", "-n", "2", "--"], "launch needs a command after --"),
])
def test_launch_argument_errors(argv, message, capsys):
    from sparsegen.cli import main

    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    assert message in capsys.readouterr().err


def test_one_worker_saves_and_loads_its_optimizer_states(tmp_path):
    kv = mx.kv.create("dist_sync")
    kv.init("states_w", mx.nd.array([[1.0, 2.0], [3.0, 4.0]]).tostype("row_sparse"))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.5))
    grad = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(2, 2))
    kv.push("states_w", grad)  # momentum row 1: -0.5
    kv.save_optimizer_states(str(tmp_path / f"states-{kv.rank}"), dump_optimizer=True)
    other = mx.kv.create("dist_sync_device")
    other.init("states_w", mx.nd.array([[1.0, 2.0], [3.0, 4.0]]).tostype("row_sparse"))
    other.set_optimizer(mx.optimizer.SGD(learning_rate=0.0, momentum=0.5))
    other.load_optimizer_states(str(tmp_path / "states-0"))
    other.push("states_w", grad)  # lr 0.5 from the saved optimizer: mom = -0.25 - 0.5 * 1
    out = mx.nd.sparse.zeros("row_sparse", (2, 2))
    other.row_sparse_pull("states_w", out=out, row_ids=mx.nd.array([0, 1], dtype="int64"))
    np.testing.assert_allclose(out.asnumpy(), [[1.0, 2.0], [2.25, 3.25]])
    assert other.type == "dist_sync_device" and other.is_capable("optimizer")


def test_a_dist_trainer_with_one_context_and_dense_weights_updates_on_the_kvstore():
    layer = mx.gluon.nn.Dense(1, in_units=2, use_bias=False)
    layer.initialize(init="ones")
    trainer = mx.gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.5},
                               kvstore="dist_sync")
    x = mx.nd.array([[1.0, 2.0]])
    with mx.autograd.record():
        loss = layer(x).sum()
    loss.backward()
    trainer.step(1)
    assert trainer._kvstore.type == "dist_sync" and trainer._update_on_kvstore
    np.testing.assert_allclose(layer.weight.data().asnumpy(), [[0.5, 0.0]])


def test_setting_a_parameter_a_dist_kvstore_updates_is_refused_changing_nothing(tmp_path):
    # MXNet: RuntimeError("Cannot reset distributed KVStore."); one worker's new value would
    # leave the other workers' copies behind
    params = mx.gluon.ParameterDict()
    x = params.get("x", shape=(4, 2), stype="row_sparse")
    params.initialize(ctx=mx.cpu(0), init="ones")
    trainer = mx.gluon.Trainer(params, "sgd", {"learning_rate": 0.1}, kvstore="dist_sync")
    path = str(tmp_path / "x.params")
    params.save(path)
    x.row_sparse_data(mx.nd.arange(0, 4))
    assert trainer._kv_initialized and trainer._update_on_kvstore
    with pytest.raises(RuntimeError, match="Parameter 'x': cannot set its data once the "
                                           "distributed kvstore"):
        x.set_data(mx.nd.zeros((4, 2)).tostype("row_sparse"))
    with pytest.raises(mx.MXNetError, match="dist_sync"):
        params.load(path)
    np.testing.assert_array_equal(x.row_sparse_data(mx.nd.arange(0, 4)).asnumpy(), 1.0)


def test_the_module_example_trains_on_two_processes_unchanged(tmp_path):
    """examples/module_factorization_machine.py with ``--kvstore dist_sync`` under the launcher:
    both workers finish, log MXNet's epoch lines, and their training log loss falls."""
    example = Path(__file__).parent.parent / "examples" / "module_factorization_machine.py"
    done = subprocess.run([sys.executable, "-m", "sparsegen.cli", "launch", "-n", "2", "--",
                           sys.executable, str(example), "--kvstore", "dist_sync",
                           "--samples", "800", "--features", "500", "--factors", "4",
                           "--batch-size", "100", "--epochs", "2", "--lr", "0.05"],
                          env=_env(), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    log = done.stdout + done.stderr
    losses = [float(line.split("=")[1]) for line in log.splitlines()
              if "Train-log_loss" in line]
    assert len(losses) == 4, log[-3000:]  # 2 workers x 2 epochs
    assert sum(losses[2:]) < sum(losses[:2])


def test_the_gluon_example_trains_on_two_processes_unchanged(tmp_path):
    """examples/gluon_wide_deep.py with ``--kvstore dist_sync`` under the launcher (Trainer on the
    dist kvstore, row_sparse gradients of dense weights): both workers finish each epoch and
    their loss falls."""
    example = Path(__file__).parent.parent / "examples" / "gluon_wide_deep.py"
    done = subprocess.run([sys.executable, "-m", "sparsegen.cli", "launch", "-n", "2", "--",
                           sys.executable, str(example), "--kvstore", "dist_sync",
                           "--samples", "2000", "--epochs", "2"],
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # the two workers share one stdout: their lines may interleave, so find the figures
    losses = [float(v) for v in re.findall(r"epoch \d+: loss ([0-9.]+)", done.stdout)]
    assert len(losses) == 4, done.stdout[-3000:]  # 2 workers x 2 epochs
    assert sum(losses[2:]) < sum(losses[:2])
