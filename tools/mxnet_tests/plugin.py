"""The pytest plugin of the harness: ``mxnet`` served by sparsegen, test selection, a time limit
per test, and one JSON line per test outcome (``$MXNET_TESTS_RESULTS``) for ``run.py``."""

from __future__ import annotations

import inspect
import json
import os
import re
import signal
from typing import Any, Iterator

import pytest

import alias
import recorded

alias.install()
recorded.numpy_1x()  # MXNet's tests are written for numpy 1.x (np.NaN, np.product)

SPARSE_WORDS = ("row_sparse", "csr", "sparse")
"""A test of test_optimizer.py is a sparse case when its source names one of these."""

OUT_OF_SCOPE_WORDS = (() if os.environ.get("MXNET_TESTS_WITH_SYMBOL") else
                      ("mx.sym", "check_numeric_gradient", "check_symbolic_", "simple_bind",
                       ".bind(")) + (() if os.environ.get("MXNET_TESTS_WITH_GLUON") else
                                     ("gluon", "autograd"))
"""Source text that makes a test need the symbolic API (issue 15, unless
``MXNET_TESTS_WITH_SYMBOL`` is set: ``run.py --with-symbol``), or Gluon or autograd (issue
14, unless ``MXNET_TESTS_WITH_GLUON`` is set: ``run.py --with-gluon``)."""

_EVERY_OPTIMIZER_TEST = bool(os.environ.get("MXNET_TESTS_WITH_GLUON"))
"""With ``--with-gluon`` (the acceptance's run) the dense optimizer tests count too."""
_RESULTS = os.environ.get("MXNET_TESTS_RESULTS")
_LIMIT = float(os.environ.get("MXNET_TESTS_TIMEOUT", "300"))
_TIMEOUT_TEXT = "harness time limit: ran past"  # also found when TVM re-raises it as its own error


class Timeout(Exception):
    """The test ran past the harness's time limit."""


def _source(item: Any) -> str:
    try:
        return inspect.getsource(getattr(item, "function", None) or item.obj)
    except (OSError, TypeError):
        return ""


def _record(entry: dict[str, Any]) -> None:
    if _RESULTS:
        with open(_RESULTS, "a") as f:
            f.write(json.dumps(entry) + "\n")


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Keep the sparse cases of test_optimizer.py (all of them with ``--with-gluon``); mark tests that need mx.sym / Gluon /
    autograd as out of scope (skipped and reported, not counted)."""
    kept = []
    for item in items:
        source = _source(item)
        if (item.fspath.basename == "test_optimizer.py" and not _EVERY_OPTIMIZER_TEST
                and not any(w in source for w in SPARSE_WORDS)):
            _record({"test": item.nodeid, "outcome": "not_sparse"})
            continue
        words = [w for w in OUT_OF_SCOPE_WORDS if w in source]
        if words:
            item.add_marker(pytest.mark.skip(reason=f"out of scope: uses {words[0]}"))
        kept.append(item)
    items[:] = kept


def _on_alarm(signum: int, frame: Any) -> None:
    raise Timeout(f"{_TIMEOUT_TEXT} {_LIMIT:.0f} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    """Run the test under a time limit (SIGALRM)."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, _LIMIT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_MODULE_NAMES = (("sparsegen.ndarray.sparse", "mx.nd.sparse"), ("sparsegen.ndarray", "mx.nd"),
                 ("sparsegen", "mx"))


def _public(name: str) -> str:
    """``sparsegen.ndarray.X`` as the MXNet user writes it, ``mx.nd.X``."""
    name = name.replace("mxnet", "sparsegen", 1) if name.startswith("mxnet") else name
    for module, short in _MODULE_NAMES:
        if name == module or name.startswith(module + "."):
            return short + name[len(module):]
    return name


def classify(error: BaseException) -> tuple[str, str]:
    """(kind, detail) of a test's exception: out_of_scope, timeout, missing (the name) or
    failed (type and first line)."""
    chain, seen = error, set()
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        if type(chain).__name__ == "OutOfScope":
            return "out_of_scope", str(chain)
        chain = chain.__cause__ or chain.__context__
    text = str(error).splitlines()[0] if str(error) else ""
    if "out of scope for sparsegen" in text:  # sparsegen's refusal of mx.np-decorated code
        return "out_of_scope", text
    if isinstance(error, Timeout) or _TIMEOUT_TEXT in str(error):
        return "timeout", text
    if isinstance(error, AttributeError):
        found = re.search(r"(?:module '([\w.]+)'|'(\w+)' object) has no attribute '(\w+)'", text)
        if found:
            owner = _public(found.group(1)) if found.group(1) else found.group(2)
            return "missing", f"{owner}.{found.group(3)}"
        found = re.search(r"^mx\.sym has no op '(\w+)'", text)  # the symbol namespace's message
        if found:
            return "missing", f"mx.sym.{found.group(1)}"
    if isinstance(error, NameError):
        found = re.search(r"name '(\w+)' is not defined", text)
        if found:
            return "missing", found.group(1)
    if isinstance(error, ImportError):
        found = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", text)
        if found:
            return "missing", f"{_public(found.group(2))}.{found.group(1)}"
        found = re.search(r"No module named '([\w.]+)'", text)
        if found:
            return "missing", _public(found.group(1))
    return "failed", f"{type(error).__name__}: {text}"[:300]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    """Record each test's outcome once: passed, skipped (out of scope) or its failure kind."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "setup" and report.skipped:
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
        _record({"test": item.nodeid, "outcome": "out_of_scope" if "out of scope" in reason
                 else "skipped", "detail": reason})
    elif report.failed:
        kind, detail = classify(call.excinfo.value) if call.excinfo else ("failed", "")
        _record({"test": item.nodeid, "outcome": kind, "detail": detail, "when": report.when})
    elif report.when == "call" and report.passed:
        _record({"test": item.nodeid, "outcome": "passed", "seconds": round(report.duration, 2)})


def pytest_collectreport(report: Any) -> None:
    """A test file that fails to import is one failure, classified like a test's."""
    if report.failed:
        detail = str(report.longrepr).strip().splitlines()[-1][:300] if report.longrepr else ""
        kind = "failed"
        found = re.search(r"(AttributeError|NameError|ImportError|ModuleNotFoundError): (.*)", detail)
        if found:
            exc = {"AttributeError": AttributeError, "NameError": NameError}.get(
                found.group(1), ImportError)(found.group(2))
            kind, detail = classify(exc)
        _record({"test": report.nodeid, "outcome": "collect_" + kind, "detail": detail})
