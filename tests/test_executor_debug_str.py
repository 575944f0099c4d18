"""``Executor.debug_str``: MXNet 1.9.1's listing of the graph (the text below is what MXNet
1.9.1 prints for the same graph, with ``MXNET_SUBGRAPH_BACKEND=NONE``, up to its memory lines)
and the memory count of ``symbol/listing.py``, hand-computed."""

from __future__ import annotations

import re

import sparsegen as mx

MXNET_LISTING = (  # MXNet 1.9.1's debug_str of fc + relu, bound with grad_req='null'
    "Symbol Outputs:\n\toutput[0]=act(0)\nVariable:data\nVariable:fc_weight\nVariable:fc_bias\n"
    "--------------------\nOp:FullyConnected, Name=fc\nInputs:\n\targ[0]=data(0) version=0\n"
    "\targ[1]=fc_weight(0) version=0\n\targ[2]=fc_bias(0) version=0\nAttrs:\n\tnum_hidden=3\n"
    "--------------------\nOp:Activation, Name=act\nInputs:\n\targ[0]=fc(0)\nAttrs:\n"
    "\tact_type=relu\n")


def _total(executor) -> int:
    return int(re.search(r"Total (\d+) MB allocated", executor.debug_str()).group(1))


def test_listing_as_mxnet():
    data = mx.sym.Variable("data")
    net = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                            act_type="relu", name="act")
    text = net.simple_bind(mx.cpu(), data=(2, 4), grad_req="null").debug_str()
    assert text.startswith(MXNET_LISTING)
    assert text[len(MXNET_LISTING):] == "Total 0 MB allocated\n"


def test_memory_counts_outputs_and_the_gradients_flowing_back():
    data = mx.sym.Variable("data")
    for _ in range(2):
        data = data * data
    shape = (256, 1024)  # 1 MiB of float32 per array
    # two op outputs; with gradients, as much again for each
    assert _total(data.simple_bind(mx.cpu(), data=shape)) == 4
    assert _total(data.simple_bind(mx.cpu(), data=shape, grad_req="null")) == 2
    # BlockGrad stops the gradients and runs in place: what MXNet's test_zero_prop checks
    blocked = mx.sym.stop_gradient(data)
    assert _total(blocked.simple_bind(mx.cpu(), data=shape)) == 2
    half = mx.sym.Variable("data") * mx.sym.Variable("w")
    exe = half.simple_bind(mx.cpu(), data=shape, w=shape, grad_req={"data": "null", "w": "write"})
    assert _total(exe) == 2
    exe = half.astype("float64").simple_bind(mx.cpu(), data=shape, w=shape, grad_req="null")
    assert _total(exe) == 1 + 2  # the float32 product and its float64 cast
