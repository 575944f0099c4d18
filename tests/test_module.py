"""``mx.mod.Module`` against oracles: ``Module.fit`` runs recorded from MXNet 1.9.1
(tests/fixtures/record_module.py, the same program run here), numpy for forward, predict,
score and the updates, MXNet-written checkpoints, and the errors of bad calls."""

from __future__ import annotations

import importlib.util
import json
import logging
import pathlib

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsegen as mx
from sparsegen.errors import InvalidType, InvalidValue, NotReady

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("record_module",
                                               HERE / "fixtures" / "record_module.py")
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)
FIXTURE = json.loads(record.FIXTURE.read_text())


# -- Module.fit reproduces MXNet 1.9.1 -----------------------------------------------------------
@pytest.mark.parametrize("case", sorted(record.CASES))
def test_fit_matches_mxnet(case):
    """The metric after every batch, the trained parameters (and their storage types),
    predict and score match MXNet 1.9.1's run of the same program."""
    expected = FIXTURE["cases"][case]
    got, _ = record.run_case(mx, case, FIXTURE["data"])
    np.testing.assert_allclose(got["curve"], expected["curve"], rtol=1e-4, atol=1e-5)
    assert got["stypes"] == expected["stypes"]
    for name, value in expected["params"].items():
        np.testing.assert_allclose(got["params"][name], value, rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    np.testing.assert_allclose(got["predict"], expected["predict"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["score"], expected["score"], rtol=1e-4, atol=1e-5)


def test_mxnet_checkpoint_loads_into_module():
    """Module.load of the checkpoint MXNet wrote after training predicts what MXNet did."""
    prefix = str(record.CHECKPOINT)
    mod = mx.mod.Module.load(prefix, record.EPOCHS, data_names=["data"],
                             label_names=["softmax_label"])
    it, _ = record.arrays(mx, "linear_sgd_local", FIXTURE["data"])
    mod.bind(it.provide_data, it.provide_label, for_training=False)
    np.testing.assert_allclose(mod.predict(it).asnumpy(),
                               FIXTURE["cases"]["linear_sgd_local"]["predict"], rtol=1e-5,
                               atol=1e-6)
    arg_params, aux_params = mod.get_params()
    assert sorted(arg_params) == ["fc_bias", "fc_weight"] and aux_params == {}
    np.testing.assert_allclose(arg_params["fc_weight"].asnumpy(),
                               FIXTURE["cases"]["linear_sgd_local"]["params"]["fc_weight"],
                               rtol=1e-6)
