"""Time sparsegen's own implementation of each WORKLOADS.md workload in two source trees,
interleaved: one worker process per tree, rounds alternating between them, so that both see the
same machine noise. For refactors that must not change speed.

    python benchmarks/compare_trees.py BEFORE_TREE AFTER_TREE --out benchmarks/results/NAME
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

from tqdm import tqdm

WORKER = r"""
import importlib, json, sys, time
from sparsegen.bench.suite import WORKLOADS

def torch_step(wid):
    # one optimizer.step() of sparsegen.torch on benchmarks/torch_embedding.py's model: an
    # EmbeddingBag(1,000,000, 64, sum, sparse) and batches of 4,096 x 20 ids; it returns the
    # step's CPU seconds (the forward and backward passes are torch's, outside the time)
    import torch
    import sparsegen.torch as st
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.EmbeddingBag(1_000_000, 64, mode="sum", sparse=True)
    make = {"T1": lambda p: st.Adam(p, lr=1e-3, lazy=True),
            "T2": lambda p: st.Adagrad(p, lr=1e-2)}
    optimizer = make[wid](model.parameters())
    gen = torch.Generator().manual_seed(0)
    batches = [torch.randint(0, 1_000_000, (4096, 20), generator=gen) for _ in range(4)]
    count = [0]

    def run():
        optimizer.zero_grad()
        (model(batches[count[0] % 4]) ** 2).mean().backward()
        count[0] += 1
        start = time.thread_time()
        optimizer.step()
        return time.thread_time() - start

    return run

runners = {}
for line in sys.stdin:
    wid, calls = line.split()
    if wid not in runners:
        if wid in TORCH:
            runners[wid] = torch_step(wid)
        else:
            module, factory = WORKLOADS[wid].split(":")
            workload = getattr(importlib.import_module(module), factory)(False)
            runners[wid] = workload.impls["sparsegen"]()
        runners[wid]()
        runners[wid]()
    run, times = runners[wid], []
    for _ in range(int(calls)):
        start = time.perf_counter()
        took = run()
        times.append(took if isinstance(took, float) else time.perf_counter() - start)
    print(json.dumps(times), flush=True)
"""

TORCH = {"T1": "sparsegen.torch.Adam(lazy=True).step()", "T2": "sparsegen.torch.Adagrad.step()"}
"""Workloads beyond WORKLOADS.md: a sparsegen.torch optimizer step on the EmbeddingBag of
benchmarks/torch_embedding.py (1,000,000 x 64, batches of 4,096 x 20 ids), in CPU seconds."""

CALLS = {"W8": 2000}
"""Calls per round (default 3): microsecond workloads need many."""


def _worker(tree: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree), "TVM_NUM_THREADS": os.environ.get(
        "TVM_NUM_THREADS", str(os.cpu_count()))}
    code = f"TORCH = {sorted(TORCH)!r}\n{WORKER}"
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env, cwd=tree)


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main() -> None:
    """Run the comparison and write ``<out>.json`` and ``<out>.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6,W7,W8",
                        help="WORKLOADS.md ids, and " + ", ".join(f"{k}: {v}"
                                                                 for k, v in TORCH.items()))
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    workers = {name: _worker(tree) for name, tree in trees.items()}
    ids = args.workloads.split(",")
    times: dict[str, dict[str, list[float]]] = {w: {n: [] for n in trees} for w in ids}
    with tqdm(total=args.rounds * len(ids) * len(trees), desc="before/after") as bar:
        for round_ in range(args.rounds):
            for wid in ids:
                order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
                for name in order:
                    workers[name].stdin.write(f"{wid} {CALLS.get(wid, 3)}\n")
                    workers[name].stdin.flush()
                    times[wid][name].extend(json.loads(workers[name].stdout.readline()))
                    bar.update()
    for worker in workers.values():
        worker.stdin.close()
        worker.wait()
    report = {
        "cpu": _cpu(), "cores": os.cpu_count(), "rounds": args.rounds,
        "trees": {name: str(tree) for name, tree in trees.items()},
        "median_ms": {w: {n: statistics.median(t) * 1e3 for n, t in per.items()}
                      for w, per in times.items()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [f"# before / after, {report['cpu']}, {report['cores']} cores, "
             f"{args.rounds} interleaved rounds", "",
             "| workload | before (ms) | after (ms) | after / before |", "|---|---|---|---|"]
    for wid, ms in report["median_ms"].items():
        lines.append(f"| {wid} | {ms['before']:.4g} | {ms['after']:.4g} | "
                     f"{ms['after'] / ms['before']:.2f} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    _plot(report, args.out.with_suffix(".png"))
    print("\n".join(lines))


def _plot(report: dict, path: Path) -> None:
    """after / before per workload as bars around 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = list(report["median_ms"])
    ratios = [report["median_ms"][w]["after"] / report["median_ms"][w]["before"] for w in ids]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(ids, ratios, color=["tab:green" if r <= 1 else "tab:red" for r in ratios])
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_ylabel("after / before median time (lower is faster)")
    ax.set_title(f"{report['cpu']}, {report['cores']} cores, {report['rounds']} interleaved rounds",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
