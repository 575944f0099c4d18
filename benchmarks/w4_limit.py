"""Which random-row limit fits W4 (issue 17): the limit kernels on W4's own rhs and column ids,
interleaved with W4's implementations.

W4 (csr · dense) reads one rhs row per csr entry and sums it into its csr row's output row,
which stays in cache. ``gather`` also writes every gathered row to a fresh array (134 MB that
W4 never writes); ``reduce`` sums each csr row's gathered rows, as W4 does. Both run on W4's
arrays here, so the only difference from W4's kernels is the work: W4 multiplies by the csr
values and reads the csr. Medians go to benchmarks/results/w4-limit.{json,md}.

    PYTHONPATH=. python benchmarks/w4_limit.py [--rounds 21]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

import sparsegen.bench.suite  # noqa: F401 (first: the peers' threads wait passively, as in the suite)
from sparsegen.bench import limits
from sparsegen.bench.harness import cpu_name
from sparsegen.bench.workloads_dot import w4_arrays, w4_dot

OUT = Path(__file__).resolve().parent / "results" / "w4-limit"


def main() -> None:
    """Time the limit kernels and W4's implementations, interleaved, and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    lhs, rhs = w4_arrays()
    workload = w4_dot(arrays=(lhs, rhs))  # the limits read the very arrays the peers read
    ids = lhs.indices.astype(np.int64)
    gathered = np.empty((ids.size, rhs.shape[1]), np.float32)
    sums = np.empty((lhs.shape[0], rhs.shape[1]), np.float32)
    kernels = limits._kernels()
    runs = {"gather limit (rows read and written)": lambda: kernels["gather"](rhs, ids, gathered),
            "reduce limit (rows read and summed)": lambda: kernels["reduce"](rhs, ids, sums)}
    runs.update({name: make() for name, make in workload.impls.items()
                 if name in ("sparsegen", "MKL", "numba+prefetch")})
    for run in runs.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in tqdm(range(args.rounds), desc="W4 limits"):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    median_ms = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    report = {"cpu": cpu_name(), "rounds": args.rounds,
              "median_ms": median_ms}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    reduce_ms = median_ms["reduce limit (rows read and summed)"]
    title = f"# W4's limit kernels on W4's arrays, {report['cpu']}, {args.rounds} rounds"
    lines = [title, "", "| run | median ms | reduce limit / run |", "|---|---:|---:|"]
    lines += [f"| {name} | {ms:.2f} | {reduce_ms / ms:.2f} |" for name, ms in median_ms.items()]
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
