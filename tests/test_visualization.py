"""``mx.viz.print_summary`` against MXNet 1.9.1's own printout of the same networks
(tests/fixtures/mxnet_print_summary.json, recorded by record_mxnet_print_summary.py beside
it), and its refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import sparsegen as mx

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
from record_mxnet_print_summary import networks  # noqa: E402 - the networks MXNet printed

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "mxnet_print_summary.json")
                      .read_text())


@pytest.mark.parametrize("name, symbol, shapes", networks(mx), ids=lambda v: str(v)[:8])
def test_print_summary_prints_what_mxnet_prints(name, symbol, shapes, capsys):
    mx.viz.print_summary(symbol, shape=shapes)
    assert capsys.readouterr().out == RECORDED[name]


def test_print_summary_refusals():
    net = networks(mx)[0][1]
    with pytest.raises(mx.MXNetError, match="must be a Symbol"):
        mx.visualization.print_summary(mx.nd.ones(2))
    with pytest.raises(mx.MXNetError, match="4 rising numbers"):
        mx.viz.print_summary(net, positions=[0.5, 0.2])
    with pytest.raises(mx.MXNetError):
        mx.viz.print_summary(net, shape={"data": (5, 3)})  # ids missing: shapes undetermined
    with pytest.raises(NotImplementedError, match="plot_network"):
        mx.viz.plot_network(net)
