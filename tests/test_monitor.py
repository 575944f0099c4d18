"""``mx.monitor.Monitor`` (MXNet 1.9.1's): the statistics of ops' outputs (and inputs with
``monitor_all``), arguments and auxiliary states every ``interval`` batches, names filtered by
``pattern``; numpy's root mean square as the oracle of the default statistic."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import sparsegen as mx


def _executor(data_req: str = "write"):
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    net = mx.sym.Activation(fc, act_type="relu", name="act")
    exe = net.simple_bind(mx.cpu(), data=(4, 3), grad_req={"data": data_req, "fc_weight": "write",
                                                           "fc_bias": "write"})
    rng = np.random.default_rng(0)
    weights = {"fc_weight": rng.standard_normal((2, 3)), "fc_bias": rng.standard_normal(2)}
    for name, value in weights.items():
        exe.arg_dict[name][:] = value
    return exe, weights


def _rms(x):
    return np.sqrt(np.mean(np.square(np.asarray(x, np.float64))))


def test_outputs_and_arguments_with_the_default_statistic():
    exe, weights = _executor()
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    mon = mx.monitor.Monitor(1)
    mon.install(exe)
    mon.tic()
    exe.forward(data=mx.nd.array(x))
    got = {name: float(text) for _, name, text in mon.toc()}
    fc = x @ weights["fc_weight"].T + weights["fc_bias"]
    want = {"fc_output": _rms(fc), "act_output": _rms(np.maximum(fc, 0)), "data": _rms(x),
            **{name: _rms(value) for name, value in weights.items()}}
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=1e-5), name


def test_interval_pattern_sort_and_monitor_all():
    exe, _ = _executor()
    mon = mx.mon.Monitor(2, stat_func=lambda a: a.sum(), pattern="fc", sort=True,
                         monitor_all=True)
    mon.install(exe)
    seen = []
    for _ in range(4):
        mon.tic()
        exe.forward(data=mx.nd.ones((4, 3)))
        seen.append([name for _, name, _ in mon.toc()])
    assert seen[1] == seen[3] == []  # batches 2 and 4 are not collected
    # op inputs by the op's argument names, its output, then the arguments; sorted by name
    assert seen[0] == seen[2] == sorted(["fc_data", "fc_weight", "fc_bias", "fc_output",
                                         "fc_weight", "fc_bias"])


@pytest.mark.parametrize("data_req", ["write", "null"])
def test_backward_reports_each_op_input_gradient_last_op_first(data_req):
    """MXNet's names: ``<op>_backward_output`` for one input, ``..._output<i>`` for several;
    numpy gradients of sum(relu(x @ W.T + b) * head) as the oracle; zeros for ``data`` when
    it takes no gradient."""
    exe, weights = _executor(data_req)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    head = np.arange(8, dtype=np.float32).reshape(4, 2) - 3
    seen = []
    mon = mx.monitor.Monitor(1, stat_func=lambda a: seen.append(a.asnumpy()) or a.sum(),
                             pattern=".*backward.*")
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=True, data=mx.nd.array(x))
    exe.backward(mx.nd.array(head))
    got = dict(zip([name for _, name, _ in mon.toc()], seen))
    fc = x @ weights["fc_weight"].T + weights["fc_bias"]
    d_fc = head * (fc > 0)
    d_x = d_fc @ weights["fc_weight"] if data_req == "write" else np.zeros_like(x)
    want = {"act_backward_output": d_fc, "fc_backward_output0": d_x,
            "fc_backward_output1": d_fc.T @ x, "fc_backward_output2": d_fc.sum(axis=0)}
    assert list(got) == list(want)  # the last op first, its inputs in order
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_module_fit_logs_the_statistics(caplog):
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2,
                                                     name="fc"), name="softmax")
    it = mx.io.NDArrayIter(np.ones((8, 3), np.float32), np.array([0, 1] * 4, np.float32), 4)
    with caplog.at_level(logging.INFO):
        mx.mod.Module(net).fit(it, num_epoch=1, monitor=mx.mon.Monitor(1, pattern="fc_bias"))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Batch:")]
    assert len(lines) == 2 and all(" fc_bias " in line for line in lines)
    assert lines[0].startswith("Batch:       1 fc_bias")  # MXNet's layout


def test_bad_arguments_are_refused_naming_them():
    for kwargs, match in (({"interval": 0}, "interval"), ({"interval": 1, "stat_func": 3},
                                                          "stat_func"),
                          ({"interval": 1, "pattern": "("}, "pattern")):
        with pytest.raises(mx.MXNetError, match=match):
            mx.monitor.Monitor(**kwargs)
    exe, _ = _executor()
    with pytest.raises(mx.MXNetError, match="callback must be callable"):
        exe.set_monitor_callback(None)
    mon = mx.monitor.Monitor(1, stat_func=lambda a: 1.0)
    mon.install(exe)
    mon.tic()
    exe.forward(data=mx.nd.ones((4, 3)))
    with pytest.raises(mx.MXNetError, match="stat_func must return an NDArray"):
        mon.toc()
