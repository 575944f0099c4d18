"""The GPU benchmark suite: W1-W7 on GPU 0, interleaved with PyTorch CUDA, on the GPU's clock.

Each call is timed on the device: with CUDA events on the default stream (through PyTorch, where
it runs on CUDA here; sparsegen's kernels launch on that stream too), else with the wall clock
around the call and a device synchronisation. The GPU's device-to-device copy bandwidth is
measured in the same run. The suite is fail-soft: an implementation or a workload that raises is
reported and the run goes on, and the results files are rewritten after every workload, so a
run stopped by a time limit keeps what it measured. ``SPARSEGEN_GPU=host`` runs all of it on
the host (``--quick`` sizes), which is how it is tested without a GPU.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from .. import cuda_runtime, device
from . import harness, peers
from .harness import Runner, Workload
from .workloads_gpu import WORKLOADS


BUDGET_S = 12.0
"""Timed seconds per workload at most: a slow implementation gets fewer rounds (at least 3)."""


def cuda_torch() -> Any:
    """``torch`` when it can run on a CUDA GPU here, else ``None``."""
    th = peers.torch()
    return th if th is not None and not device.emulated() and th.cuda.is_available() else None


class Clock:
    """Times GPU calls: CUDA events through torch, else wall clock plus a device sync."""

    def __init__(self, th: Any) -> None:
        self.th = th
        self.name = ("CUDA events (torch)" if th is not None
                     else "wall clock (host emulation)" if device.emulated()
                     else "wall clock + device synchronisation")

    def sync(self) -> None:
        """Wait for every kernel launched on GPU 0."""
        if self.th is not None:
            self.th.cuda.synchronize()
        elif not device.emulated():
            cuda_runtime.synchronize(0)

    def seconds(self, call: Callable[[], Any]) -> tuple[Any, float]:
        """``call()``'s result and its time on the device, in seconds."""
        if self.th is None:
            self.sync()
            start = time.perf_counter()
            result = call()
            self.sync()
            return result, time.perf_counter() - start
        start, end = (self.th.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        result = call()
        end.record()
        end.synchronize()
        return result, start.elapsed_time(end) / 1e3

    def wrap(self, runner: Runner, sink: list[float]) -> Runner:
        """``runner`` timed by this clock, each time appended to ``sink``."""

        def run() -> Any:
            result, seconds = self.seconds(runner)
            sink.append(seconds)
            return result
        return run


def copy_bandwidth(clock: Clock, quick: bool) -> dict[str, Any]:
    """GB/s of a device-to-device copy of a large float32 buffer (bytes read plus written)."""
    elements = 1 << 22 if quick else 1 << 28  # 16 MB or 1 GiB per buffer
    if clock.th is not None:
        src = clock.th.ones(elements, device="cuda")
        dst = clock.th.empty_like(src)
        copy, how = (lambda: dst.copy_(src)), "torch Tensor.copy_"
    else:
        where = device.gpu_device(0)
        src = device.DeviceArray.from_numpy(np.ones(elements, np.float32), where)
        dst = device.DeviceArray.empty(src.shape, src.dtype, where)
        copy, how = (lambda: dst.copy_from(src)), "TVM runtime copy"
    clock.seconds(copy)
    times = sorted(clock.seconds(copy)[1] for _ in range(5 if quick else 10))
    median = times[len(times) // 2]
    return {"copy": 2 * elements * 4 / median / 1e9, "method": f"{how}, {elements * 4 >> 20} MiB"}


def measure(workload: Workload, clock: Clock, repeats: int,
            budget_s: float = BUDGET_S) -> tuple[harness.Result | None, list[str]]:
    """Time ``workload``'s implementations interleaved (harness.run) on the device clock.

    Each implementation is prepared and called once first: one that raises is left out, and
    the first results are compared (a mismatch is reported, not fatal). The number of rounds
    keeps the timed calls within ``budget_s``. Returns the result (``None`` when no
    implementation ran) and the problems met.
    """
    problems: list[str] = []
    sinks: dict[str, list[float]] = {}
    runners: dict[str, Runner] = {}
    firsts: dict[str, Any] = {}
    for name, prepare in workload.impls.items():
        try:
            sinks[name] = []
            runner = clock.wrap(prepare(), sinks[name])
            firsts[name] = runner()
            runners[name] = runner
        except Exception as err:  # noqa: BLE001 - a failing implementation is reported
            problems.append(f"{name} failed: {type(err).__name__}: {_first_line(err)}")
    if not runners:
        return None, problems
    if workload.check is not None and len(firsts) > 1:
        reference = next(iter(firsts))
        for name in list(firsts)[1:]:
            try:
                workload.check(firsts[reference], firsts[name])
            except AssertionError as err:
                problems.append(f"{name} differs from {reference}: {_first_line(err)}")
    per_round = sum(sinks[name][-1] for name in runners)
    rounds = max(3, min(repeats, int(budget_s / max(per_round, 1e-9))))
    timed = dataclasses.replace(workload, impls={n: (lambda r=r: r) for n, r in runners.items()},
                                check=None)
    harness.run(timed, repeats=rounds, warmup=1)
    return harness.Result(workload, {n: sinks[n][-rounds:] for n in runners}), problems


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return next((line for line in text.splitlines() if line.strip()), "") if text else ""


def machine(th: Any) -> dict[str, Any]:
    """The GPU, its architecture and the PyTorch used, as far as they can be read."""
    if device.emulated():
        return {"gpu": "host emulation (SPARSEGEN_GPU=host)", "arch": None, "torch": None}
    return {"gpu": cuda_runtime.name(0), "arch": cuda_runtime.arch(0),
            "torch": f"{th.__version__} (CUDA {th.version.cuda})" if th is not None else None}


def run(ids: list[str], quick: bool = False, out: Path | None = None,
        progress: bool | None = None) -> dict[str, Any]:
    """Measure the copy bandwidth, then every workload in ``ids``; rewrites ``out`` after each."""
    th = cuda_torch()
    clock = Clock(th)
    bar = tqdm(total=len(ids) + 1, desc="GPU benchmarks", unit="step",
               disable=None if progress is None else not progress)
    bar.set_postfix_str("copy bandwidth", refresh=True)
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {**machine(th), "timer": clock.name},
        "quick": quick,
        "bandwidth_gbps": copy_bandwidth(clock, quick),
        "workloads": [],
    }
    bar.update(1)
    for workload_id in ids:
        bar.set_postfix_str(workload_id, refresh=True)
        try:
            workload = WORKLOADS[workload_id](quick, th)
            result, problems = measure(workload, clock, 3 if quick else workload.repeats)
            entry = ({**result.as_dict(), "problems": problems} if result is not None else
                     {"id": workload_id, "title": workload.title, "problems": problems})
        except Exception as err:  # noqa: BLE001 - one broken workload must not end the run
            entry = {"id": workload_id, "title": "",
                     "problems": [f"{type(err).__name__}: {_first_line(err)}"]}
        report["workloads"].append(entry)
        if out is not None:
            write(report, out)
        bar.update(1)
    bar.close()
    return report


def markdown(report: dict[str, Any]) -> str:
    """A table per workload: median ms, GB/s, fraction of the copy bandwidth, speedup over torch."""
    m, bw = report["machine"], report["bandwidth_gbps"]
    lines = [
        f"# sparsegen GPU benchmarks ({report['date']})",
        "",
        f"GPU: {m['gpu']}" + (f" ({m['arch']})" if m.get("arch") else "")
        + f"; PyTorch: {m['torch'] or 'not used'}; timer: {m['timer']}"
        + ("; quick sizes" if report["quick"] else "") + ".",
        f"Device-to-device copy measured in the same run: {bw['copy']:.1f} GB/s ({bw['method']}; "
        "bytes read plus written). The fraction below is of that figure.",
        "",
        "| workload | implementation | median ms | GB/s | of copy bandwidth | sparsegen speedup |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for w in report["workloads"]:
        ours = w.get("median_ms", {}).get("sparsegen")
        for impl, ms in w.get("median_ms", {}).items():
            speedup = f"{ms / ours:.2f}x" if ours and impl != "sparsegen" else ""
            lines.append(f"| {w['id']} {w['title']} | {impl} | {ms:.3f} | {w['gbps'][impl]:.1f} | "
                         f"{w['gbps'][impl] / bw['copy']:.0%} | {speedup} |")
    lines += ["", "Speedup is the peer's median time over sparsegen's (higher is better for "
              "sparsegen). Medians of interleaved runs; inputs and results stay in GPU memory."]
    for w in report["workloads"]:
        lines += [f"- {w['id']}: {text}" for text in w.get("notes", []) + w["problems"]]
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    """A bar chart of effective GB/s per workload and implementation, with the copy line."""
    harness.bar_chart(report, path, ("device copy", report["bandwidth_gbps"]["copy"]),
                      f"sparsegen vs PyTorch on {report['machine']['gpu']}", log_scale=True)


def write(report: dict[str, Any], out: Path) -> list[Path]:
    """results.json, results.md and results.png under ``out``."""
    return harness.write_results(report, out, markdown(report), plot)
