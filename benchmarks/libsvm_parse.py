"""LibSVMIter parse rate: MXNet 1.9.1's C++ iterator against sparsegen's, on one libsvm file.

Writes a libsvm file (default 200,000 rows of ~50 features among 1,000,000 columns, ~100 MB,
in /tmp), then times a full pass (construct the iterator, read every batch) of each, each run
in a fresh subprocess timed from after its import, the two alternating, and reports medians in
benchmarks/results/libsvm-parse.{json,md}. sparsegen's kernel cache is warmed first, so its
time is the parse and the batches, not a kernel build.

    PYTHONPATH=. python benchmarks/libsvm_parse.py [--rows N] [--runs R] [--mxnet PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PASS = """
import time
import {module} as mx
t = time.perf_counter()
it = mx.io.LibSVMIter(data_libsvm={path!r}, data_shape=({cols},), batch_size={batch})
rows = 0
for batch in it:
    rows += batch.data[0].shape[0] - batch.pad
    batch.data[0].indices.asnumpy()
print(time.perf_counter() - t, rows)
"""


def write_file(path: Path, rows: int, cols: int, nnz: int, seed: int = 0) -> None:
    """A libsvm file of ``rows`` lines of about ``nnz`` sorted features each."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as out:
        for start in range(0, rows, 10_000):
            lines = []
            for _ in range(min(10_000, rows - start)):
                k = int(rng.integers(nnz // 2, 3 * nnz // 2 + 1))
                idx = np.unique(rng.integers(0, cols, k))
                val = rng.standard_normal(idx.size).astype(np.float32)
                label = int(rng.integers(0, 2))
                lines.append(f"{label} " + " ".join(f"{i}:{v:.6g}" for i, v in zip(idx, val)))
            out.write("\n".join(lines) + "\n")


def one_pass(python: str, module: str, path: Path, cols: int, batch: int, env: dict[str, str]
             ) -> tuple[float, int]:
    """(seconds, rows) of one full pass in a fresh process, timed from after the import."""
    code = PASS.format(module=module, path=str(path), cols=cols, batch=batch)
    out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{module} pass failed:\n{out.stderr[-2000:]}")
    seconds, rows = out.stdout.split()[-2:]
    return float(seconds), int(rows)


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo, and the logical CPUs this process may use."""
    model = platform.processor()
    try:
        model = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model} ({len(os.sched_getaffinity(0))} logical CPUs)"


def main() -> None:
    """Write the file, time both iterators alternately, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--cols", type=int, default=1_000_000)
    parser.add_argument("--nnz", type=int, default=50)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mxnet", default="/work/mxvenv/bin/python")
    parser.add_argument("--file", default="/tmp/libsvm-parse-bench.libsvm")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "libsvm-parse"))
    args = parser.parse_args()
    path = Path(args.file)
    if not path.exists():
        write_file(path, args.rows, args.cols, args.nnz)
    size = path.stat().st_size
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.setdefault("TVM_NUM_THREADS", str(len(os.sched_getaffinity(0))))
    sides = {"mxnet": (args.mxnet, "mxnet"), "sparsegen": (sys.executable, "sparsegen")}
    one_pass(sys.executable, "sparsegen", path, args.cols, args.batch, env)  # warm the cache
    times: dict[str, list[float]] = {k: [] for k in sides}
    rows = {}
    for _ in range(args.runs):
        for name, (python, module) in sides.items():
            seconds, rows[name] = one_pass(python, module, path, args.cols, args.batch, env)
            times[name].append(seconds)
    if rows["mxnet"] != rows["sparsegen"]:
        raise RuntimeError(f"the iterators read different row counts: {rows}")
    medians = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "cpu": cpu_name(), "file": str(path), "bytes": size, "rows": rows["sparsegen"],
        "cols": args.cols, "batch_size": args.batch, "runs": args.runs,
        "tvm_num_threads": env["TVM_NUM_THREADS"], "seconds": times, "median_seconds": medians,
        "median_mb_per_s": {k: size / 1e6 / v for k, v in medians.items()},
        "speedup": medians["mxnet"] / medians["sparsegen"],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    rate = result["median_mb_per_s"]
    out.with_suffix(".md").write_text(
        f"# LibSVMIter: one full pass ({result['date']})\n\n"
        f"CPU: {result['cpu']}. File: {size / 1e6:.1f} MB, {result['rows']} rows, "
        f"{args.cols} columns, batch_size {args.batch}; {args.runs} runs each, alternating, "
        f"each in a fresh process, timed from after the import; "
        f"TVM_NUM_THREADS={env['TVM_NUM_THREADS']}, MXNet with its default threads.\n\n"
        "| iterator | median s | MB/s |\n|---|---|---|\n"
        f"| MXNet 1.9.1 `mx.io.LibSVMIter` (C++) | {medians['mxnet']:.3f} | {rate['mxnet']:.0f} |\n"
        f"| sparsegen `mx.io.LibSVMIter` | {medians['sparsegen']:.3f} | "
        f"{rate['sparsegen']:.0f} |\n\n"
        f"sparsegen / MXNet speed: {result['speedup']:.2f}x\n"
    )
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
