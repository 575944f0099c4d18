"""``KVStore``: values by key (int or str), pushes from several arrays summed (row_sparse ones
on the rsp-sum kernel, dense ones on the dense add), the stored value replaced by the sum or
updated by the optimizer's updater, pulls copied out (``row_sparse_pull``: only the rows asked
for, by the retain kernel)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InvalidType, InvalidValue, SparsegenError
from ..ndarray import NDArray, add_n
from ..ndarray import sparse as _sparse
from ..ndarray.storage import assign
from ..optimizer import Optimizer, get_updater
from ..optimizer.updater import Updater
from .base import KVStoreBase
from .compression import GradientCompression

Key = int | str
"""A key of the store."""


def _pairs(key: Any, value: Any, what: str) -> list[tuple[Key, list[NDArray]]]:
    """(key, arrays) pairs of one call: one key with an array or a list of arrays, or a list
    of keys with one array or list per key (MXNet's forms)."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            raise InvalidValue(f"kvstore.{what}: {len(key)} keys need a list of {len(key)} "
                               f"values, got {type(value).__name__}")
        return [pair for k, v in zip(key, value) for pair in _pairs(k, v, what)]
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise InvalidType(f"kvstore.{what}: a key must be an int or a str, got {key!r}")
    arrays = list(value) if isinstance(value, (list, tuple)) else [value]
    for array in arrays:
        if not isinstance(array, NDArray):
            raise InvalidType(f"kvstore.{what}: the value of key {key!r} must be an NDArray or "
                              f"a list of NDArrays, got {type(array).__name__}")
    if not arrays:
        raise InvalidValue(f"kvstore.{what}: key {key!r} has no value")
    return [(key, arrays)]


class KVStore(KVStoreBase):
    """A store of arrays by key on one machine, as ``mxnet.kvstore.KVStore`` of type
    ``local`` or ``device`` (create one with ``mx.kv.create``)."""

    def __init__(self, kv_type: str) -> None:
        self._type = kv_type
        self._store: dict[Key, NDArray] = {}
        self._key_type: type | None = None
        self._updater: Callable[[Any, NDArray, NDArray], None] | None = None
        self._compression: GradientCompression | None = None
        self._residuals: dict[tuple[Key, int], NDArray] = {}  # per key and pushed array

    # -- what it is ----------------------------------------------------------------------------
    @property
    def type(self) -> str:
        """The kvstore type (``'local'`` or ``'device'``)."""
        return self._type

    @property
    def rank(self) -> int:
        """This worker's rank: 0 (one machine)."""
        return 0

    @property
    def num_workers(self) -> int:
        """The number of workers: 1 (one machine)."""
        return 1

    def barrier(self) -> None:
        """Wait for every worker: nothing to wait for on one machine."""

    _barrier = barrier

    def is_capable(self, capability: str) -> bool:
        """Whether the store can ``capability`` (``'optimizer'``: run updates; it can)."""
        return capability.lower() == "optimizer"

    # -- keys and values -----------------------------------------------------------------------
    def _stored(self, key: Key, what: str) -> NDArray:
        if key not in self._store:
            raise InvalidValue(f"kvstore.{what}: key {key!r} has not been initialized (init it "
                               "first)")
        return self._store[key]

    def init(self, key: Any, value: Any) -> None:
        """Store a copy of ``value`` under ``key`` (or of each value under each key of a list);
        a key is initialized once, and a store holds int keys or str keys, not both."""
        pairs = _pairs(key, value, "init")
        self._check_init(pairs)
        for k, arrays in pairs:
            self._key_type = type(k)
            self._store[k] = arrays[0].copy()

    def _check_init(self, pairs: list[tuple[Key, list[NDArray]]]) -> None:
        """Raise unless ``pairs`` can be initialized: new keys of one kind, one array each."""
        for k, arrays in pairs:
            kind = type(k)
            if self._key_type not in (None, kind) or any(type(p[0]) is not kind for p in pairs):
                raise InvalidValue(f"kvstore.init: key {k!r} mixes int and str keys in one store "
                                   "(MXNet refuses it too)")
            if k in self._store or sum(p[0] == k for p in pairs) > 1:
                raise InvalidValue(f"kvstore.init: duplicate init of key {k!r}")
            if len(arrays) != 1:
                raise InvalidValue(f"kvstore.init: key {k!r} takes one array, got "
                                   f"{len(arrays)}")

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """``init(key, value)`` then ``pull(key, out)``."""
        self.init(key, value)
        self.pull(key, out=out, priority=priority)

    def _merged(self, key: Key, arrays: list[NDArray]) -> NDArray:
        """The sum of the arrays pushed to ``key``, on the stored value's context."""
        stored = self._stored(key, "push")
        for array in arrays:
            if array.shape != stored.shape:
                raise InvalidValue(f"kvstore.push: key {key!r} holds shape {stored.shape}, got a "
                                   f"value of shape {array.shape}")
        near = [a if a.context == stored.context else a.copyto(stored.context) for a in arrays]
        if self._compression is not None:  # each array its codes (MXNet: each device's)
            codes = [self._codes(key, i, a, len(near)) for i, a in enumerate(near)]
            return self._compression.values(add_n(*codes) if len(codes) > 1 else codes[0])
        return add_n(*near) if len(near) > 1 else near[0]  # the updater and _set only read it

    def _codes(self, key: Key, slot: int, value: NDArray, summands: int) -> NDArray:
        """The 2-bit codes of push ``value`` (the ``slot``-th array of its key; ``summands``
        codes will be summed), its residual kept for the next push."""
        assert self._compression is not None
        self._compression.check(key, value)
        residual = self._residuals.get((key, slot))
        if residual is None:
            residual = self._residuals[(key, slot)] = self._compression.residual(value)
        return self._compression.codes(value, residual, summands)

    def set_gradient_compression(self, compression_params: dict) -> None:
        """Compress pushes as MXNet's 2-bit compression (``{'type': '2bit', 'threshold':
        0.5}``): each value plus its residual is sent as -threshold, 0 or threshold, the rest
        kept in a residual per key and pushed array; float32 dense values only. ``'local'``
        stores refuse it, as in MXNet; ``{'type': 'none'}`` turns it off."""
        if "device" not in self.type and "dist" not in self.type:
            raise SparsegenError(f"set_gradient_compression: gradient compression is not "
                                 f"supported for kvstore type {self.type!r} (use 'device' or "
                                 "a dist type)")
        self._compression = GradientCompression.from_params(compression_params)
        self._residuals.clear()

    def push(self, key: Any, value: Any, priority: int = 0) -> None:
        """Sum the arrays pushed to each key (a key listed twice sums both lists); update the
        stored value with the updater (the optimizer's, from ``set_optimizer``) or, without one,
        replace it by the sum. ``priority`` is accepted and ignored (one stream of work)."""
        grouped: dict[Key, list[NDArray]] = {}
        for k, arrays in _pairs(key, value, "push"):
            grouped.setdefault(k, []).extend(arrays)
        merged = [(k, self._merged(k, arrays)) for k, arrays in grouped.items()]
        for k, total in merged:
            self._apply(k, total)

    def _apply(self, key: Key, total: NDArray) -> None:
        """Update the value of ``key`` from the sum of its pushes (or replace it by the sum)."""
        if self._updater is not None:
            self._updater(key, total, self._store[key])
        else:
            self._set(key, total)

    def _set(self, key: Key, value: NDArray) -> None:
        """Replace the value stored under ``key`` by ``value`` (its storage type kept); the
        trainer's path for ``Parameter.set_data`` too."""
        stored = self._stored(key, "push")
        assign(stored, value if value.stype == stored.stype else value.tostype(stored.stype))

    def pull(self, key: Any, out: Any = None, priority: int = 0,
             ignore_sparse: bool = True) -> None:
        """Copy the value of each key into ``out`` (an array or a list, per key); row_sparse
        ``out`` arrays are skipped when ``ignore_sparse`` (use ``row_sparse_pull``)."""
        if out is None:
            raise InvalidValue("kvstore.pull: out is required (the arrays to copy into)")
        for k, arrays in _pairs(key, out, "pull"):
            stored = self._stored(k, "pull")
            for array in arrays:
                if ignore_sparse and array.stype == "row_sparse":
                    continue
                assign(array, stored if array.context == stored.context
                       else stored.copyto(array.context))

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """``push(key, value)`` then ``pull(key, out)``; without ``out``, into ``value``."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def row_sparse_pull(self, key: Any, out: Any = None, priority: int = 0,
                        row_ids: Any = None) -> None:
        """Copy the rows ``row_ids`` (an array, or one per ``out`` array) of each row_sparse
        value into ``out`` (row_sparse arrays): exactly those rows, sorted, each once; rows not
        stored come back as zero rows."""
        if out is None or row_ids is None:
            raise InvalidValue(f"kvstore.row_sparse_pull: {'out' if out is None else 'row_ids'} "
                               "is required")
        pairs = _pairs(key, out, "row_sparse_pull")
        ids = _pairs(key, row_ids, "row_sparse_pull")
        for (k, arrays), (_, wanted) in zip(pairs, ids):
            stored = self._stored(k, "row_sparse_pull")
            if stored.stype != "row_sparse":
                raise InvalidValue(f"kvstore.row_sparse_pull: key {k!r} holds a {stored.stype} "
                                   "value; row_sparse_pull needs a row_sparse one (use pull)")
            if len(wanted) not in (1, len(arrays)):
                raise InvalidValue(f"kvstore.row_sparse_pull: key {k!r} has {len(arrays)} out "
                                   f"arrays and {len(wanted)} row_ids arrays")
            for position, array in enumerate(arrays):
                if array.stype != "row_sparse":
                    raise InvalidValue(f"kvstore.row_sparse_pull: out of key {k!r} must be "
                                       f"row_sparse, got {array.stype}")
                rows = wanted[position if len(wanted) > 1 else 0]
                if rows.ndim != 1:
                    rows = rows.reshape((rows.size,))
                rows = rows.astype("int64", copy=False)
                rows = rows.as_in_context(stored.context)  # retain copies the ids it keeps
                if array.context == stored.context and array.dtype == stored.dtype:
                    _sparse.retain(stored, rows, out=array)  # the result moves into out
                else:
                    assign(array, _sparse.retain(stored, rows).copyto(array.context))

    # -- updates -------------------------------------------------------------------------------
    def set_optimizer(self, optimizer: Optimizer) -> None:
        """Update pushed values with ``optimizer`` (its updater, states kept per key)."""
        if not isinstance(optimizer, Optimizer):
            raise InvalidType(f"kvstore.set_optimizer: optimizer must be an Optimizer, got "
                              f"{type(optimizer).__name__}")
        self._updater = get_updater(optimizer)

    def set_updater(self, updater: Callable[[Any, NDArray, NDArray], None]) -> None:
        """Update pushed values with ``updater(key, merged, stored)`` (writing ``stored``)."""
        if not callable(updater):
            raise InvalidType(f"kvstore.set_updater: updater must be callable, got "
                              f"{type(updater).__name__}")
        self._updater = updater

    _set_updater = set_updater

    def _optimizer_updater(self, what: str) -> Updater:
        if not isinstance(self._updater, Updater):
            raise SparsegenError(f"kvstore.{what}: the store has no optimizer (set_optimizer "
                                 "first)")
        return self._updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the optimizer's states (and the optimizer with ``dump_optimizer``) to ``fname``."""
        updater = self._optimizer_updater("save_optimizer_states")
        with open(fname, "wb") as f:
            f.write(updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname: str) -> None:
        """Load the states (and the optimizer, if saved) written by ``save_optimizer_states``."""
        updater = self._optimizer_updater("load_optimizer_states")
        with open(fname, "rb") as f:
            states = f.read()
        try:
            updater.set_states(states)
        except InvalidValue:
            raise InvalidValue(f"kvstore.load_optimizer_states: {fname} does not hold optimizer "
                               "states (save_optimizer_states writes them)") from None
