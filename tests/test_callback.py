"""mx.callback and mx.model: the log lines of MXNet 1.9.1's callbacks (read from its
callback.py), checkpoints in its files, a checkpoint MXNet wrote (tests/data/record_checkpoint.py)
and one sparsegen wrote that the same script checks MXNet reads."""

from __future__ import annotations

import json
import logging
import pathlib
import types

import numpy as np
import pytest

import sparsegen as mx
from sparsegen.errors import InvalidType

DATA = pathlib.Path(__file__).parent / "data"


def write_sparsegen_checkpoint(prefix: str) -> None:
    """The checkpoint tests/data/sparsegen_ckpt-0002.params holds (record_checkpoint.py checks
    MXNet reads these values)."""
    emb = mx.nd.sparse.row_sparse_array((np.array([[1, 2], [3, 4]], np.float32), [1, 3]),
                                        shape=(4, 2))
    mx.model.save_checkpoint(prefix, 2, None,
                             {"w": mx.nd.array(np.arange(6).reshape(2, 3) / 4), "emb": emb},
                             {"mean": mx.nd.array([-1.0, 0.0, 1.0])})


class _Metric:
    def __init__(self) -> None:
        self.resets = 0

    def get_name_value(self):
        return [("accuracy", 0.75), ("ce", 0.5)]

    def reset_local(self) -> None:
        self.resets += 1


def _messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records]


def test_speedometer_log_lines(caplog, monkeypatch):
    clock = iter([100.0, 102.0, 103.0, 104.0, 106.0])
    monkeypatch.setattr(mx.callback, "time", types.SimpleNamespace(time=lambda: next(clock)))
    metric = _Metric()
    speed = mx.callback.Speedometer(batch_size=4, frequent=2)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):  # the first call starts the clock
            speed(mx.model.BatchEndParam(epoch=1, nbatch=nbatch, eval_metric=metric,
                                         locals=None))
    assert _messages(caplog) == [
        "Epoch[1] Batch [0-2]\tSpeed: 4.00 samples/sec\taccuracy=0.750000\tce=0.500000",
        "Epoch[1] Batch [2-4]\tSpeed: 8.00 samples/sec\taccuracy=0.750000\tce=0.500000",
    ]
    assert metric.resets == 2


def test_speedometer_without_reset_or_metric_and_new_epoch(caplog, monkeypatch):
    monkeypatch.setattr(mx.callback, "time", types.SimpleNamespace(time=lambda: 10.0))
    speed = mx.callback.Speedometer(2, frequent=1, auto_reset=False)
    metric = _Metric()
    with caplog.at_level(logging.INFO):
        for epoch, nbatch, m in ((0, 0, metric), (0, 1, metric), (1, 0, None), (1, 1, None)):
            speed(mx.model.BatchEndParam(epoch, nbatch, m, None))
    assert _messages(caplog) == [
        "Epoch[0] Batch [0-1]\tSpeed: inf samples/sec\taccuracy=0.750000\tce=0.500000",
        "Iter[1] Batch [1]\tSpeed: inf samples/sec",
    ]
    assert metric.resets == 0


def test_log_train_metric_and_progress_bar(caplog):
    metric = _Metric()
    log = mx.callback.log_train_metric(2, auto_reset=True)
    bar = mx.callback.ProgressBar(total=4, length=8)
    with caplog.at_level(logging.INFO):
        for nbatch in (1, 2):
            log(mx.model.BatchEndParam(3, nbatch, metric, None))
        bar(mx.model.BatchEndParam(0, 1, None, None))
        mx.callback.LogValidationMetricsCallback()(mx.model.BatchEndParam(5, 0, metric, None))
    assert _messages(caplog) == ["Iter[3] Batch[2] Train-accuracy=0.750000",
                                 "Iter[3] Batch[2] Train-ce=0.500000",
                                 "[==------] 25%\r",
                                 "Epoch[5] Validation-accuracy=0.750000",
                                 "Epoch[5] Validation-ce=0.500000"]
    assert metric.resets == 1


def test_do_checkpoint_round_trip(tmp_path, caplog):
    prefix = str(tmp_path / "net")
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    callback = mx.callback.do_checkpoint(prefix, period=2)
    weight = mx.nd.array([[1.0, 2.0]])
    rows = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(3, 2))
    with caplog.at_level(logging.INFO):
        for epoch in range(4):
            callback(epoch, net, {"w": weight, "e": rows},
                     {"m": weight * 2})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net-0002.params", "net-0004.params",
                                                         "net-symbol.json"]
    assert f'Saved checkpoint to "{prefix}-0004.params"' in _messages(caplog)
    symbol, args, auxs = mx.model.load_checkpoint(prefix, 4)
    assert symbol.tojson() == net.tojson()
    assert symbol.list_arguments() == ["data", "fc_weight", "fc_bias"]
    np.testing.assert_array_equal(args["w"].asnumpy(), [[1, 2]])
    assert args["e"].stype == "row_sparse" and args["e"].indices.asnumpy().tolist() == [1]
    np.testing.assert_array_equal(auxs["m"].asnumpy(), [[2, 4]])


def test_module_checkpoint_calls_the_module():
    calls = []
    mod = types.SimpleNamespace(save_checkpoint=lambda *args: calls.append(args))
    callback = mx.callback.module_checkpoint(mod, "p", period=3, save_optimizer_states=True)
    for epoch in range(6):
        callback(epoch)
    assert calls == [("p", 3, True), ("p", 6, True)]


def test_loads_the_checkpoint_mxnet_wrote():
    args, auxs = mx.model.load_params(str(DATA / "mxnet_ckpt"), 3)
    assert sorted(args) == ["bn_beta", "bn_gamma", "emb_weight", "fc_bias", "fc_weight"]
    assert sorted(auxs) == ["bn_moving_mean", "bn_moving_var"]
    np.testing.assert_array_equal(args["fc_weight"].asnumpy(), np.arange(6).reshape(2, 3) * 0.5)
    assert args["emb_weight"].stype == "row_sparse"
    np.testing.assert_array_equal(args["emb_weight"].asnumpy(), [[0, 0], [0, 0], [1, 1], [0, 0]])
    np.testing.assert_array_equal(auxs["bn_moving_var"].asnumpy(), [1, 4])
    graph = json.loads((DATA / "mxnet_ckpt-symbol.json").read_text())
    assert [n["name"] for n in graph["nodes"]][:3] == ["data", "fc_weight", "fc_bias"]


def test_committed_sparsegen_checkpoint_is_what_save_checkpoint_writes(tmp_path):
    write_sparsegen_checkpoint(str(tmp_path / "s"))
    assert ((tmp_path / "s-0002.params").read_bytes()
            == (DATA / "sparsegen_ckpt-0002.params").read_bytes())


def test_checkpoint_errors(tmp_path):
    with pytest.raises(InvalidType, match="arg_params"):
        mx.model.save_checkpoint(str(tmp_path / "x"), 1, None, [mx.nd.ones((1,))], {})
    with pytest.raises(InvalidType, match=r"aux_params\['m'\]"):
        mx.model.save_checkpoint(str(tmp_path / "x"), 1, None, {}, {"m": np.ones(1)})
    with pytest.raises(mx.MXNetError, match="epoch"):
        mx.model.save_checkpoint(str(tmp_path / "x"), -1, None, {}, {})
    with pytest.raises(mx.MXNetError, match="cannot read"):
        mx.model.load_params(str(tmp_path / "missing"), 1)
    with pytest.raises(mx.MXNetError, match="frequent"):
        mx.callback.Speedometer(8, frequent=0)
