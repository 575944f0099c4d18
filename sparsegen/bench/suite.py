"""The benchmark suite: WORKLOADS.md's workloads in one run, with bandwidth, tables and a plot."""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from . import harness, limits, scaling, stream

# PyTorch's OpenMP threads spin after each op and starve TVM's pool when the two interleave
# (one torch call measured 170 ms instead of 0.4 ms); passive waiting keeps the comparison fair.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# numba's default TBB layer keeps its workers spinning after each kernel: the sparsegen call
# after it ran 9x slower (3.4 ms instead of 0.37 ms for W3 at 2,000 rows), and numba itself ran
# faster on its OpenMP layer (0.38 ms instead of 0.60 ms), whose workers wait passively.
os.environ.setdefault("NUMBA_THREADING_LAYER", "omp")

WORKLOADS: dict[str, str] = {
    "W1": "sparsegen.bench.workloads_storage:w1_retain",
    "W2": "sparsegen.bench.workloads_optim:w2_sgd",
    "W3": "sparsegen.bench.workloads_optim:w3_adam",
    "W4": "sparsegen.bench.workloads_dot:w4_dot",
    "W5": "sparsegen.bench.workloads_dot:w5_dot_t",
    "W6": "sparsegen.bench.workloads_elemwise:w6_add",
    "W7": "sparsegen.bench.workloads_storage:w7_cast",
    "W8": "sparsegen.bench.workloads_optim:w8_tiny",
    "W9": "sparsegen.bench.workloads_reduce:w9_csr_sum",  # -- reduce --
    "W10": "sparsegen.bench.workloads_reduce:w10_rsp_sum",  # -- reduce --
    "W11": "sparsegen.bench.workloads_broadcast:w11_csr_row",  # -- arith --
    "W12": "sparsegen.bench.workloads_broadcast:w12_csr_col",  # -- arith --
}
"""Workload id -> ``module:factory``; a factory takes ``quick`` and returns a harness Workload."""


REFERENCE_MS: dict[str, dict[str, float]] = {
    "W1": {"numpy": 10.8, "torch": 12.8, "MXNet 1.9.1": 22.4},
    "W2": {"numpy": 41.5, "torch": 42.0, "MXNet 1.9.1": 15.6},
    "W3": {"numpy": 80.5, "torch": 57.3, "MXNet 1.9.1": 21.9},
    "W4": {"scipy": 101, "torch": 70, "MXNet 1.9.1": 104},
    "W5": {"scipy": 115, "torch": 205, "MXNet 1.9.1": 324},
    "W6": {"numpy": 114, "torch": 24.3, "MXNet 1.9.1": 17.1},
    "W7": {"numpy": 13.7, "torch": 21.8, "MXNet 1.9.1": 13.3},
    "W8": {"numpy": 0.002, "torch": 0.010, "MXNet 1.9.1": 0.049},
}
"""WORKLOADS.md's medians on this machine class (MXNet is not installed beside sparsegen)."""

TARGETS: dict[str, str] = {
    "W2": "2x MXNet's 15.6 ms and 5x numpy",
    "W3": "2x MXNet's 21.9 ms and 5x numpy",
    "W4": "2x the fastest of scipy and PyTorch",
    "W5": "2x the fastest of scipy and PyTorch",
    "W6": "2x the fastest of numpy and PyTorch",
    "W8": "at most 10 us per call over the kernel call (issue 17)",
}
"""The issues' targets, checked against this run's medians."""


PEER_TARGET, LIMIT_TARGET = 1.5, 0.85
"""Issue 17's target for W1-W7: the best peer's time over sparsegen's at least ``PEER_TARGET``,
or sparsegen at least ``LIMIT_TARGET`` of the workload's measured limit."""


def peer_verdict(workload: dict[str, Any]) -> dict[str, Any] | None:
    """Issue 17's figures for a workload with a limit: the best peer, its time over sparsegen's,
    sparsegen's fraction of the limit, and whether the target is met."""
    ms, limit = workload["median_ms"], workload.get("limit") or {}
    if "gbps" not in limit or "sparsegen" not in ms:
        return None
    peers = {k: v for k, v in ms.items() if k != "sparsegen"}
    best = min(peers, key=peers.__getitem__)
    ratio, fraction = peers[best] / ms["sparsegen"], workload["gbps"]["sparsegen"] / limit["gbps"]
    return {"best_peer": best, "ratio": ratio, "fraction": fraction,
            "met": ratio >= PEER_TARGET or fraction >= LIMIT_TARGET}


def verdict(workload: dict[str, Any], quick: bool = False) -> str:
    """Whether this run meets the workload's target, with the figures it rests on."""
    ms, wid = workload["median_ms"], workload["id"]
    if quick:
        return "quick run: sizes too small to judge"
    ours = ms["sparsegen"]
    peers = {k: v for k, v in ms.items() if k != "sparsegen"}
    if wid in ("W2", "W3"):
        mxnet = REFERENCE_MS[wid]["MXNet 1.9.1"]
        ok = mxnet / ours >= 2 and ms["numpy"] / ours >= 5
        return (f"{mxnet / ours:.1f}x MXNet's figure, {ms['numpy'] / ours:.1f}x numpy: "
                f"{'met' if ok else 'not met'}")
    if wid in ("W4", "W5", "W6"):
        best = min(peers, key=peers.__getitem__)
        ratio = peers[best] / ours
        return f"{ratio:.2f}x the fastest peer ({best}): {'met' if ratio >= 2 else 'not met'}"
    if wid == "W8":
        over = (ours - ms["kernel call"]) * 1e3
        return (f"{ours * 1e3:.1f} us per call, {over:.1f} us over the kernel call: "
                f"{'met' if over <= 10 else 'not met'}")
    return ""


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
    scaled = [w for w in scaling.SIZES if w in ids]
    bar = tqdm(total=len(ids) + 1 + bool(scaled), desc="benchmarks", unit="step",
               disable=None if progress is None else not progress)
    bar.set_postfix_str("memory bandwidth", refresh=True)
    bandwidth = stream.measure(1 << 22, 3) if quick else stream.measure()
    bar.update(1)
    results = []
    for workload_id in ids:
        bar.set_postfix_str(workload_id, refresh=True)
        workload = factory(workload_id)(quick)
        _add_limit(workload, quick)
        repeats = 3 if quick else workload.repeats
        results.append(harness.run(workload, repeats=repeats, warmup=1 if quick else 2).as_dict())
        bar.update(1)
    scaling_rows = []
    if scaled:
        bar.set_postfix_str("scaling", refresh=True)
        scaling_rows = [row for row in scaling.run(quick, repeats=3 if quick else 7)
                        if row["id"] in scaled]
        bar.update(1)
    bar.close()
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cpu": harness.cpu_description(), "threads": _threads(),
                    "transparent_hugepages": _thp()},
        "quick": quick,
        "bandwidth_gbps": bandwidth,
        "workloads": results,
        "scaling": scaling_rows,
    }



def _add_limit(workload: harness.Workload, quick: bool) -> None:
    """Give W1-W7 their limit kernel (random rows for W1-W6, STREAM triad for W7), timed in the
    workload's own rounds; quick runs use patterns a hundredth of the size."""
    pattern = limits.PATTERNS.get(workload.id)
    if pattern is not None:
        if quick:
            pattern = pattern.shrunk(100)
        workload.limit = {"pattern": pattern.describe(), "bytes": pattern.bytes_moved()}
        workload.limit_impl = limits.prepare(pattern)
    elif workload.id == "W7":
        elements = 1 << (20 if quick else 27)
        workload.limit = {"pattern": f"STREAM triad (a = b + s*c), {elements * 4 >> 20} MB arrays",
                          "bytes": 12 * elements}
        workload.limit_impl = lambda: stream.triad_limit(elements)


def _threads() -> int:
    from ..config import num_threads

    return num_threads()


def markdown(report: dict[str, Any]) -> str:
    """A table per workload: median ms, GB/s, fraction of triad bandwidth, ratio to each peer."""
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
              "sparsegen). Medians of interleaved runs; the machine is shared and noisy.", "",
              "| workload | target | this run | reference medians, ms (WORKLOADS.md) |",
              "|---|---|---|---|"]
    for w in report["workloads"]:
        reference = ", ".join(f"{k} {v:g}" for k, v in REFERENCE_MS.get(w["id"], {}).items())
        lines.append(f"| {w['id']} | {TARGETS.get(w['id'], '-')} | "
                     f"{verdict(w, report['quick']) or '-'} | "
                     f"{reference} |")
    for w in report["workloads"]:
        for note in w["notes"]:
            lines.append(f"- {w['id']}: {note}")
    lines += _peer_lines(report)
    if report.get("scaling"):
        lines += ["", "## Scaling: sparsegen against the best peer of each size", "",
                  *scaling.markdown(report["scaling"]), "",
                  "Sizes span 100x: W3's gradient rows, W4's csr rows (the middle row is "
                  "WORKLOADS.md's size); medians of interleaved runs, same machine caveat."]
    return "\n".join(lines) + "\n"


def _peer_lines(report: dict[str, Any]) -> list[str]:
    """Issue 17's table: each workload against its best peer and its measured limit."""
    rows = [(w, peer_verdict(w)) for w in report["workloads"]]
    rows = [(w, v) for w, v in rows if v is not None]
    if not rows:
        return []
    lines = ["", "## Against the best peer and the measured limit (issue 17)", "",
             f"Target: the best peer's time over sparsegen's at least {PEER_TARGET}x, or "
             f"sparsegen at least {LIMIT_TARGET:.0%} of the limit measured in this run.", "",
             "| workload | sparsegen ms | best peer | peer ms | best peer / sparsegen | "
             "limit GB/s | sparsegen of limit | best peer of limit | target |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for w, v in rows:
        ms, limit = w["median_ms"], w["limit"]["gbps"]
        lines.append(
            f"| {w['id']} | {ms['sparsegen']:.3f} | {v['best_peer']} | {ms[v['best_peer']]:.3f} | "
            f"{v['ratio']:.2f} | {limit:.2f} | {v['fraction']:.0%} | "
            f"{w['gbps'][v['best_peer']] / limit:.0%} | {'met' if v['met'] else 'not met'} |")
    lines += ["", "Interleaving shares the cores between thread pools: numba's (OpenMP), MKL's "
              "and TVM's workers compete on a 2-core machine, which can slow the implementation "
              "that runs next (benchmarks/README.md).", "",
              "Limits (bytes per workload: benchmarks/README.md):", ""]
    lines += [f"- {w['id']}: {w['limit']['pattern']}" for w, _ in rows]
    return lines


def plot(report: dict[str, Any], path: Path) -> None:
    """A bar chart of effective GB/s per workload and implementation, with the triad line."""
    harness.bar_chart(report, path, ("STREAM triad", report["bandwidth_gbps"]["triad"]),
                      "sparsegen vs peers, medians of interleaved runs")


def write(report: dict[str, Any], out: Path) -> list[Path]:
    """results.json, results.md and results.png under ``out``."""
    return harness.write_results(report, out, markdown(report), plot)
