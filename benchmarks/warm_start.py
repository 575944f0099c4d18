"""Warm start (issue 17): a fresh process that imports sparsegen and runs one cached SGD step.

Each sample is a new ``python -c`` process (interpreter start included) timed by the wall clock
from the parent and by the child's CPU time (``RUSAGE_CHILDREN``). The kernel is loaded from
the cache (one untimed process builds it first and writes the modules' bytecode, which
``PYTHONDONTWRITEBYTECODE``, set on some machines, would otherwise make every process compile
again: 0.26 s of 188 modules here). For comparison, the same process with
``import ml_dtypes`` first: what every process paid while tvm_ffi imported it; and a process
that imports numpy alone (the interpreter's and numpy's share). Rounds alternate the kinds;
medians go to benchmarks/results/warm-start.{json,md}.

    PYTHONPATH=. python benchmarks/warm_start.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tqdm import tqdm

from sparsegen.bench.harness import cpu_name

ROOT = Path(__file__).resolve().parent.parent

STEP = """
import numpy as np
import sparsegen as mx
w = mx.nd.array(np.ones((1000, 16), np.float32))
g = mx.nd.sparse.row_sparse_array((np.ones((2, 16), np.float32), np.array([1, 5])),
                                  shape=(1000, 16))
opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
opt.update(0, w, g, opt.create_state(0, w))
assert float(w.asnumpy()[1, 0]) < 1.0
import sys
print(sorted(m for m in ("ml_dtypes", "torch", "tvm", "scipy") if m in sys.modules))
"""

KINDS = {"sparsegen": STEP, "sparsegen after import ml_dtypes": "import ml_dtypes\n" + STEP,
         "python -c 'import numpy' (the floor)": "import numpy\nprint([])"}


def one(code: str, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, the modules it reported) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(ROOT), TVM_NUM_THREADS="1")
    one(STEP, env)  # the SGD kernel into the cache, the modules' bytecode into __pycache__
    runs: dict[str, list[tuple[float, float, str]]] = {k: [] for k in KINDS}
    for _ in tqdm(range(args.rounds), desc="warm start", unit="round"):
        for kind, code in KINDS.items():
            runs[kind].append(one(code, env))
    result = {
        "cpu": cpu_name(), "rounds": args.rounds, "python": sys.version.split()[0],
        "median_wall_s": {k: statistics.median(w for w, _, _ in v) for k, v in runs.items()},
        "median_cpu_s": {k: statistics.median(c for _, c, _ in v) for k, v in runs.items()},
        "modules_imported": {k: v[-1][2] for k, v in runs.items()},
        "target_s": 0.5,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "warm-start.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Warm start: a fresh process imports sparsegen and runs one cached SGD step", "",
             f"CPU: {result['cpu']}; {args.rounds} rounds alternating the kinds, each a new "
             "`python -c` process (interpreter start included, modules' bytecode cached as after "
             "`pip install`), TVM_NUM_THREADS=1. The machine "
             "is shared: the wall clock includes waiting for a core and the disk; CPU time is "
             "the steadier figure.", "",
             "| process | wall s (median) | CPU s (median) | of ml_dtypes, torch, tvm, scipy "
             "imported |", "|---|---:|---:|---|"]
    for kind in KINDS:
        lines.append(f"| {kind} | {result['median_wall_s'][kind]:.3f} | "
                     f"{result['median_cpu_s'][kind]:.3f} | {result['modules_imported'][kind]} |")
    lines += ["", "Target (issue 17): under 0.5 s."]
    (out / "warm-start.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
