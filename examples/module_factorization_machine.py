"""A factorization machine for click prediction, trained with mx.mod.Module as an MXNet user
writes it.

Run with `python examples/module_factorization_machine.py` (`--help` for the sizes). The same
file runs on MXNet 1.9.1 when its import line reads `import mxnet as mx` (checked with
/work/mxvenv/bin/python at the default sizes: training log loss 0.611, 0.455, 0.318 and
accuracy 0.667, 0.789, 0.874 over the 3 epochs; sparsegen: 0.610, 0.445, 0.294 and 0.663,
0.795, 0.887, from other random initial weights).

The data: a libsvm file of 20,000 samples over 100,000 hashed features, about 30 per sample
(power-law frequencies), labelled by a hidden factorization machine, read in csr batches by
mx.io.LibSVMIter. The model (Rendle's factorization machine): for a csr row x,

    logit = w0 + x·w + 1/2 * sum_f ((x·v)_f^2 - (x^2)·(v_f^2))

with `w` (features x 1) and `v` (features x factors) row_sparse: `dot(csr, w)` and
`dot(csr, v)` give them row_sparse gradients holding only the rows of a batch's features.
Module.fit updates them lazily with Adam on a local kvstore, and `sparse_row_id_fn` makes
`Module.prepare` pull from the kvstore only the rows the next batch needs.

On several processes, unchanged but for the kvstore's type (each worker writes the same file
and trains on its part of it):
`sparsegen launch -n 2 -- python examples/module_factorization_machine.py --kvstore dist_sync`.
"""

import argparse
import logging
import os
import tempfile

import numpy as np

import sparsegen as mx


def write_libsvm(path, samples, features, per_sample, factors, rng):
    """Samples of hashed features labelled by a hidden factorization machine."""
    w = rng.normal(0, 0.5, features)
    v = rng.normal(0, 0.3, (features, factors))
    with open(path, "w") as f:
        for _ in range(samples):
            ids = np.unique(np.minimum(rng.zipf(1.2, per_sample), features) - 1)
            pairs = 0.5 * ((v[ids].sum(0) ** 2).sum() - (v[ids] ** 2).sum())
            label = int(w[ids].sum() + pairs + rng.normal(0, 0.5) > 0)
            f.write(f"{label} " + " ".join(f"{i}:1" for i in ids) + "\n")


def factorization_machine(features, factors):
    """The FM's symbol: sigmoid(w0 + x·w + pairwise interactions), logistic loss."""
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("w", shape=(features, 1), stype="row_sparse",
                        init=mx.init.Normal(0.01))
    v = mx.sym.Variable("v", shape=(features, factors), stype="row_sparse",
                        init=mx.init.Normal(0.01))
    w0 = mx.sym.Variable("w0", shape=(1,), init=mx.init.Zero())
    linear = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), w0)
    square_of_sum = mx.sym.square(mx.sym.sparse.dot(x, v))
    sum_of_squares = mx.sym.sparse.dot(mx.sym.square(x),
                                       mx.sym._internal._square_sum(v, axis=1, keepdims=True))
    pairs = 0.5 * mx.sym.sum(square_of_sum, axis=1, keepdims=True) - 0.5 * sum_of_squares
    return mx.sym.LogisticRegressionOutput(linear + pairs, mx.sym.Variable("softmax_label"),
                                           name="out")


def log_loss(label, prob):
    """The mean logistic loss of probabilities ``prob`` (n x 1) for 0/1 labels."""
    p = np.clip(prob.reshape(-1), 1e-7, 1 - 1e-7)
    return float(-np.mean(label * np.log(p) + (1 - label) * np.log(1 - p)))


def accuracy(label, prob):
    """The share of samples whose probability is on the side of their label."""
    return float(np.mean((prob.reshape(-1) > 0.5) == (label > 0.5)))


def main(argv=None):
    """Write the data, then train the factorization machine with Module.fit."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=100_000)
    parser.add_argument("--per-sample", type=int, default=30)
    parser.add_argument("--factors", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--kvstore", default="local",
                        help="'dist_sync' under a launcher: each worker trains on its part")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rng = np.random.default_rng(0)
    mx.random.seed(0)
    path = os.path.join(tempfile.mkdtemp(), "clicks.libsvm")
    write_libsvm(path, args.samples, args.features, args.per_sample, args.factors, rng)
    kv = mx.kv.create(args.kvstore)
    train = mx.io.LibSVMIter(data_libsvm=path, data_shape=(args.features,),
                             batch_size=args.batch_size, num_parts=kv.num_workers,
                             part_index=kv.rank)
    if kv.num_workers > 1:  # a synchronous step needs every worker's batch: as many on each
        train = mx.io.ResizeIter(train, args.samples // args.batch_size // kv.num_workers)

    mod = mx.mod.Module(factorization_machine(args.features, args.factors),
                        data_names=["data"], label_names=["softmax_label"], context=mx.cpu())
    metric = mx.metric.CompositeEvalMetric([mx.metric.np(log_loss), mx.metric.np(accuracy)])
    mod.fit(train, num_epoch=args.epochs, eval_metric=metric,
            kvstore=kv, optimizer="adam",
            optimizer_params={"learning_rate": args.lr},
            initializer=mx.init.Normal(0.01),
            batch_end_callback=mx.callback.Speedometer(args.batch_size, 10),
            sparse_row_id_fn=lambda batch: {"w": batch.data[0].indices,
                                            "v": batch.data[0].indices})
    return mod


if __name__ == "__main__":
    main()
