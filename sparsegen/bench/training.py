"""Training throughput and peak memory of one Gluon sparse model: sparsegen, MXNet 1.9.1, PyTorch
(issue 14's benchmark, ``sparsegen bench --training``).

The model: csr batches of ``batch`` samples with about ``per_sample`` non-zeros each over
``features`` features; a ``features x embed`` embedding summed per sample (``dot(csr, W)`` with a
row_sparse gradient; PyTorch: ``nn.EmbeddingBag(mode='sum', sparse=True)``), two dense layers on
top (embed -> embed relu -> 1), sigmoid binary cross-entropy, lazy Adam (PyTorch: ``SparseAdam``
for the embedding, ``Adam`` for the dense layers). The sparsegen and MXNet runs are the same
Gluon code with ``import sparsegen as mx`` or ``import mxnet as mx``.

Each run is a fresh process (so its peak RSS is its own): it builds the batches, trains
``warmup`` steps, then times ``steps`` steps by the wall clock and by the process's CPU time.
Implementations alternate, ``rounds`` rounds; medians are reported. On a shared machine the CPU
time (samples per CPU-second) is the steadier figure: a process waiting for a core is not
charged. A last sparsegen run splits its CPU time per step into kernel calls and Python (one
thread, each kernel function timed with ``time.thread_time``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .harness import cpu_name, fresh_run

MXNET_PYTHON = "/work/mxvenv/bin/python"
"""Where this project's machines keep a Python with mxnet==1.9.1 (``--mxnet`` names another)."""


@dataclass(frozen=True)
class Config:
    """The model and the run: issue 14's sizes by default, ``quick()`` for a smoke test."""

    features: int = 1_000_000
    embed: int = 64
    batch: int = 512
    per_sample: int = 40
    steps: int = 60
    warmup: int = 10
    rounds: int = 3

    @staticmethod
    def quick() -> Config:
        """A model small enough to train in a second per process."""
        return Config(features=10_000, embed=8, batch=32, per_sample=4, steps=3, warmup=1,
                      rounds=1)

    def title(self) -> str:
        """The model in words."""
        return (f"{self.features:,} x {self.embed} embedding (row_sparse grad), batch "
                f"{self.batch}, ~{self.per_sample} non-zeros per sample, Dense({self.embed}, "
                "relu), Dense(1), sigmoid BCE, lazy Adam")


DATA = """
import resource, time
import numpy as np
import scipy.sparse
rng = np.random.default_rng(0)
def batch(k):
    cols = np.minimum(rng.zipf(1.2, {batch} * {per_sample}), {features}) - 1
    rows = np.repeat(np.arange({batch}), {per_sample})
    x = scipy.sparse.csr_matrix((np.ones(cols.size, np.float32), (rows, cols)),
                                shape=({batch}, {features}))
    x.sum_duplicates()
    x.data[:] = 1
    y = (rng.random({batch}) < 0.3).astype(np.float32)
    return x, y
batches = [batch(k) for k in range(16)]
"""

GLUON = DATA + """
import {module} as mx
gluon, nn, autograd = mx.gluon, mx.gluon.nn, mx.autograd
class Model(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.embed = self.params.get("embed", shape=({features}, {embed}),
                                         grad_stype="row_sparse")
            self.mlp = nn.HybridSequential()
            self.mlp.add(nn.Dense({embed}, activation="relu"), nn.Dense(1))
    def hybrid_forward(self, F, x, embed):
        return self.mlp(F.sparse.dot(x, embed))
model = Model()
model.initialize(mx.init.Normal(0.01))
trainer = gluon.Trainer(model.collect_params(), "adam", {{"learning_rate": 0.001}})
loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
data = [(mx.nd.sparse.csr_matrix(x), mx.nd.array(y)) for x, y in batches]
def step(k):
    x, y = data[k % len(data)]
    with autograd.record():
        loss = loss_fn(model(x), y)
    loss.backward()
    trainer.step({batch})
    return loss
for k in range({warmup}):
    step(k).asnumpy()
t, cpu = time.perf_counter(), time.process_time()
for k in range({steps}):
    last = step(k)
last.asnumpy()
mx.nd.waitall()
"""

TORCH = DATA + """
import torch
torch.manual_seed(0)
torch.set_num_threads({threads})
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.EmbeddingBag({features}, {embed}, mode="sum", sparse=True)
        torch.nn.init.normal_(self.embed.weight, std=0.01)
        self.mlp = torch.nn.Sequential(torch.nn.Linear({embed}, {embed}), torch.nn.ReLU(),
                                       torch.nn.Linear({embed}, 1))
    def forward(self, ids, offsets):
        return self.mlp(self.embed(ids, offsets)).squeeze(1)
model = Model()
sparse_opt = torch.optim.SparseAdam([model.embed.weight], lr=0.001)
dense_opt = torch.optim.Adam(model.mlp.parameters(), lr=0.001)
loss_fn = torch.nn.BCEWithLogitsLoss()
data = [(torch.from_numpy(x.indices.astype(np.int64)),
         torch.from_numpy(x.indptr[:-1].astype(np.int64)), torch.from_numpy(y))
        for x, y in batches]
def step(k):
    ids, offsets, y = data[k % len(data)]
    sparse_opt.zero_grad(); dense_opt.zero_grad()
    loss = loss_fn(model(ids, offsets), y)
    loss.backward()
    sparse_opt.step(); dense_opt.step()
    return loss
for k in range({warmup}):
    step(k).item()
t, cpu = time.perf_counter(), time.process_time()
for k in range({steps}):
    last = step(k)
last.item()
"""

REPORT = """
seconds, cpu_seconds = time.perf_counter() - t, time.process_time() - cpu
print(seconds, cpu_seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""

SPLIT = """
import time as _time
import sparsegen.cacheentry as _entry
_kernel_seconds = [0.0]
_init = _entry.Kernel.__init__
def _timed(function):
    def call(*args):
        start = _time.thread_time()
        try:
            return function(*args)
        finally:
            _kernel_seconds[0] += _time.thread_time() - start
    return call
def _init_timed(self, key, module, path):
    _init(self, key, module, path)
    for name, function in self.functions.items():
        setattr(self, name, _timed(function))
_entry.Kernel.__init__ = _init_timed
""" + GLUON.replace("t, cpu = time.perf_counter(), time.process_time()",
                    "t, cpu = time.perf_counter(), time.process_time(); _kernel_seconds[0] = 0.0")

SPLIT_REPORT = """
cpu_seconds = time.process_time() - cpu
print(cpu_seconds, _kernel_seconds[0])
"""



def _environment(threads: int, cache: str | None) -> dict[str, str]:
    root = str(Path(__file__).resolve().parent.parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "TVM_NUM_THREADS": str(threads),
           "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"}
    if cache:
        env["SPARSEGEN_CACHE_DIR"] = cache
    return env


def run(config: Config, threads: int, mxnet: str | None = MXNET_PYTHON,
        progress: bool | None = None) -> dict[str, Any]:
    """Train the model ``config.rounds`` times per implementation (fresh processes, alternating)
    and return the medians: samples/s by the wall clock and per CPU-second, peak RSS, and
    sparsegen's CPU ms per step split into kernels and Python (one thread)."""
    fields = {**asdict(config), "threads": threads}
    env = _environment(threads, os.environ.get("SPARSEGEN_CACHE_DIR"))
    runs = {"sparsegen": (sys.executable, GLUON.format(module="sparsegen", **fields) + REPORT)}
    if importlib.util.find_spec("torch") is not None:  # the PyTorch run uses this Python
        runs["PyTorch"] = (sys.executable, TORCH.format(**fields) + REPORT)
    if mxnet and Path(mxnet).exists():
        runs["MXNet 1.9.1"] = (mxnet, GLUON.format(module="mxnet", **fields) + REPORT)
    bar = tqdm(total=1 + config.rounds * len(runs) + 1, desc="training benchmark", unit="run",
               disable=None if progress is None else not progress)
    fresh_run(*runs["sparsegen"], env)  # builds or loads the kernels once, before any timing
    bar.update(1)
    times: dict[str, list[list[float]]] = {name: [] for name in runs}
    for r in range(config.rounds):
        for name, (python, code) in runs.items():
            bar.set_postfix_str(f"round {r + 1} {name}", refresh=True)
            times[name].append(fresh_run(python, code, env))
            bar.update(1)
    bar.set_postfix_str("sparsegen kernel / Python split", refresh=True)
    cpu, kernels = fresh_run(sys.executable,
                             SPLIT.format(module="sparsegen", **{**fields, "threads": 1})
                             + SPLIT_REPORT, _environment(1, env.get("SPARSEGEN_CACHE_DIR")))
    bar.update(1)
    bar.close()
    samples = config.batch * config.steps
    return {
        "cpu": cpu_name(), "threads": threads, "model": config.title(), "config": asdict(config),
        "samples_per_s": {n: statistics.median(samples / s for s, _, _ in v)
                          for n, v in times.items()},
        "samples_per_cpu_s": {n: statistics.median(samples / c for _, c, _ in v)
                              for n, v in times.items()},
        "peak_rss_mb": {n: statistics.median(p for _, _, p in v) for n, v in times.items()},
        "runs": times,
        "sparsegen_cpu_ms_per_step_1_thread": {
            "total": 1e3 * cpu / config.steps, "kernels": 1e3 * kernels / config.steps,
            "python": 1e3 * (cpu - kernels) / config.steps},
    }


def _threads(count: int) -> str:
    return f"{count} thread{'' if count == 1 else 's'}"


def markdown(result: dict[str, Any]) -> str:
    """The result as a table, with the ratios to the fastest peer and the caveats."""
    wall, cpu = result["samples_per_s"], result["samples_per_cpu_s"]
    config, split = result["config"], result["sparsegen_cpu_ms_per_step_1_thread"]
    lines = [f"# Gluon sparse training: {result['model']}", "",
             f"CPU: {result['cpu']} ({_threads(result['threads'])}); {config['rounds']} rounds of "
             f"{config['steps']} timed steps each after {config['warmup']} warm-up steps, "
             "implementations alternating, each run a fresh process. The machine is shared: "
             "wall-clock figures move with the other load; the CPU-time figures (samples per "
             "CPU-second of the process) are the steadier ones.", "",
             "| implementation | samples/s (wall, median) | samples per CPU-second (median) | "
             "peak RSS MB |", "|---|---:|---:|---:|"]
    for name in wall:
        lines.append(f"| {name} | {wall[name]:,.0f} | {cpu[name]:,.0f} | "
                     f"{result['peak_rss_mb'][name]:,.0f} |")
    peers = [n for n in wall if n != "sparsegen"]
    if peers:
        lines.append("")
        for label, figures in (("wall clock", wall), ("CPU time", cpu)):
            ratios = ", ".join(f"{figures['sparsegen'] / figures[n]:.2f}x {n}" for n in peers)
            lines.append(f"- sparsegen by {label}: {ratios}")
    lines += ["", f"sparsegen's CPU time per step on one thread: {split['total']:.2f} ms, of which "
              f"kernel calls {split['kernels']:.2f} ms and Python {split['python']:.2f} ms "
              "(each kernel function timed with `time.thread_time`)."]
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], path: Path, title: str = "Gluon sparse training") -> None:
    """Bars of samples/s (wall) and samples per CPU-second per implementation (``result``'s
    ``samples_per_s`` and ``samples_per_cpu_s`` by name, ``cpu``, ``threads``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["samples_per_s"])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for k, (key, label) in enumerate((("samples_per_s", "samples/s (wall)"),
                                      ("samples_per_cpu_s", "samples per CPU-second"))):
        ax.bar([i + 0.4 * k for i in range(len(names))], [result[key][n] for n in names], 0.4,
               label=label)
    ax.set_xticks([i + 0.2 for i in range(len(names))])
    ax.set_xticklabels(names)
    ax.set_ylabel("samples per second (higher is better)")
    ax.set_title(f"{title}, {result['cpu']}, {_threads(result['threads'])} "
                 "(shared machine)", fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(result: dict[str, Any], out: Path) -> list[Path]:
    """``gluon-train.json``, ``gluon-train.md`` and ``gluon-train.png`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "gluon-train.json", out / "gluon-train.md", out / "gluon-train.png"]
    paths[0].write_text(json.dumps(result, indent=2) + "\n")
    paths[1].write_text(markdown(result))
    plot(result, paths[2])
    return paths

