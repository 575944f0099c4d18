"""Training throughput and peak memory of one Gluon sparse model: sparsegen, MXNet 1.9.1, PyTorch.

A thin wrapper of ``sparsegen bench --training`` (the code is sparsegen/bench/training.py):

    PYTHONPATH=. python benchmarks/gluon_train.py [--rounds 3] [--steps 60] [--mxnet PYTHON]
"""

from __future__ import annotations

import sys

from sparsegen.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "--training", *sys.argv[1:]]))
