"""Run MXNet 1.9.1's four example/sparse training programs unchanged, on small synthetic data, with
``import mxnet`` served by sparsegen, and compare what they log with what MXNet logged.

    python tools/mxnet_tests/examples.py [NAME ...] [--status FILE]
    python tools/mxnet_tests/examples.py --record --mxnet-python /work/mxvenv/bin/python [NAME ...]

Each program is copied with its directory into a scratch directory, its data files are written
where it looks for them (so nothing is downloaded: the real datasets are gigabytes, and this
machine is offline), and it runs with the arguments of ``EXAMPLES`` (fewer epochs and smaller
batches than its defaults). ``--record`` runs each under MXNet ``RUNS`` times
(``mx.random`` seeded differently each time) and writes its log per run to
``results/examples/NAME.json``; without it each runs on sparsegen and its log is compared with
that record by ``recorded.compare``: the same lines, and every statistic (losses, accuracies,
AUC) within MXNet's run-to-run range.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import recorded

HERE = Path(__file__).resolve().parent
PROGRAMS = Path("/work/mxnet-1.9.1/example/sparse")
"""MXNet 1.9.1's example/sparse (``git archive 1.9.1 example/sparse`` of apache/mxnet)."""
RECORDS = HERE / "results" / "examples"
RUNS = 8
"""MXNet's side is recorded this many times: a training statistic's run-to-run spread needs more
samples than ``recorded.RUNS`` give (three runs of matrix_factorization cluster within 0.005
where eight spread over 0.02), and the programs take seconds."""
_MXNET_LOG = re.compile(r"^\[\d\d:\d\d:\d\d\] \S+:\d+: ")
"""A line of MXNet's C++ log (storage fallbacks, MKLDNN notes): not the program's output."""


def _libsvm(path: Path, rows: int, features: int, per_row: int, seed: int) -> None:
    """A binary classification set in libsvm format: ``per_row`` distinct ids of ``features``
    per row, label 1 where a hidden linear score is positive."""
    rng = np.random.RandomState(seed)
    hidden = np.random.RandomState(0).normal(size=features)
    lines = []
    for _ in range(rows):
        ids = np.sort(rng.choice(features, size=per_row, replace=False))
        values = rng.uniform(0.5, 1.5, size=per_row)
        label = int(hidden[ids] @ values > 0)
        lines.append(f"{label} " + " ".join(f"{i}:{v:.4f}" for i, v in zip(ids, values)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def avazu(work: Path) -> None:
    """data/avazu-app and data/avazu-app.t (linear_classification)."""
    _libsvm(work / "data" / "avazu-app", 4000, 2000, 12, 1)
    _libsvm(work / "data" / "avazu-app.t", 1000, 2000, 12, 2)


def criteo(work: Path) -> None:
    """train.libsvm and test.libsvm (factorization_machine's --data-train / --data-test)."""
    _libsvm(work / "train.libsvm", 4000, 2000, 12, 3)
    _libsvm(work / "test.libsvm", 1000, 2000, 12, 4)


_ADULT_WORDS = {
    "workclass": ["Private", "Self-emp-not-inc", "State-gov", "Federal-gov", "?"],
    "education": ["Bachelors", "HS-grad", "11th", "Masters", "Doctorate", "Some-college"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Widowed"],
    "occupation": ["Tech-support", "Craft-repair", "Sales", "Exec-managerial", "Other-service"],
    "relationship": ["Husband", "Not-in-family", "Wife", "Own-child", "Unmarried"],
    "race": ["White", "Black", "Asian-Pac-Islander", "Other"],
    "gender": ["Female", "Male"],
    "native_country": ["United-States", "Mexico", "India", "Germany", "Canada"],
}


def _adult_rows(rows: int, seed: int) -> str:
    rng = np.random.RandomState(seed)
    lines = []
    for _ in range(rows):
        word = {col: rng.choice(words) for col, words in _ADULT_WORDS.items()}
        age, years, hours = rng.randint(17, 80), rng.randint(1, 17), rng.randint(10, 70)
        gain = int(rng.choice([0, 0, 0, rng.randint(1, 20000)]))
        score = 0.04 * (age - 40) + 0.3 * (years - 9) + 0.03 * (hours - 40) + gain / 5000
        rich = score + rng.normal() > 0.5
        lines.append(", ".join(map(str, [
            age, word["workclass"], rng.randint(10000, 500000), word["education"], years,
            word["marital_status"], word["occupation"], word["relationship"], word["race"],
            word["gender"], gain, 0, hours, word["native_country"],
            ">50K" if rich else "<=50K"])))
    return "\n".join(lines) + "\n"


def adult(work: Path) -> None:
    """data/adult.data and data/adult.test (wide_deep), the UCI census columns."""
    (work / "data").mkdir(exist_ok=True)
    (work / "data" / "adult.data").write_text(_adult_rows(2000, 5))
    (work / "data" / "adult.test").write_text(_adult_rows(500, 6))


def movielens(work: Path) -> None:
    """data/ml-10M100K/r1.train and r1.test (matrix_factorization), ``user::movie::rating::time``
    from a low-rank taste model."""
    rng = np.random.RandomState(7)
    users, movies = rng.choice(71569, 300, replace=False), rng.choice(65135, 400, replace=False)
    taste_u, taste_m = rng.normal(size=(300, 3)), rng.normal(size=(400, 3))
    folder = work / "data" / "ml-10M100K"
    folder.mkdir(parents=True)
    for name, count in (("r1.train", 12000), ("r1.test", 2000)):
        u, m = rng.randint(300, size=count), rng.randint(400, size=count)
        stars = np.clip(np.round(3 + (taste_u[u] * taste_m[m]).sum(1)), 1, 5)
        (folder / name).write_text("".join(
            f"{users[a]}::{movies[b]}::{s:g}::{978300760 + k}\n"
            for k, (a, b, s) in enumerate(zip(u, m, stars))))


@dataclass(frozen=True)
class Example:
    """One program of example/sparse: its directory, its arguments, and its data."""

    folder: str
    args: tuple[str, ...]
    data: Callable[[Path], None]


EXAMPLES = {
    "linear_classification": Example("linear_classification",
                                      ("--num-epoch", "2", "--batch-size", "500"), avazu),
    "factorization_machine": Example(
        "factorization_machine", ("--data-train", "train.libsvm", "--data-test", "test.libsvm",
                                  "--num-epoch", "2", "--batch-size", "500",
                                  "--log-interval", "4"), criteo),
    "wide_deep": Example("wide_deep", ("--num-epoch", "2", "--batch-size", "100",
                                       "--log-interval", "10"), adult),
    "matrix_factorization": Example("matrix_factorization",
                                    ("--num-epoch", "2", "--batch-size", "256",
                                     "--log-interval", "20"), movielens),
}


def child(run: int, program: Path, args: list[str], served: bool) -> None:
    """In the program's process: serve ``mxnet`` from sparsegen (``served``), seed for ``run``,
    and run the program as ``__main__``."""
    if served:
        import alias

        alias.install()
    import mxnet as mx

    recorded.numpy_1x()
    sys.path.insert(0, str(program.parent))
    sys.argv = [str(program), *args]
    with recorded.seeded(mx, run):
        runpy.run_path(str(program), run_name="__main__")


def run_example(name: str, python: str, run: int, served: bool, timeout: float) -> str:
    """The log of one run of example ``name`` (its own lines only), in a scratch directory."""
    example = EXAMPLES[name]
    with tempfile.TemporaryDirectory(prefix=f"mxnet-example-{name}-") as top:
        work = Path(top) / example.folder
        shutil.copytree(PROGRAMS / example.folder, work)
        example.data(work)
        env = dict(os.environ, PYTHONHASHSEED="0", PYTHONWARNINGS="ignore",
                   MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0",
                   PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
        command = [python, str(Path(__file__).resolve()), "--child", str(run),
                   *(["--served"] if served else []), str(work / "train.py"), "--",
                   *example.args]
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    lines = [line for line in (done.stdout + done.stderr).splitlines()
             if not _MXNET_LOG.match(line)]
    if done.returncode:
        lines.append(f"exit status {done.returncode}")
    return "\n".join(lines) + "\n"


def record(names: list[str], python: str, timeout: float) -> None:
    """Run each example under MXNet ``RUNS`` times; write ``RECORDS/NAME.json``."""
    RECORDS.mkdir(parents=True, exist_ok=True)
    for name in names:
        logs = [run_example(name, python, run, False, timeout) for run in range(RUNS)]
        target = RECORDS / f"{name}.json"
        target.write_text(json.dumps({"args": EXAMPLES[name].args, "seed": recorded.SEED,
                                      "logs": logs}, indent=1) + "\n")
        print(f"wrote {target}")


def check(names: list[str], timeout: float, status: Path | None) -> int:
    """Run each example on sparsegen and compare its log with MXNet's; 1 if any differs."""
    rows, bad = [], 0
    for name in names:
        log = run_example(name, sys.executable, 0, True, timeout)
        want = json.loads((RECORDS / f"{name}.json").read_text())["logs"]
        difference = recorded.compare(log, want)
        checked = sum(1 for seen in zip(*map(recorded.numbers, want))
                      if 0 < max(seen) - min(seen) <= recorded.STABLE * max(map(abs, seen)))
        outcome = "same lines and statistics" if difference is None else f"differs: {difference}"
        bad += difference is not None
        print(f"{name}: {outcome}\n{log}")
        final = [line[line.index("epoch"):].strip() for line in log.splitlines() if "epoch" in line]
        rows.append(f"| {name} | {' '.join(EXAMPLES[name].args)} | {checked} | {outcome} | "
                    f"{final[-1] if final else ''} |")
    table = ["| program | arguments | statistics compared | outcome | its last epoch's line on "
             "sparsegen |", "|---|---|---:|---|---|", *rows]
    recorded.report("MXNet 1.9.1's example/sparse programs on sparsegen against MXNet's "
                    "recorded logs", table, status)
    return 1 if bad else 0


def main() -> int:
    """Record MXNet's logs (``--record``), compare sparsegen's with them, or (``--child``) be
    the program's process."""
    if "--child" in sys.argv:
        at = sys.argv.index("--")
        run, served, program = int(sys.argv[2]), "--served" in sys.argv, Path(sys.argv[at - 1])
        child(run, program, sys.argv[at + 1:], served)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(EXAMPLES), metavar="NAME",
                        help=f"of {', '.join(EXAMPLES)} (default: all)")
    parser.add_argument("--record", action="store_true", help="run under MXNet; write records")
    parser.add_argument("--mxnet-python", default="/work/mxvenv/bin/python")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--status", type=Path, help="write the summary table here (markdown)")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(EXAMPLES))
    if unknown:
        parser.error(f"unknown example {unknown}; the examples are {', '.join(EXAMPLES)}")
    if args.record:
        record(args.names, args.mxnet_python, args.timeout)
        return 0
    return check(args.names, args.timeout, args.status)


if __name__ == "__main__":
    sys.exit(main())
