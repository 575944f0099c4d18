"""W6 (row_sparse + row_sparse) against numpy and PyTorch in one run.

Usage: ``python benchmarks/bench_elemwise.py [--quick] [--out benchmarks/results]``; writes
``elemwise.json`` and ``elemwise.md``. Implementations are interleaved; the machine is shared, so
medians and ratios are what to read.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

# PyTorch's OpenMP threads spin after each parallel region and TVM's pool does too: interleaved
# in one process on 2 cores each starves the other. Passive waiting keeps the comparison honest.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from sparsegen.bench import harness, suite  # noqa: E402
from sparsegen.bench.workloads_elemwise import w6_add  # noqa: E402

REFERENCE_MS = {"numpy": 114.0, "torch": 24.3, "mxnet": 17.1}
"""W6 on this machine class (WORKLOADS.md; MXNet is not installed beside sparsegen)."""
TARGET = 2.0
"""Required speedup of sparsegen over the fastest of numpy / scipy / PyTorch."""


def measure(quick: bool) -> dict[str, Any]:
    """Machine and bandwidth (the suite's report with no workloads), then W6."""
    report = suite.run([], quick=quick, progress=False)
    result = harness.run(w6_add(quick), repeats=5 if quick else 25, warmup=2)
    report["workloads"].append(result.as_dict())
    return report


def verdict(report: dict[str, Any]) -> list[str]:
    """The target of the issue against the peers of this run and the reference figures."""
    ms = report["workloads"][0]["median_ms"]
    ours = ms["sparsegen"]
    peers = {k: v for k, v in ms.items() if k != "sparsegen"}
    fastest = min(peers, key=peers.get)
    ok = peers[fastest] / ours >= TARGET
    lines = [f"- W6: sparsegen {ours:.2f} ms, fastest peer in this run {fastest} "
             f"{peers[fastest]:.2f} ms: {peers[fastest] / ours:.1f}x (target {TARGET}x): "
             f"{'met' if ok else 'NOT met'}"]
    lines += [f"- against WORKLOADS.md's {name} figure {ref} ms: {ref / ours:.1f}x"
              for name, ref in REFERENCE_MS.items()]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--out", default="benchmarks/results", type=Path)
    args = parser.parse_args()
    report = measure(args.quick)
    report["targets"] = (["- quick run: smaller sizes than WORKLOADS.md, target not judged"]
                         if args.quick else verdict(report))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "elemwise.json").write_text(json.dumps(report, indent=1))
    text = suite.markdown(report).replace("# sparsegen benchmarks",
                                          "# sparsegen elementwise benchmarks")
    text += "\nTarget (2x the fastest of numpy / scipy / PyTorch CPU):\n\n"
    text += "\n".join(report["targets"]) + "\n"
    text += (f"\nRun with OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}; every implementation "
             "returns a freshly allocated result (no output reuse).\n")
    (args.out / "elemwise.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
