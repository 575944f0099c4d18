"""``mx.nd``: dense and sparse arrays and their creation functions (MXNet 1.9.1 semantics)."""

from __future__ import annotations

import sys
import types
import weakref
from typing import Any

import numpy as np

from ..context import Context, current_context
from ..context import resolve as resolve_context
from ..device import allocated
from ..errors import InvalidType, InvalidValue, SparsegenError
from ..formats import check_dtype
from . import (_internal, arith, compare, contrib, creation, dispatch, elemwise, indexing, nn,
               normalization, optim_ops, pdf, persist, random, reduce, shape, slicing, sparse,
               storage)
from . import sort as sorting
from .arith import *  # noqa: F403 - power, maximum, ..., broadcast_<op>, add_n, where
from .compare import *  # noqa: F403 - equal, not_equal, greater, greater_equal, lesser, ...
from .creation import *  # noqa: F403 - arange, linspace, eye
from .dispatch import cast_storage, deliver
from .dlpack import shared as dlpack_shared
from .dot import dot
from .elemwise import *  # noqa: F403 - elemwise.__all__, which includes abs and round
from .indexing import *  # noqa: F403 - take, pick, gather_nd, scatter_nd, one_hot
from .ndarray import NDArray
from .ndarray import install as _install
from .nn import *  # noqa: F403 - Embedding, FullyConnected, Activation, softmax, cast, ...
from .normalization import *  # noqa: F403 - LayerNorm, InstanceNorm, GroupNorm
from .optim_ops import *  # noqa: F403 - sgd_update, adam_update, rmsprop_update, ...
from .pdf import *  # noqa: F403 - random_pdf_normal, random_pdf_gamma, ...
from .persist import load, load_frombuffer, save
from .random import (random_exponential, random_gamma, random_normal, random_poisson,
                     random_randint, random_uniform, shuffle)
from .reduce import *  # noqa: F403 - sum, mean, prod, nansum, nanprod, max, min, norm, arg*
from .shape import *  # noqa: F403 - transpose, reshape, concat, pad, ...
from .slicing import *  # noqa: F403 - slice, slice_axis, slice_like, split, ...
from .sort import *  # noqa: F403 - sort, argsort, topk
from .sparse import BaseSparseNDArray, CSRNDArray, RowSparseNDArray
from .utils import _dense_dtype, _dense_shape, array, empty, zeros
from .values import user_values

_install(  # the modules NDArray's methods run: they import NDArray, it cannot import them
    arith=arith, compare=compare, dispatch=dispatch, elemwise=elemwise, indexing=indexing,
    nd=sys.modules[__name__], nn=nn, persist=persist, reduce=reduce, shape=shape,
    slicing=slicing, sort=sorting, storage=storage)

def _check_like(data: Any, function: str) -> None:
    if not isinstance(data, NDArray):
        raise SparsegenError(f"{function}: data must be an NDArray, got {type(data).__name__}")


def from_numpy(ndarray: Any, zero_copy: bool = True) -> NDArray:
    """A ``cpu(0)`` array over ``ndarray``'s memory, as ``mxnet.nd.from_numpy``: numpy's array
    is made read-only (the NDArray may write the memory, numpy code may not); with
    ``zero_copy=False`` a copy of the same dtype instead."""
    if not isinstance(ndarray, np.ndarray):
        raise InvalidType(f"from_numpy: ndarray must be a numpy.ndarray, got "
                          f"{type(ndarray).__name__}")
    if not isinstance(zero_copy, bool):
        raise InvalidType(f"from_numpy: zero_copy must be True or False, got {zero_copy!r}")
    try:
        check_dtype(ndarray.dtype, "from_numpy: ndarray")
    except SparsegenError as err:  # MXNet raises ValueError for a dtype it has no kernels for
        raise InvalidValue(str(err)) from None
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags.c_contiguous:
        raise InvalidValue(f"from_numpy: zero_copy needs a C-contiguous ndarray, got shape "
                           f"{ndarray.shape} with strides {ndarray.strides}")
    if not ndarray.flags.writeable:
        frozen = _FROZEN.get(id(ndarray))
        if frozen is None or frozen() is not ndarray:
            raise InvalidValue("from_numpy: the ndarray is read-only, and an NDArray writes its "
                               "memory; pass zero_copy=False to copy")
        ndarray.flags.writeable = True  # read-only by an earlier from_numpy: share it again
    shared = ndarray.view()  # keeps the write access numpy's array gives up
    ndarray.flags.writeable = False
    key = id(ndarray)
    _FROZEN[key] = weakref.ref(ndarray, lambda _: _FROZEN.pop(key, None))
    return NDArray(shared, Context("cpu", 0))


_FROZEN: dict[int, weakref.ref] = {}
"""The numpy arrays ``from_numpy`` made read-only (by ``id``, weakly): a second ``from_numpy``
of one shares the same memory, as MXNet's; other read-only arrays are refused."""


def full(shape: Any, val: Any, ctx: Context | None = None, dtype: Any = None,
         out: NDArray | None = None) -> NDArray:
    """A dense array of ``shape`` filled with ``val`` (a number, or values that broadcast), or
    ``out`` (of that shape and dtype) set to ``val``."""
    ctx = resolve_context(getattr(out, "context", None) if ctx is None else ctx)
    dtype = _dense_dtype(dtype)
    dims = _dense_shape(shape, dtype)
    values = user_values(val, dtype, "val")
    try:
        filled = np.broadcast_to(values, dims)
    except ValueError:
        raise InvalidValue(f"val of shape {values.shape} does not broadcast to shape {dims}") from None
    result = NDArray(allocated(lambda: np.array(filled, order="C"), dims, dtype), ctx)
    return deliver("full", result._storage, "default", result.context, (), out)


def ones(shape: Any, ctx: Context | None = None, dtype: Any = None,
         out: NDArray | None = None) -> NDArray:
    """A dense array of ones, or ``out`` (of that shape and dtype) set to ones."""
    return full(shape, 1, ctx, dtype, out)


def zeros_like(data: NDArray, out: NDArray | None = None) -> NDArray:
    """Zeros with the shape, dtype, context and storage type of ``data`` (or written into
    ``out``, which must have that shape and dtype)."""
    _check_like(data, "zeros_like")
    return sparse.zeros(data.stype, data.shape, ctx=data.context, dtype=data.dtype, out=out)


def ones_like(data: NDArray, out: NDArray | None = None) -> NDArray:
    """A dense array of ones with the shape, dtype and context of ``data`` (or written into
    ``out``)."""
    _check_like(data, "ones_like")
    return full(data.shape, 1, data.context, data.dtype, out)


def from_dlpack(dlpack: Any) -> NDArray:
    """A CPU array over the memory of a DLPack capsule (``to_dlpack_for_read``'s) or of an
    object with ``__dlpack__`` (a torch tensor), shared, as ``mx.nd.from_dlpack``."""
    return NDArray(dlpack_shared(dlpack), Context("cpu", 0))


def to_dlpack_for_read(data: NDArray) -> Any:
    """A DLPack capsule over ``data``'s memory (a dense array), as MXNet's."""
    _check_like(data, "to_dlpack_for_read")
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data: NDArray) -> Any:
    """A DLPack capsule over ``data``'s memory, to be written through, as MXNet's."""
    _check_like(data, "to_dlpack_for_write")
    return data.to_dlpack_for_write()


def reset_arrays(*data: NDArray, num_arrays: Any = None) -> None:
    """Set every array of ``data`` to zeros in place (sparse ones to no stored rows), as
    MXNet's ``reset_arrays`` (``num_arrays``, when given, must count them)."""
    if num_arrays is not None and num_arrays != len(data):
        raise InvalidValue(f"reset_arrays: num_arrays is {num_arrays!r} for {len(data)} arrays")
    for position, array in enumerate(data):
        if not isinstance(array, NDArray):
            raise InvalidType(f"reset_arrays: data[{position}] must be an NDArray, got "
                              f"{type(array).__name__}")
    for array in data:  # all checked first: a refused call resets nothing
        zeros_like(array, out=array)


def waitall() -> None:
    """Wait for every pending kernel on every GPU (CPU kernels are synchronous)."""
    from ..device import synchronize_all

    synchronize_all()


normal, uniform = random_normal, random_uniform  # MXNet's mx.nd.normal / mx.nd.uniform

__all__ = [
    "CSRNDArray", "NDArray", "RowSparseNDArray", "_internal", "array", "cast_storage", "contrib",
    "dot", "empty", "from_numpy", "full", "load", "load_frombuffer", "normal", "ones", "ones_like",
    "random", "random_exponential", "random_gamma", "random_normal", "random_poisson",
    "random_randint", "random_uniform", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write",
    "reset_arrays", "save", "shuffle", "sparse", "uniform",
    "utils", "waitall", "zeros", "zeros_like",
]
for _module in (arith, compare, creation, elemwise, indexing, nn, normalization, optim_ops, pdf,
                reduce, shape, slicing, sorting):
    __all__ += _module.__all__

_ALSO_SPARSE = (
    "ElementWiseSum", "Embedding", "FullyConnected", "add_n", "broadcast_add", "broadcast_div",
    "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub", "concat", "mean",
    "norm", "slice", "sum", "where", "zeros_like",
)
"""Functions of ``mx.nd`` that ``mx.nd.sparse`` names too, as MXNet's does (they take every
storage type)."""
for _name in _ALSO_SPARSE:
    setattr(sparse, _name, globals()[_name])
for _name in optim_ops.SPARSE_NAMES:  # adagrad_update is mx.nd.sparse's only
    setattr(sparse, _name, getattr(optim_ops, _name))
sparse.current_context = current_context
sparse.__all__ += [*_ALSO_SPARSE, *optim_ops.SPARSE_NAMES, "current_context"]

# -- gluon core: Dropout --
from .dropout import Dropout  # noqa: E402

__all__ += ["Dropout"]

# -- output (loss) ops --
from . import output  # noqa: E402
from .output import (BlockGrad, LinearRegressionOutput, LogisticRegressionOutput,  # noqa: E402
                     MAERegressionOutput, MakeLoss, SoftmaxOutput, make_loss)

__all__ += output.__all__

# -- a symbol as a function of arrays: CachedOp --
from .cached_op import CachedOp  # noqa: E402

__all__ += ["CachedOp"]

# -- autograd: LeakyReLU --
from .leaky_relu import LeakyReLU  # noqa: E402

__all__ += ["LeakyReLU"]

# -- auxiliary states: BatchNorm --
from .batchnorm import BatchNorm  # noqa: E402

__all__ += ["BatchNorm"]

# -- linear algebra: mx.nd.linalg, khatri_rao --
from . import linalg  # noqa: E402
from .linalg import khatri_rao  # noqa: E402

__all__ += ["linalg", "khatri_rao"]

# -- more mx.nd ops: batch_dot, cumsum, losses, activations, moments, logical, multi-index --
from . import (activations, batch, diag, histogram, internal_ops, kl_sparse_reg,  # noqa: E402
               logical, losses, moments, multi_index, svm_output)
for _module in (activations, batch, diag, histogram, internal_ops, kl_sparse_reg, logical, losses,
                moments, multi_index, svm_output):
    __all__ += _module.__all__
from .activations import SoftmaxActivation, hard_sigmoid  # noqa: E402
from .batch import batch_dot, cumsum  # noqa: E402
from .diag import diag  # noqa: E402
from .internal_ops import identity  # noqa: E402
from .logical import logical_not  # noqa: E402
from .losses import smooth_l1, softmax_cross_entropy  # noqa: E402
from .moments import moments  # noqa: E402
from .multi_index import ravel_multi_index, unravel_index  # noqa: E402
from .histogram import histogram  # noqa: E402
from .kl_sparse_reg import IdentityAttachKLSparseReg  # noqa: E402
from .svm_output import SVMOutput  # noqa: E402

# -- the sequence ops of padded batches --
from .sequence import SequenceLast, SequenceMask, SequenceReverse  # noqa: E402

__all__ += ["SequenceLast", "SequenceMask", "SequenceReverse"]

# -- the fused RNN operator --
from .rnn import RNN  # noqa: E402

__all__ += ["RNN"]

# -- BatchNorm's variants and L2Normalization --
from .batchnorm_variants import BatchNorm_v1, BatchNormWithReLU, SyncBatchNorm  # noqa: E402
from .l2_normalization import L2Normalization  # noqa: E402

contrib.BatchNormWithReLU, contrib.SyncBatchNorm = BatchNormWithReLU, SyncBatchNorm
contrib.__all__ += ["BatchNormWithReLU", "SyncBatchNorm"]
del BatchNormWithReLU, SyncBatchNorm  # mx.nd.contrib's, as in MXNet
__all__ += ["BatchNorm_v1", "L2Normalization"]

# -- MXNet's aliases of its ops --
from ..opaliases import ALIASES, PREFIXES, SPARSE_ALIASED  # noqa: E402


def _serve_aliases() -> list[str]:
    """Serve both MXNet names of each aliased op this front end has under one of them:
    ``mx.nd.<name>`` (``mx.nd._internal`` for a leading underscore), and
    ``_internal._sparse_<name>`` and ``mx.nd.sparse.<name>``; a name already taken keeps its
    function. The ``mx.nd`` names added."""
    here = sys.modules[__name__]

    def find(op: str) -> Any:
        prefix = next((p for p in PREFIXES if op.startswith(p)), "")
        namespace = getattr(here, PREFIXES[prefix], None) if prefix else None
        return (getattr(here, op, None) or getattr(_internal, op, None)
                or getattr(namespace, op[len(prefix):], None))

    added = []
    for alias, op in ALIASES.items():
        function = find(op) or find(alias)
        for name in (alias, op):
            home = _internal if name.startswith("_") else here
            if function is not None and find(name) is None:
                setattr(home, name, function)
                added += [] if home is _internal else [name]
    for name in SPARSE_ALIASED:
        function = find(ALIASES.get(name, name)) or find(name)
        if function is not None:
            setattr(_internal, f"_sparse_{name}", function)
            if not hasattr(sparse, name):
                setattr(sparse, name, function)
    return added


# -- optimizers: mixed-precision, two-phase and multi-tensor updates; AMP --
from . import amp, optim_mp, optim_multi  # noqa: E402
from .amp import *  # noqa: E402,F403 - all_finite, multi_all_finite, amp_cast, amp_multicast
from .optim_mp import *  # noqa: E402,F403 - mp_sgd_update, lamb_update_phase1, ...
from .optim_multi import *  # noqa: E402,F403 - multi_sgd_update, multi_sum_sq, multi_lars, ...

__all__ += [*amp.__all__, *optim_mp.__all__, *optim_multi.__all__]
for _name in optim_multi.INTERNAL:
    setattr(_internal, _name, getattr(optim_multi, _name))
for _name in optim_multi.CONTRIB:
    setattr(contrib, _name, getattr(optim_mp, _name, None) or getattr(optim_multi, _name))
_internal._adamw_update = optim_mp.adamw_update
_internal._mp_adamw_update = optim_mp.mp_adamw_update

__all__ += _serve_aliases()

# -- mxnet.ndarray.ndarray's module-level functions (MXNet's test files import them there) --
NDARRAY_MODULE_FUNCTIONS = (
    "add", "arange", "array", "concatenate", "divide", "empty", "equal", "eye", "from_dlpack",
    "from_numpy", "full", "greater", "greater_equal", "histogram", "lesser", "lesser_equal",
    "linspace", "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "modulo",
    "moveaxis", "multiply", "not_equal", "onehot_encode", "ones", "power", "split_v2",
    "subtract", "to_dlpack_for_read", "to_dlpack_for_write", "true_divide", "waitall", "zeros",
)
"""The functions MXNet 1.9.1 defines in ``mxnet/ndarray/ndarray.py`` that this front end has:
the class module holds them too (installed here; it cannot import the modules that define
them)."""
for _name in NDARRAY_MODULE_FUNCTIONS:
    setattr(ndarray, _name, globals()[_name])

# -- mx.nd.op: MXNet's operators as functions (the same functions mx.nd names) --
op = types.ModuleType(f"{__name__}.op", "``mx.nd.op``: the op functions of ``mx.nd``, as MXNet's.")
op.__getattr__ = lambda name: getattr(sys.modules[__name__], name)  # type: ignore[attr-defined]
__all__ += ["op"]
