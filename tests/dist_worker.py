"""One worker of the distributed kvstore tests (tests/test_kvstore_dist.py starts several):
``python tests/dist_worker.py SCENARIO OUT_DIR``. Each worker writes what it saw to
``OUT_DIR/<scenario>-<rank>.npz`` (or ``.txt``); the tests compare it with numpy oracles."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

import sparsegen as mx
from sparsegen import autograd, gluon
from sparsegen.kvstore.rendezvous import PeerFailure

N, D, STEPS, BATCH = 23, 4, 3, 5
"""Rows and columns of the embedding, steps, ids per batch."""

ADAM = {"learning_rate": 0.1, "rescale_grad": 0.5, "wd": 0.01}
SGD = {"learning_rate": 0.2, "momentum": 0.9, "wd": 0.1}


def push_gradient(step: int, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The row_sparse gradient (sorted ids, rows) and dense gradient rank ``rank`` pushes."""
    rng = np.random.default_rng(1000 * step + rank)
    ids = np.sort(rng.choice(N, int(rng.integers(0, 8)), replace=False))
    return ids, rng.standard_normal((ids.size, D)).astype(np.float32), \
        rng.standard_normal(D).astype(np.float32)


def asked_rows(step: int, rank: int) -> np.ndarray:
    """The row ids rank ``rank`` pulls after step ``step`` (unsorted, with repeats)."""
    return np.random.default_rng(5000 + 1000 * step + rank).integers(0, N, 6)


def batch(step: int, rank: int) -> np.ndarray:
    """The embedding ids of rank ``rank``'s batch at step ``step``."""
    return np.random.default_rng(9000 + 1000 * step + rank).integers(0, N, BATCH)


def initial(rank: int) -> dict[str, np.ndarray]:
    """Initial values; the embedding's depend on the rank (rank 0's must win)."""
    rng = np.random.default_rng(7)
    return {"raw_emb": rng.standard_normal((N, D)).astype(np.float32) + 100 * rank,
            "raw_bias": rng.standard_normal(D).astype(np.float32) + 100 * rank,
            "emb": rng.standard_normal((N, D)).astype(np.float32) + 100 * rank,
            "dense_w": rng.standard_normal((1, D)).astype(np.float32),
            "dense_b": rng.standard_normal(1).astype(np.float32)}


def train(out: Path) -> None:
    """Raw push / row_sparse_pull with lazy Adam, then gluon.Trainer(kvstore='dist_sync')."""
    kv = mx.kv.create("dist_sync")
    rank, workers = kv.rank, kv.num_workers
    start = initial(rank)
    kv.init("emb", mx.nd.array(start["raw_emb"]).tostype("row_sparse"))
    kv.init("bias", mx.nd.array(start["raw_bias"]))
    kv.init("dense_emb", mx.nd.array(start["raw_emb"]))  # dense, pushed row_sparse gradients
    kv.set_optimizer(mx.optimizer.Adam(**ADAM))
    seen: dict[str, np.ndarray] = {"owned": np.array(kv.owned_rows("emb")),
                                   "workers": np.array(workers), "type": np.array(kv.type)}
    for step in range(STEPS):
        ids, rows, dense = push_gradient(step, rank)
        grad = mx.nd.sparse.row_sparse_array((rows, ids), shape=(N, D))
        kv.push("emb", grad)
        kv.push("bias", mx.nd.array(dense))
        kv.push("dense_emb", grad)
        pulled = mx.nd.sparse.zeros("row_sparse", (N, D))
        kv.row_sparse_pull("emb", out=pulled, row_ids=mx.nd.array(asked_rows(step, rank),
                                                                  dtype="int64"))
        seen[f"pulled_ids_{step}"] = pulled.indices.asnumpy()
        seen[f"pulled_rows_{step}"] = pulled.data.asnumpy()
    whole, bias = mx.nd.zeros((N, D)), mx.nd.zeros((D,))
    kv.pull("emb", out=whole, ignore_sparse=False)
    kv.pull("bias", out=bias)
    dense_emb = mx.nd.zeros((N, D))
    kv.pull("dense_emb", out=dense_emb)
    seen["dense_emb"] = dense_emb.asnumpy()
    seen["raw_emb"], seen["raw_bias"] = whole.asnumpy(), bias.asnumpy()

    emb = gluon.contrib.nn.SparseEmbedding(N, D)
    dense = gluon.nn.Dense(1, in_units=D)
    values = {emb.weight.name: start["emb"], dense.weight.name: start["dense_w"],
              dense.bias.name: start["dense_b"]}
    params = {**emb.collect_params(), **dense.collect_params()}
    for name, param in params.items():
        param.initialize(init="zeros", force_reinit=True)
        param.set_data(mx.nd.array(values[name]))
    trainer = gluon.Trainer(params, "sgd", dict(SGD), kvstore="dist_sync")
    for step in range(STEPS):
        ids = mx.nd.array(batch(step, rank))
        with autograd.record():
            y = dense(emb(ids))
            loss = (0.5 * y * y + y).sum()
        loss.backward()
        trainer.step(BATCH)
    seen["emb"] = emb.weight.row_sparse_data(mx.nd.arange(N)).asnumpy()
    seen["dense_w"] = dense.weight.data().asnumpy()
    seen["dense_b"] = dense.bias.data().asnumpy()
    kv.barrier()
    np.savez(out / f"train-{rank}.npz", **seen)


def kill(out: Path) -> None:
    """Rank 1 dies (SIGKILL) in the middle of training; the others report what they got."""
    kv = mx.kv.create("dist_sync", timeout=float(os.environ["TEST_TIMEOUT"]))
    kv.init("emb", mx.nd.sparse.zeros("row_sparse", (N, D)))
    grad = mx.nd.sparse.row_sparse_array((np.ones((2, D), np.float32), [1, N - 1]), shape=(N, D))
    last = time.monotonic()
    try:
        for step in range(1000):
            if kv.rank == 1 and step == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            kv.push("emb", grad)
            last = time.monotonic()
        message = "no error"
    except PeerFailure as err:
        message = str(err)
    (out / f"kill-{kv.rank}.txt").write_text(f"{time.monotonic() - last:.3f}\n{message}")


def bad(out: Path) -> None:
    """Rank 1 makes bad calls (each raises there, before any collective), then both workers
    push and pull rightly; then they push different keys (both fail, naming the mismatch)."""
    kv = mx.kv.create("dist_sync", timeout=20)
    kv.init("emb", mx.nd.sparse.zeros("row_sparse", (N, D)))
    kv.init("other", mx.nd.sparse.zeros("row_sparse", (N, D)))
    kv.init("bias", mx.nd.zeros((D,)))
    messages = []
    if kv.rank == 1:
        calls = [lambda: kv.push("emb", mx.nd.sparse.zeros("row_sparse", (N, D + 1))),
                 lambda: kv.push("emb", mx.nd.sparse.zeros("row_sparse", (N, D), dtype="float64")),
                 lambda: kv.push("nokey", mx.nd.zeros((D,))),
                 lambda: kv.pull("bias", out=mx.nd.zeros((D + 2,))),
                 lambda: kv.row_sparse_pull("emb", out=mx.nd.sparse.zeros("row_sparse", (N, 1)),
                                            row_ids=mx.nd.array([1], dtype="int64")),
                 lambda: kv.row_sparse_pull("emb", out=mx.nd.sparse.zeros("row_sparse", (N, D)),
                                            row_ids=mx.nd.array([N], dtype="int64"))]
        for call in calls:
            try:
                call()
                messages.append("no error")
            except mx.MXNetError as err:
                messages.append(f"{type(err).__name__}: {err}")
    grad = mx.nd.sparse.row_sparse_array((np.full((1, D), kv.rank + 1, np.float32), [2]),
                                         shape=(N, D))
    kv.push("emb", grad)
    pulled = mx.nd.sparse.zeros("row_sparse", (N, D))
    kv.row_sparse_pull("emb", out=pulled, row_ids=mx.nd.array([2, 3], dtype="int64"))
    messages.append("rows " + " ".join(f"{v:g}" for v in pulled.asnumpy()[2:4].ravel()))
    try:
        kv.push("emb" if kv.rank == 0 else "other", grad)
        messages.append("no error")
    except PeerFailure as err:
        messages.append(f"{type(err).__name__}: {err}")
    (out / f"bad-{kv.rank}.txt").write_text("\n".join(messages))


def slow(out: Path) -> None:
    """Rank 1 is alive but late (longer than the timeout) to a push; both report what they
    got, with the seconds the push took."""
    kv = mx.kv.create("dist_sync", timeout=float(os.environ["TEST_TIMEOUT"]))
    kv.init("emb", mx.nd.sparse.zeros("row_sparse", (N, D)))
    if kv.rank == 1:
        time.sleep(3 * float(os.environ["TEST_TIMEOUT"]))
    start = time.monotonic()
    try:
        kv.push("emb", mx.nd.sparse.zeros("row_sparse", (N, D)))
        message = "no error"
    except PeerFailure as err:
        message = str(err)
    (out / f"slow-{kv.rank}.txt").write_text(f"{time.monotonic() - start:.3f}\n{message}")


THRESHOLD, RATE = 0.5, 2.0
"""The 2-bit compression threshold and the Test optimizer's rescale_grad of ``compressed``."""


def compressed_push(step: int, rank: int) -> np.ndarray:
    """The dense float32 gradient rank ``rank`` pushes at step ``step`` of ``compressed``."""
    return np.random.default_rng(3000 + 1000 * step + rank).uniform(-1, 1, (N, D)).astype(
        np.float32)


def compressed(out: Path) -> None:
    """2-bit compressed pushes to a dense key with MXNet's Test optimizer on the store; each
    step's pulled value, the bytes sent, and a refused row_sparse push."""
    kv = mx.kv.create("dist_sync")
    kv.set_gradient_compression({"type": "2bit", "threshold": THRESHOLD})
    kv.set_optimizer(mx.optimizer.create("test", rescale_grad=RATE))
    kv.init("w", mx.nd.zeros((N, D)))
    kv.init("rsp", mx.nd.zeros((N, D)).tostype("row_sparse"))
    seen: dict[str, np.ndarray] = {}
    for step in range(STEPS):
        before = kv.bytes_sent
        kv.push("w", mx.nd.array(compressed_push(step, kv.rank)))
        seen[f"bytes_{step}"] = np.array(kv.bytes_sent - before)
        value = mx.nd.zeros((N, D))
        kv.pull("w", out=value)
        seen[f"w_{step}"] = value.asnumpy()
    try:
        kv.push("rsp", mx.nd.ones((N, D)).tostype("row_sparse"))
    except mx.MXNetError as error:
        seen["refused"] = np.array(str(error))
    np.savez(out / f"compressed-{kv.rank}.npz", **seen)


def module_data(rank: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank ``rank``'s csr features (``STEPS * BATCH`` rows over ``N`` columns, a few non-zeros
    each) as a dense numpy array, and its labels."""
    rng = np.random.default_rng(300 + rank)
    x = (rng.random((STEPS * BATCH, N)) < 0.15) * rng.standard_normal((STEPS * BATCH, N))
    return x.astype(np.float32), rng.standard_normal(STEPS * BATCH).astype(np.float32)


def module(out: Path) -> None:
    """Module.fit of a sparse linear regression (csr data, row_sparse weight pulled per batch)
    with ``kvstore='dist_sync'``, each rank on its own data; the weights after one epoch."""
    rank = int(os.environ.get("RANK", "0"))
    x, y = module_data(rank)
    start = initial(0)
    data = mx.sym.Variable("data", stype="csr")
    weight = mx.sym.Variable("w", shape=(N, 1), stype="row_sparse")
    bias = mx.sym.Variable("b", shape=(1,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias)
    net = mx.sym.LinearRegressionOutput(pred, mx.sym.Variable("label"), name="out")
    train = mx.io.NDArrayIter(mx.nd.array(x).tostype("csr"), mx.nd.array(y), BATCH,
                              last_batch_handle="discard", label_name="label")
    mod = mx.mod.Module(net, data_names=["data"], label_names=["label"])
    args = {"w": mx.nd.array(start["emb"][:, :1]).tostype("row_sparse"),
            "b": mx.nd.array(start["dense_b"])}
    mod.fit(train, num_epoch=1, kvstore="dist_sync", optimizer="sgd",
            optimizer_params=dict(SGD), arg_params=args,
            sparse_row_id_fn=lambda batch: {"w": batch.data[0].indices})
    params, _ = mod.get_params()
    np.savez(out / f"module-{rank}.npz", w=params["w"].asnumpy(), b=params["b"].asnumpy(),
             workers=np.array(mod._kvstore.num_workers))


if __name__ == "__main__":
    scenarios = {"train": train, "compressed": compressed, "kill": kill, "bad": bad,
                 "slow": slow, "module": module}
    scenarios[sys.argv[1]](Path(sys.argv[2]))
