"""``sparsegen demo``: a sparse model trained in Gluon end to end on generated kernels.

A click-through-style data set (about a million hashed features with power-law frequencies,
about 100 non-zeros per row) trains logistic regression written as MXNet users write it: a
``gluon.HybridBlock`` computing ``dot(csr, w)``, ``gluon.loss.SigmoidBinaryCrossEntropyLoss``,
``mx.autograd`` and ``gluon.Trainer``. ``w``'s gradient is row_sparse (``dot(csrᵀ, g)``: only
the features of the batch) and Adam updates it lazily; then the same model trains with dense
gradients and standard Adam, for comparison. The loss curves of both go to a PNG.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

import sparsegen as mx

gluon, autograd = mx.gluon, mx.autograd


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
    """Per-epoch training loss, held-out accuracy and throughput of one training run, and the
    loss of every batch."""

    name: str
    batch_loss: list[float] = field(default_factory=list)
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


class LogisticRegression(gluon.HybridBlock):
    """``sigmoid⁻¹(p) = x · w`` for csr rows ``x``; ``w``'s gradient in storage ``grad_stype``."""

    def __init__(self, features: int, grad_stype: str, **kwargs) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(features, 1), init=mx.init.Zero(),
                                          grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):  # noqa: N803 - Gluon's signature
        """The logits of the rows of ``x``."""
        return F.sparse.dot(x, weight)


def train(cfg: DemoConfig, data: tuple, sparse_gradients: bool, progress: bool | None = None) -> History:
    """Train the model in Gluon; row_sparse gradients with lazy Adam, or dense and standard."""
    x_train, y_train, x_test, y_test = data
    name = "row_sparse grad + lazy Adam" if sparse_gradients else "dense grad + standard Adam"
    history = History(name)
    model = LogisticRegression(cfg.features, "row_sparse" if sparse_gradients else "default")
    model.initialize()
    trainer = gluon.Trainer(model.collect_params(), "adam",
                            {"learning_rate": cfg.learning_rate, "lazy_update": sparse_gradients})
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    batches = [(x_train[lo : lo + cfg.batch], mx.nd.array(y_train[lo : lo + cfg.batch]))
               for lo in range(0, cfg.train_rows, cfg.batch)]

    def step(xb: mx.nd.CSRNDArray, yb: mx.nd.NDArray) -> float:
        with autograd.record():
            loss = loss_fn(model(xb), yb)
        loss.backward()
        trainer.step(xb.shape[0])
        return float(loss.sum().asscalar())

    step(*batches[0])  # compile (or load) every kernel before timing, then start afresh
    model.weight.set_data(mx.nd.zeros((cfg.features, 1)))
    trainer = gluon.Trainer(model.collect_params(), "adam",
                            {"learning_rate": cfg.learning_rate, "lazy_update": sparse_gradients})
    for epoch in range(cfg.epochs):
        total, start = 0.0, time.perf_counter()
        bar = tqdm(batches, desc=f"{name}, epoch {epoch + 1}/{cfg.epochs}", unit="batch",
                   leave=False, disable=None if progress is None else not progress)
        for xb, yb in bar:
            loss = step(xb, yb)
            history.batch_loss.append(loss / xb.shape[0])
            total += loss
        elapsed = time.perf_counter() - start
        predicted = mx.nd.sigmoid(model(x_test)).asnumpy().ravel() > 0.5
        history.loss.append(total / cfg.train_rows)
        history.accuracy.append(float(np.mean(predicted == (y_test > 0.5))))
        history.samples_per_s.append(cfg.train_rows / elapsed)
    return history


def plot(runs: list[History], path: Path) -> None:
    """The per-batch training loss of each run (a moving average over 10 batches) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for history in runs:
        losses = np.asarray(history.batch_loss)
        window = min(10, len(losses))
        smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, len(losses) + 1), smooth, label=history.name)
    ax.set_xlabel("batch")
    ax.set_ylabel("training loss (moving average of 10 batches)")
    ax.set_title("sparsegen demo: logistic regression in Gluon")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(cfg: DemoConfig = DemoConfig(), progress: bool | None = None, echo=print,
        plot_path: Path | None = None) -> list[History]:
    """The whole demo: data, the sparse run, the dense run, a one-line summary, and the loss
    curves in ``plot_path`` (a PNG) when given."""
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
    if plot_path is not None:
        plot(runs, plot_path)
        echo(f"loss curves: {plot_path}")
    return runs
