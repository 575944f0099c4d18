"""Module.fit throughput of two sparse models: sparsegen against MXNet 1.9.1, the same script.

The models (issue 15's benchmark), on one synthetic libsvm file read by mx.io.LibSVMIter
(``--samples`` samples over ``--features`` hashed features, about 30 per sample, batches of
``--batch``):

- ``fm``: the factorization machine of examples/module_factorization_machine.py (row_sparse
  ``w`` and ``v`` of ``--factors`` columns, logistic output, lazy Adam);
- ``linear``: a sparse linear classifier, softmax(dot(csr, w) + b) with a row_sparse ``w`` of
  two columns, lazy SGD with momentum.

Both train with ``Module.fit`` on a local kvstore, ``sparse_row_id_fn`` pulling the rows of the
next batch (``Module.prepare``). Each run is a fresh process: it builds the module, trains one
warm-up epoch, then times ``--epochs`` epochs (wall and CPU time of the process). The
implementations alternate, ``--rounds`` rounds; medians go to
benchmarks/results/module-fit.{json,md,png}. Run with TVM_NUM_THREADS=1 (the default here) so the
CPU time compares one thread with one thread.

    PYTHONPATH=. python benchmarks/module_fit.py [--rounds 5] [--mxnet PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from fresh_runs import alternate, one_run

from sparsegen.bench.harness import cpu_description
from sparsegen.bench.training import plot

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = """
import logging, resource, time, warnings
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
import {module} as mx
FEATURES, FACTORS = {features}, {factors}
x = mx.sym.Variable("data", stype="csr")
if "{model}" == "fm":
    w = mx.sym.Variable("w", shape=(FEATURES, 1), stype="row_sparse", init=mx.init.Normal(0.01))
    v = mx.sym.Variable("v", shape=(FEATURES, FACTORS), stype="row_sparse",
                        init=mx.init.Normal(0.01))
    w0 = mx.sym.Variable("w0", shape=(1,), init=mx.init.Zero())
    linear = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), w0)
    pairs = 0.5 * mx.sym.sum(mx.sym.square(mx.sym.sparse.dot(x, v)), axis=1, keepdims=True) \\
        - 0.5 * mx.sym.sparse.dot(mx.sym.square(x),
                                  mx.sym._internal._square_sum(v, axis=1, keepdims=True))
    net = mx.sym.LogisticRegressionOutput(linear + pairs, mx.sym.Variable("softmax_label"))
    sparse, metric = ["w", "v"], "mse"
    optimizer, params = "adam", {{"learning_rate": 0.01}}
else:
    w = mx.sym.Variable("fc_weight", shape=(FEATURES, 2), stype="row_sparse")
    b = mx.sym.Variable("fc_bias", shape=(2,))
    net = mx.sym.SoftmaxOutput(mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), b),
                               name="softmax")
    sparse, metric = ["fc_weight"], "acc"
    optimizer, params = "sgd", {{"learning_rate": 0.1, "momentum": 0.9}}
data = mx.io.LibSVMIter(data_libsvm="{path}", data_shape=(FEATURES,), batch_size={batch})
mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
kwargs = dict(kvstore=mx.kv.create("local"), optimizer=optimizer, optimizer_params=params,
              eval_metric=metric, initializer=mx.init.Normal(0.01),
              sparse_row_id_fn=lambda batch: {{n: batch.data[0].indices for n in sparse}})
mod.fit(data, num_epoch=1, **kwargs)
mx.nd.waitall()
t, c = time.perf_counter(), time.process_time()
mod.fit(data, begin_epoch=1, num_epoch=1 + {epochs}, **kwargs)
mx.nd.waitall()
print(time.perf_counter() - t, time.process_time() - c,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def write_libsvm(path: str, samples: int, features: int, per_sample: int) -> None:
    """Samples of power-law hashed features with labels from a hidden linear model."""
    rng = np.random.default_rng(0)
    hidden = rng.normal(0, 1, features)
    with open(path, "w") as f:
        for _ in range(samples):
            ids = np.unique(np.minimum(rng.zipf(1.2, per_sample), features) - 1)
            f.write(f"{int(hidden[ids].sum() > 0)} " + " ".join(f"{i}:1" for i in ids) + "\n")


def main() -> None:
    """Write the data, alternate fresh runs per model and implementation, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=100_000)
    parser.add_argument("--factors", type=int, default=16)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--per-sample", type=int, default=30)
    parser.add_argument("--mxnet", default="/work/mxvenv/bin/python",
                        help="a Python with mxnet==1.9.1 (skipped if missing)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args()
    threads = int(os.environ.get("TVM_NUM_THREADS", "1"))
    path = os.path.join(tempfile.mkdtemp(), "bench.libsvm")
    write_libsvm(path, args.samples, args.features, args.per_sample)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TVM_NUM_THREADS": str(threads),
           "OMP_NUM_THREADS": str(threads), "MXNET_CPU_WORKER_NTHREADS": str(threads),
           "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"}
    libraries = {"sparsegen": ("sparsegen", sys.executable)}
    if Path(args.mxnet).exists():
        libraries["MXNet 1.9.1"] = ("mxnet", args.mxnet)
    runs = {f"{model} {name}": (python, PROGRAM.format(
        module=module, model=model, path=path, features=args.features, factors=args.factors,
        batch=args.batch, epochs=args.epochs))
        for model in ("fm", "linear") for name, (module, python) in libraries.items()}
    samples = args.samples // args.batch * args.batch * args.epochs
    for name in runs:  # warm the kernel cache (sparsegen) and the page cache
        if name.endswith("sparsegen"):
            one_run(*runs[name], env)
    load_before = os.getloadavg()[0]
    results = alternate(runs, args.rounds, env, lambda name, r: (
        f"{samples / r[0]:,.0f} samples/s wall, {samples / r[1]:,.0f} per CPU-second, "
        f"peak RSS {r[2]:,.0f} MB"))
    medians = {name: {"samples_per_s": statistics.median(samples / r[0] for r in v),
                      "samples_per_cpu_s": statistics.median(samples / r[1] for r in v),
                      "peak_rss_mb": statistics.median(r[2] for r in v)}
               for name, v in results.items()}
    load = (load_before, os.getloadavg()[0])
    result = {"cpu": cpu_description(), "threads": threads, "rounds": args.rounds,
              "load_average": load,
              "epochs": args.epochs, "samples": args.samples, "features": args.features,
              "factors": args.factors, "batch": args.batch, "per_sample": args.per_sample,
              "runs": medians,
              "every_run": {name: [{"seconds": r[0], "cpu_seconds": r[1], "peak_rss_mb": r[2]}
                                   for r in v] for name, v in results.items()}}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "module-fit.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Module.fit throughput: factorization machine and sparse linear classifier", "",
             f"CPU: {cpu_description()}, {threads} thread(s) (TVM_NUM_THREADS, "
             "OMP_NUM_THREADS, MXNET_CPU_WORKER_NTHREADS); the machine is shared by several "
             "engineers, so wall times are noisy: the CPU-time column is the steadier one "
             f"(load average {load[0]:.1f} before the runs, {load[1]:.1f} after).",
             f"{args.samples:,} samples over {args.features:,} features (~{args.per_sample} per "
             f"sample), batch {args.batch}, FM with {args.factors} factors; {args.rounds} "
             f"rounds of {args.epochs} timed epochs after one warm-up epoch, implementations "
             "alternating, each run a fresh process.", "",
             "| model | implementation | samples/s (wall) | samples per CPU-second | "
             "peak RSS MB |", "|---|---|---:|---:|---:|"]
    for name, m in medians.items():
        model, implementation = name.split(" ", 1)
        lines.append(f"| {model} | {implementation} | {m['samples_per_s']:,.0f} | "
                     f"{m['samples_per_cpu_s']:,.0f} | {m['peak_rss_mb']:,.0f} |")
    if "MXNet 1.9.1" in libraries:
        lines.append("")
        for model in ("fm", "linear"):
            ours, theirs = medians[f"{model} sparsegen"], medians[f"{model} MXNet 1.9.1"]
            wall = ours["samples_per_s"] / theirs["samples_per_s"]
            cpu = ours["samples_per_cpu_s"] / theirs["samples_per_cpu_s"]
            lines.append(f"- {model}: sparsegen / MXNet {wall:.2f}x (wall), {cpu:.2f}x (CPU time)")
    (out / "module-fit.md").write_text("\n".join(lines) + "\n")
    write_plot(result, out / "module-fit.png")
    print("\n".join(lines))


def write_plot(result: dict, path: Path) -> None:
    """The medians of ``result`` (module-fit.json) as bars, one pair per model and
    implementation."""
    by = {key: {name.replace(" ", "\n", 1): m[key] for name, m in result["runs"].items()}
          for key in ("samples_per_s", "samples_per_cpu_s")}
    plot({**by, "cpu": result["cpu"], "threads": result["threads"]}, path, "Module.fit")


if __name__ == "__main__":
    main()
