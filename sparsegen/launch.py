"""``sparsegen launch``: N worker processes of a distributed kvstore script on this machine, with
the rendezvous environment torchrun gives (``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``) and the rendezvous store held by the
launcher; or, for several hosts, the command to run on each."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from .errors import InvalidValue

GRACE = 5.0
"""Seconds a stopped worker gets to exit after SIGTERM before SIGKILL."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def hosts_of(path: str | Path) -> list[str]:
    """The host names of a hosts file: one a line, ``#`` comments and blank lines skipped."""
    names = [line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines()]
    names = [n for n in names if n]
    if not names:
        raise InvalidValue(f"launch: the hosts file {path} names no host")
    return names


def host_commands(hosts: Sequence[str], workers: int, port: int,
                  command: Sequence[str]) -> list[str]:
    """The command to run on each of ``hosts`` (torchrun, ``workers`` processes a host, the
    first host holding the rendezvous)."""
    script = list(command[1:]) if Path(command[0]).name.startswith("python") else list(command)
    return [shlex.join(["torchrun", f"--nnodes={len(hosts)}", f"--node-rank={i}",
                        f"--nproc-per-node={workers}", f"--master-addr={hosts[0]}",
                        f"--master-port={port}", *script]) + f"   # on {host}"
            for i, host in enumerate(hosts)]


def _stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM the running processes, then SIGKILL those still running after ``GRACE``."""
    running = [p for p in processes if p.poll() is None]
    for p in running:
        p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    for p in running:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def launch(workers: int, command: Sequence[str], port: int | None = None,
           host: str = "127.0.0.1") -> int:
    """Run ``command`` as ``workers`` processes with ranks 0..workers-1; the exit status: 0 when
    every worker exits 0, else the first failure's (a signal as 128 + its number), the other
    workers stopped."""
    if workers < 1:
        raise InvalidValue(f"launch: -n must be at least 1, got {workers}")
    if not command:
        raise InvalidValue("launch: no command to run (write it after --)")
    from .kvstore.rendezvous import torch_distributed

    dist = torch_distributed()
    port = free_port(host) if port is None else port
    store = dist.TCPStore(host, port, workers, is_master=True, wait_for_workers=False,
                          timeout=timedelta(seconds=300))  # served until this function returns
    store.set("sparsegen/launch/workers", str(workers))
    base = dict(os.environ, MASTER_ADDR=host, MASTER_PORT=str(port), WORLD_SIZE=str(workers),
                LOCAL_WORLD_SIZE=str(workers), GROUP_RANK="0", TORCHELASTIC_USE_AGENT_STORE="True",
                TORCHELASTIC_RESTART_COUNT="0")
    processes = [subprocess.Popen(list(command), env=dict(base, RANK=str(r), LOCAL_RANK=str(r)))
                 for r in range(workers)]
    status = 0
    try:
        while status == 0 and None in [p.poll() for p in processes]:  # polls every worker
            failed = [p for p in processes if p.returncode not in (None, 0)]
            if failed:
                code = failed[0].returncode
                rank = processes.index(failed[0])
                print(f"sparsegen launch: worker {rank} exited with status {code}; stopping the "
                      "others", file=sys.stderr)
                status = 128 - code if code < 0 else code
                break
            time.sleep(0.1)
        if status == 0:
            codes = [p.returncode for p in processes]
            bad = [c for c in codes if c != 0]
            status = (128 - bad[0] if bad[0] < 0 else bad[0]) if bad else 0
    except KeyboardInterrupt:
        status = 130
    finally:
        _stop(processes)
    return status
