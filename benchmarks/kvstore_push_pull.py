"""Local kvstore throughput on one row_sparse embedding: sparsegen against MXNet 1.9.1.

One step (the kvstore part of a sparse training step on two devices' gradients): push two
row_sparse gradients of ``ROWS`` rows each (random rows of a 1,000,000 x 64 float32 weight;
summed on the rsp-sum kernel) to a store with lazy SGD, then ``row_sparse_pull`` the next
batch's ``2 * ROWS`` rows. The same code runs with ``import sparsegen as mx`` and ``import
mxnet as mx``, each run a fresh process with one compute thread; implementations alternate,
``--rounds`` rounds; medians go to benchmarks/results/kvstore.{json,md}.

    PYTHONPATH=. python benchmarks/kvstore_push_pull.py [--rounds 3] [--steps 50] [--mxnet PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FEATURES, EMBED, ROWS = 1_000_000, 64, 4096

RUN = """
import time
import numpy as np
import {module} as mx
rng = np.random.default_rng(0)
def grad():
    ids = np.sort(rng.choice({features}, {rows}, replace=False))
    return mx.nd.sparse.row_sparse_array(
        (rng.standard_normal(({rows}, {embed})).astype(np.float32), ids), shape=({features}, {embed}))
grads = [(grad(), grad()) for _ in range(8)]
pulls = [mx.nd.array(np.concatenate([g[0].indices.asnumpy(), g[1].indices.asnumpy()]))
         for g in grads]
kv = mx.kv.create("local")
kv.init(0, mx.nd.ones(({features}, {embed})).tostype("row_sparse"))  # every row stored
kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, lazy_update=True))
out = mx.nd.sparse.zeros("row_sparse", ({features}, {embed}))
def step(k):
    kv.push(0, list(grads[k % 8]))
    kv.row_sparse_pull(0, out=out, row_ids=pulls[(k + 1) % 8])
    out.data.wait_to_read()
for k in range(5):
    step(k)
start = time.perf_counter()
for k in range({steps}):
    step(k)
print((time.perf_counter() - start) / {steps})
"""


def _run(python: str, module: str, steps: int) -> float:
    code = RUN.format(module=module, features=FEATURES, embed=EMBED, rows=ROWS, steps=steps)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TVM_NUM_THREADS": "1",
           "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    if result.returncode:
        raise SystemExit(f"{module} run failed:\n{result.stderr[-3000:]}")
    return float(result.stdout.strip().splitlines()[-1])


def main() -> None:
    """Run the rounds and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--mxnet", default="/work/mxvenv/bin/python")
    args = parser.parse_args()
    times: dict[str, list[float]] = {"sparsegen": [], "mxnet": []}
    for _ in range(args.rounds):
        times["sparsegen"].append(_run(sys.executable, "sparsegen", args.steps))
        times["mxnet"].append(_run(args.mxnet, "mxnet", args.steps))
    medians = {name: statistics.median(values) for name, values in times.items()}
    results = {"workload": f"push 2 x {ROWS} rows + row_sparse_pull {2 * ROWS} rows of a "
                           f"{FEATURES} x {EMBED} float32 weight, lazy SGD, one thread",
               "seconds_per_step": times, "median": medians,
               "speedup_vs_mxnet": medians["mxnet"] / medians["sparsegen"]}
    out = ROOT / "benchmarks" / "results"
    (out / "kvstore.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "kvstore.md").write_text(
        "# Local kvstore: push + row_sparse_pull\n\n" + results["workload"] + "\n\n"
        "| implementation | median ms / step |\n|---|---|\n"
        + "".join(f"| {name} | {1000 * value:.2f} |\n" for name, value in medians.items())
        + f"\nsparsegen / MXNet speed: {results['speedup_vs_mxnet']:.2f}x\n")
    print(json.dumps(results["median"]), f"{results['speedup_vs_mxnet']:.2f}x")


if __name__ == "__main__":
    main()
