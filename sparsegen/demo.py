"""``sparsegen demo``: sparse logistic regression trained end to end on generated kernels.

A click-through-style data set (about a million hashed features with power-law frequencies,
about 100 non-zeros per row) is trained with the forward pass ``dot(csr, w)``, the gradient
``dot(csrᵀ, g)`` as row_sparse, and lazy Adam; then the same model with dense gradients and
standard Adam, for comparison.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

import sparsegen as mx


@dataclass(frozen=True)
class DemoConfig:
    """Sizes and hyperparameters of the demo (the defaults finish in about a minute on 2 cores)."""

    features: int = 1_000_000
    train_rows: int = 100_000
    test_rows: int = 10_000
    nnz_per_row: int = 100
    batch: int = 1_000
    epochs: int = 3
    learning_rate: float = 0.005
    seed: int = 0


@dataclass
class History:
    """Per-epoch training loss, held-out accuracy and throughput of one training run."""

    name: str
    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    samples_per_s: list[float] = field(default_factory=list)


def make_data(cfg: DemoConfig) -> tuple[mx.nd.CSRNDArray, np.ndarray, mx.nd.CSRNDArray, np.ndarray]:
    """Hashed power-law features and labels drawn from a hidden sparse logistic model."""
    rng = np.random.default_rng(cfg.seed)
    rows = cfg.train_rows + cfg.test_rows
    # feature ids: a Zipf-like law over the hashed id space, deduplicated within each row
    draws = int(cfg.nnz_per_row * 1.7)  # duplicates of popular features are dropped below
    ranks = np.minimum(rng.zipf(1.1, size=(rows, draws)), cfg.features) - 1
    ids = np.sort((ranks * 2654435761) % cfg.features, axis=1)
    keep = np.ones_like(ids, dtype=bool)
    keep[:, 1:] = ids[:, 1:] != ids[:, :-1]
    counts = keep.sum(axis=1)
    indptr = np.zeros(rows + 1, np.int64)
    indptr[1:] = np.cumsum(counts)
    indices = ids[keep].astype(np.int64)
    values = np.ones(indices.size, np.float32)
    truth = (rng.standard_normal(cfg.features) * (rng.random(cfg.features) < 0.3)).astype(np.float32)
    margin = np.add.reduceat(truth[indices], indptr[:-1]) / np.sqrt(counts)
    labels = (rng.random(rows) < 1 / (1 + np.exp(-4 * margin))).astype(np.float32)
    x = mx.nd.sparse.csr_matrix((values, indices, indptr), shape=(rows, cfg.features))
    return x[: cfg.train_rows], labels[: cfg.train_rows], x[cfg.train_rows :], labels[cfg.train_rows :]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


def train(cfg: DemoConfig, data: tuple, sparse_gradients: bool, progress: bool | None = None) -> History:
    """Train logistic regression; row_sparse gradients with lazy Adam, or dense and standard."""
    x_train, y_train, x_test, y_test = data
    name = "row_sparse grad + lazy Adam" if sparse_gradients else "dense grad + standard Adam"
    history = History(name)
    weight = mx.nd.zeros((cfg.features, 1))
    adam = mx.optimizer.Adam(learning_rate=cfg.learning_rate, lazy_update=sparse_gradients)
    state = adam.create_state(0, weight)
    batches = [(x_train[lo : lo + cfg.batch], y_train[lo : lo + cfg.batch].reshape(-1, 1))
               for lo in range(0, cfg.train_rows, cfg.batch)]
    grad_stype = None if sparse_gradients else "default"

    def step(xb: mx.nd.CSRNDArray, yb: np.ndarray) -> float:
        p = _sigmoid(mx.nd.dot(xb, weight).asnumpy())
        g = mx.nd.array((p - yb) / len(yb))
        grad = mx.nd.dot(xb, g, transpose_a=True, forward_stype=grad_stype)
        adam.update(0, weight, grad, state)
        return float(-np.sum(yb * np.log(p + 1e-7) + (1 - yb) * np.log(1 - p + 1e-7)))

    warmup = mx.optimizer.Adam(learning_rate=0.0, lazy_update=sparse_gradients)
    warmup.update(0, weight, mx.nd.dot(batches[0][0], mx.nd.zeros((len(batches[0][1]), 1)),
                                       transpose_a=True, forward_stype=grad_stype),
                  warmup.create_state(0, weight))  # compile (or load) every kernel before timing
    for epoch in range(cfg.epochs):
        total, start = 0.0, time.perf_counter()
        bar = tqdm(batches, desc=f"{name}, epoch {epoch + 1}/{cfg.epochs}", unit="batch",
                   leave=False, disable=None if progress is None else not progress)
        for xb, yb in bar:
            total += step(xb, yb)
        elapsed = time.perf_counter() - start
        predicted = _sigmoid(mx.nd.dot(x_test, weight).asnumpy()).ravel() > 0.5
        history.loss.append(total / cfg.train_rows)
        history.accuracy.append(float(np.mean(predicted == (y_test > 0.5))))
        history.samples_per_s.append(cfg.train_rows / elapsed)
    return history


def run(cfg: DemoConfig = DemoConfig(), progress: bool | None = None, echo=print) -> list[History]:
    """The whole demo: data, the sparse run, the dense run, a one-line summary."""
    start = time.perf_counter()
    data = make_data(cfg)
    nnz = data[0].data.shape[0] + data[2].data.shape[0]
    echo(f"data: {cfg.train_rows:,} training and {cfg.test_rows:,} held-out rows, "
         f"{cfg.features:,} hashed features, {nnz / (cfg.train_rows + cfg.test_rows):.0f} "
         f"non-zeros per row ({time.perf_counter() - start:.1f} s)")
    runs = []
    for sparse_gradients in (True, False):
        history = train(cfg, data, sparse_gradients, progress)
        echo(f"\n{history.name}")
        for epoch, (loss, acc, rate) in enumerate(
                zip(history.loss, history.accuracy, history.samples_per_s), 1):
            echo(f"  epoch {epoch}: loss {loss:.4f}  held-out accuracy {acc:.3f}  "
                 f"{rate:,.0f} samples/s")
        runs.append(history)
    sparse, dense = runs
    echo(f"\nsummary: row_sparse gradients trained at {np.median(sparse.samples_per_s):,.0f} "
         f"samples/s, {np.median(sparse.samples_per_s) / np.median(dense.samples_per_s):.1f}x "
         f"the dense-gradient run, to held-out accuracy {sparse.accuracy[-1]:.3f} "
         f"(dense {dense.accuracy[-1]:.3f}) in {time.perf_counter() - start:.0f} s")
    return runs
