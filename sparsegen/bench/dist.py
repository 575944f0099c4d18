"""The distributed kvstore benchmark (``sparsegen bench --distributed``,
benchmarks/dist_kvstore.py): an embedding of 1,000,000 x 64 float32 rows trained with lazy Adam,
20,000 rows touched per step per worker, on 1, 2 and 4 workers over loopback: the dist_sync
kvstore's row_sparse push + row_sparse_pull against dense all_reduce of the same gradients and a
dense Adam step (what DDP does with a dense embedding). Also a sweep of all_to_all message sizes
that gives the per-message and per-byte costs the time model of docs/distributed.md uses."""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .harness import cpu_name

SIZES = {"full": {"rows": 1_000_000, "cols": 64, "touched": 20_000, "sparse_steps": 30,
                  "dense_steps": 6},
         "quick": {"rows": 50_000, "cols": 16, "touched": 1_000, "sparse_steps": 8,
                   "dense_steps": 3}}
"""The embedding, the rows each worker touches per step and the timed steps, per size."""

WORKERS = (1, 2, 4)
SWEEP_BYTES = (0, 1 << 10, 1 << 14, 1 << 18, 1 << 21, 1 << 23)
"""Bytes each worker sends each peer in one all_to_all of the sweep."""

CAVEAT = ("a shared 2-core machine (five engineers' jobs ran beside it): the workers share two "
          "cores and loopback, so wall times are inflated and noisy; bytes are exact")



def _written() -> int:
    """Bytes this process has passed to write system calls (sockets included)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


# -- the workers -----------------------------------------------------------------------------
def _grads(mx: Any, rank: int, size: dict[str, int], count: int) -> list[tuple[Any, Any]]:
    """``count`` (row_sparse gradient, ids the next batch pulls) of this worker, made before the
    timing as a backward pass would make them."""
    rng = np.random.default_rng(rank)
    rows, cols, touched = size["rows"], size["cols"], size["touched"]
    values = rng.standard_normal((touched, cols)).astype(np.float32)
    made = []
    for _ in range(count):
        ids = np.sort(rng.choice(rows, touched, replace=False))
        grad = mx.nd.sparse.row_sparse_array((values, ids), shape=(rows, cols))
        made.append((grad, mx.nd.array(np.sort(rng.choice(rows, touched, replace=False)),
                                       dtype="int64")))
    return made


def _timed(steps: int, step: Any, kv: Any) -> dict[str, Any]:
    """Run ``step(i)`` ``steps`` times after one untimed step: wall and CPU seconds per step,
    payload and written bytes per step."""
    step(0)
    kv.barrier()
    walls, cpus = [], []
    sent, written = kv.bytes_sent, _written()
    for i in range(1, steps + 1):
        wall, cpu = time.perf_counter(), time.process_time()
        step(i)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    kv.barrier()
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus),
            "payload_bytes": (kv.bytes_sent - sent) / steps,
            "written_bytes": (_written() - written) / steps}


def worker(mode: str, size_name: str, out: str) -> None:
    """One worker of a benchmark run (started by ``run`` through ``sparsegen launch``)."""
    import sparsegen as mx

    size = SIZES[size_name]
    kv = mx.kv.create("dist_sync", timeout=600)
    shape = (size["rows"], size["cols"])
    if mode == "sweep":
        result = _sweep(kv)
    elif mode == "sparse":
        kv.init("emb", mx.nd.random.normal(0, 0.01, shape=shape).tostype("row_sparse"))
        kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.01, lazy_update=True))
        grads = _grads(mx, kv.rank, size, 4)
        rows = mx.nd.sparse.zeros("row_sparse", shape)

        def sparse_step(i: int) -> None:
            grad, ids = grads[i % len(grads)]
            kv.push("emb", grad)
            kv.row_sparse_pull("emb", out=rows, row_ids=ids)

        result = _timed(size["sparse_steps"], sparse_step, kv)
    else:
        kv.init("emb", mx.nd.random.normal(0, 0.01, shape=shape))
        kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.01))
        dense = _grads(mx, kv.rank, size, 1)[0][0].tostype("default")
        result = _timed(size["dense_steps"], lambda i: kv.push("emb", dense), kv)
    result.update(rank=kv.rank, workers=kv.num_workers)
    Path(out, f"{mode}-{kv.rank}.json").write_text(json.dumps(result))


def _sweep(kv: Any) -> dict[str, Any]:
    """Median seconds of one all_to_all_single per byte count each worker sends each peer."""
    import torch
    import torch.distributed as dist

    times = {}
    for nbytes in SWEEP_BYTES:
        send = torch.zeros(nbytes * kv.num_workers, dtype=torch.uint8)
        got = torch.empty_like(send)
        runs = []
        for _ in range(30 if nbytes < (1 << 20) else 8):
            kv.barrier()
            start = time.perf_counter()
            dist.all_to_all_single(got, send)
            runs.append(time.perf_counter() - start)
        times[str(nbytes)] = statistics.median(runs)
    return {"all_to_all_s": times}


# -- the driver ------------------------------------------------------------------------------
def _launch(mode: str, workers: int, size_name: str) -> list[dict[str, Any]]:
    from ..launch import launch

    with tempfile.TemporaryDirectory() as out:
        status = launch(workers, [sys.executable, "-m", "sparsegen.bench.dist", mode, size_name,
                                  out])
        if status != 0:
            raise RuntimeError(f"the {mode} benchmark on {workers} workers failed ({status})")
        return [json.loads(Path(out, f"{mode}-{r}.json").read_text()) for r in range(workers)]


def costs(times: dict[str, float], workers: int) -> dict[str, float]:
    """Per-message and per-byte seconds from an all_to_all sweep on ``workers`` workers (bytes
    per peer -> seconds): the median time of the exchanges of at most 256 KiB a peer over their
    ``workers - 1`` messages, and the least-squares slope of time over the bytes a worker
    sends."""
    small = [t for b, t in times.items() if int(b) <= 1 << 18]
    sent = np.array([int(b) * (workers - 1) for b in times], dtype=np.float64)
    slope = np.polyfit(sent, np.array(list(times.values())), 1)[0]
    return {"per_message_s": statistics.median(small) / (workers - 1),
            "per_byte_s": float(max(slope, 1e-12))}


def run(quick: bool = False) -> dict[str, Any]:
    """Every configuration, then the sweep: the report."""
    size_name = "quick" if quick else "full"
    jobs = [(mode, w) for w in WORKERS for mode in ("sparse", "dense")] + [("sweep", 2),
                                                                          ("sweep", 4)]
    rows, sweeps = [], {}
    for mode, workers in tqdm(jobs, desc="dist kvstore", disable=not sys.stderr.isatty()):
        results = _launch(mode, workers, size_name)
        if mode == "sweep":
            sweeps[workers] = {k: max(r["all_to_all_s"][k] for r in results)
                               for k in results[0]["all_to_all_s"]}
            continue
        rows.append({"mode": mode, "workers": workers,
                     "steps_per_s": 1 / max(r["wall_s"] for r in results),
                     "wall_ms": 1e3 * max(r["wall_s"] for r in results),
                     "cpu_ms": 1e3 * statistics.mean(r["cpu_s"] for r in results),
                     "payload_bytes": statistics.mean(r["payload_bytes"] for r in results),
                     "written_bytes": statistics.mean(r["written_bytes"] for r in results)})
    measured = {str(w): {**costs(t, w), "all_to_all_s": t} for w, t in sweeps.items()}
    return {"size": SIZES[size_name], "machine": {"cpu": cpu_name(), "cores": os.cpu_count(),
                                                  "caveat": CAVEAT},
            "rows": rows, "costs": measured, "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                   time.gmtime())}


def model(report: dict[str, Any], workers: int) -> dict[str, float]:
    """Predicted seconds per step at ``workers`` workers, sparse and dense, from the measured
    per-message and per-byte costs of the 2-worker sweep (one pair, each worker on its own
    core, as on a cluster) and the measured 1-worker compute."""
    size, cost = report["size"], report["costs"]["2"]
    alpha, beta = cost["per_message_s"], cost["per_byte_s"]
    compute = {r["mode"]: r["wall_ms"] / 1e3 for r in report["rows"] if r["workers"] == 1}
    peers = workers - 1
    row = size["cols"] * 4
    share = size["touched"] * peers / workers  # rows a worker sends away
    sparse_bytes = share * (row + 8) + share * (8 + row)  # push (ids, rows), pull (ids, rows)
    sparse = compute["sparse"] + 6 * peers * alpha + sparse_bytes * beta  # 6 exchanges a step
    dense_bytes = 2 * peers / workers * size["rows"] * row  # a ring all_reduce
    dense = compute["dense"] + 2 * peers * alpha + dense_bytes * beta
    return {"sparse_s": sparse, "dense_s": dense, "sparse_bytes": sparse_bytes,
            "dense_bytes": dense_bytes}


def markdown(report: dict[str, Any]) -> str:
    """The report as a markdown page."""
    size, machine = report["size"], report["machine"]
    lines = [
        "# The dist_sync kvstore against dense all_reduce",
        "",
        f"Embedding {size['rows']:,} x {size['cols']} float32, lazy Adam, {size['touched']:,} "
        "rows touched per step per worker; sparse = dist_sync push + row_sparse_pull of the "
        "next batch's rows, dense = all_reduce of the dense gradient + dense Adam on every "
        f"worker (DDP's way). Workers on 127.0.0.1 (gloo). Machine: {machine['cpu']}, "
        f"{machine['cores']} cores; {machine['caveat']}. {report['date']}.",
        "",
        "| workers | mode | steps/s | ms/step (wall, slowest worker) | CPU ms/step | payload "
        "bytes/step/worker | written bytes/step/worker |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        lines.append(f"| {r['workers']} | {r['mode']} | {r['steps_per_s']:.2f} | "
                     f"{r['wall_ms']:.1f} | {r['cpu_ms']:.1f} | {r['payload_bytes']:,.0f} | "
                     f"{r['written_bytes']:,.0f} |")
    by = {(r["mode"], r["workers"]): r for r in report["rows"]}
    lines += ["", "| workers | bytes: dense / sparse | steps/s: sparse / dense |", "|---|---|---|"]
    for w in WORKERS[1:]:
        s, d = by[("sparse", w)], by[("dense", w)]
        lines.append(f"| {w} | {d['written_bytes'] / max(s['written_bytes'], 1):.1f}x | "
                     f"{s['steps_per_s'] / d['steps_per_s']:.1f}x |")
    lines += ["", "Costs from the all_to_all sweep (seconds = per message x peers + per byte x "
              "bytes):", "", "| workers | per message | per byte | GB/s |", "|---|---|---|---|"]
    for w, c in sorted(report["costs"].items(), key=lambda item: int(item[0])):
        lines.append(f"| {w} | {c['per_message_s'] * 1e6:.0f} us | {c['per_byte_s'] * 1e9:.3f} "
                     f"ns | {1 / c['per_byte_s'] / 1e9:.2f} |")
    lines += ["", "Modelled time per step (the 1-worker compute + messages x per-message cost + "
              "bytes x per-byte cost, both from the 2-worker sweep; docs/distributed.md):", "",
              "| workers | sparse s/step | dense s/step | sparse bytes | dense bytes |",
              "|---|---|---|---|---|"]
    for w in (8, 64):
        m = model(report, w)
        lines.append(f"| {w} | {m['sparse_s']:.3f} | {m['dense_s']:.3f} | "
                     f"{m['sparse_bytes']:,.0f} | {m['dense_bytes']:,.0f} |")
    return "\n".join(lines) + "\n"


def write(report: dict[str, Any], out: Path) -> list[Path]:
    """dist-kvstore.json and dist-kvstore.md under ``out``."""
    paths = [out / "dist-kvstore.json", out / "dist-kvstore.md"]
    paths[0].write_text(json.dumps(report, indent=1) + "\n")
    paths[1].write_text(markdown(report))
    return paths


if __name__ == "__main__":
    worker(*sys.argv[1:4])
