"""Run a snippet of user code in a fresh Python process, so that a crash fails one test only.

Bad-input and fault cases that could crash the interpreter (a kernel reading out of bounds, a
truncated library handed to ``dlopen``) run here: a signal becomes an assertion naming it, and
the snippet's outcome (the exception it raised, or the value it left in ``result``) comes back
as data.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Any

_WRAPPER = r'''
import json, sys, traceback, warnings
import numpy as np
warnings.simplefilter("always")
_caught = []
_show = warnings.showwarning
warnings.showwarning = lambda m, c, *a, **k: _caught.append([c.__name__, str(m)])
_scope = {"__name__": "__isolated__"}
try:
    exec(compile(sys.stdin.read(), "<isolated>", "exec"), _scope)
except BaseException as _err:
    _out = {"error": type(_err).__name__,
            "bases": [k.__name__ for k in type(_err).__mro__]
                     + (["MXNetError"] if "sparsegen" in sys.modules
                        and isinstance(_err, sys.modules["sparsegen"].MXNetError) else []),
            "message": str(_err), "traceback": traceback.format_exc()}
else:
    _r = _scope.get("result")
    if hasattr(_r, "asnumpy"):
        _r = _r.asnumpy()
    if isinstance(_r, np.ndarray):
        _r = {"ndarray": _r.tolist(), "dtype": _r.dtype.name}
    _out = {"error": None, "result": _r}
_out["warnings"] = _caught
print("\n@@isolated@@" + json.dumps(_out, default=repr))
'''


@dataclass
class Outcome:
    """What a snippet did: the error it raised (class name, its bases, message) or its ``result``."""

    error: str | None
    message: str = ""
    bases: list[str] = field(default_factory=list)
    result: Any = None
    warnings: list[list[str]] = field(default_factory=list)
    traceback: str = ""
    stderr: str = ""

    def raised(self, error: str) -> bool:
        """Whether the snippet raised ``error`` (a class name, ``MXNetError`` for sparsegen's
        error class) or a subclass of it."""
        return error in self.bases


def run(code: str, env: dict[str, str] | None = None, timeout: float = 300) -> Outcome:
    """Run ``code`` (dedented) in a new interpreter; a death by signal or a hang fails the test."""
    environment = {**os.environ, **(env or {})}
    try:
        done = subprocess.run([sys.executable, "-c", _WRAPPER], input=textwrap.dedent(code),
                              env=environment, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the snippet hung for {timeout} s:\n{textwrap.dedent(code)}") from None
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        raise AssertionError(f"the snippet crashed with {name}:\n{textwrap.dedent(code)}\n"
                             f"stderr:\n{done.stderr[-3000:]}")
    marker = done.stdout.rfind("@@isolated@@")
    if done.returncode != 0 or marker < 0:
        raise AssertionError(f"the snippet exited with {done.returncode} and no outcome:\n"
                             f"{textwrap.dedent(code)}\nstderr:\n{done.stderr[-3000:]}")
    data = json.loads(done.stdout[marker + len("@@isolated@@"):])
    return Outcome(data["error"], data.get("message", ""), data.get("bases", []),
                   data.get("result"), data["warnings"], data.get("traceback", ""), done.stderr)


def raises(code: str, error: str, *fragments: str, env: dict[str, str] | None = None) -> Outcome:
    """Run ``code`` and check it raised ``error`` (or a subclass) with every fragment in its
    message; returns the outcome for further checks."""
    outcome = run(code, env)
    assert outcome.error is not None, f"no error raised; result {outcome.result!r}"
    assert outcome.raised(error), f"raised {outcome.error}, not {error}:\n{outcome.traceback}"
    for fragment in fragments:
        assert fragment in outcome.message, f"{fragment!r} not in the message {outcome.message!r}"
    return outcome


def result(code: str, env: dict[str, str] | None = None) -> Any:
    """Run ``code``, check it raised nothing, and return its ``result`` (arrays as nested lists)."""
    outcome = run(code, env)
    assert outcome.error is None, f"raised {outcome.error}: {outcome.message}\n{outcome.traceback}"
    value = outcome.result
    return value["ndarray"] if isinstance(value, dict) and "ndarray" in value else value
