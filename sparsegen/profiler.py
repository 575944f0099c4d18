"""``mx.profiler``: MXNet 1.9.1's profiler API over ``trace.RECORDER``. While it runs, every op
(``operator`` events: the op names MXNet's profiler shows, ``sqrt``, ``_plus_scalar``, ``dot``)
and every generated kernel function call (``kernel`` events: ``<kernel>.<function>``) is timed;
``dump`` writes them as a Chrome trace (open it in ``chrome://tracing`` or
https://ui.perfetto.dev), ``dumps`` prints their aggregate statistics. Domains, tasks, frames,
events, counters and markers add the user's own events."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from .errors import InvalidValue
from .files import write_atomically
from .opaliases import MXNET_NAMES
from .trace import RECORDER

_CONFIG_KEYS = ("filename", "profile_all", "profile_symbolic", "profile_imperative",
                "profile_memory", "profile_api", "continuous_dump", "dump_period",
                "aggregate_stats", "profile_process")
_STATES = ("run", "stop")
_SORT_KEYS = {"total": "Total", "avg": "Avg", "min": "Min", "max": "Max", "count": "Count"}
_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class _Profiler:
    """The configuration and state behind the module functions (one per process)."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"filename": "profile.json", "profile_all": False,
                                       "profile_symbolic": True, "profile_imperative": False}
        self.running = False
        self.paused = False
        self.aggregate_from = 0  # events before this index are left out of dumps()

    def update(self) -> None:
        """Record while running, not paused, and some op profiling is on."""
        ops = any(self.config.get(k) for k in ("profile_all", "profile_symbolic",
                                                "profile_imperative"))
        RECORDER.on = self.running and not self.paused and ops


_PROFILER = _Profiler()


def _process(profile_process: str) -> None:
    if profile_process not in ("worker", "server"):
        raise InvalidValue(f"profile_process must be 'worker' or 'server', got "
                           f"{profile_process!r}")


def set_config(**kwargs: Any) -> None:
    """Configure the profiler (MXNet's keywords: ``filename``, ``profile_all``,
    ``profile_symbolic``, ``profile_imperative``, ``profile_memory``, ``profile_api``,
    ``continuous_dump``, ``dump_period``, ``aggregate_stats``, ``profile_process``); an unknown
    keyword raises naming it."""
    unknown = sorted(set(kwargs) - set(_CONFIG_KEYS))
    if unknown:
        raise InvalidValue(f"profiler.set_config: unknown keywords {unknown} (known: "
                           f"{', '.join(_CONFIG_KEYS)})")
    _process(kwargs.get("profile_process", "worker"))
    if "filename" in kwargs and not isinstance(kwargs["filename"], (str, Path)):
        raise InvalidValue(f"profiler.set_config: filename must be a path, got "
                           f"{kwargs['filename']!r}")
    _PROFILER.config.update(kwargs)
    _PROFILER.update()


def profiler_set_config(mode: str = "symbolic", filename: str = "profile.json") -> None:
    """MXNet's deprecated form of ``set_config``: ``mode`` 'symbolic' or 'all'."""
    if mode not in ("symbolic", "all"):
        raise InvalidValue(f"profiler_set_config: mode must be 'symbolic' or 'all', got {mode!r}")
    set_config(profile_symbolic=True, profile_all=mode == "all", filename=filename)


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """Start (``'run'``) or stop (``'stop'``) recording."""
    if state not in _STATES:
        raise InvalidValue(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _process(profile_process)
    _PROFILER.running, _PROFILER.paused = state == "run", False
    _PROFILER.update()


def profiler_set_state(state: str = "stop") -> None:
    """MXNet's deprecated form of ``set_state``."""
    set_state(state)


def pause(profile_process: str = "worker") -> None:
    """Stop recording until ``resume`` (the events so far are kept)."""
    _process(profile_process)
    _PROFILER.paused = True
    _PROFILER.update()


def resume(profile_process: str = "worker") -> None:
    """Record again after ``pause``."""
    _process(profile_process)
    _PROFILER.paused = False
    _PROFILER.update()


def _events() -> list[dict[str, Any]]:
    """The recorded events, ops under MXNet's names (``_plus_scalar`` for ``x + 1``)."""
    return [{**e, "name": MXNET_NAMES[e["name"]]}
            if e.get("cat") == "operator" and e["name"] in MXNET_NAMES else e
            for e in RECORDER.events]


def dump(finished: bool = True, profile_process: str = "worker") -> None:
    """Write the events so far to the configured ``filename`` as a Chrome trace (atomically);
    ``finished`` also stops the profiler and forgets the events."""
    _process(profile_process)
    path = Path(_PROFILER.config["filename"])
    text = json.dumps({"traceEvents": _events(), "displayTimeUnit": "ms"})
    try:
        write_atomically(path, lambda tmp: tmp.write_text(text))
    except OSError as error:
        raise InvalidValue(f"profiler.dump: cannot write {path}: {error.strerror or error}") \
            from None
    if finished:
        set_state("stop")
        RECORDER.events.clear()
        _PROFILER.aggregate_from = 0


def dump_profile() -> None:
    """MXNet's deprecated form of ``dump()``."""
    dump(True)


def _aggregate() -> dict[str, dict[str, dict[str, float]]]:
    """Per category and name: count, total, min, max and average time (ms) of the complete
    events since the last ``dumps(reset=True)``."""
    stats: dict[str, dict[str, dict[str, float]]] = {}
    for event in _events()[_PROFILER.aggregate_from:]:
        if event.get("ph") != "X":
            continue
        ms = event["dur"] / 1e3
        item = stats.setdefault(event["cat"], {}).setdefault(
            event["name"], {"Count": 0, "Total": 0.0, "Min": ms, "Max": ms})
        item["Count"] += 1
        item["Total"] += ms
        item["Min"], item["Max"] = min(item["Min"], ms), max(item["Max"], ms)
    for items in stats.values():
        for item in items.values():
            item["Avg"] = item["Total"] / item["Count"]
    return stats


def dumps(reset: bool = False, format: str = "table", sort_by: str = "total",  # noqa: A002
          ascending: bool = False) -> str:
    """The aggregate statistics of the recorded events as a table or as MXNet's JSON
    (``{"Time": {category: {name: {"Count", "Total", "Min", "Max", "Avg"}}}, "Memory": {},
    "Unit": ...}``, times in ms), each category sorted by ``sort_by``; ``reset`` starts the
    next statistics afresh."""
    if format not in ("table", "json"):
        raise InvalidValue(f"profiler.dumps: format must be 'table' or 'json', got {format!r}")
    if sort_by not in _SORT_KEYS:
        raise InvalidValue(f"profiler.dumps: sort_by must be one of {list(_SORT_KEYS)}, got "
                           f"{sort_by!r}")
    if not isinstance(ascending, bool) or not isinstance(reset, bool):
        raise InvalidValue(f"profiler.dumps: reset and ascending must be bools, got "
                           f"{reset!r}, {ascending!r}")
    key = _SORT_KEYS[sort_by]
    stats = {category: dict(sorted(items.items(), key=lambda kv: kv[1][key],
                                   reverse=not ascending))
             for category, items in sorted(_aggregate().items())}
    if reset:
        _PROFILER.aggregate_from = len(RECORDER.events)
    if format == "json":
        return json.dumps({"Time": stats, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}})
    lines = ["Profile Statistics:", "\tNote the difference in units for different entries."]
    for category, items in stats.items():
        lines += ["", category, "=" * len(category),
                  f"{'Name':<40}{'Total Count':>12}{'Time (ms)':>14}{'Min Time (ms)':>15}"
                  f"{'Max Time (ms)':>15}{'Avg Time (ms)':>15}",
                  f"{'----':<40}{'-----------':>12}{'---------':>14}{'-------------':>15}"
                  f"{'-------------':>15}{'-------------':>15}"]
        lines += [f"{name:<40}{item['Count']:>12}{item['Total']:>14.4f}{item['Min']:>15.4f}"
                  f"{item['Max']:>15.4f}{item['Avg']:>15.4f}" for name, item in items.items()]
    return "\n".join(lines) + "\n"


class Domain:
    """A named group of the user's own tasks, frames, counters and markers (their events'
    category)."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidValue(f"Domain: name must be a non-empty str, got {name!r}")
        self.name = name

    def __str__(self) -> str:
        return self.name

    def new_task(self, name: str) -> Task:
        """A task of this domain."""
        return Task(self, name)

    def new_frame(self, name: str) -> Frame:
        """A frame of this domain."""
        return Frame(self, name)

    def new_counter(self, name: str, value: int | None = None) -> Counter:
        """A counter of this domain, optionally set to ``value``."""
        return Counter(self, name, value)

    def new_marker(self, name: str) -> Marker:
        """A marker of this domain."""
        return Marker(self, name)


class _Span:
    """A user event between ``start()`` and ``stop()``, kept as a complete event."""

    def __init__(self, category: str, name: str) -> None:
        self.category, self.name = category, name
        self._begin: float | None = None

    def start(self) -> None:
        """Begin the span."""
        self._begin = RECORDER.now()

    def stop(self) -> None:
        """End the span; recorded if the profiler is recording."""
        if self._begin is None:
            raise InvalidValue(f"{type(self).__name__} {self.name!r}: stop() before start()")
        if RECORDER.on:
            RECORDER.add({"name": self.name, "cat": self.category, "ph": "X",
                          "ts": self._begin, "dur": RECORDER.now() - self._begin})
        self._begin = None

    def __str__(self) -> str:
        return self.name


class Task(_Span):
    """A task of a domain (MXNet's ``profiler.Task``)."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(domain.name, name)
        self.domain = domain


class Frame(_Span):
    """A frame of a domain (MXNet's ``profiler.Frame``)."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(domain.name, name)
        self.domain = domain


class Event(_Span):
    """An event of no domain (MXNet's ``profiler.Event``: category ``Event``)."""

    def __init__(self, name: str) -> None:
        super().__init__("Event", name)


class Counter:
    """A counter of a domain whose every value is kept as a counter event."""

    def __init__(self, domain: Domain, name: str, value: int | None = None) -> None:
        self.domain, self.name = domain, name
        self._value = 0
        self._lock = threading.Lock()
        if value is not None:
            self.set_value(value)

    def _record(self) -> None:
        if RECORDER.on:
            RECORDER.add({"name": self.name, "cat": self.domain.name, "ph": "C",
                          "ts": RECORDER.now(), "args": {self.name: self._value}})

    def set_value(self, value: int) -> None:
        """Set the counter to ``value``."""
        with self._lock:
            self._value = int(value)
            self._record()

    def increment(self, delta: int = 1) -> None:
        """Add ``delta``."""
        with self._lock:
            self._value += int(delta)
            self._record()

    def decrement(self, delta: int = 1) -> None:
        """Subtract ``delta``."""
        self.increment(-int(delta))

    def __iadd__(self, delta: int) -> Counter:
        self.increment(delta)
        return self

    def __isub__(self, delta: int) -> Counter:
        self.decrement(delta)
        return self

    def __str__(self) -> str:
        return self.name


class Marker:
    """An instant of a domain (MXNet's ``profiler.Marker``)."""

    def __init__(self, domain: Domain, name: str) -> None:
        self.domain, self.name = domain, name

    def mark(self, scope: str = "process") -> None:
        """Record the instant (``scope``: 'global', 'process', 'thread', 'task' or 'marker')."""
        if scope not in _SCOPES:
            raise InvalidValue(f"Marker.mark: scope must be one of {list(_SCOPES)}, got "
                               f"{scope!r}")
        if RECORDER.on:
            RECORDER.add({"name": self.name, "cat": self.domain.name, "ph": "i",
                          "ts": RECORDER.now(), "s": _SCOPES[scope]})


profiler_kvstore_handle = None
"""MXNet's kvstore handle for profiling a server process: sparsegen's dist kvstore has none."""


def set_kvstore_handle(handle: Any) -> None:
    """MXNet's hook for profiling a kvstore server; sparsegen's dist kvstore has no server
    processes, so there is nothing to attach (accepted and ignored)."""


__all__ = ["Counter", "Domain", "Event", "Frame", "Marker", "Task", "dump", "dump_profile",
           "dumps", "pause", "profiler_set_config", "profiler_set_state", "resume",
           "set_config", "set_kvstore_handle", "set_state"]
