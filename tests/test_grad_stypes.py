"""Gradient storage types and values against MXNet 1.9.1's: tests/fixtures/grad_stypes.json,
recorded by tests/fixtures/record_grad_stypes.py from the cases of
tests/fixtures/grad_stypes_cases.py (ops x input storage types x gradient buffer storage types x
grad_req), which run here on sparsegen.

Where MXNet raises, sparsegen raises one of its error classes, except in the cases of
``COMPUTES`` (MXNet refuses, sparsegen computes the gradient in the buffer's storage); where
MXNet leaves a dense buffer zero (``MXNET_ZEROS``) sparsegen computes it. The oracle of those is
the gradient MXNet gives for the same op and variable in the other storage types (times two for
grad_req='add'). ``NAN_OF_UNSTORED``: sparsegen's gradient skips the entries a csr array does not
store, as its forward pass does (MXNet: nan from 0 / 0). docs/mxnet-differences.md lists each difference.
"""

import collections
import json
import pathlib
import re
import warnings

import numpy as np
import pytest

import sparsegen as mx
from fixtures.grad_stypes_cases import cases, run_case
from sparsegen import errors

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "grad_stypes.json")
                     .read_text())["cases"]
ERROR_CLASSES = {name for name, value in vars(errors).items()
                 if isinstance(value, type) and issubclass(value, errors.SparsegenError)}
COMPUTES = (  # MXNet 1.9.1 raises; sparsegen writes the gradient into the buffer's storage
    r"^Embedding\(sparse_grad=False\) .* \| 1: (csr|row_sparse) \| write$",  # sparse buffer
    r"^Embedding\(sparse_grad=True\) .* \| 1: (None|default|csr) \| write$",  # not row_sparse
    r"\| add$",  # grad_req='add' of a sparse gradient: "req == kWriteTo", "temp.IsDefaultData()"
    r"^FullyConnected.* \| (default|csr) default default \| ([01]: (csr|row_sparse)"
    r"|2: row_sparse) \| write$",  # "Operator not implemented: _backward_FullyConnected"
    r"^FullyConnected.* \| csr default default \| 0: (None|csr|row_sparse) \| write$",
    r"^elemwise_mul \| (csr default \| 0|default csr \| 1): default \| write$",  # IsDefaultData
    r"^take \| csr default \|",  # MXNet's take of a csr array refuses 2-D indices
    r"^sparse\.retain.* \| 0: (csr|default) \| write$",  # MXNet's backward writes row_sparse only
)
MXNET_ZEROS = (  # MXNet 1.9.1 leaves a dense buffer zero
    r"^dot\(transpose_a=(False|True), transpose_b=False\) \| csr \w+ \| 0: default \| write$",
    r"^dot\(transpose_a=False, transpose_b=(False|True)\) \| default csr \| 1: default \| write$",
    r"^FullyConnected.* \| default default default \| 2: (None|default) \| write$",  # bias alone
)
def matches(patterns: tuple[str, ...], key: str) -> bool:
    return any(re.search(p, key) for p in patterns)


def reference(key: str) -> np.ndarray:
    """The gradient MXNet gives most often for this op and variable (grad_req='write', any
    storage types), times two for 'add'."""
    op, _, variable, grad_req = key.split(" | ")
    wrt = variable.split(":")[0]
    seen = collections.Counter(
        json.dumps(fact["grad"]["values"]) for k, fact in FIXTURE.items()
        if "error" not in fact and k.startswith(f"{op} | ")
        and k.split(" | ")[2].split(":")[0] == wrt and k.endswith(" | write"))
    values = np.array(json.loads(seen.most_common(1)[0][0]), dtype=np.float64)
    assert np.any(values)  # a reference that cannot be confused with a zero buffer
    return values * (2 if grad_req == "add" else 1)


def buffer_stype(key: str) -> str:
    """The storage the variable's gradient buffer has: the one attached, else the input's."""
    op, wrt, grad_stype, _ = cases()[key]
    return grad_stype or op.inputs[wrt][1]


def sparsegen_case(key: str) -> dict:
    with warnings.catch_warnings():  # fallbacks are tested in test_fallback.py
        warnings.simplefilter("ignore", mx.StorageFallbackWarning)
        return run_case(mx, key)


def test_the_fixture_is_the_grid():
    assert sorted(FIXTURE) == sorted(cases())


@pytest.mark.parametrize("key", sorted(FIXTURE))
def test_gradient_stype_and_values_as_mxnet(key):
    want, got = FIXTURE[key], sparsegen_case(key)
    if "error" in want and not matches(COMPUTES, key):
        assert got.get("error") in ERROR_CLASSES, got
        return
    assert "error" not in got, got
    if "error" in want or matches(MXNET_ZEROS, key):  # sparsegen differs: the right gradient
        assert "error" in want or not np.any(want["grad"]["values"])  # MXNet's is zero
        assert got["grad"]["stype"] == buffer_stype(key)
        np.testing.assert_allclose(got["grad"]["values"], reference(key), rtol=1e-6)
        return
    assert got["out stype"] == want["out stype"]
    assert got["grad"]["stype"] == want["grad"]["stype"]
    expected = np.array(want["grad"]["values"], dtype=np.float64)
    np.testing.assert_allclose(got["grad"]["values"], expected, rtol=1e-6, equal_nan=True)
    assert got["grad"].get("indices") == want["grad"].get("indices")
