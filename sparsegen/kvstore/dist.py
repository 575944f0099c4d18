"""``DistKVStore``: the ``dist_sync`` kvstore on torch.distributed (gloo). A row_sparse key is
sharded by row range over the workers: a push sends each gradient row to its owner, which sums
what it receives on the rsp-sum kernel and updates its rows (lazily, on the optimizer kernels);
``row_sparse_pull`` fetches exactly the requested rows from their owners. A dense key is summed
with all_reduce and updated identically on every worker. Values only travel as bytes: the
kernels compute, torch tensors carry."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import place
from ..errors import InvalidValue, SparsegenError
from ..formats import INDEX_DTYPE, RowSparse
from ..ndarray import NDArray, add_n, take
from ..ndarray import sparse as _sparse
from ..ndarray.storage import assign
from . import shard
from .collective import Collectives, tag
from .kvstore import Key, KVStore, _pairs
from .rendezvous import session, timeout_seconds

_STYPES = ("default", "row_sparse")


def _host(storage: Any) -> Any:
    """``storage`` with its buffers in host memory (GPU arrays are staged through the host)."""
    return place(storage, None)


def _local_rows(ids: np.ndarray, first: int) -> np.ndarray:
    """Global row ids as rows of the shard starting at ``first`` (index metadata)."""
    return np.subtract(ids, first, dtype=INDEX_DTYPE)


class DistKVStore(KVStore):
    """A store of arrays by key over the workers of a torch.distributed group, as MXNet's
    ``dist_sync`` (``mx.kv.create('dist_sync')``): every worker makes the same calls in the same
    order; each push is summed over the workers before the update."""

    def __init__(self, kv_type: str, timeout: float | None = None) -> None:
        super().__init__(kv_type)
        self._collectives = Collectives(session(timeout_seconds(timeout), "gloo"))
        self._specs: dict[Key, tuple[tuple[int, ...], np.dtype, str]] = {}
        self._edges: dict[Key, list[int]] = {}

    # -- what it is ----------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        """This worker's rank, in ``[0, num_workers)``."""
        return self._collectives.rank

    @property
    def num_workers(self) -> int:
        """The number of workers."""
        return self._collectives.size

    @property
    def timeout(self) -> float:
        """Seconds a collective waits for the other workers before it fails."""
        return self._collectives.session.timeout

    @property
    def bytes_sent(self) -> int:
        """Payload bytes this worker has sent to the others (messages to itself not counted)."""
        return self._collectives.bytes_sent

    def barrier(self) -> None:
        """Wait until every worker reaches the barrier."""
        self._collectives.barrier()

    _barrier = barrier

    def owned_rows(self, key: Key) -> tuple[int, int]:
        """The range ``[first, last)`` of the rows of row_sparse ``key`` this worker holds."""
        self._spec(key, "owned_rows")
        if key not in self._edges:
            raise InvalidValue(f"kvstore.owned_rows: key {key!r} holds a dense value (only "
                               "row_sparse keys are sharded)")
        edges = self._edges[key]
        return edges[self.rank], edges[self.rank + 1]

    # -- init ----------------------------------------------------------------------------------
    def _spec(self, key: Key, what: str) -> tuple[tuple[int, ...], np.dtype, str]:
        if key not in self._specs:
            raise InvalidValue(f"kvstore.{what}: key {key!r} has not been initialized (init it "
                               "first)")
        return self._specs[key]

    def init(self, key: Any, value: Any) -> None:
        """Initialize each key on every worker from rank 0's value (as MXNet: the other workers'
        values only give the shape, dtype and storage type, which must agree); every worker
        makes the same ``init`` calls."""
        pairs = _pairs(key, value, "init")
        self._check_init(pairs)
        for k, arrays in pairs:
            if arrays[0].stype not in _STYPES:
                raise InvalidValue(f"kvstore.init: key {k!r}: the distributed kvstore holds "
                                   f"dense and row_sparse values, got a {arrays[0].stype} one")
        described = [(k, a[0].shape, np.dtype(a[0].dtype).name, a[0].stype) for k, a in pairs]
        every = self._collectives.gather("init", key, tag("init", described))
        differ = [r for r, t in enumerate(every) if t != every[0]]
        if differ:
            raise InvalidValue(f"kvstore.init: key {key!r}: rank{'s' if len(differ) > 1 else ''} "
                               f"{', '.join(map(str, differ))} initialized other keys, shapes, "
                               "dtypes or storage types than rank 0")
        for k, arrays in pairs:
            self._init_one(k, arrays[0])

    def _init_one(self, key: Key, value: NDArray) -> None:
        self._key_type = type(key)
        shape, dtype = value.shape, np.dtype(value.dtype)
        if value.stype == "default":
            buffer = _host(value.copy()._storage)  # this worker's own bytes to receive into
            self._collectives.broadcast("init", key, buffer)
            self._store[key] = NDArray(buffer, value.context)
        else:
            edges = shard.bounds(shape[0], self.num_workers)
            every = np.arange(shape[0], dtype=INDEX_DTYPE)
            send = (_host(value.retain(every)._storage).data if self.rank == 0
                    else np.empty((0, *shape[1:]), dtype))
            counts = np.diff(edges).tolist() if self.rank == 0 else [0] * self.num_workers
            rows, _ = self._collectives.exchange("init", key, send, counts)
            count = edges[self.rank + 1] - edges[self.rank]
            self._store[key] = _sparse.RowSparseNDArray(
                RowSparse(rows, np.arange(count, dtype=INDEX_DTYPE), (count, *shape[1:])),
                value.context)
            self._edges[key] = edges
        self._specs[key] = (shape, dtype, value.stype)

    # -- push ----------------------------------------------------------------------------------
    def _merged(self, key: Key, arrays: list[NDArray]) -> NDArray:
        """This worker's sum of the arrays pushed to ``key`` (checked against its init)."""
        shape, dtype, stype = self._spec(key, "push")
        context = self._store[key].context
        for array in arrays:
            if array.shape != shape or np.dtype(array.dtype) != dtype:
                raise InvalidValue(f"kvstore.push: key {key!r} holds shape {shape} and dtype "
                                   f"{dtype.name}, got a value of shape {array.shape} and dtype "
                                   f"{np.dtype(array.dtype).name}")
            if array.stype not in _STYPES:
                raise InvalidValue(f"kvstore.push: key {key!r} takes dense or row_sparse "
                                   f"values, got a {array.stype} one")
        near = [a if a.context == context else a.copyto(context) for a in arrays]
        if self._compression is not None and stype != "default":
            raise SparsegenError(f"kvstore.push: key {key!r} holds a {stype} value: gradient "
                                 "compression takes dense float32 values (as MXNet)")
        if (self._compression is None and stype == "default"
                and all(a.stype == "row_sparse" for a in near)):
            stype = "row_sparse"  # a dense key's row_sparse gradients travel as rows
        near = [a if a.stype == stype else a.tostype(stype) for a in near]
        return add_n(*near) if len(near) > 1 else near[0]

    def _apply(self, key: Key, total: NDArray) -> None:
        """Sum this worker's push with the others' (the rows it owns, or the whole dense
        value), then update its part of the value."""
        if key in self._edges:
            merged = self._rows_received(key, total)
            if self._updater is not None:
                self._updater(key, merged, self._store[key])
            else:  # the sum, every owned row stored (zeros where no worker pushed), as init
                every = np.arange(merged.shape[0], dtype=INDEX_DTYPE)
                assign(self._store[key], merged.retain(every))
        elif total.stype == "row_sparse":
            super()._apply(key, self._rows_gathered(key, total))
        elif self._compression is not None:  # this worker's codes, summed over the workers
            self._collectives.agree("push compressed", key, 0)
            buffer = _host(self._codes(key, 0, total, self.num_workers)._storage)  # fresh
            self._collectives.all_reduce("push", key, buffer)
            super()._apply(key, self._compression.values(NDArray(buffer, total.context)))
        else:
            self._collectives.agree("push dense", key, 0)
            buffer = _host(total.copy()._storage)  # summed in place: never the pushed array
            self._collectives.all_reduce("push", key, buffer)
            super()._apply(key, NDArray(buffer, total.context))

    def _rows_gathered(self, key: Key, grad: NDArray) -> NDArray:
        """The sum of every worker's row_sparse ``grad`` of dense ``key``: each worker gets
        every worker's rows (the update then runs alike everywhere, lazily as MXNet's server
        runs it on a dense weight)."""
        host = _host(grad._storage)
        sizes = self._collectives.agree("push rows", key, int(host.indices.size))
        ids = self._collectives.all_gather_rows("push", key, host.indices, sizes)
        values = self._collectives.all_gather_rows("push", key, host.data, sizes)
        parts = [_sparse.RowSparseNDArray(RowSparse(v, i, grad.shape), grad.context)
                 for i, v in zip(ids, values) if i.size]
        if not parts:
            return _sparse.zeros("row_sparse", grad.shape, ctx=grad.context, dtype=grad.dtype)
        return add_n(*parts) if len(parts) > 1 else parts[0]

    def _rows_received(self, key: Key, grad: NDArray) -> NDArray:
        """The sum of the rows of ``key`` this worker owns over every worker's ``grad``."""
        edges, stored = self._edges[key], self._store[key]
        host = _host(grad._storage)
        counts = shard.counts(host.indices, edges)
        ids, heard = self._collectives.exchange("push", key, host.indices, counts)
        values, _ = self._collectives.exchange("push", key, host.data, counts, sizes=heard)
        local = _local_rows(ids, edges[self.rank])
        got = shard.offsets(heard)
        parts = [_sparse.RowSparseNDArray(RowSparse(values[a:b], local[a:b], stored.shape),
                                          stored.context)
                 for a, b in zip(got[:-1], got[1:]) if b > a]
        if not parts:
            return _sparse.zeros("row_sparse", stored.shape, ctx=stored.context,
                                 dtype=stored.dtype)
        return add_n(*parts) if len(parts) > 1 else parts[0]

    def _set(self, key: Key, value: NDArray) -> None:
        """Replace this worker's part of the value of ``key`` by that part of ``value``."""
        if key not in self._edges:
            super()._set(key, value)
            return
        first, last = self._edges[key][self.rank], self._edges[key][self.rank + 1]
        whole = value if value.stype == "row_sparse" else value.tostype("row_sparse")
        rows = _host(whole.retain(np.arange(first, last, dtype=INDEX_DTYPE))._storage).data
        stored = self._store[key]
        assign(stored, _sparse.RowSparseNDArray(
            RowSparse(rows, np.arange(last - first, dtype=INDEX_DTYPE), stored.shape),
            stored.context))

    # -- pull ----------------------------------------------------------------------------------
    def _check_out(self, key: Key, arrays: list[NDArray], what: str) -> None:
        shape = self._spec(key, what)[0]
        for array in arrays:
            if array.shape != shape:
                raise InvalidValue(f"kvstore.{what}: key {key!r} holds shape {shape}, got an out "
                                   f"array of shape {array.shape}")

    def pull(self, key: Any, out: Any = None, priority: int = 0,
             ignore_sparse: bool = True) -> None:
        """Copy the value of each key into ``out`` (an array or a list, per key); row_sparse
        ``out`` arrays are skipped when ``ignore_sparse``. A row_sparse key's rows are fetched
        from every owner (``row_sparse_pull`` fetches only the rows asked for)."""
        if out is None:
            raise InvalidValue("kvstore.pull: out is required (the arrays to copy into)")
        pairs = _pairs(key, out, "pull")
        for k, arrays in pairs:
            self._check_out(k, arrays, "pull")
        for k, arrays in pairs:
            wanted = [a for a in arrays if not (ignore_sparse and a.stype == "row_sparse")]
            if not wanted:
                continue
            if k not in self._edges:
                super().pull(k, wanted, priority, ignore_sparse)
            else:
                whole = self._fetch("pull", k, np.arange(self._specs[k][0][0], dtype=INDEX_DTYPE))
                for array in wanted:
                    assign(array, whole if array.context == whole.context
                           else whole.copyto(array.context))

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0,
                        row_ids: Any = None) -> None:
        """Copy the rows ``row_ids`` (an array, or one per ``out`` array) of each row_sparse
        value into ``out`` (row_sparse arrays): exactly those rows, sorted, each once, fetched
        from the workers that own them."""
        if out is None or row_ids is None:
            raise InvalidValue(f"kvstore.row_sparse_pull: {'out' if out is None else 'row_ids'} "
                               "is required")
        pairs = _pairs(key, out, "row_sparse_pull")
        ids = _pairs(key, row_ids, "row_sparse_pull")
        plans = []
        for (k, arrays), (_, wanted) in zip(pairs, ids):
            shape, _, stype = self._spec(k, "row_sparse_pull")
            if stype != "row_sparse":
                raise InvalidValue(f"kvstore.row_sparse_pull: key {k!r} holds a {stype} value; "
                                   "row_sparse_pull needs a row_sparse one (use pull)")
            if len(wanted) not in (1, len(arrays)):
                raise InvalidValue(f"kvstore.row_sparse_pull: key {k!r} has {len(arrays)} out "
                                   f"arrays and {len(wanted)} row_ids arrays")
            self._check_out(k, arrays, "row_sparse_pull")
            for array in arrays:
                if array.stype != "row_sparse":
                    raise InvalidValue(f"kvstore.row_sparse_pull: out of key {k!r} must be "
                                       f"row_sparse, got {array.stype}")
            rows = [_sparse.sorted_row_ids(w, shape[0], f"row_ids of key {k!r}") for w in wanted]
            plans.append((k, arrays, rows))
        for k, arrays, rows in plans:
            fetched = [self._fetch("row_sparse_pull", k, r) for r in rows]
            for position, array in enumerate(arrays):
                got = fetched[position if len(fetched) > 1 else 0]
                assign(array, got if array.context == got.context else got.copyto(array.context))

    def _fetch(self, what: str, key: Key, ids: np.ndarray) -> NDArray:
        """The rows ``ids`` (sorted, unique) of row_sparse ``key``, from their owners."""
        edges, stored = self._edges[key], self._store[key]
        shape = self._specs[key][0]
        counts = shard.counts(ids, edges)
        asked, heard = self._collectives.exchange(what, key, ids, counts)
        local = NDArray(_local_rows(asked, edges[self.rank]), stored.context)
        replies = _host(take(stored, local)._storage)  # rows of every request, in request order
        values, _ = self._collectives.exchange(what, key, replies, heard, sizes=counts)
        return _sparse.RowSparseNDArray(RowSparse(values, ids, shape), stored.context)
