"""Record tests/data/mxnet_ckpt-symbol.json and mxnet_ckpt-0003.params with MXNet 1.9.1's
``mx.model.save_checkpoint`` (a FullyConnected + BatchNorm symbol: arg and aux parameters, one
of them row_sparse), and check that MXNet reads sparsegen's checkpoint
tests/data/sparsegen_ckpt-0002.params (written by tests/test_callback.py's
``write_sparsegen_checkpoint``) with the values that function puts in it.

Run: /work/mxvenv/bin/python tests/data/record_checkpoint.py
(sparsegen's file, first: PYTHONPATH=.:tests python -c "from test_callback import
write_sparsegen_checkpoint as w; w('tests/data/sparsegen_ckpt')")
"""

import os

import mxnet as mx
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
data = mx.sym.Variable("data")
net = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=2, name="fc"), name="bn")
arg_params = {
    "fc_weight": mx.nd.array(np.arange(6).reshape(2, 3) * 0.5),
    "fc_bias": mx.nd.array([1.0, -1.0]),
    "bn_gamma": mx.nd.array([2.0, 3.0]),
    "bn_beta": mx.nd.array([0.0, 0.25]),
    "emb_weight": mx.nd.sparse.row_sparse_array((np.ones((1, 2), "f"), [2]), shape=(4, 2)),
}
aux_params = {"bn_moving_mean": mx.nd.array([0.5, 1.5]),
              "bn_moving_var": mx.nd.array([1.0, 4.0])}
mx.model.save_checkpoint(os.path.join(here, "mxnet_ckpt"), 3, net, arg_params, aux_params)

theirs = os.path.join(here, "sparsegen_ckpt")
if os.path.exists(theirs + "-0002.params"):
    args, auxs = mx.model.load_params(theirs, 2)
    assert sorted(args) == ["emb", "w"] and sorted(auxs) == ["mean"], (args, auxs)
    assert np.array_equal(args["w"].asnumpy(), np.arange(6, dtype="f").reshape(2, 3) / 4)
    assert args["emb"].stype == "row_sparse" and args["emb"].indices.asnumpy().tolist() == [1, 3]
    assert np.array_equal(args["emb"].asnumpy(), [[0, 0], [1, 2], [0, 0], [3, 4]])
    assert np.array_equal(auxs["mean"].asnumpy(), [-1.0, 0.0, 1.0])
    print("MXNet reads sparsegen_ckpt-0002.params")
