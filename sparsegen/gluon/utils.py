"""``mx.gluon.utils``: splitting a batch over contexts, clipping arrays by their global 2-norm,
the file checksum of downloads, replacing a file, whether a shape is known, and the handle of a
block's hook."""

from __future__ import annotations

import hashlib
import math
import os
import warnings
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from .. import ndarray as nd
from ..context import Context
from ..errors import InvalidType, InvalidValue, SparsegenError
from ..ndarray import NDArray
from ..ndarray.indexing import axis_arg
from ..params import flag, integer, real
from ..util import is_np_shape


def split_data(data: NDArray, num_slice: int, batch_axis: int = 0,
               even_split: bool = True) -> list[NDArray]:
    """``data`` cut along ``batch_axis`` into ``num_slice`` consecutive slices (a list, even of
    one); the first ``size % num_slice`` slices hold one element more, and with ``even_split``
    a size that ``num_slice`` does not divide raises ``InvalidValue``."""
    if not isinstance(data, NDArray):
        raise InvalidType(f"split_data: data must be an NDArray, got {type(data).__name__}")
    num_slice = integer(num_slice, "split_data: num_slice", low=1)
    axis = axis_arg(batch_axis, data.ndim, "split_data")
    size = data.shape[axis]
    if flag(even_split, "even_split") and size % num_slice:
        raise InvalidValue(f"data with shape {data.shape} cannot be evenly split into "
                           f"{num_slice} slices along axis {batch_axis}: use a batch size that "
                           f"is a multiple of {num_slice} or even_split=False")
    each, extra = divmod(size, num_slice)
    bounds = [i * each + min(i, extra) for i in range(num_slice + 1)]
    if axis == 0:
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    if data.stype == "default":  # a key slicing one axis (also empty slices, which MXNet refuses)
        return [data[(slice(None),) * axis + (slice(bounds[i], bounds[i + 1]),)]
                for i in range(num_slice)]
    return [nd.slice_axis(data, axis=axis, begin=bounds[i], end=bounds[i + 1])
            for i in range(num_slice)]


def split_and_load(data: Any, ctx_list: Sequence[Context], batch_axis: int = 0,
                   even_split: bool = True) -> list[NDArray]:
    """``split_data`` of ``data`` (an NDArray, or anything ``mx.nd.array`` takes, placed on
    ``ctx_list[0]``) into ``len(ctx_list)`` slices, slice ``i`` copied to ``ctx_list[i]``."""
    contexts = list(ctx_list) if isinstance(ctx_list, (list, tuple)) else None
    if not contexts or not all(isinstance(ctx, Context) for ctx in contexts):
        raise InvalidValue(f"split_and_load: ctx_list must be a non-empty list of Contexts, "
                           f"got {ctx_list!r}")
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=contexts[0])
    if len(contexts) == 1:
        return [data.as_in_context(contexts[0])]
    slices = split_data(data, len(contexts), batch_axis, even_split)
    return [part.as_in_context(ctx) for part, ctx in zip(slices, contexts)]


def _squared_norm(array: NDArray) -> NDArray:
    """The sum of squares of ``array`` as a (1,) NDArray: ``dot`` of the flat array with itself
    (of a sparse array's stored values)."""
    flat = (array if array.stype == "default" else array.data).reshape((-1,))
    return nd.dot(flat, flat)


def clip_global_norm(arrays: Sequence[NDArray], max_norm: float,
                     check_isfinite: bool = True) -> Any:
    """Scale every array of ``arrays`` in place by ``min(1, max_norm / (total + 1e-8))``, where
    ``total`` is the 2-norm of all their elements together; return ``total`` (a numpy scalar,
    or with ``check_isfinite=False`` a (1,) NDArray, not waited for). A nan or inf total warns."""
    arrays = list(arrays)
    if not arrays or not all(isinstance(a, NDArray) for a in arrays):
        raise InvalidValue("clip_global_norm: arrays must be a non-empty list of NDArrays")
    max_norm = real(max_norm, "clip_global_norm: max_norm")
    ctx = arrays[0].context
    total = nd.sqrt(nd.add_n(*[_squared_norm(a).as_in_context(ctx) for a in arrays]))
    check_isfinite = flag(check_isfinite, "check_isfinite")
    if check_isfinite and not math.isfinite(total.asscalar()):
        warnings.warn(UserWarning("clip_global_norm: the total norm is nan or inf; the clipped "
                                  "arrays are undefined"), stacklevel=2)
    scale = nd.min(nd.concat(max_norm / (total + 1e-8), nd.ones(1, ctx=ctx), dim=0))
    for array in arrays:
        # row_sparse arrays scale by the number (a kernel on the stored rows; broadcast_mul
        # with a (1,) array has no row_sparse kernel and would go dense)
        array *= scale.asscalar() if array.stype == "row_sparse" else \
            scale.as_in_context(array.context)
    return total.asscalar() if check_isfinite else total


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the SHA-1 digest of the file ``filename`` is ``sha1_hash`` (hex digits)."""
    digest = hashlib.sha1()
    with open(filename, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest() == sha1_hash


def download(url: str, path: str | None = None, overwrite: bool = False,
             sha1_hash: str | None = None, retries: int = 5, verify_ssl: bool = True) -> str:
    """Not available: sparsegen does not fetch files from the network; raises ``MXNetError``
    naming ``url`` (download it yourself and check it with ``check_sha1``)."""
    raise SparsegenError(f"gluon.utils.download: sparsegen does not download files; fetch "
                         f"{url!r} yourself (check_sha1 checks its digest)")


def replace_file(src: str, dst: str) -> None:
    """Move the file ``src`` onto ``dst`` in one step (``os.replace``: a reader sees the old file
    or the new one, never a part), as ``mxnet.gluon.utils.replace_file``."""
    try:
        os.replace(src, dst)
    except OSError as error:
        raise SparsegenError(f"replace_file: cannot move {src!r} onto {dst!r}: "
                             f"{error.strerror}") from error


def shape_is_known(shape: Any) -> bool:
    """Whether every dimension of ``shape`` is known, as ``mxnet.gluon.utils.shape_is_known``:
    None is unknown; in MXNet's legacy shape semantics (its default) ``()`` and a dimension 0
    are too, under ``mx.util.set_np_shape(True)`` a dimension -1; a dimension below that raises
    ``InvalidValue``."""
    if shape is None:
        return False
    dims = tuple(shape)
    unknown = -1 if is_np_shape() else 0
    if any(not isinstance(d, (int, np.integer)) or d < unknown for d in dims):
        raise InvalidValue(f"shape_is_known: shape {shape!r} must hold integers >= {unknown}")
    return (bool(dims) or unknown == -1) and all(d != unknown for d in dims)


class HookHandle:
    """A handle of one hook in a block's hook table, as ``mxnet.gluon.utils.HookHandle``:
    ``attach`` puts the hook in, ``detach`` (or leaving a ``with`` block) takes it out."""

    _ids = 0

    def __init__(self) -> None:
        self._hooks: OrderedDict | None = None
        self._id: int | None = None

    def attach(self, hooks_dict: OrderedDict, hook: Any) -> None:
        """Put ``hook`` (a callable) into ``hooks_dict``; a handle attaches once."""
        if self._hooks is not None:
            raise SparsegenError("HookHandle.attach: the same handle cannot be attached twice")
        if not callable(hook):
            raise InvalidType(f"HookHandle.attach: hook must be callable, got "
                              f"{type(hook).__name__}")
        HookHandle._ids += 1
        self._hooks, self._id = hooks_dict, HookHandle._ids
        hooks_dict[self._id] = hook

    def detach(self) -> None:
        """Take the hook out (a second detach does nothing)."""
        if self._hooks is not None:
            self._hooks.pop(self._id, None)

    def __enter__(self) -> "HookHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.detach()


__all__ = ["HookHandle", "check_sha1", "clip_global_norm", "download", "replace_file",
           "shape_is_known", "split_and_load", "split_data"]
