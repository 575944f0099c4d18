"""Record MXNet 1.9.1's registered operator names for ``mx.operator.get_all_registered_operators``.

    /work/mxvenv/bin/python tools/record_mxnet_operators.py

Writes sparsegen/mxnet_operators.py: every name MXNet's C API lists (``MXListAllOpNames``, aliases
included), sorted, as ``mxnet.operator.get_all_registered_operators()`` returns them.
"""

from __future__ import annotations

import pathlib
import textwrap

import mxnet
from mxnet.operator import get_all_registered_operators

OUT = pathlib.Path(__file__).resolve().parents[1] / "sparsegen" / "mxnet_operators.py"

HEADER = '''"""MXNet {version}'s registered operator names (aliases included), as its
``mx.operator.get_all_registered_operators()`` lists them: the names a graph or ``mx.nd`` call may
use. Recorded from MXNet by tools/record_mxnet_operators.py (do not edit); importing nothing."""

MXNET_OPERATORS = (
'''


def main() -> None:
    """Write the table."""
    names = sorted(get_all_registered_operators())
    body = textwrap.fill(" ".join(f'"{name}",' for name in names), width=99,
                         initial_indent="    ", subsequent_indent="    ",
                         break_long_words=False, break_on_hyphens=False)
    OUT.write_text(HEADER.format(version=mxnet.__version__) + body + "\n)\n"
                   + '"""Every operator name of MXNet\'s registry, sorted."""\n')
    print(f"{OUT}: {len(names)} operators")


if __name__ == "__main__":
    main()
