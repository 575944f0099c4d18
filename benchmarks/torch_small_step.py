"""The fixed cost of a sparsegen.torch step: ``optimizer.step()`` on a small sparse gradient
(``nn.Embedding(1000, 16, sparse=True)``, 10 ids), where the kernel's work is tiny and the
argument checks, the row-id check and the coalescing are what is timed; against
torch.optim.SparseAdam, interleaved, medians of 21 rounds of 200 steps (wall time, one thread).
Results: benchmarks/results/torch-small-step.{json,md}.

    PYTHONPATH=. TVM_NUM_THREADS=1 python benchmarks/torch_small_step.py
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("TVM_NUM_THREADS", "1")

import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

import sparsegen.torch as sgt  # noqa: E402
from sparsegen.bench.harness import cpu_description  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OPTIMIZERS = {"torch.optim.SparseAdam": lambda p: torch.optim.SparseAdam(p, lr=0.01),
              "sparsegen.torch.Adam(lazy=True)": lambda p: sgt.Adam(p, lr=0.01, lazy=True)}
ROUNDS, STEPS = 21, 200


def _setup(name: str, coalesced: bool) -> torch.optim.Optimizer:
    torch.manual_seed(0)
    model = torch.nn.Embedding(1000, 16, sparse=True)
    model(torch.randint(0, 1000, (10,))).sum().backward()
    if coalesced:
        model.weight.grad = model.weight.grad.coalesce()
    optimizer = OPTIMIZERS[name](model.parameters())
    for _ in range(20):  # warm: kernels loaded, states made
        optimizer.step()
    return optimizer


def main() -> None:
    """Time every case interleaved; write the json and md results."""
    torch.set_num_threads(1)
    cases = [(name, coalesced) for coalesced in (False, True) for name in OPTIMIZERS]
    optimizers = {case: _setup(*case) for case in cases}
    times: dict[tuple[str, bool], list[float]] = {case: [] for case in cases}
    for _ in tqdm(range(ROUNDS), desc="rounds"):
        for case, optimizer in optimizers.items():
            start = time.perf_counter()
            for _ in range(STEPS):
                optimizer.step()
            times[case].append((time.perf_counter() - start) / STEPS)
    rows = {f"{name}, {'coalesced' if c else 'uncoalesced'} gradient":
            statistics.median(times[(name, c)]) for name, c in cases}
    results = {"cpu": cpu_description(), "torch": torch.__version__,
               "workload": "Embedding(1000, 16, sparse=True), 10 ids, optimizer.step() only",
               "median_seconds": rows}
    out = ROOT / "benchmarks" / "results"
    (out / "torch-small-step.json").write_text(json.dumps(results, indent=1) + "\n")
    lines = ["# The fixed cost of a step", "", f"{results['workload']}. CPU: {results['cpu']}. "
             f"torch {torch.__version__}. {ROUNDS} rounds x {STEPS} steps, interleaved; medians.",
             "", "| optimizer, gradient | us per step |", "|---|---|",
             *(f"| {k} | {v * 1e6:.0f} |" for k, v in rows.items()), ""]
    (out / "torch-small-step.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
