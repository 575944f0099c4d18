"""MXNet 1.9.1's API, name by name: sparsegen has each name of the census MXNet recorded
(tests/fixtures/mxnet_census.json, tests/fixtures/record_mxnet_census.py), or
docs/mxnet-differences.md lists it, with its reason, as out of scope or not yet built.

The lists are glob patterns ``namespace:name`` in two tables of that document's "MXNet's API"
section; a name an out-of-scope pattern matches is out of scope, whatever else matches it. A name
that is neither there nor listed fails here, and so does a pattern that no longer matches a
missing name (a name that was built leaves the not-yet list).
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import re
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import sparsegen
from sparsegen.opaliases import ALIASES, SPARSE_ALIASED, alias_target
from sparsegen.symbol.ops import definition

ROOT = Path(__file__).resolve().parents[1]
CENSUS = json.loads((ROOT / "tests" / "fixtures" / "mxnet_census.json").read_text())
DIFFERENCES = ROOT / "docs" / "mxnet-differences.md"
SECTION = "## MXNet's API: out of scope and not yet"
TABLES = ("### Out of scope", "### Not yet")


def listed() -> dict[str, dict[str, str]]:
    """The two tables of the section: heading -> {pattern: reason}."""
    text = DIFFERENCES.read_text()
    section = text[text.index(SECTION):]
    following = section.find("\n## ", len(SECTION))
    section = section if following < 0 else section[:following]
    tables: dict[str, dict[str, str]] = {}
    for heading in TABLES:
        start = section.index(heading)
        end = min((section.find(h, start + 1) for h in TABLES if section.find(h, start + 1) > 0),
                  default=len(section))
        rows = re.findall(r"^\| (`[^|]+`) \| (.+?) \|$", section[start:end], re.MULTILINE)
        tables[heading] = {}
        for patterns, reason in rows:
            for pattern in re.findall(r"`([^`]+)`", patterns):
                assert pattern not in tables[heading], f"{pattern} listed twice"
                tables[heading][pattern] = reason
    return tables


def sparsegen_namespace(name: str) -> ModuleType | None:
    """sparsegen's module for MXNet's namespace ``name`` (``mxnet.ndarray.sparse`` ->
    ``sparsegen.ndarray.sparse``), reached as user code reaches it: attribute by attribute,
    else imported; None when sparsegen has none."""
    module: object = sparsegen
    path = "sparsegen"
    for part in name.split(".")[1:]:
        path = f"{path}.{part}"
        found = getattr(module, part, None)
        if found is None:
            try:
                found = importlib.import_module(path)
            except ImportError:
                return None
        module = found
    return module  # type: ignore[return-value]


PREFIXES = {"_contrib_": "contrib", "_sparse_": "sparse", "_random_": "random",
            "_sample_": "random", "_linalg_": "linalg"}
"""The prefixes of MXNet's registered op names and the ``mx.nd`` namespace that holds each
without it (``_contrib_index_copy`` is ``mx.nd.contrib.index_copy``)."""


def has_operator(op: str) -> bool:
    """Whether sparsegen has MXNet's registered operator ``op``: as ``mx.nd.<op>``,
    ``mx.nd._internal.<op>``, or without its prefix in the namespace the prefix names."""
    if hasattr(sparsegen.nd, op) or hasattr(sparsegen.nd._internal, op):
        return True
    prefix = next((p for p in PREFIXES if op.startswith(p)), None)
    namespace = getattr(sparsegen.nd, PREFIXES[prefix], None) if prefix else None
    return namespace is not None and hasattr(namespace, op[len(prefix):])


def missing_names() -> set[str]:
    """Every ``namespace:name`` of the census that sparsegen lacks, and ``operator:name`` for
    each registered MXNet operator it lacks (``has_operator``)."""
    missing = set()
    for namespace, names in CENSUS["namespaces"].items():
        module = sparsegen_namespace(namespace)
        missing |= {f"{namespace}:{n}" for n in names if module is None or not hasattr(module, n)}
    return missing | {f"operator:{op}" for op in CENSUS["operators"] if not has_operator(op)}


MISSING = missing_names()
LISTS = listed()


def _matches(name: str, patterns: dict[str, str]) -> list[str]:
    return [p for p in patterns if fnmatch.fnmatchcase(name, p)]


def test_the_census_is_mxnets():
    assert CENSUS["mxnet_version"] == "1.9.1"
    assert len(CENSUS["namespaces"]["mxnet.ndarray"]) > 300
    assert "_STORAGE_TYPE_STR_TO_ID" in CENSUS["namespaces"]["mxnet.ndarray.ndarray"]
    assert "dot" in CENSUS["operators"] and "_sparse_retain" in CENSUS["operators"]


def test_every_missing_name_is_listed_with_its_reason():
    patterns = {**LISTS["### Out of scope"], **LISTS["### Not yet"]}
    unlisted = sorted(n for n in MISSING if not _matches(n, patterns))
    assert not unlisted, (
        f"{len(unlisted)} names of MXNet 1.9.1 that sparsegen neither has nor lists in "
        f"{DIFFERENCES.name}: {unlisted}")


def test_every_out_of_scope_pattern_still_names_something_missing():
    stale = sorted(p for p in LISTS["### Out of scope"]
                   if not any(fnmatch.fnmatchcase(n, p) for n in MISSING))
    assert not stale, f"out-of-scope patterns that match nothing sparsegen lacks: {stale}"


def test_every_not_yet_pattern_still_names_something_missing_and_in_scope():
    # a name out of scope is out of scope even where a broader not-yet pattern matches it
    in_scope = {n for n in MISSING if not _matches(n, LISTS["### Out of scope"])}
    stale = sorted(p for p in LISTS["### Not yet"]
                   if not any(fnmatch.fnmatchcase(n, p) for n in in_scope))
    assert not stale, f"not-yet patterns that match nothing sparsegen lacks in scope: {stale}"


def test_the_alias_table_is_mxnets():
    for alias, op in ALIASES.items():
        assert CENSUS["aliases"][alias] == op, alias
    for name in SPARSE_ALIASED:
        assert CENSUS["aliases"][f"_sparse_{name}"] == ALIASES.get(name, name), name


SERVED = sorted(a for a in CENSUS["aliases"] if alias_target(a) is not None)


def test_every_alias_of_an_op_sparsegen_has_is_served():
    # the aliases whose op sparsegen has by its MXNet name are the alias table's
    unserved = sorted(a for a, op in CENSUS["aliases"].items()
                      if has_operator(op) and not has_operator(a) and not a.startswith("_np"))
    assert not unserved, unserved
    assert len(SERVED) > 90


@pytest.mark.parametrize("alias", SERVED)
def test_an_alias_runs_its_op_and_loads_as_it_from_a_symbol_file(alias):
    op = alias_target(alias)
    home = sparsegen.nd._internal if alias.startswith("_") else sparsegen.nd
    assert callable(getattr(home, alias))
    if definition(op) is None:  # no symbol op (mx.sym.random's samplers): listed as not yet
        return
    # a graph MXNet wrote with the alias loads as the op (MXNet writes the op's name back)
    node = {"op": alias, "name": "x0", "attrs": {}, "inputs": [[0, 0, 0]]}
    graph = {"nodes": [{"op": "null", "name": "a", "inputs": []}, node], "arg_nodes": [0],
             "heads": [[1, 0, 0]]}
    loaded = json.loads(sparsegen.sym.load_json(json.dumps(graph)).tojson())
    assert loaded["nodes"][1]["op"] == op


def test_aliases_compute_their_ops():
    x = sparsegen.nd.array([[1.0, -2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(sparsegen.nd._internal._Plus(x, x).asnumpy(), 2 * x.asnumpy())
    np.testing.assert_array_equal(sparsegen.nd.sum_axis(x, axis=1).asnumpy(), [-1.0, 7.0])
    np.testing.assert_array_equal(sparsegen.nd.max_axis(x, axis=0).asnumpy(), [3.0, 4.0])
    np.testing.assert_array_equal(
        sparsegen.nd.choose_element_0index(x, sparsegen.nd.array([1, 0])).asnumpy(), [-2.0, 3.0])
    csr = x.tostype("csr")
    assert sparsegen.nd._internal._sparse_abs(csr).stype == "csr"
