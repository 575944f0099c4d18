"""Joining the workers of a distributed kvstore: the rendezvous environment (torchrun's, which
``sparsegen launch`` sets too), the torch.distributed process group, and the heartbeats that
name a dead or stuck rank when a collective fails."""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..errors import InvalidValue, SparsegenError

TIMEOUT_VARIABLE = "SPARSEGEN_KV_TIMEOUT"
"""The environment variable giving the seconds a collective waits for the other workers."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a collective waits for the other workers unless told otherwise."""

INSTALL = 'pip install "sparsegen[distributed]"'
"""What installs the distributed kvstore's dependency (torch)."""

JOIN_TIMEOUT = 300.0
"""Seconds the workers wait for each other to start (imports take long on a loaded machine),
or the collectives' timeout when that is longer."""

BEAT = 0.5
"""Seconds between two heartbeats of a worker."""

_PREFIX = "sparsegen/kv/"


class PeerFailure(SparsegenError):
    """A collective of the distributed kvstore failed: a worker died, or did not take part in
    time; the message names the ranks."""


def torch_distributed() -> Any:
    """``torch.distributed``, or an error naming the install command when torch is missing."""
    try:
        import torch.distributed as dist
    except ImportError:
        raise SparsegenError(f"kvstore: the distributed kvstore (dist_sync) runs on "
                             f"torch.distributed, and PyTorch is not installed: {INSTALL}"
                             ) from None
    if not dist.is_available():
        raise SparsegenError("kvstore: this PyTorch build has no torch.distributed; install the "
                             f"CPU build: {INSTALL}")
    return dist


def timeout_seconds(timeout: float | None) -> float:
    """``timeout``, else ``$SPARSEGEN_KV_TIMEOUT``, else 60: positive seconds, checked."""
    given, what = timeout, "timeout"
    if given is None and os.environ.get(TIMEOUT_VARIABLE):
        given, what = os.environ[TIMEOUT_VARIABLE], f"${TIMEOUT_VARIABLE}"
    if given is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(given)
    except (TypeError, ValueError):
        raise InvalidValue(f"kvstore: {what} must be a number of seconds, got {given!r}") from None
    if not seconds > 0 or seconds == float("inf"):
        raise InvalidValue(f"kvstore: {what} must be a positive finite number of seconds, got "
                           f"{given!r}")
    return seconds


@dataclass(frozen=True)
class Environment:
    """Where this worker stands: its rank among ``world_size`` workers and the rendezvous
    address (rank 0's, or the launcher's store)."""

    rank: int
    world_size: int
    local_rank: int
    addr: str
    port: int

    @property
    def alone(self) -> bool:
        """Whether no launcher set the environment (one worker, nothing to join)."""
        return self.port < 0


def _int_variable(name: str, default: int | None) -> int:
    text = os.environ.get(name)
    if text is None or text == "":
        if default is None:
            raise InvalidValue(f"kvstore: ${name} is not set; start the workers with "
                               "`sparsegen launch -n N -- python train.py` or torchrun")
        return default
    try:
        return int(text)
    except ValueError:
        raise InvalidValue(f"kvstore: ${name} must be an integer, got {text!r}") from None


def environment() -> Environment:
    """The rendezvous environment torchrun and ``sparsegen launch`` set (``RANK``,
    ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``); without ``WORLD_SIZE``,
    one worker on its own."""
    if not os.environ.get("WORLD_SIZE"):
        return Environment(0, 1, 0, "127.0.0.1", -1)
    world = _int_variable("WORLD_SIZE", None)
    rank = _int_variable("RANK", None)
    port = _int_variable("MASTER_PORT", None)
    if world < 1 or not 0 <= rank < world:
        raise InvalidValue(f"kvstore: $RANK={rank} must lie in [0, $WORLD_SIZE={world})")
    if not 0 < port < 2**16:
        raise InvalidValue(f"kvstore: $MASTER_PORT={port} is not a port")
    return Environment(rank, world, _int_variable("LOCAL_RANK", rank),
                       os.environ.get("MASTER_ADDR") or "127.0.0.1", port)


@dataclass
class Session:
    """This process's membership of the workers: the process group, the store the heartbeats go
    through, and the count of collectives started (``progress``), which the heartbeats carry."""

    env: Environment
    timeout: float
    backend: str
    store: Any
    group: Any
    progress: int = 0
    broken: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _beating: threading.Thread | None = None
    failed: bool = False
    _previous_hook: Any = None

    def beat_forever(self) -> None:
        """Publish this worker's heartbeat and progress every ``BEAT`` seconds (a thread)."""
        me = self.env.rank
        while not self._stop.wait(BEAT):
            try:
                self.store.add(f"{_PREFIX}beat/{me}", 1)
                self.store.set(f"{_PREFIX}progress/{me}", str(self.progress))
            except Exception:  # the store's host is gone: the next collective fails and says so
                return

    def _readings(self) -> tuple[list[int], list[int]]:
        ranks = range(self.env.world_size)
        beats = [self.store.add(f"{_PREFIX}beat/{r}", 0) for r in ranks]
        progress = [int(self.store.get(f"{_PREFIX}progress/{r}")) if
                    self.store.check([f"{_PREFIX}progress/{r}"]) else 0 for r in ranks]
        return beats, progress

    def diagnose(self) -> str:
        """Which ranks are dead (no heartbeat for ``3 * BEAT`` seconds) or behind this worker
        (not at this collective), as a sentence."""
        me = self.env.rank
        try:
            self.store.set_timeout(timedelta(seconds=max(2.0, 4 * BEAT)))
            before, _ = self._readings()
            time.sleep(3 * BEAT)
            after, progress = self._readings()
        except Exception:
            host = ("its launcher (sparsegen launch, torchrun) is gone" if _agent_store()
                    else "dead rank 0, which hosts it")
            return f"the rendezvous store is unreachable: {host}"
        dead = [r for r in range(self.env.world_size) if r != me and after[r] == before[r]]
        if dead:
            return f"dead rank{'s' if len(dead) > 1 else ''} {', '.join(map(str, dead))}"
        behind = [r for r in range(self.env.world_size) if progress[r] < self.progress and r != me]
        if behind:
            return (f"rank{'s' if len(behind) > 1 else ''} {', '.join(map(str, behind))} alive "
                    f"but not at this collective within {self.timeout:g} s (a different call "
                    "order, or an error there)")
        return "no rank is dead or behind (the transport failed)"

    def close(self) -> None:
        """Stop the heartbeats and leave the process group, at exit: after a last barrier when
        the script ended without an error (a worker whose peers closed their connections first
        can abort in gloo's threads)."""
        dist = torch_distributed()
        if not (self.broken or self.failed) and self.env.world_size > 1:
            try:
                dist.barrier(group=self.group)
            except Exception:  # a peer failed as the process ends: leave anyway
                pass
        self._stop.set()
        if self._beating is not None:
            self._beating.join(4 * BEAT)  # not inside a store call while the process ends
        if dist.is_initialized():
            dist.destroy_process_group()

    def excepthook(self, kind: type, error: BaseException, trace: Any) -> None:
        """``sys.excepthook`` while the session lasts: an uncaught error skips the last barrier
        (the others would wait for this worker in vain)."""
        self.failed = True
        self._previous_hook(kind, error, trace)


def _agent_store() -> bool:
    return os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"


_SESSION: Session | None = None


def session(timeout: float, backend: str) -> Session:
    """This process's session, joining the workers on first use (every kvstore of the process
    shares it; a later ``timeout`` replaces the earlier one)."""
    global _SESSION
    dist = torch_distributed()
    if _SESSION is not None:
        if _SESSION.broken:
            raise PeerFailure(f"kvstore: the workers' group is broken ({_SESSION.broken}); "
                              "restart every worker")
        if _SESSION.backend != backend:
            raise InvalidValue(f"kvstore: this process joined the workers on {_SESSION.backend}; "
                               f"a kvstore on {backend} cannot join them again")
        if timeout != _SESSION.timeout:  # a group of its own for the new timeout
            _SESSION.group = dist.new_group(timeout=timedelta(seconds=timeout), backend=backend)
            _SESSION.timeout = timeout
        return _SESSION
    if dist.is_initialized():
        raise InvalidValue("kvstore: torch.distributed's default group is already initialized "
                           "by this script; the kvstore joins the workers itself (create it "
                           "before init_process_group, or do not call that)")
    env = environment()
    join = timedelta(seconds=max(timeout, JOIN_TIMEOUT))
    if env.alone:
        store = dist.HashStore()
    else:
        store, _, _ = next(dist.rendezvous(f"env://?rank={env.rank}&world_size={env.world_size}",
                                           timeout=join))
    dist.init_process_group(backend, store=dist.PrefixStore("sparsegen/pg", store),
                            rank=env.rank, world_size=env.world_size, timeout=join)
    group = dist.new_group(timeout=timedelta(seconds=timeout), backend=backend)
    _SESSION = Session(env, timeout, backend, store, group)
    _SESSION._beating = threading.Thread(target=_SESSION.beat_forever,
                                         name="sparsegen-kv-heartbeat", daemon=True)
    _SESSION._beating.start()
    _SESSION._previous_hook, sys.excepthook = sys.excepthook, _SESSION.excepthook
    atexit.register(_SESSION.close)
    return _SESSION
