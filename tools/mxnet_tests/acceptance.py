"""MXNet's own unit tests as the acceptance of sparsegen: run the files under MXNet 1.9.1 (its
own venv: the denominator) and under sparsegen (``run.py``'s harness), and count, per file, how
many of the tests that pass on MXNet pass on sparsegen.

    python tools/mxnet_tests/acceptance.py --mxnet-python /work/mxvenv/bin/python \\
        [--mxnet-passes FILE] [--files test_ndarray.py ...] [--status FILE]
    python tools/mxnet_tests/acceptance.py --mxnet-passes FILE  # MXNet's side from a saved run

MXNet's side runs with its own ``common.py`` (and ``nose.tools`` from ``shim/``), from a copy of
its ``tests/python`` tree; pytest writes a JUnit XML report of each test's outcome.
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from run import DEFAULT_TESTS, run_tests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))
from test_mxnet_census import TABLES, listed  # noqa: E402  (the census' two tables, parsed once)

EXCLUDED_ISSUE = "issue 39"
"""Besides the out-of-scope table, the not-yet row of this issue is an excluded group: the
recurrent models (gluon.rnn, mx.rnn, BucketingModule) belong to it."""
SHORT_NAMES = {"mx.nd.": "mxnet.ndarray.", "mx.sym.": "mxnet.symbol.", "mx.mod.": "mxnet.module.",
               "mx.kv.": "mxnet.kvstore.", "mx.init.": "mxnet.initializer.",
               "mx.viz.": "mxnet.visualization.", "mx.mon.": "mxnet.monitor.", "mx.": "mxnet."}
"""The short spellings of MXNet's namespaces in a missing name, first match wins."""
FILES = ("test_ndarray.py", "test_autograd.py", "test_gluon.py", "test_gluon_trainer.py",
         "test_loss.py", "test_metric.py", "test_init.py", "test_io.py", "test_kvstore.py",
         "test_module.py", "test_optimizer.py", "test_random.py", "test_executor.py",
         "test_infer_shape.py", "test_symbol.py", "test_sparse_ndarray.py",
         "test_sparse_operator.py", "test_higher_order_grad.py")
"""The files issue 38 names (MXNet's tests of the surface sparse programs use), and
test_higher_order_grad.py (``autograd.grad(create_graph=True)``)."""


def mxnet_passes(python: str, tests: Path, files: list[str], timeout: float) -> set[str]:
    """The tests (``file::name``) that pass under MXNet run by ``python``."""
    with tempfile.TemporaryDirectory(prefix="mxnet-own-") as work:
        tree = Path(work) / "python"
        shutil.copytree(tests.parent, tree)
        report = Path(work) / "junit.xml"
        env = dict(os.environ, MXNET_TEST_SEED="1", PYTHONPATH=str(HERE / "shim"))
        subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--junitxml={report}", *files], cwd=tree / tests.name, env=env,
                       check=False, timeout=timeout)
        passed = set()
        for case in ET.parse(report).iter("testcase"):
            if not any(child.tag in ("failure", "error", "skipped") for child in case):
                passed.add(f"{case.get('classname').split('.')[-1]}.py::{case.get('name')}")
        return passed


def census_name(missing: str) -> str:
    """A missing name as the harness writes it (``mx.gluon.nn.Conv2D``) in the census'
    ``namespace:name`` form (``mxnet.gluon.nn:Conv2D``)."""
    for short, full in SHORT_NAMES.items():
        if missing.startswith(short):
            missing = full + missing[len(short):]
            break
    namespace, _, name = missing.rpartition(".")
    return f"{namespace}:{name}"


def excluded_groups() -> dict[str, str]:
    """Census pattern -> the group it excludes: every out-of-scope row, and issue 39's row."""
    out_of_scope, not_yet = (listed()[heading] for heading in TABLES)
    groups = {pattern: "out of scope" for pattern in out_of_scope}
    groups.update({p: EXCLUDED_ISSUE for p, why in not_yet.items() if EXCLUDED_ISSUE in why})
    return groups


def classify(outcome: dict, groups: dict[str, str]) -> str:
    """The outcome, or ``excluded (<group>)`` for a test stopped on a name of an excluded group."""
    if outcome["outcome"] == "out_of_scope":  # an OutOfScope placeholder or refusal stopped it
        return "excluded (out of scope)"
    if outcome["outcome"] not in ("missing", "collect_missing"):
        return outcome["outcome"]
    name = census_name(outcome.get("detail", ""))
    for pattern, group in groups.items():
        if fnmatch.fnmatchcase(name, pattern):
            return f"excluded ({group})"
    return outcome["outcome"]


def table(mxnet: set[str], outcomes: list[dict]) -> str:
    """Per file: the tests passing on MXNet, how many of them pass on sparsegen, and what
    stops the others (by outcome)."""
    groups = excluded_groups()
    ours = {o["test"]: classify(o, groups) for o in outcomes}
    stopped_files = {o["test"]: classify(o, groups) for o in outcomes if "::" not in o["test"]}
    per_file: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for test in sorted(mxnet):
        name = test.split("::")[0]
        per_file[name][ours.get(test, stopped_files.get(name, "not run"))] += 1
    rows = ["| file | pass on MXNet | pass on sparsegen | the others |", "|---|---|---|---|"]
    for name, counts in sorted(per_file.items()):
        others = ", ".join(f"{n} {k}" for k, n in counts.most_common() if k != "passed")
        rows.append(f"| {name} | {sum(counts.values())} | {counts['passed']} | {others} |")
    details = {o["test"]: o.get("detail", "") for o in outcomes}
    others = [f"| {test} | {ours.get(test, stopped_files.get(test.split('::')[0], 'not run'))} "
              f"| {details.get(test, '')[:160].replace('|', '/')} |"
              for test in sorted(mxnet) if ours.get(test) != "passed"
              and not ours.get(test, "").startswith("excluded")]
    total = sum(sum(c.values()) for c in per_file.values())
    passed = sum(c["passed"] for c in per_file.values())
    excluded = sum(n for c in per_file.values() for k, n in c.items() if k.startswith("excluded"))
    return "\n".join(rows + ["", f"{passed} of the {total} tests that pass on MXNet 1.9.1 "
                                 f"pass on sparsegen; {excluded} are excluded (a name out of "
                                 f"scope or of {EXCLUDED_ISSUE} stops them); {passed} of the "
                                 f"{total - excluded} others pass", "",
                                 "The others (not excluded) that do not pass:", "",
                                 "| test | outcome | detail |", "|---|---|---|", *others])


def main() -> int:
    """Run both sides and print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mxnet-python", help="python of MXNet 1.9.1's venv")
    parser.add_argument("--mxnet-passes", type=Path,
                        help="a JSON list of the tests that pass on MXNet: written after a run "
                             "with --mxnet-python, read instead of one without it")
    parser.add_argument("tests", nargs="?", type=Path, default=DEFAULT_TESTS)
    parser.add_argument("--files", nargs="+", default=list(FILES))
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds per test (MXNet takes 475 s for test_multilamb here)")
    parser.add_argument("--status", type=Path, help="also write the table there (markdown)")
    args = parser.parse_args()
    if args.mxnet_python:
        mxnet = mxnet_passes(args.mxnet_python, args.tests, args.files, 4 * 3600)
        if args.mxnet_passes:
            args.mxnet_passes.write_text(json.dumps(sorted(mxnet), indent=0))
    elif args.mxnet_passes:
        mxnet = {t for t in json.loads(args.mxnet_passes.read_text())
                 if t.split("::")[0] in args.files}
    else:
        parser.error("give --mxnet-python (run MXNet's side) or --mxnet-passes (a saved list)")
    outcomes = run_tests(args.tests, args.files, None, args.timeout, True, True)
    text = table(mxnet, outcomes)
    print(text)
    if args.status:
        args.status.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
