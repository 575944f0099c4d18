"""The benchmark suite: WORKLOADS.md's workloads in one run, with bandwidth, tables and a plot."""

from __future__ import annotations

import importlib
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from . import harness, stream

# PyTorch's OpenMP threads spin after each op and starve TVM's pool when the two interleave
# (one torch call measured 170 ms instead of 0.4 ms); passive waiting keeps the comparison fair.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

WORKLOADS: dict[str, str] = {
    "W1": "sparsegen.bench.workloads_storage:w1_retain",
    "W2": "sparsegen.bench.workloads_optim:w2_sgd",
    "W3": "sparsegen.bench.workloads_optim:w3_adam",
    "W4": "sparsegen.bench.workloads_dot:w4_dot",
    "W5": "sparsegen.bench.workloads_dot:w5_dot_t",
    "W6": "sparsegen.bench.workloads_elemwise:w6_add",
    "W7": "sparsegen.bench.workloads_storage:w7_cast",
    "W8": "sparsegen.bench.workloads_optim:w8_tiny",
}
"""Workload id -> ``module:factory``; a factory takes ``quick`` and returns a harness Workload."""


def factory(workload_id: str) -> Any:
    """The factory of one workload."""
    module, _, name = WORKLOADS[workload_id].partition(":")
    return getattr(importlib.import_module(module), name)


def _thp() -> str:
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
        return text[text.index("[") + 1 : text.index("]")]
    except (OSError, ValueError):
        return "unknown"


def run(ids: list[str], quick: bool = False, progress: bool | None = None) -> dict[str, Any]:
    """Measure the machine's bandwidth, then every workload in ``ids``; returns the results."""
    bar = tqdm(total=len(ids) + 1, desc="benchmarks", unit="step",
               disable=None if progress is None else not progress)
    bar.set_postfix_str("memory bandwidth", refresh=True)
    bandwidth = stream.measure(1 << 22, 3) if quick else stream.measure()
    bar.update(1)
    results = []
    for workload_id in ids:
        bar.set_postfix_str(workload_id, refresh=True)
        workload = factory(workload_id)(quick)
        repeats = 3 if quick else 15
        results.append(harness.run(workload, repeats=repeats, warmup=1 if quick else 2).as_dict())
        bar.update(1)
    bar.close()
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cpu": platform.processor() or platform.machine(), "threads": _threads(),
                    "transparent_hugepages": _thp()},
        "quick": quick,
        "bandwidth_gbps": bandwidth,
        "workloads": results,
    }


def _threads() -> int:
    from ..config import num_threads

    return num_threads()


def markdown(report: dict[str, Any]) -> str:
    """A table per workload: median ms, GB/s, fraction of the triad bandwidth, ratio to each peer."""
    limit = report["bandwidth_gbps"]["triad"]
    bw = report["bandwidth_gbps"]
    lines = [
        f"# sparsegen benchmarks ({report['date']})",
        "",
        f"Machine: {report['machine']['cpu']}, {report['machine']['threads']} threads, transparent "
        f"huge pages `{report['machine']['transparent_hugepages']}`. Memory bandwidth measured in "
        f"the same run (generated STREAM kernels, 512 MB arrays): copy {bw['copy']:.1f} GB/s, "
        f"triad {bw['triad']:.1f} GB/s, read-modify-write {bw['rmw']:.1f} GB/s (each array read "
        "or written counts once). The fraction below is of the triad figure.",
        "",
        "| workload | implementation | median ms | GB/s | of bandwidth | sparsegen speedup |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for w in report["workloads"]:
        ours = w["median_ms"].get("sparsegen")
        for impl, ms in w["median_ms"].items():
            speedup = f"{ms / ours:.2f}x" if ours and impl != "sparsegen" else ""
            lines.append(
                f"| {w['id']} {w['title']} | {impl} | {ms:.3f} | {w['gbps'][impl]:.2f} | "
                f"{w['gbps'][impl] / limit:.0%} | {speedup} |"
            )
    lines += ["", "Speedup is the peer's median time over sparsegen's (higher is better for "
              "sparsegen). Medians of interleaved runs; the machine is shared and noisy."]
    for w in report["workloads"]:
        for note in w["notes"]:
            lines.append(f"- {w['id']}: {note}")
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    """A bar chart of effective GB/s per workload and implementation, with the triad line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = report["workloads"]
    impls = sorted({impl for w in workloads for impl in w["gbps"]},
                   key=lambda i: (i != "sparsegen", i))
    width = 0.8 / max(len(impls), 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(workloads)), 4))
    for n, impl in enumerate(impls):
        xs = [i + n * width for i, w in enumerate(workloads) if impl in w["gbps"]]
        ys = [w["gbps"][impl] for w in workloads if impl in w["gbps"]]
        ax.bar(xs, ys, width, label=impl)
    ax.axhline(report["bandwidth_gbps"]["triad"], color="black", linestyle="--", linewidth=1,
               label="STREAM triad")
    ax.set_xticks([i + width * (len(impls) - 1) / 2 for i in range(len(workloads))])
    ax.set_xticklabels([w["id"] for w in workloads])
    ax.set_ylabel("effective GB/s (higher is better)")
    ax.set_title("sparsegen vs peers, medians of interleaved runs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(report: dict[str, Any], out: Path) -> list[Path]:
    """results.json, results.md and results.png under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json", out / "results.md", out / "results.png"]
    paths[0].write_text(json.dumps(report, indent=1))
    paths[1].write_text(markdown(report))
    plot(report, paths[2])
    return paths
