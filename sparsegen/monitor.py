"""``mx.monitor.Monitor``: statistics of the arrays of bound executors every ``interval``
batches (MXNet 1.9.1's): each op's outputs (and inputs, with ``monitor_all``) as ``forward``
computes them, and the arguments and auxiliary states at ``toc``."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from typing import Any

from .errors import InvalidType, InvalidValue
from .ndarray import NDArray, norm
from .params import integer


def _rms(x: NDArray) -> NDArray:
    """MXNet's default statistic: ``norm(x) / sqrt(x.size)``, the root mean square."""
    return norm(x) / math.sqrt(max(x.size, 1))


class Monitor:
    """Collect ``stat_func(array)`` of the arrays whose names match ``pattern`` (a regular
    expression, matched at the start as MXNet's ``re.match``) in the batches between ``tic``
    and ``toc``, every ``interval`` batches; install it with ``Module.install_monitor`` or
    ``fit(monitor=...)``, or on an executor with ``install``."""

    def __init__(self, interval: int, stat_func: Callable[[NDArray], Any] | None = None,
                 pattern: str = ".*", sort: bool = False, monitor_all: bool = False) -> None:
        self.interval = integer(interval, "Monitor: interval", low=1)
        if stat_func is not None and not callable(stat_func):
            raise InvalidType(f"Monitor: stat_func must be callable, got "
                              f"{type(stat_func).__name__}")
        self.stat_func = stat_func or _rms
        try:
            self.re_prog = re.compile(pattern)
        except (re.error, TypeError) as error:
            raise InvalidValue(f"Monitor: pattern {pattern!r} is not a regular expression: "
                               f"{error}") from None
        self.sort, self.monitor_all = bool(sort), bool(monitor_all)
        self.activated = False
        self.queue: list[tuple[int, str, Any]] = []
        self.step = 0
        self.exes: list[Any] = []

    def stat_helper(self, name: str, array: NDArray) -> None:
        """The executor's callback: keep the statistic of ``array`` while activated."""
        if self.activated and self.re_prog.match(name):
            self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe: Any) -> None:
        """Watch executor ``exe`` (``set_monitor_callback``)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self) -> None:
        """Start a batch: collect in it when the step count is a multiple of ``interval``."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self) -> list[tuple[int, str, str]]:
        """End a batch: add the matching arguments and auxiliary states, and return the
        collected ``(step, name, statistic text)`` (none when the batch was not collected)."""
        if not self.activated:
            return []
        for exe in self.exes:
            named = (*zip(exe._symbol.list_arguments(), exe.arg_arrays),
                     *zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays))
            self.queue += [(self.step, name, self.stat_func(array)) for name, array in named
                           if self.re_prog.match(name)]
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda entry: entry[1])
        result = []
        for step, name, values in self.queue:
            values = values if isinstance(values, list) else [values]
            text = ""
            for value in values:
                if not isinstance(value, NDArray):
                    raise InvalidType(f"Monitor: stat_func must return an NDArray or a list of "
                                      f"them, got {type(value).__name__} for {name}")
                text += (str(value.asscalar()) if value.size == 1 and value.ndim <= 1
                         else str(value.asnumpy())) + "\t"
            result.append((step, name, text))
        self.queue = []
        return result

    def toc_print(self) -> None:
        """``toc``, each statistic logged (``logging.info``) as MXNet prints it."""
        for step, name, text in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(step, name, text))


__all__ = ["Monitor"]
