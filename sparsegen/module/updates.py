"""How a Module updates its parameters, as MXNet 1.9.1's ``mxnet.model`` helpers: the kvstore
it creates for a type string (none for one context), whether updates run on the kvstore, the
first copy of the parameters into it, and the per-batch updates (on the kvstore, or by the
optimizer's updater on each context's copy)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import kvstore as kvs
from ..errors import InvalidType
from ..ndarray import NDArray
from ..optimizer.updater import Updater

LOCAL_UPDATE_SIZE = 1024 * 1024 * 16
"""A ``'local'`` kvstore updates on each context instead when a parameter has more elements."""


def create_kvstore(kvstore: Any, num_device: int, arg_params: dict[str, NDArray]
                   ) -> tuple[kvs.KVStore | None, bool]:
    """``(kvstore or None, update_on_kvstore)`` for ``kvstore`` (a KVStore, a type string or
    None): a type string with one context gives none (a ``dist_*`` one still gives its store); ``MXNET_UPDATE_ON_KVSTORE=0`` or a
    ``'local'`` store with a parameter over ``LOCAL_UPDATE_SIZE`` elements updates locally."""
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        store = None
    elif isinstance(kvstore, kvs.KVStore):
        store = kvstore
    elif isinstance(kvstore, str):
        kvs.check_type(kvstore)
        store = None
        if num_device > 1 or kvstore.startswith("dist"):
            store = kvs.create(kvstore)
            if kvstore == "local" and max(
                    (int(np.prod(p.shape)) for p in arg_params.values()), default=0
            ) > LOCAL_UPDATE_SIZE:
                update_on_kvstore = False
    else:
        raise InvalidType(f"init_optimizer: kvstore must be a KVStore, a type string or None, "
                          f"got {type(kvstore).__name__}")
    if store is None:
        return None, False
    return store, update_on_kvstore and store.is_capable("optimizer")


def initialize_kvstore(kvstore: kvs.KVStore, param_arrays: list[list[NDArray]],
                       arg_params: dict[str, NDArray], param_names: list[str],
                       update_on_kvstore: bool) -> None:
    """Store each parameter under its name; with ``update_on_kvstore`` a dense one is also
    copied back to every context."""
    for name, on_devices in zip(param_names, param_arrays):
        if not update_on_kvstore or arg_params[name].stype != "default":
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=on_devices)


def update_on_kvstore(param_arrays: list[list[NDArray]], grad_arrays: list[list[Any]],
                      kvstore: kvs.KVStore, param_names: list[str]) -> None:
    """Push every gradient (the kvstore sums the contexts' and updates); pull the dense
    weights back (row_sparse ones come by ``Module.prepare``'s ``row_sparse_pull``)."""
    for index, (weights, grads) in enumerate(zip(param_arrays, grad_arrays)):
        if grads[0] is None:
            continue
        name = param_names[index]
        if grads[0].stype == "default" and weights[0].stype == "default":
            kvstore.pushpull(name, grads, out=weights, priority=-index)
        else:
            kvstore.push(name, grads, priority=-index)
            kvstore.pull(name, out=weights, priority=-index)


def update_locally(param_arrays: list[list[NDArray]], grad_arrays: list[list[Any]],
                   updater: Updater, num_device: int, kvstore: kvs.KVStore | None,
                   param_names: list[str]) -> None:
    """Sum the gradients over the contexts on ``kvstore`` (when there is one), then update each
    context's copy with ``updater`` (index ``i * num_device + k``: parameter i, context k)."""
    for index, (weights, grads) in enumerate(zip(param_arrays, grad_arrays)):
        if grads[0] is None:
            continue
        if kvstore is not None:
            name = param_names[index]
            if grads[0].stype == "default" and weights[0].stype == "default":
                kvstore.pushpull(name, grads, priority=-index)
            else:
                kvstore.push(name, grads, priority=-index)
                kvstore.pull(name, out=grads, priority=-index, ignore_sparse=False)
        for k, (weight, grad) in enumerate(zip(weights, grads)):
            updater(index * num_device + k, grad, weight)
