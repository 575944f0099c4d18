"""Training throughput and peak memory of one Gluon sparse model: sparsegen, MXNet 1.9.1, PyTorch.

The model (issue 14's benchmark): csr batches of 512 samples with about 40 non-zeros each over
1,000,000 features; a 1,000,000 x 64 embedding summed per sample (`dot(csr, W)` with a
row_sparse gradient; PyTorch: `nn.EmbeddingBag(mode='sum', sparse=True)`), two dense layers on
top (64 -> 64 relu -> 1), sigmoid binary cross-entropy, lazy Adam (PyTorch: `SparseAdam` for
the embedding, `Adam` for the dense layers). The sparsegen and MXNet runs are the same Gluon
code with `import sparsegen as mx` or `import mxnet as mx`.

Each run is a fresh process (so its peak RSS is its own): it builds the batches, trains
``--warmup`` steps, then times ``--steps`` steps. Implementations alternate, ``--rounds``
rounds; medians go to benchmarks/results/gluon-train.{json,md}.

    PYTHONPATH=. python benchmarks/gluon_train.py [--rounds 3] [--steps 60] [--mxnet PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path

from fresh_runs import alternate, cpu_name, one_run

ROOT = Path(__file__).resolve().parent.parent
FEATURES, EMBED, BATCH, PER_SAMPLE = 1_000_000, 64, 512, 40

DATA = """
import resource, time
import numpy as np
import scipy.sparse
rng = np.random.default_rng(0)
def batch(k):
    cols = np.minimum(rng.zipf(1.2, {batch} * {per}), {features}) - 1
    rows = np.repeat(np.arange({batch}), {per})
    x = scipy.sparse.csr_matrix((np.ones(cols.size, np.float32), (rows, cols)),
                                shape=({batch}, {features}))
    x.sum_duplicates()
    x.data[:] = 1
    y = (rng.random({batch}) < 0.3).astype(np.float32)
    return x, y
batches = [batch(k) for k in range(16)]
"""

GLUON = DATA + """
import {module} as mx
gluon, nn, autograd = mx.gluon, mx.gluon.nn, mx.autograd
class Model(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.embed = self.params.get("embed", shape=({features}, {embed}),
                                         grad_stype="row_sparse")
            self.mlp = nn.HybridSequential()
            self.mlp.add(nn.Dense({embed}, activation="relu"), nn.Dense(1))
    def hybrid_forward(self, F, x, embed):
        return self.mlp(F.sparse.dot(x, embed))
model = Model()
model.initialize(mx.init.Normal(0.01))
trainer = gluon.Trainer(model.collect_params(), "adam", {{"learning_rate": 0.001}})
loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
data = [(mx.nd.sparse.csr_matrix(x), mx.nd.array(y)) for x, y in batches]
def step(k):
    x, y = data[k % len(data)]
    with autograd.record():
        loss = loss_fn(model(x), y)
    loss.backward()
    trainer.step({batch})
    return loss
for k in range({warmup}):
    step(k).asnumpy()
t = time.perf_counter()
for k in range({steps}):
    last = step(k)
last.asnumpy()
mx.nd.waitall()
"""

TORCH = DATA + """
import torch
torch.manual_seed(0)
torch.set_num_threads({threads})
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.EmbeddingBag({features}, {embed}, mode="sum", sparse=True)
        torch.nn.init.normal_(self.embed.weight, std=0.01)
        self.mlp = torch.nn.Sequential(torch.nn.Linear({embed}, {embed}), torch.nn.ReLU(),
                                       torch.nn.Linear({embed}, 1))
    def forward(self, ids, offsets):
        return self.mlp(self.embed(ids, offsets)).squeeze(1)
model = Model()
sparse_opt = torch.optim.SparseAdam([model.embed.weight], lr=0.001)
dense_opt = torch.optim.Adam(model.mlp.parameters(), lr=0.001)
loss_fn = torch.nn.BCEWithLogitsLoss()
data = [(torch.from_numpy(x.indices.astype(np.int64)), torch.from_numpy(x.indptr[:-1].astype(np.int64)),
         torch.from_numpy(y)) for x, y in batches]
def step(k):
    ids, offsets, y = data[k % len(data)]
    sparse_opt.zero_grad(); dense_opt.zero_grad()
    loss = loss_fn(model(ids, offsets), y)
    loss.backward()
    sparse_opt.step(); dense_opt.step()
    return loss
for k in range({warmup}):
    step(k).item()
t = time.perf_counter()
for k in range({steps}):
    last = step(k)
last.item()
"""

REPORT = """
seconds = time.perf_counter() - t
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--mxnet", default="/work/mxvenv/bin/python",
                        help="a Python with mxnet==1.9.1 (skipped if missing)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args()
    threads = int(os.environ.get("TVM_NUM_THREADS", os.cpu_count() or 1))
    fields = dict(features=FEATURES, embed=EMBED, batch=BATCH, per=PER_SAMPLE,
                  warmup=args.warmup, steps=args.steps, threads=threads)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TVM_NUM_THREADS": str(threads),
           "OMP_NUM_THREADS": str(threads), "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"}
    runs = {"sparsegen": (sys.executable, GLUON.format(module="sparsegen", **fields)),
            "PyTorch": (sys.executable, TORCH.format(**fields))}
    if Path(args.mxnet).exists():
        runs["MXNet 1.9.1"] = (args.mxnet, GLUON.format(module="mxnet", **fields))
    runs = {name: (python, code + REPORT) for name, (python, code) in runs.items()}
    one_run(*runs["sparsegen"], env)  # warm the kernel cache
    times = alternate(runs, args.rounds, env, lambda name, r: (
        f"{BATCH * args.steps / r[0]:,.0f} samples/s, peak RSS {r[1]:,.0f} MB"))
    result = {
        "cpu": platform.processor() or platform.machine(), "threads": threads,
        "model": f"{FEATURES:,} x {EMBED} embedding (row_sparse grad), batch {BATCH}, ~{PER_SAMPLE} "
                 f"non-zeros per sample, Dense({EMBED}, relu), Dense(1), sigmoid BCE, lazy Adam",
        "steps": args.steps, "rounds": args.rounds,
        "samples_per_s": {n: statistics.median(BATCH * args.steps / s for s, _ in v)
                          for n, v in times.items()},
        "peak_rss_mb": {n: statistics.median(p for _, p in v) for n, v in times.items()},
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gluon-train.json").write_text(json.dumps(result, indent=2) + "\n")
    best_peer = max(v for n, v in result["samples_per_s"].items() if n != "sparsegen")
    lines = [f"# Gluon sparse training: {result['model']}", "",
             f"CPU: {cpu_name()} ({threads} threads); {args.rounds} rounds of {args.steps} "
             "timed steps each, implementations alternating, each run a fresh process.", "",
             "| implementation | samples/s (median) | peak RSS MB |", "|---|---:|---:|"]
    for name in runs:
        lines.append(f"| {name} | {result['samples_per_s'][name]:,.0f} | "
                     f"{result['peak_rss_mb'][name]:,.0f} |")
    lines += ["", f"sparsegen / fastest peer: {result['samples_per_s']['sparsegen'] / best_peer:.2f}x"]
    (out / "gluon-train.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
