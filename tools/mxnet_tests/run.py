"""Run MXNet 1.9.1's own sparse unit tests against sparsegen and summarise what passes.

    python tools/mxnet_tests/run.py [TESTS_DIR] [--files F ...] [-k EXPR] [--status FILE]

The test files are copied, unchanged, into a temporary directory and run by pytest with
``import mxnet`` served by sparsegen (alias.py), MXNet's ``common.py`` replaced by a shim of test
utilities (shim/common.py; no operator is implemented there) and the plugin (plugin.py) that
selects the sparse cases of test_optimizer.py, marks tests needing mx.sym / Gluon / autograd out
of scope, limits each test's time and records every outcome. Prints one line per test, the
counts, and the missing names (AttributeError / NameError / ImportError) by how many tests they
stop; ``--status`` also writes that summary as markdown.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_TESTS = Path("/work/mxnet-1.9.1/tests/python/unittest")
DEFAULT_FILES = ("test_sparse_ndarray.py", "test_sparse_operator.py", "test_optimizer.py")
COUNTED = ("passed", "failed", "missing", "timeout", "collect_failed", "collect_missing")


def run_tests(tests: Path, files: list[str], keyword: str | None, timeout: float,
              with_gluon: bool = False, with_symbol: bool = False) -> list[dict]:
    """Run ``files`` of ``tests`` under pytest with the harness; the recorded outcomes
    (``with_gluon``: the tests that use Gluon or autograd count too; ``with_symbol``: those
    that use mx.sym, bind or check_symbolic_*)."""
    with tempfile.TemporaryDirectory(prefix="mxnet-tests-") as top:
        work = Path(top) / tests.name  # beside a copy of ../train, which test_module.py imports
        work.mkdir()
        for name in files:
            shutil.copy(tests / name, work / name)
        for data in tests.iterdir():  # the data files tests read beside them (legacy_ndarray.v0)
            if data.is_file() and data.suffix != ".py":
                shutil.copy(data, work / data.name)
        if (tests.parent / "train").is_dir():
            shutil.copytree(tests.parent / "train", Path(top) / "train")
        results = work / "results.jsonl"
        env = dict(os.environ, MXNET_TESTS_RESULTS=str(results),
                   MXNET_TESTS_TIMEOUT=str(timeout),
                   MXNET_TESTS_WITH_GLUON="1" if with_gluon else "",
                   MXNET_TESTS_WITH_SYMBOL="1" if with_symbol else "",
                   PYTHONPATH=os.pathsep.join([str(HERE / "shim"), str(HERE),
                                               os.environ.get("PYTHONPATH", "")]))
        command = [sys.executable, "-m", "pytest", "-q", "-p", "plugin", "-p", "no:cacheprovider",
                   "--rootdir", str(work), "--continue-on-collection-errors", "--tb=no", "-rN",
                   *files] + (["-k", keyword] if keyword else [])
        subprocess.run(command, cwd=work, env=env, check=False)
        if not results.exists():
            return []
        return [json.loads(line) for line in results.read_text().splitlines()]


def summary(outcomes: list[dict]) -> str:
    """The counts, the missing names by how many tests they stop, and the other failures."""
    counts = collections.Counter(o["outcome"] for o in outcomes)
    counted = sum(counts[k] for k in COUNTED)
    missing = collections.Counter(o["detail"] for o in outcomes if o["outcome"].endswith("missing"))
    failures = [o for o in outcomes if o["outcome"] in ("failed", "timeout", "collect_failed")]
    lines = [
        f"passed {counts['passed']} of {counted} counted tests; "
        f"failed {counts['failed'] + counts['collect_failed']}, "
        f"stopped on a missing name {counts['missing'] + counts['collect_missing']}, "
        f"timed out {counts['timeout']}; not counted: out of scope (mx.sym / Gluon / autograd, "
        f"issues 14-15) {counts['out_of_scope']}, dense-only optimizer tests {counts['not_sparse']}, "
        f"skipped {counts['skipped']}",
        "",
        "| missing name | tests it stops |",
        "|---|---|",
        *(f"| `{name}` | {n} |" for name, n in missing.most_common()),
        "",
        "| failing test | error |",
        "|---|---|",
        *(f"| `{o['test']}` | {o.get('detail', '').replace('|', '/')} |" for o in failures),
    ]
    return "\n".join(lines)


def main() -> int:
    """Parse the command line, run the tests, print the outcomes and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests", nargs="?", type=Path, default=DEFAULT_TESTS,
                        help="MXNet's tests/python/unittest directory")
    parser.add_argument("--files", nargs="+", default=list(DEFAULT_FILES))
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per test")
    parser.add_argument("--status", type=Path, help="also write the summary there (markdown)")
    parser.add_argument("--with-gluon", action="store_true",
                        help="count the tests that use Gluon or autograd (issue 14) too")
    parser.add_argument("--with-symbol", action="store_true",
                        help="count the tests that use mx.sym, bind or check_symbolic_* too")
    args = parser.parse_args()
    outcomes = run_tests(args.tests, args.files, args.keyword, args.timeout, args.with_gluon,
                         args.with_symbol)
    for o in outcomes:
        print(f"{o['outcome']:>15}  {o['test']}  {o.get('detail', '')}")
    text = summary(outcomes)
    print("\n" + text)
    if args.status:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        args.status.write_text(f"# MXNet sparse unit tests on sparsegen ({stamp})\n\n"
                               f"`python tools/mxnet_tests/run.py` on {' '.join(args.files)}\n\n"
                               f"{text}\n")
    return 0 if outcomes else 1


if __name__ == "__main__":
    sys.exit(main())
