"""The scaling table: lazy Adam (W3's kernel) and csr · dense (W4) over sizes spanning 100x,
sparsegen against the best peer of each size (the numba kernels, MKL where installed)."""

from __future__ import annotations

from typing import Any

from . import harness
from .workloads_dot import w4_dot
from .workloads_optim import w3_adam

PEERS = ("numpy", "scipy", "numba", "numba+prefetch", "MKL")
"""The implementations timed beside sparsegen (numpy / scipy as the oracle; the others only
when installed). PyTorch is left out: it is slower than the numba kernels on both workloads
(results.md), and the table is about the strongest peer."""

SIZES: dict[str, tuple[int, ...]] = {"W3": (2_000, 20_000, 200_000), "W4": (410, 4_096, 40_960)}
"""Per workload, its sizes: W3's gradient rows (weight 1M x 128), W4's csr rows (64 entries
each, rhs 1M x 128); the middle one is WORKLOADS.md's."""

QUICK_SIZES: dict[str, tuple[int, ...]] = {"W3": (20, 200, 2_000), "W4": (20, 200, 2_000)}
"""The same spans on the quick inputs."""


def _workload(wid: str, size: int, quick: bool) -> harness.Workload:
    workload = w3_adam(quick, touched=size) if wid == "W3" else w4_dot(quick, rows=size)
    workload.impls = {k: v for k, v in workload.impls.items() if k == "sparsegen" or k in PEERS}
    return workload


def run(quick: bool = False, repeats: int = 7) -> list[dict[str, Any]]:
    """One row per workload and size: medians of sparsegen and each peer, the best peer, and
    the best peer's time over sparsegen's."""
    rows = []
    for wid, sizes in (QUICK_SIZES if quick else SIZES).items():
        for size in sizes:
            result = harness.run(_workload(wid, size, quick), repeats=repeats).as_dict()
            ms = result["median_ms"]
            peers = {k: v for k, v in ms.items() if k not in ("sparsegen", "numpy", "scipy")}
            peers = peers or {k: v for k, v in ms.items() if k != "sparsegen"}
            best = min(peers, key=peers.__getitem__)
            rows.append({"id": wid, "size": size, "title": result["title"], "median_ms": ms,
                         "best_peer": best, "ratio": ms[best] / ms["sparsegen"]})
    return rows


def markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The scaling table's lines."""
    lines = ["| workload | size | sparsegen ms | best peer | peer ms | best peer / sparsegen |",
             "|---|---|---:|---|---:|---:|"]
    for row in rows:
        ms = row["median_ms"]
        lines.append(f"| {row['id']} | {row['title']} | {ms['sparsegen']:.3f} | {row['best_peer']} "
                     f"| {ms[row['best_peer']]:.3f} | {row['ratio']:.2f} |")
    return lines
