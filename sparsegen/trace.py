"""The profiler's recorder, below everything that it times: while ``RECORDER.on``, each op run
through ``ndarray.dispatch.invoke`` and each kernel function call is kept as a Chrome-trace
complete event (``mx.profiler``, sparsegen/profiler.py, is the API over it). Off, a call pays
one attribute test."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any


class Recorder:
    """Events in Chrome's trace-event format (times in microseconds since ``start``)."""

    def __init__(self) -> None:
        self.on = False  # recording now (running and not paused)
        self.events: list[dict[str, Any]] = []
        self.start = time.perf_counter()
        self._lock = threading.Lock()

    def now(self) -> float:
        """Microseconds since the recorder was made."""
        return (time.perf_counter() - self.start) * 1e6

    def add(self, event: dict[str, Any]) -> None:
        """Keep one event (this process and thread filled in)."""
        event.setdefault("pid", os.getpid())
        event.setdefault("tid", threading.get_ident())
        with self._lock:
            self.events.append(event)

    def timed(self, name: str, category: str, function: Callable[..., Any], *args: Any,
              **kwargs: Any) -> Any:
        """``function(*args, **kwargs)``, kept as a complete event ``name`` of ``category``."""
        begin = self.now()
        try:
            return function(*args, **kwargs)
        finally:
            self.add({"name": name, "cat": category, "ph": "X", "ts": begin,
                      "dur": self.now() - begin})


RECORDER = Recorder()
"""The process's one recorder."""
