"""W2 (lazy SGD), W3 (lazy Adam) and W8 (tiny rsp * 2.0) against numpy and PyTorch in one run.

Usage: ``python benchmarks/bench_optim.py [--quick] [--out benchmarks/results]``; writes
``optim.json`` and ``optim.md``. Each workload's implementations are interleaved; the machine is
shared, so medians and ratios are what to read.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

# PyTorch's OpenMP threads spin after each parallel region and TVM's pool does too: interleaved
# in one process on 2 cores, each library's spinning threads then starve the other's (seen: torch
# 170 ms instead of 0.4 ms on the quick W3). Passive waiting keeps the interleaved run honest.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from sparsegen.bench import harness, suite  # noqa: E402
from sparsegen.bench.workloads_optim import w2_sgd, w3_adam, w8_tiny  # noqa: E402

MXNET_MS = {"W2": 15.6, "W3": 21.9}
"""MXNet 1.9.1 CPU on this machine class (WORKLOADS.md; MXNet is not installed beside sparsegen)."""
TARGETS = {"W2": (2.0, 5.0), "W3": (2.0, 5.0)}
"""Required speedup of sparsegen over (MXNet's figure, numpy in this run)."""
W8_BUDGET_US = 15.0


def measure(quick: bool) -> dict[str, Any]:
    """Machine and bandwidth (the suite's report with no workloads), then W2, W3 and W8."""
    report = suite.run([], quick=quick, progress=False)
    for factory, repeats in ((w2_sgd, 3 if quick else 25), (w3_adam, 3 if quick else 25),
                             (w8_tiny, 200 if quick else 5000)):
        try:
            result = harness.run(factory(quick), repeats=repeats, warmup=2)
        except TypeError as err:  # W8 needs rsp * scalar from the elementwise ops
            report.setdefault("skipped", []).append(f"{factory.__name__}: {err}")
            continue
        report["workloads"].append(result.as_dict())
    return report


def verdicts(report: dict[str, Any]) -> list[str]:
    """One line per target of the issue: met or not, with the figures."""
    lines = []
    for w in report["workloads"]:
        ms = w["median_ms"]
        if w["id"] in TARGETS:
            vs_mxnet, vs_numpy = MXNET_MS[w["id"]] / ms["sparsegen"], ms["numpy"] / ms["sparsegen"]
            need_mx, need_np = TARGETS[w["id"]]
            ok = vs_mxnet >= need_mx and vs_numpy >= need_np
            lines.append(f"- {w['id']}: {ms['sparsegen']:.2f} ms = {vs_mxnet:.1f}x MXNet's "
                         f"{MXNET_MS[w['id']]} ms (target {need_mx}x), {vs_numpy:.1f}x numpy "
                         f"(target {need_np}x): {'met' if ok else 'NOT met'}")
        else:
            us = ms["sparsegen"] * 1e3
            lines.append(f"- {w['id']}: {us:.1f} us per call from Python (budget "
                         f"{W8_BUDGET_US} us): {'met' if us <= W8_BUDGET_US else 'NOT met'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--out", default="benchmarks/results", type=Path)
    args = parser.parse_args()
    report = measure(args.quick)
    report["targets"] = (["- quick run: smaller sizes than WORKLOADS.md, targets not judged"]
                         if args.quick else verdicts(report))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "optim.json").write_text(json.dumps(report, indent=1))
    text = suite.markdown(report).replace("# sparsegen benchmarks",
                                          "# sparsegen optimizer benchmarks")
    text += "\nTargets (MXNet 1.9.1 figures from WORKLOADS.md, same machine class):\n\n"
    text += "\n".join(report["targets"]) + "\n"
    text += "".join(f"\nSkipped {line}\n" for line in report.get("skipped", []))
    text += (f"\nRun with OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']} (PyTorch's OpenMP "
             "threads otherwise spin and starve TVM's thread pool in the interleaved run, and "
             "the other way round).\n")
    (args.out / "optim.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
