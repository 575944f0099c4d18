"""sparsegen.torch against torch's own optimizers on an EmbeddingBag model, and a user-written
update rule's kernel against the built-in kernel of the same rule.

Model: ``nn.EmbeddingBag(1,000,000, 64, mode="sum", sparse=True)``, batches of 4,096 samples of
20 ids each, loss ``(bag ** 2).mean()``. Per step, CPU time (``time.thread_time``, one torch and
one TVM thread) of ``optimizer.step()`` and of the whole step (forward, backward, step), for
torch.optim.SparseAdam vs sparsegen.torch.Adam(lazy=True) and torch.optim.Adagrad vs
sparsegen.torch.Adagrad; implementations alternate every round, medians over every step of every
round. Then the lazy kernels of the built-in rules ``adam`` / ``adagrad`` against the same rules
written by a user (sparsegen.updates), on one coalesced gradient, interleaved.
Results: benchmarks/results/torch-embedding.{json,md}.

With ``--device cuda`` the model, batches and optimizers live on the GPU and the times are wall
seconds between ``torch.cuda.synchronize()`` calls; results in benchmarks/results/gpu/.

    PYTHONPATH=. TVM_NUM_THREADS=1 python benchmarks/torch_embedding.py [--rounds 3] [--steps 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TVM_NUM_THREADS", "1")

import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

import sparsegen.torch as st  # noqa: E402
import sparsegen.updates as updates  # noqa: E402
from sparsegen.bench.harness import cpu_description  # noqa: E402
from sparsegen.cache import CompilerMissingError  # noqa: E402
from sparsegen.update_rules.builtin import BUILT_IN  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ROWS, WIDTH, BATCH, IDS = 1_000_000, 64, 4096, 20
INF = float("inf")

OPTIMIZERS = {
    "torch.optim.SparseAdam": lambda p: torch.optim.SparseAdam(p, lr=1e-3),
    "sparsegen.torch.Adam(lazy=True)": lambda p: st.Adam(p, lr=1e-3, lazy=True),
    "torch.optim.Adagrad": lambda p: torch.optim.Adagrad(p, lr=1e-2),
    "sparsegen.torch.Adagrad": lambda p: st.Adagrad(p, lr=1e-2),
}
PAIRS = (("torch.optim.SparseAdam", "sparsegen.torch.Adam(lazy=True)"),
         ("torch.optim.Adagrad", "sparsegen.torch.Adagrad"))



def _clock(at: torch.device) -> Callable[[], float]:
    """The benchmark's clock: this thread's CPU seconds on the host; on a GPU, wall seconds once
    the work queued on it has finished."""
    if at.type == "cpu":
        return time.thread_time

    def wall() -> float:
        torch.cuda.synchronize(at)
        return time.perf_counter()

    return wall


def _batches(steps: int, at: torch.device) -> list[Any]:
    gen = torch.Generator().manual_seed(0)
    return [torch.randint(0, ROWS, (BATCH, IDS), generator=gen).to(at) for _ in range(steps)]


def _model(at: torch.device) -> Any:
    torch.manual_seed(0)
    return torch.nn.EmbeddingBag(ROWS, WIDTH, mode="sum", sparse=True).to(at)


def _train(name: str, batches: list[Any], at: torch.device,
           bar: Any) -> tuple[list[float], list[float]]:
    """Seconds (``_clock``) of each ``optimizer.step()`` and of each whole step."""
    model = _model(at)
    optimizer = OPTIMIZERS[name](model.parameters())
    clock = _clock(at)
    steps, totals = [], []
    for i, ids in enumerate([batches[0], *batches]):  # one warm-up step (kernel loads, states)
        start = clock()
        optimizer.zero_grad()
        (model(ids) ** 2).mean().backward()
        before = clock()
        optimizer.step()
        end = clock()
        if i:
            steps.append(end - before)
            totals.append(end - start)
            bar.update(1)
    return steps, totals


def _user_copy(name: str) -> Any:
    """The built-in rule ``name`` written again by a user (the same function, another name)."""
    family = BUILT_IN[name]
    return updates.register(updates.define_update(
        f"user_{name}", family.update, states=family.states, hyper=family.hyper,
        functions=family.functions))


def _kernels(rounds: int, repeats: int, at: torch.device, bar: Any) -> dict[str, Any]:
    """Lazy kernel time, built-in vs user-written, on one coalesced EmbeddingBag gradient."""
    model = _model(at)
    clock = _clock(at)
    (model(_batches(1, at)[0]) ** 2).mean().backward()
    ids, values = st.coalesce(model.weight.grad, ROWS)
    weight = model.weight.detach()
    hyper = {"adam": (1e-3, 0.9, 0.999, 1e-8, 0.0, 1.0, INF),
             "adagrad": (1e-2, 1e-7, 0.0, 1.0, INF)}
    out: dict[str, Any] = {}
    for name, values_h in hyper.items():
        user = _user_copy(name)
        states = [torch.zeros_like(weight) for _ in user.states]
        kernels = {"built-in": updates.kernel(name, "float32", check=False),
                   "user-written": updates.kernel(user, "float32", check=False)}
        times: dict[str, list[float]] = {k: [] for k in kernels}
        for _ in range(rounds):
            for label, kernel in kernels.items():
                for _ in range(repeats):
                    start = clock()
                    kernel.lazy(weight, values, ids, *states, *values_h)
                    times[label].append(clock() - start)
                bar.update(1)
        medians = {k: statistics.median(v) for k, v in times.items()}
        out[name] = {"seconds": times, "median": medians,
                     "user_over_builtin": medians["user-written"] / medians["built-in"]}
    return out


def main() -> None:
    """Run the rounds, write the json and md results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(1)
    at = torch.device(args.device)
    batches = _batches(args.steps, at)
    steps: dict[str, list[float]] = {name: [] for name in OPTIMIZERS}
    totals: dict[str, list[float]] = {name: [] for name in OPTIMIZERS}
    with tqdm(total=args.rounds * len(OPTIMIZERS) * args.steps, desc="train steps") as bar:
        for _ in range(args.rounds):
            for name in OPTIMIZERS:
                s, t = _train(name, batches, at, bar)
                steps[name] += s
                totals[name] += t
    with tqdm(total=args.rounds * 4, desc="kernels") as bar:
        try:
            kernels = _kernels(args.rounds, args.repeats, at, bar)
        except CompilerMissingError as err:  # a runtime-only install (the GPU bundle)
            kernels, skipped = {}, f"not run: the user rules' kernels need the compiler ({err})"
        else:
            skipped = ""
    median = {name: {"optimizer_step": statistics.median(steps[name]),
                     "whole_step": statistics.median(totals[name])} for name in OPTIMIZERS}
    speedup = {f"{mine} vs {theirs}": {
        "optimizer_step": median[theirs]["optimizer_step"] / median[mine]["optimizer_step"],
        "whole_step": median[theirs]["whole_step"] / median[mine]["whole_step"]}
        for theirs, mine in PAIRS}
    if at.type == "cpu":
        clock = "CPU seconds (thread_time), 1 torch + 1 TVM thread"
        caveat = "shared machine: 2 cores used by five engineers at once; CPU time, medians"
    else:
        clock = (f"on {torch.cuda.get_device_name(at)}, wall seconds between "
                 "torch.cuda.synchronize() calls")
        caveat = "wall time including each step's host work and launches, medians"
    results = {
        "workload": f"EmbeddingBag({ROWS}, {WIDTH}, mode='sum', sparse=True), batch {BATCH} x "
                    f"{IDS} ids, float32; {clock}",
        "device": args.device, "cpu": cpu_description(), "torch": torch.__version__,
        "caveat": f"{caveat}, implementations interleaved",
        "rounds": args.rounds, "steps_per_round": args.steps,
        "seconds": {"optimizer_step": steps, "whole_step": totals},
        "median": median, "speedup": speedup, "kernels": kernels or skipped,
    }
    out = ROOT / "benchmarks" / "results" / ("gpu" if at.type == "cuda" else "")
    out.mkdir(parents=True, exist_ok=True)
    (out / "torch-embedding.json").write_text(json.dumps(results, indent=1) + "\n")
    lines = [
        "# sparsegen.torch on an EmbeddingBag model", "",
        f"{results['workload']}. CPU: {results['cpu']}. torch {torch.__version__}. "
        f"{args.rounds} rounds x {args.steps} steps, interleaved; medians.", "",
        f"Caveat: {results['caveat']}.", "",
        "| optimizer | optimizer.step() ms | whole step ms |", "|---|---|---|",
        *(f"| {name} | {m['optimizer_step'] * 1e3:.2f} | {m['whole_step'] * 1e3:.2f} |"
          for name, m in median.items()),
        "", "| speedup | optimizer.step() | whole step |", "|---|---|---|",
        *(f"| {pair} | {s['optimizer_step']:.2f}x | {s['whole_step']:.2f}x |"
          for pair, s in speedup.items()),
        "", "User-written rule vs the built-in kernel of the same rule (lazy, one coalesced "
        f"gradient of {BATCH * IDS} ids, {args.rounds} x {args.repeats} calls "
        "each, interleaved):", "",
        "| rule | built-in ms | user-written ms | user / built-in |", "|---|---|---|---|",
        *(f"| {name} | {k['median']['built-in'] * 1e3:.3f} | "
          f"{k['median']['user-written'] * 1e3:.3f} | {k['user_over_builtin']:.3f} |"
          for name, k in kernels.items()),
        *([f"\n{skipped}"] if skipped else []),
        "",
    ]
    (out / "torch-embedding.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
