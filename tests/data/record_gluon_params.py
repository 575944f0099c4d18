"""Record tests/data/mxnet_gluon.params: a Sequential(Dense(3, in_units=4), Dense(2, in_units=3))
saved by MXNet 1.9.1's ``save_parameters``, with known weights (tests/test_gluon_core.py).

Run: /work/mxvenv/bin/python tests/data/record_gluon_params.py
"""

import os

import mxnet as mx
import numpy as np

net = mx.gluon.nn.Sequential()
with net.name_scope():
    net.add(mx.gluon.nn.Dense(3, in_units=4), mx.gluon.nn.Dense(2, in_units=3))
net.initialize()
for index, (name, param) in enumerate(sorted(net._collect_params_with_prefix().items())):
    shape = param.shape
    param.set_data(mx.nd.array(np.arange(np.prod(shape)).reshape(shape) * 0.5 - index))
net.save_parameters(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_gluon.params"))
