"""MXNet 1.9.1's sparse Gluon tutorial (train_gluon.md) on sparsegen against what MXNet printed:
tests/fixtures/train_gluon.json, recorded by tests/fixtures/record_train_gluon.py from the same
steps (tests/fixtures/train_gluon_steps.py) run under MXNet."""

import json
import math
import pathlib
import warnings

import pytest

import sparsegen as mx
from fixtures import train_gluon_steps

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "train_gluon.json").read_text())
NETWORKS = tuple(FIXTURE["training"])
RTOL, ATOL = 1e-5, 1e-8  # float32 sums and updates: 1.3e-6 relative apart at most, measured


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    """The tutorial's printed values, from one run of its steps on sparsegen."""
    with warnings.catch_warnings():  # nn.Dense on csr input falls back, as MXNet logs
        warnings.simplefilter("ignore", mx.StorageFallbackWarning)
        return train_gluon_steps.run(mx, tmp_path_factory.mktemp("train_gluon"))


def assert_same(got, want, where: str = "") -> None:
    """``got`` equals MXNet's ``want``: exactly for strings, ints and flags, closely for floats."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}/{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL), f"{where}: {got} != {want}"
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("step", ["data", "nbytes", "libsvm head", "batch"])
def test_data_steps_match_mxnet(facts, step):
    assert_same(facts[step], FIXTURE[step], step)


@pytest.mark.parametrize("network", NETWORKS)
@pytest.mark.parametrize("fact", ["loss", "accuracy", "stypes", "pred shape", "loss shape",
                                  "memory", "params"])
def test_training_matches_mxnet(facts, network, fact):
    assert_same(facts["training"][network][fact], FIXTURE["training"][network][fact],
                f"{network}/{fact}")


def test_the_three_networks_learn_the_same_curve(facts):
    """Same start, same function: dense weights, csr·dense and a row_sparse gradient agree."""
    curves = [facts["training"][n]["loss"] for n in NETWORKS]
    for curve in curves[1:]:
        assert curve == pytest.approx(curves[0], rel=1e-5)
    assert curves[0][-1] < curves[0][0]  # it trains
