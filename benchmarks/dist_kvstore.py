"""The dist_sync kvstore against dense all_reduce (sparsegen/bench/dist.py; also
``sparsegen bench --distributed``): writes benchmarks/results/dist-kvstore.{json,md}."""

from __future__ import annotations

import argparse
from pathlib import Path

from sparsegen.bench import dist

if __name__ == "__main__":
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("--quick", action="store_true", help="a small embedding, few steps")
    args.add_argument("--out", default=str(Path(__file__).parent / "results"))
    options = args.parse_args()
    report = dist.run(quick=options.quick)
    print(dist.markdown(report))
    print("wrote " + ", ".join(str(p) for p in dist.write(report, Path(options.out))))
