"""The collectives the distributed kvstore makes, on torch.distributed: torch tensors carry the
bytes of sparsegen's buffers (zero-copy DLPack views); every call is tagged with its key so a
worker that made another call fails instead of mixing values, counts the bytes it sends, and
turns a transport failure or timeout into a ``PeerFailure`` naming the ranks."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ndarray.dlpack import dlpack_numpy
from .rendezvous import PeerFailure, Session, torch_distributed


def tag(what: str, key: Any) -> int:
    """A number naming a call and its key, the same on every worker."""
    return zlib.crc32(f"{what}:{key!r}".encode()) & 0x7FFFFFFF


class Collectives:
    """The calls every worker makes together, in the same order, over one ``Session``."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.dist = torch_distributed()
        import torch  # torch_distributed() has imported it

        self.torch = torch
        self.bytes_sent = 0

    @property
    def group(self) -> Any:
        """The process group the collectives run in (its timeout is the session's)."""
        return self.session.group

    @property
    def rank(self) -> int:
        """This worker's rank."""
        return self.session.env.rank

    @property
    def size(self) -> int:
        """The number of workers."""
        return self.session.env.world_size

    def tensor(self, buffer: np.ndarray) -> Any:
        """A torch tensor sharing the bytes of a host buffer."""
        return self.torch.from_dlpack(buffer)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> tuple[Any, np.ndarray]:
        """A new host buffer, as a torch tensor and the numpy array sharing it."""
        out = self.torch.empty(shape, dtype=self.torch.from_numpy(np.empty(0, dtype)).dtype)
        return out, dlpack_numpy(out, "a received buffer")

    def run(self, what: str, key: Any, call: Callable[[], Any]) -> Any:
        """``call()``, its failure turned into a ``PeerFailure`` naming ``what``, the key and
        the ranks at fault; a failed group stays failed."""
        session = self.session
        if session.broken:
            raise PeerFailure(f"kvstore.{what}: key {key!r}: the workers' group is broken "
                              f"({session.broken}); restart every worker")
        session.progress += 1
        try:
            return call()
        except (RuntimeError, ValueError) as err:  # gloo's transport errors and timeouts
            reason = session.diagnose()
            session.broken = reason
            detail = " ".join(str(err).split())[:300]
            raise PeerFailure(f"kvstore.{what}: key {key!r}: a collective failed on rank "
                              f"{self.rank} of {self.size}: {reason} (timeout "
                              f"{session.timeout:g} s; {detail})") from None

    # -- the collectives ---------------------------------------------------------------------
    def exchange(self, what: str, key: Any, rows: np.ndarray, counts: list[int],
                 sizes: list[int] | None = None) -> tuple[np.ndarray, list[int]]:
        """Send the consecutive chunks of ``rows`` (``counts[r]`` rows for rank ``r``, in rank
        order) to their ranks; the rows received from every rank, in rank order in one buffer,
        and how many came from each. ``sizes``: how many rows each rank sends here, when an
        earlier exchange told (no header then)."""
        if sizes is None:
            sizes = self._header(what, key, counts)
        row = int(np.prod(rows.shape[1:], dtype=np.int64))
        out, values = self.empty((sum(sizes), *rows.shape[1:]), rows.dtype)
        sent = self.tensor(np.ascontiguousarray(rows))
        self.bytes_sent += (sum(counts) - counts[self.rank]) * row * rows.itemsize
        self.run(what, key, lambda: self.dist.all_to_all_single(
            out, sent, output_split_sizes=sizes, input_split_sizes=counts, group=self.group))
        return values, sizes

    def _header(self, what: str, key: Any, counts: list[int]) -> list[int]:
        """Tell each rank how many rows this worker sends it (with the call's tag); how many
        each rank sends here. A rank that made another call fails the exchange."""
        dist, torch = self.dist, self.torch
        header = torch.tensor([[tag(what, key), n] for n in counts], dtype=torch.int64)
        heard = torch.empty_like(header)
        self.run(what, key, lambda: dist.all_to_all_single(heard, header, group=self.group))
        wrong = [r for r in range(self.size) if int(heard[r, 0]) != int(header[0, 0])]
        if wrong:
            self.session.broken = f"rank {wrong[0]} made another call"
            raise PeerFailure(f"kvstore.{what}: key {key!r}: rank{'s' if len(wrong) > 1 else ''} "
                              f"{', '.join(map(str, wrong))} made another call at the same "
                              "point (every worker must push and pull the same keys in the "
                              "same order)")
        self.bytes_sent += 16 * (self.size - 1)
        return [int(n) for n in heard[:, 1]]

    def all_reduce(self, what: str, key: Any, buffer: np.ndarray) -> None:
        """Sum ``buffer`` over the workers, in place."""
        self.bytes_sent += 2 * buffer.nbytes * (self.size - 1) // self.size  # a ring
        self.run(what, key, lambda: self.dist.all_reduce(self.tensor(buffer), group=self.group))

    def broadcast(self, what: str, key: Any, buffer: np.ndarray) -> None:
        """Rank 0's ``buffer`` into every worker's, in place."""
        self.bytes_sent += buffer.nbytes * (self.size - 1) if self.rank == 0 else 0
        self.run(what, key,
                 lambda: self.dist.broadcast(self.tensor(buffer), src=0, group=self.group))

    def agree(self, what: str, key: Any, number: int) -> list[int]:
        """``number`` from every worker, in rank order, once every worker is found making this
        call (``what`` on ``key``): one that made another fails the call on every worker."""
        torch = self.torch
        mine = torch.tensor([tag(what, key), number], dtype=torch.int64)
        every = [torch.empty_like(mine) for _ in range(self.size)]
        self.run(what, key, lambda: self.dist.all_gather(every, mine, group=self.group))
        self.bytes_sent += 16 * (self.size - 1)
        wrong = [r for r, t in enumerate(every) if int(t[0]) != int(mine[0])]
        if wrong:
            self.session.broken = f"rank {wrong[0]} made another call"
            raise PeerFailure(f"kvstore.{what}: key {key!r}: rank{'s' if len(wrong) > 1 else ''} "
                              f"{', '.join(map(str, wrong))} made another call at the same "
                              "point (every worker must push and pull the same keys, of the "
                              "same storage types, in the same order)")
        return [int(t[1]) for t in every]

    def all_gather_rows(self, what: str, key: Any, rows: np.ndarray,
                        sizes: list[int]) -> list[np.ndarray]:
        """Every worker's ``rows`` (``sizes[r]`` rows from rank ``r``, told by ``agree``), in
        rank order; each is sent padded to the largest."""
        torch = self.torch
        most = max(sizes)
        padded = torch.zeros((most, *rows.shape[1:]), dtype=self.tensor(rows).dtype)
        padded[:rows.shape[0]] = self.tensor(np.ascontiguousarray(rows))
        every = [torch.empty_like(padded) for _ in range(self.size)]
        self.bytes_sent += padded.numel() * padded.element_size() * (self.size - 1)
        self.run(what, key, lambda: self.dist.all_gather(every, padded, group=self.group))
        return [dlpack_numpy(t[:n], "a received buffer") for t, n in zip(every, sizes)]

    def gather(self, what: str, key: Any, number: int) -> list[int]:
        """``number`` from every worker, in rank order."""
        torch = self.torch
        mine = torch.tensor([number], dtype=torch.int64)
        every = [torch.empty_like(mine) for _ in range(self.size)]
        self.run(what, key, lambda: self.dist.all_gather(every, mine, group=self.group))
        return [int(t[0]) for t in every]

    def barrier(self) -> None:
        """Wait until every worker reaches this point."""
        self.run("barrier", None, lambda: self.dist.barrier(group=self.group))
