"""Run MXNet's sparse tutorials (markdown files) unchanged, with ``import mxnet`` served by
sparsegen, and compare each code cell's output with what MXNet 1.9.1 printed.

    python tools/mxnet_tests/tutorial.py [TUTORIAL.md ...] [--status FILE]
    /work/mxvenv/bin/python tools/mxnet_tests/tutorial.py --record [TUTORIAL.md ...]

The ```` ```python ```` cells run in order in one namespace, as in the notebook the tutorial
comes from; a cell whose last line is an expression prints it, as a notebook shows it; a
``%%timeit`` cell runs its body once, other IPython magics and shell lines are skipped. A cell
that fails is reported and the next cells still run.

``--record`` (run with MXNet's interpreter, real ``mxnet`` imported) runs each tutorial
``recorded.RUNS`` times, ``mx.random`` seeded differently each time, and writes every cell's
outputs to ``results/tutorials/NAME.json``. Without it, each cell's output on sparsegen (seeded as
the first run) is compared with that record by ``recorded.compare``: output MXNet printed the same
in every run must match word for word and number for number; output that changed with
``mx.random``'s seed must have the same words and its stable numbers in MXNet's range.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import recorded

HERE = Path(__file__).resolve().parent
TUTORIALS = Path("/work/mxnet-1.9.1/docs/python_docs/python/tutorials/packages/ndarray/sparse")
"""MXNet 1.9.1's sparse tutorials (``git archive 1.9.1 docs/...`` of apache/mxnet)."""
DEFAULT = ("csr.md", "row_sparse.md", "train.md", "train_gluon.md")
RECORDS = HERE / "results" / "tutorials"
DIFFERENCES = {("csr.md", 472): "NDArrayIter over csr data gives csr batches"}
"""Cells (tutorial, line) whose output differs from MXNet's by a difference that
docs/mxnet-differences.md documents: reported as such, not counted as failures."""
_FENCE = re.compile(r"^( *)```python[ \t]*\n(.*?)^\1```", re.S | re.M)


def cells(markdown: str) -> list[tuple[int, str]]:
    """The ```` ```python ```` cells of ``markdown``: (line number, code without the fence's
    indent)."""
    found = []
    for match in _FENCE.finditer(markdown):
        indent = len(match.group(1))
        code = "\n".join(line[indent:] for line in match.group(2).splitlines())
        found.append((markdown.count("\n", 0, match.start()) + 1, code))
    return found


def python_of(code: str) -> str:
    """A notebook cell as plain Python: a ``%%timeit`` cell's body, other magics and ``!`` shell
    lines left out."""
    lines = code.splitlines()
    if lines and lines[0].startswith("%%timeit"):
        lines = lines[1:]
    return "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))


def run_cell(code: str, namespace: dict) -> str:
    """Run one cell; what it printed, and the value of a final expression (a notebook's output)."""
    tree = ast.parse(python_of(code))
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 - the tutorial's own code
        if last is not None:
            expression = compile(ast.Expression(last.value), "<cell>", "eval")
            value = eval(expression, namespace)  # noqa: S307 - the tutorial's own code
            if value is not None:
                print(repr(value))
    return shown.getvalue()


def run_tutorial(path: Path, mx: Any, run: int) -> list[dict[str, Any]]:
    """Every cell of ``path`` run in one fresh namespace, seeded for ``run``, in a scratch
    working directory (for the files it writes): line, output, error."""
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="mxnet-tutorial-") as scratch, \
            recorded.seeded(mx, run):
        os.chdir(scratch)
        try:
            return _run_cells(path.resolve(), {"__name__": "__tutorial__"})
        finally:
            os.chdir(here)


def _run_cells(path: Path, namespace: dict) -> list[dict[str, Any]]:
    outcomes = []
    for line, code in cells(path.read_text()):
        try:
            outcomes.append({"line": line, "output": run_cell(code, namespace), "error": None})
        except Exception as err:  # the report is the point: every cell's error is kept
            first = str(err).splitlines()[0] if str(err) else ""
            outcomes.append({"line": line, "output": "", "error": f"{type(err).__name__}: {first}",
                             "exception": err})
    return outcomes


def record(paths: list[Path]) -> None:
    """Run each tutorial under MXNet ``recorded.RUNS`` times; write ``RECORDS/NAME.json``."""
    import mxnet as mx

    RECORDS.mkdir(parents=True, exist_ok=True)
    for path in paths:
        runs = [run_tutorial(path, mx, run) for run in range(recorded.RUNS)]
        out = {"mxnet": mx.__version__, "numpy": np.__version__, "seed": recorded.SEED,
               "cells": [{"line": first["line"], "error": first["error"],
                          "outputs": [run[i]["output"] for run in runs]}
                         for i, first in enumerate(runs[0])]}
        target = RECORDS / f"{path.stem}.json"
        target.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {target}")


def verdict(cell: dict[str, Any], want: dict[str, Any] | None, classify: Any) -> str:
    """One cell's outcome on sparsegen against MXNet's record: ``same``, ``same words`` (output
    that changes with ``mx.random``'s seed), ``no record``, or what differs or failed."""
    if cell["error"] is not None:
        kind, detail = classify(cell["exception"])
        if want is not None and want["error"] is not None:
            return f"failed on both ({detail}; MXNet: {want['error']})"
        return f"{kind} {detail}"
    if want is None:
        return "no record"
    if want["error"] is not None:
        return f"ran where MXNet failed: {want['error']}"
    difference = recorded.compare(cell["output"], want["outputs"])
    if difference is not None:
        return f"differs: {difference}"
    return "same" if len(set(want["outputs"])) == 1 else "same words"


def check(paths: list[Path], status: Path | None) -> int:
    """Run each tutorial on sparsegen and compare with MXNet's record; 1 if any cell differs."""
    import alias

    alias.install()
    classify = importlib.import_module("plugin").classify
    mx = importlib.import_module("mxnet")
    lines, bad = [], 0
    for path in paths:
        target = RECORDS / f"{path.stem}.json"
        wanted = json.loads(target.read_text())["cells"] if target.exists() else []
        ran = run_tutorial(path, mx, 0)
        if wanted and [c["line"] for c in wanted] != [c["line"] for c in ran]:
            raise SystemExit(f"{target} was recorded from another version of {path}")
        counts: dict[str, int] = {}
        for number, cell in enumerate(ran, 1):
            outcome = verdict(cell, wanted[number - 1] if wanted else None, classify)
            documented = DIFFERENCES.get((path.name, cell["line"]))
            if documented and outcome.startswith("differs"):
                outcome = f"documented difference ({documented}): {outcome}"
            key = outcome if outcome in ("same", "same words") else (
                "documented" if documented else "other")
            counts[key] = counts.get(key, 0) + 1
            bad += key == "other"
            print(f"{path.name} cell {number:2d} (line {cell['line']:4d}): {outcome}")
        lines.append(f"| {path.name} | {len(ran)} | {counts.get('same', 0)} | "
                     f"{counts.get('same words', 0)} | {counts.get('documented', 0)} | "
                     f"{counts.get('other', 0)} |")
    table = ["| tutorial | cells | same output | same words and statistics (output changes with "
             "mx.random's seed) | a documented difference | differ or fail |",
             "|---|---:|---:|---:|---:|---:|", *lines]
    recorded.report("MXNet 1.9.1's sparse tutorials on sparsegen, cell by cell, against "
                    "MXNet's recorded output", table, status)
    return 1 if bad else 0


def main() -> int:
    """Record MXNet's outputs (``--record``) or compare sparsegen's with them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tutorials", nargs="*", type=Path,
                        default=[TUTORIALS / name for name in DEFAULT])
    parser.add_argument("--record", action="store_true", help="run under MXNet; write records")
    parser.add_argument("--status", type=Path, help="write the summary table here (markdown)")
    args = parser.parse_args()
    recorded.numpy_1x()
    if args.record:
        record(args.tutorials)
        return 0
    return check(args.tutorials, args.status)


if __name__ == "__main__":
    sys.exit(main())
