"""Run MXNet 1.9.1's nightly distributed kvstore tests unchanged under ``sparsegen launch``, as
MXNet's CI runs them under its launcher (ci/docker/runtime_functions.sh), and report each run.

    python tools/mxnet_tests/nightly.py [NIGHTLY_DIR] [-n 2 4] [--status FILE]

Each script runs in every worker with ``import mxnet`` served by sparsegen (``alias.py``); the
GPU scripts run on the emulated GPUs (``SPARSEGEN_GPU=host``: two per process). Left out, as
ps-lite specifics: ``--p3`` (ps-lite's priority propagation) and ``test_server_profiling.py``
(a server process's profiler). A run passes when every worker exits 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from tqdm import tqdm

HERE = Path(__file__).resolve().parent
DEFAULT = Path("/work/mxnet-1.9.1/tests/nightly")
RUNS = (  # (script, arguments, needs GPUs): MXNet CI's list, its -n dropped
    ("dist_sync_kvstore.py", "--type=gluon_step_cpu", False),
    ("dist_sync_kvstore.py", "--type=gluon_sparse_step_cpu", False),
    ("dist_sync_kvstore.py", "--type=invalid_cpu", False),
    ("dist_sync_kvstore.py", "--type=gluon_type_cpu", False),
    ("dist_sync_kvstore.py", "", False),
    ("dist_sync_kvstore.py", "--no-multiprecision", False),
    ("dist_sync_kvstore.py", "--type=compressed_cpu", False),
    ("dist_sync_kvstore.py", "--type=compressed_cpu --no-multiprecision", False),
    ("dist_device_sync_kvstore.py", "", True),
    ("dist_device_sync_kvstore_custom.py", "", True),
    ("dist_sync_kvstore.py", "--type=init_gpu", True),
)
RUNNER = """import runpy, sys
sys.path[:0] = [{here!r}, {nightly!r}]
import alias
alias.install()
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run(nightly: Path, script: str, arguments: str, gpus: bool, workers: int,
        timeout: float) -> tuple[bool, str, float]:
    """One launch: whether it passed, the last error line (or the last output), seconds."""
    env = dict(os.environ, TVM_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    if gpus:
        env["SPARSEGEN_GPU"] = "host"
    runner = RUNNER.format(here=str(HERE), nightly=str(nightly))
    command = [sys.executable, "-m", "sparsegen.cli", "launch", "-n", str(workers), "--",
               sys.executable, "-c", runner, script, *arguments.split()]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=nightly, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s", time.perf_counter() - start
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line and ":" in line]
    detail = (errors[-1] if errors else lines[-1] if lines else "").strip()[:200]
    return done.returncode == 0, detail, time.perf_counter() - start


def main() -> int:
    """Run every launch for each worker count; print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nightly", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("-n", type=int, nargs="+", default=[2, 4], help="worker counts")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--status", type=Path, help="also write the table there (markdown)")
    args = parser.parse_args()
    rows = ["| workers | script | arguments | outcome | seconds | detail |",
            "|---|---|---|---|---|---|"]
    passed = total = 0
    with tqdm(total=len(RUNS) * len(args.n), desc="nightly") as bar:
        for workers in args.n:
            for script, arguments, gpus in RUNS:
                ok, detail, seconds = run(args.nightly, script, arguments, gpus, workers,
                                          args.timeout)
                passed, total = passed + ok, total + 1
                rows.append(f"| {workers} | {script} | {arguments or '-'} | "
                            f"{'passed' if ok else 'failed'} | {seconds:.0f} | "
                            f"{'' if ok else detail.replace('|', '/')} |")
                bar.update()
    table = "\n".join([*rows, "", f"{passed} of {total} launches passed"])
    print(table)
    if args.status:
        args.status.write_text(table + "\n")
    return 0 if passed == total else 1


if __name__ == "__main__":
    raise SystemExit(main())
