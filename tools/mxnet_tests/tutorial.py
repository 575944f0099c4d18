"""Run the code of an MXNet tutorial (a markdown file) unchanged, with ``import mxnet`` served by
sparsegen, and report each code cell: ran, or the error it stopped on.

    python tools/mxnet_tests/tutorial.py [TUTORIAL.md]

The ```` ```python ```` cells run in order in one namespace, as in the notebook the tutorial
comes from; a cell whose last line is an expression prints it, as a notebook shows it. A cell
that fails is reported (the missing name, or the error) and the next cells still run.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
from pathlib import Path

import alias
from plugin import classify

DEFAULT = Path("/work/mxnet-1.9.1/docs/python_docs/python/tutorials/packages/ndarray/sparse/csr.md")
_FENCE = re.compile(r"^( *)```python[ \t]*\n(.*?)^\1```", re.S | re.M)


def cells(markdown: str) -> list[tuple[int, str]]:
    """The ```` ```python ```` cells of ``markdown``: (line number, code without the fence's indent)."""
    found = []
    for match in _FENCE.finditer(markdown):
        indent = len(match.group(1))
        code = "\n".join(line[indent:] for line in match.group(2).splitlines())
        found.append((markdown.count("\n", 0, match.start()) + 1, code))
    return found


def run_cell(code: str, namespace: dict) -> str:
    """Run one cell; what it printed, and the value of a final expression (a notebook's output)."""
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        exec(compile(tree, "<cell>", "exec"), namespace)  # noqa: S102 - the tutorial's own code
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)  # noqa: S307
            if value is not None:
                print(repr(value))
    return shown.getvalue()


def main() -> int:
    """Run every cell of the tutorial; print each one's outcome; exit 1 if any failed."""
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    alias.install()
    namespace: dict = {"__name__": "__tutorial__"}
    failed = 0
    for number, (line, code) in enumerate(cells(path.read_text()), 1):
        try:
            run_cell(code, namespace)
        except Exception as err:  # the report is the point: every cell's error is shown
            kind, detail = classify(err)
            failed += 1
            print(f"cell {number:2d} (line {line:4d}): {kind:8s} {detail}")
        else:
            print(f"cell {number:2d} (line {line:4d}): ran")
    print(f"{failed} of {number} cells failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
