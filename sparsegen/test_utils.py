"""``mx.test_utils``: the test helpers MXNet 1.9.1 ships to users, for sparsegen arrays.

Comparisons (``assert_almost_equal`` with MXNet's per-dtype default tolerances, ``same``,
``almost_equal``), random inputs of every storage type (``rand_ndarray``, ``rand_sparse_ndarray``
with MXNet's ``uniform`` and ``powerlaw`` csr distributions), random shapes, the default context,
``compare_optimizer``, MXNet's tolerance tables and the checks built on them
(``assert_almost_equal_with_err``, ``numeric_grad``, ``check_gluon_hybridize_consistency``;
the matrix helpers are in ``test_matrices.py``, the data ones in ``test_data.py``). Random data
comes from numpy's global generator (seed it with ``np.random.seed``), as MXNet's helpers draw
theirs: these build test inputs, they are not ops.
``from mxnet.test_utils import *`` also brings ``mx``, ``np``, ``rnd`` (``numpy.random``), ``os``
and ``array`` (``nd.array``): MXNet's module exports them, and its tests use them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import numbers
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.random as rnd

import sparsegen as mx  # only re-exported (MXNet's "from test_utils import *" brings mx)

from . import autograd
from . import ndarray as nd
from .context import Context, current_context, num_gpus, set_default
from .ndarray import array
from .symbol import Symbol
from .symbol.executor import grad_reqs
from .errors import InvalidValue
from .errors import NotSupported
from .test_data import (DataMissing, download, get_bz2_data, get_mnist, get_mnist_pkl,
                        get_mnist_ubyte, get_zip_data)

_FLOATS = {np.dtype(np.float16): (1e-2, 1e-1), np.dtype(np.float32): (1e-4, 1e-3),
           np.dtype(np.float64): (1e-5, 1e-20)}
"""MXNet's default (rtol, atol) per dtype; every other dtype compares exactly."""


# -- context and dtype --------------------------------------------------------------------------
def default_context() -> Context:
    """The context tests create their arrays on: ``mx.current_context()``."""
    return current_context()


def set_default_context(ctx: Context) -> None:
    """Make ``ctx`` the default context of this thread (what ``default_context()`` returns)."""
    set_default(ctx)


def default_dtype() -> type:
    """The default element type of test data: ``numpy.float32``."""
    return np.float32


def list_gpus() -> range:
    """The ids of the GPUs ``mx.gpu(i)`` can name (empty without a GPU)."""
    return range(num_gpus())


# -- tolerances and comparisons -----------------------------------------------------------------
def _numpy(value: Any) -> Any:
    """``value`` as numpy: NDArrays of any storage type and scipy sparse matrices made dense."""
    if isinstance(value, nd.NDArray):
        return value.asnumpy()
    if hasattr(value, "toarray"):
        return value.toarray()
    return value


def _tolerance(value: Any, given: Any, which: int) -> float:
    """``given`` (a number, a dict dtype -> number, or None) for ``value``'s dtype."""
    if isinstance(given, numbers.Number):
        return float(given)
    dtype = np.dtype(value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype)
    default = _FLOATS.get(dtype, (0.0, 0.0))[which]
    return float((given or {}).get(dtype, default))


def get_rtol(rtol: float | None = None, dtype: Any = np.float64) -> float:
    """``rtol``, or MXNet's default relative tolerance for ``dtype``."""
    return _tolerance(np.empty(0, dtype), rtol, 0)


def get_atol(atol: float | None = None, dtype: Any = np.float64) -> float:
    """``atol``, or MXNet's default absolute tolerance for ``dtype``."""
    return _tolerance(np.empty(0, dtype), atol, 1)


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple[float, float]:
    """The (rtol, atol) comparing ``x`` with ``y``: the larger default of the two dtypes."""
    x, y = (np.asarray(v) if isinstance(v, numbers.Number) else v for v in (x, y))
    return (max(_tolerance(x, rtol, 0), _tolerance(y, rtol, 0)),
            max(_tolerance(x, atol, 1), _tolerance(y, atol, 1)))


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` hold the same values in the same shape (NaN differs from NaN)."""
    return bool(np.array_equal(_numpy(a), _numpy(b)))


def almost_equal(a: Any, b: Any, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, use_broadcast: bool = True) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (float64 defaults 1e-5 and 1e-20)."""
    a, b = _numpy(a), _numpy(b)
    if not use_broadcast:
        _check_shapes(a, b)
    return bool(np.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def _check_shapes(a: Any, b: Any) -> None:
    if np.shape(a) != np.shape(b):
        raise AssertionError(f"a.shape = {np.shape(a)} and b.shape = {np.shape(b)} are not equal")


def _worst(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> tuple[tuple[int, ...], float]:
    """The position of the largest violation of the tolerance and its size (1 is the limit)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    with np.errstate(invalid="ignore"):
        excess = np.where(a == b, 0.0, np.abs(a - b)) / (atol + rtol * np.abs(b) + 1e-20)
    excess = np.where(np.isnan(excess), np.inf, excess)
    if excess.size == 0:
        return (), 0.0
    where = np.unravel_index(int(np.argmax(excess)), excess.shape)
    return tuple(int(i) for i in where), float(excess[where])


def assert_almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                        names: tuple[str, str] = ("a", "b"), equal_nan: bool = False,
                        use_broadcast: bool = True, mismatches: tuple[int, int] = (10, 10)) -> None:
    """Raise ``AssertionError`` unless ``|a - b| <= atol + rtol * |b|`` everywhere.

    ``a`` and ``b``: numpy arrays, numbers, NDArrays of any storage type or scipy matrices.
    ``rtol`` / ``atol``: numbers, dicts dtype -> number, or None for MXNet's defaults (the larger
    of the two dtypes': float16 1e-2 / 1e-1, float32 1e-4 / 1e-3, float64 1e-5 / 1e-20, exact for
    integers and bools). The message names the worst position and how many elements differ.
    """
    if not use_broadcast:
        _check_shapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_numpy(a)), np.asarray(_numpy(b))
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    where, excess = _worst(a, b, rtol, atol)
    wide_a, wide_b = np.broadcast_arrays(a, b)
    close = np.isclose(wide_a, wide_b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    message = (f"Error {excess:f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
               f"({close.size - int(close.sum())} of {close.size} elements differ). ")
    if where or wide_a.ndim == 0:
        message += (f"Location of maximum error: {where}, {names[0]}={wide_a[where]!r}, "
                    f"{names[1]}={wide_b[where]!r}")
    raise AssertionError(f"{message}\n {names[0]}: {a!r}\n {names[1]}: {b!r}")


def assert_allclose(a: Any, b: Any, rtol: float = 1e-07, atol: float = 0,
                    equal_nan: bool = True) -> None:
    """``assert_almost_equal`` with numpy's ``assert_allclose`` defaults (NaN equals NaN)."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_ignore_nan(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                   names: tuple[str, str] = ("a", "b")) -> None:
    """``assert_almost_equal`` on the positions where neither ``a`` nor ``b`` is NaN."""
    a, b = np.array(_numpy(a)), np.array(_numpy(b))
    nan = np.isnan(a) | np.isnan(b)
    a, b = np.where(nan, 0, a), np.where(nan, 0, b)
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Callable[..., Any], exception_type: Any, *args: Any,
                     **kwargs: Any) -> None:
    """Raise ``AssertionError`` unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)!s} did not raise {exception_type}")


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """``assert_almost_equal`` over two optimizer states (arrays, nested tuples or None)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


# -- random shapes and values -------------------------------------------------------------------
def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape with sizes in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return int(rnd.randint(low, dim0 + 1)), int(rnd.randint(low, dim1 + 1))


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10,
                  allow_zero_size: bool = False) -> tuple[int, int, int]:
    """A random 3-D shape with sizes in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(rnd.randint(low, d + 1)) for d in (dim0, dim1, dim2))  # type: ignore


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random ``num_dim``-D shape with sizes in ``[1, dim]`` (``[0, dim]`` with
    ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in rnd.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple[int, int]:
    """A random point with ``x`` in ``[x_low, x_high)`` and ``y`` in ``[y_low, y_high)``."""
    return (int(rnd.randint(x_low, x_high, dtype=np.int64)),
            int(rnd.randint(y_low, y_high, dtype=np.int64)))


def random_arrays(*shapes: Sequence[int]) -> Any:
    """Standard-normal float32 numpy arrays of ``shapes`` (one array for one shape)."""
    arrays = [rnd.randn(*shape).astype(default_dtype()) for shape in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_sample(population: list[Any], k: int) -> list[Any]:
    """``k`` distinct elements of ``population`` in random order."""
    if not 0 <= k <= len(population):
        raise InvalidValue(f"k must be in [0, {len(population)}], got {k}")
    chosen = list(population)
    rnd.shuffle(chosen)
    return chosen[:k]


def assign_each(the_input: Any, function: Callable[[Any], Any] | None) -> np.ndarray:
    """``function`` applied to every element of ``the_input`` (a float64 copy; no function: a
    copy of the input)."""
    if function is None:
        return np.array(the_input)
    values = np.asarray(the_input)
    return np.array([function(v) for v in values.flat], np.float64).reshape(values.shape)


def assign_each2(input1: Any, input2: Any, function: Callable[[Any, Any], Any] | None) -> np.ndarray:
    """``function`` applied to every pair of elements of ``input1`` and ``input2`` (same shape)."""
    if function is None:
        return np.array(input1)
    first, second = np.asarray(input1), np.asarray(input2)
    if first.shape != second.shape:
        raise InvalidValue(f"input1 has shape {first.shape}, input2 {second.shape}: they must match")
    pairs = zip(first.flat, second.flat)
    return np.array([function(u, v) for u, v in pairs], np.float64).reshape(first.shape)


def np_reduce(dat: np.ndarray, axis: Any, keepdims: bool,
              numpy_reduce_func: Callable[..., Any]) -> np.ndarray:
    """``numpy_reduce_func`` applied over each of ``axis`` (an int, ints, or None for all)."""
    axes = [axis] if isinstance(axis, int) else list(range(dat.ndim) if axis is None else axis)
    axes = [ax % dat.ndim for ax in axes] if dat.ndim else axes
    result = dat
    for ax in sorted(axes, reverse=True):
        result = numpy_reduce_func(result, axis=ax)
    if keepdims:
        result = np.reshape(result, [1 if i in axes else d for i, d in enumerate(dat.shape)])
    return result


# -- random sparse arrays -----------------------------------------------------------------------
def _check_csr_request(shape: Sequence[int], density: float, distribution: str) -> None:
    """Raise ``InvalidValue`` for what the csr generators cannot build (MXNet's checks)."""
    if len(shape) != 2:
        raise InvalidValue(f"csr arrays are 2-D, got shape {tuple(shape)}")
    rows, cols = shape
    if not 0 <= density <= 1:
        raise InvalidValue(f"density has to be between 0 and 1, got {density}")
    if rows <= 0 or cols <= 0:
        raise InvalidValue(f"num_rows and num_cols must be positive, got shape {tuple(shape)}")
    if distribution == "powerlaw" and int(rows * cols * density) < 2 * rows:
        raise InvalidValue(
            f"powerlaw needs num_rows * num_cols * density >= 2 * num_rows, got density {density} "
            f"for shape {tuple(shape)}"
        )


def _uniform_csr(shape: Sequence[int], density: float, data_init: Any) -> Any:
    """A scipy csr matrix with ``round(rows * cols * density)`` entries at uniform positions,
    values uniform in [0, 1) (or ``data_init``), drawn in float64 (scipy has no float16; the
    array is cast to ``dtype`` when built)."""
    import scipy.sparse

    matrix = scipy.sparse.random(shape[0], shape[1], density, format="csr", dtype=np.float64)
    if data_init is not None:
        matrix.data.fill(data_init)
    return matrix


def _powerlaw_row_counts(rows: int, cols: int, total: int) -> np.ndarray:
    """Entries per row for MXNet's powerlaw csr: one per row first, then row ``i`` grows to
    ``2 ** (i + 1)`` entries (a full row once that passes ``cols``) until ``total`` are placed."""
    counts = np.zeros(rows, np.int64)
    placed = min(rows, total)
    counts[:placed] = 1
    limit = 2
    for row in range(rows):
        left = total - placed
        if left <= 0:
            break
        width = min(cols, limit)
        extra = cols - 1 if width == cols and left > width else min(width - 1, left)
        counts[row] += extra
        placed += extra
        if width != cols or left <= width:
            limit *= 2
    if placed < total:
        raise InvalidValue(f"powerlaw cannot place {total} entries in shape {(rows, cols)}")
    return counts


def _powerlaw_csr(shape: Sequence[int], density: float, dtype: Any) -> Any:
    """A scipy csr matrix whose row ``i`` holds about twice the entries of row ``i - 1`` (the
    leading columns of each row), values in [1.001, 3)."""
    import scipy.sparse

    rows, cols = shape
    counts = _powerlaw_row_counts(rows, cols, int(rows * cols * density))
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.concatenate([np.arange(c) for c in counts]) if rows else np.empty(0, np.int64)
    data = (1 + rnd.uniform(0.001, 2, size=int(indptr[-1]))).astype(dtype)
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(rows, cols))


def rand_sparse_ndarray(shape: Sequence[int], stype: str, density: float | None = None,
                        dtype: Any = None, distribution: str | None = None, data_init: Any = None,
                        rsp_indices: Any = None, modifier_func: Callable[[Any], Any] | None = None,
                        shuffle_csr_indices: bool = False, ctx: Context | None = None
                        ) -> tuple[Any, tuple[Any, ...]]:
    """A random sparse array and its parts: ``(rsp, (data, indices))`` as numpy arrays for
    row_sparse, ``(csr, (indptr, indices, data))`` as NDArrays for csr.

    row_sparse: each row is stored with probability ``density`` (or exactly the rows
    ``rsp_indices``), values uniform in [0, 1), or ``data_init``, then passed through
    ``modifier_func``. csr: ``distribution`` ``'uniform'`` (``density`` of the entries, at random
    positions) or ``'powerlaw'`` (row ``i`` about twice as full as row ``i - 1``).
    ``density`` defaults to a random one. sparsegen keeps csr column ids sorted, so
    ``shuffle_csr_indices`` gives the same (sorted) matrix.
    """
    ctx = ctx or default_context()
    density = float(rnd.rand()) if density is None else density
    dtype = np.dtype(default_dtype() if dtype is None else dtype)
    distribution = distribution or "uniform"
    if stype == "row_sparse":
        if distribution != "uniform":
            raise InvalidValue(f"row_sparse arrays take the 'uniform' distribution, got {distribution!r}")
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices, np.int64)
            if len(indices) > shape[0]:
                raise InvalidValue(f"{len(indices)} rsp_indices for {shape[0]} rows")
        else:
            indices = np.flatnonzero(rnd.rand(shape[0]) < density)
        if indices.size == 0:
            empty = nd.sparse.zeros("row_sparse", shape, ctx=ctx, dtype=dtype)
            return empty, (np.empty((0, *shape[1:]), dtype), np.array([], np.int64))
        values = rnd.rand(indices.size, *shape[1:]).astype(dtype)
        if data_init is not None:
            values.fill(data_init)
        if modifier_func is not None:
            values = assign_each(values, modifier_func)
        array = nd.sparse.row_sparse_array((values, indices), shape=shape, dtype=dtype, ctx=ctx)
        return array, (values, indices)
    if stype == "csr":
        _check_csr_request(shape, density, distribution)
        if distribution == "uniform":
            matrix = _uniform_csr(shape, density, data_init)
        elif distribution == "powerlaw":
            matrix = _powerlaw_csr(shape, density, dtype)
        else:
            raise InvalidValue(f"csr distributions are 'uniform' and 'powerlaw', got {distribution!r}")
        csr = nd.sparse.csr_matrix((matrix.data, matrix.indices, matrix.indptr),
                                      shape=tuple(shape), dtype=dtype, ctx=ctx)
        return csr, (csr.indptr, csr.indices, csr.data)
    raise InvalidValue(f"stype must be 'row_sparse' or 'csr', got {stype!r}")


def rand_ndarray(shape: Sequence[int], stype: str = "default", density: float | None = None,
                 dtype: Any = None, modifier_func: Callable[[Any], Any] | None = None,
                 shuffle_csr_indices: bool = False, distribution: str | None = None,
                 ctx: Context | None = None) -> Any:
    """A random array of storage ``stype``: standard-normal values for ``default``, else
    ``rand_sparse_ndarray``'s array."""
    ctx = ctx or default_context()
    if stype == "default":
        return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)
    array, _ = rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                   modifier_func=modifier_func,
                                   shuffle_csr_indices=shuffle_csr_indices,
                                   distribution=distribution, ctx=ctx)
    return array


def create_sparse_array(shape: Sequence[int], stype: str, data_init: Any = None,
                        rsp_indices: Any = None, dtype: Any = None,
                        modifier_func: Callable[[Any], Any] | None = None, density: float = 0.5,
                        shuffle_csr_indices: bool = False) -> Any:
    """A random sparse array (``rand_sparse_ndarray``); row_sparse ``rsp_indices`` are sorted."""
    if stype not in ("row_sparse", "csr"):
        raise InvalidValue(f"Unknown storage type: {stype}")
    if rsp_indices is not None and stype == "row_sparse":
        rsp_indices = np.sort(np.asarray(rsp_indices))
    array, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                   rsp_indices=rsp_indices if stype == "row_sparse" else None,
                                   dtype=dtype, modifier_func=modifier_func,
                                   shuffle_csr_indices=shuffle_csr_indices)
    return array


def create_sparse_array_zd(shape: Sequence[int], stype: str, density: float, data_init: Any = None,
                           rsp_indices: Any = None, dtype: Any = None,
                           modifier_func: Callable[[Any], Any] | None = None,
                           shuffle_csr_indices: bool = False) -> Any:
    """``create_sparse_array`` where a row_sparse array stores exactly ``rsp_indices`` (no rows
    when None): its ``density`` is ignored."""
    if stype == "row_sparse":
        density = 0.0
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


# -- optimizers ---------------------------------------------------------------------------------
def _pair(shape: Sequence[int], dtype: Any, stype: str, density: float | None) -> tuple[Any, Any]:
    """A random array of storage ``stype`` and its dense copy, on the default context."""
    if stype not in ("default", "row_sparse", "csr"):
        raise InvalidValue(f"storage type {stype!r} is not supported")
    if stype == "default":
        second = nd.array(rnd.uniform(size=shape), ctx=default_context(), dtype=dtype)
    else:
        second = rand_ndarray(shape, stype, density=density, dtype=dtype)
    return second.copyto(default_context()).tostype("default"), second


def compare_optimizer(opt1: Any, opt2: Any, shape: Any, dtype: Any, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5,
                      compare_states: bool = True, ntensors: int = 1) -> None:
    """Run one update of ``opt1`` (on dense weight and gradient) and ``opt2`` (on ``w_stype`` /
    ``g_stype`` copies of the same values) and assert their weights and states agree.

    ``shape`` a list of shapes: ``opt2`` updates ``ntensors`` weights in one multi-tensor call,
    ``opt1`` each weight alone.
    """
    if isinstance(shape, list):
        w1 = [nd.array(rnd.uniform(size=s), dtype=dtype) for s in shape]
        g1 = [nd.array(rnd.uniform(size=s), dtype=dtype) for s in shape]
        w2, g2 = [w.copy() for w in w1], [g.copy() for g in g1]
        state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
        opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
        for i in range(ntensors):
            state1 = opt1.create_state_multi_precision(i, w1[i])
            opt1.update_multi_precision(i, w1[i], g1[i], state1)
            if compare_states:
                compare_ndarray_tuple(state1, state2[i], rtol, atol)
            compare_ndarray_tuple(w1[i], w2[i], rtol, atol)
        return
    if ntensors != 1:
        raise InvalidValue(f"one shape makes one tensor, got ntensors={ntensors}")
    w1, w2 = _pair(shape, dtype, w_stype, 1.0)
    g1, g2 = _pair(shape, dtype, g_stype, None)
    state1 = opt1.create_state_multi_precision(0, w1)
    state2 = opt2.create_state_multi_precision(0, w2)
    if compare_states:
        compare_ndarray_tuple(state1, state2)
    opt1.update_multi_precision(0, w1, g1, state1)
    opt2.update_multi_precision(0, w2, g2, state2)
    if compare_states:
        compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
    assert_almost_equal(w1, w2, rtol=rtol, atol=atol)


# -- numeric gradients ----------------------------------------------------------------------------

_GRAD_REQS = ("write", "add", "null")
_NUMERIC_EPS = {np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float32): 2.0 ** -9,
                np.dtype(np.float64): 2.0 ** -14}
"""MXNet's default finite-difference step per dtype (``numeric_eps=None``)."""


def _host_value(value: Any, name: Any) -> tuple[np.ndarray, str]:
    """``value`` (numpy, scalar, NDArray of any storage, scipy sparse) as float64 numpy and
    the storage type it is passed to the function in."""
    if isinstance(value, nd.NDArray):
        return value.asnumpy().astype(np.float64), value.stype
    if hasattr(value, "toarray"):
        return np.asarray(value.toarray(), np.float64), "csr"
    try:
        return np.array(value, np.float64), "default"
    except (TypeError, ValueError) as error:
        raise InvalidValue(f"check_numeric_gradient: location[{name!r}] must be an array, "
                           f"got {type(value).__name__}") from error


def _device_value(host: np.ndarray, stype: str, ctx: Context, dtype: Any) -> Any:
    """The NDArray of ``host`` values in ``dtype`` on ``ctx``, of storage ``stype``."""
    value = array(host, ctx=ctx, dtype=dtype)
    return value if stype == "default" else value.tostype(stype)


def _grad_reqs(keys: list[Any], grad_nodes: Any) -> dict[Any, str]:
    """The ``grad_req`` of each checked input: all inputs (``None``), a list of keys, or a
    dict key -> ``'write'`` / ``'add'`` / ``'null'``."""
    if grad_nodes is None:
        reqs = {key: "write" for key in keys}
    elif isinstance(grad_nodes, dict):
        reqs = dict(grad_nodes)
    elif isinstance(grad_nodes, (list, tuple)):
        reqs = {key: "write" for key in grad_nodes}
    else:
        raise InvalidValue("check_numeric_gradient: grad_nodes must be None, a list of input "
                           f"keys or a dict key -> grad_req, got {type(grad_nodes).__name__}")
    for key, req in reqs.items():
        if key not in keys:
            raise InvalidValue(f"check_numeric_gradient: grad_nodes names {key!r}, not an input "
                               f"(the inputs are {keys})")
        if req not in _GRAD_REQS:
            raise InvalidValue(f"check_numeric_gradient: grad_req of {key!r} must be one of "
                               f"{_GRAD_REQS}, got {req!r}")
    return reqs


class _Evaluation:
    """``fn`` at a location: inputs keyed by position (a list) or name (a dict), auxiliary
    arguments after them, outputs as a list of NDArrays."""

    def __init__(self, fn: Callable[..., Any], by_name: bool, aux: Any) -> None:
        self.fn, self.by_name = fn, by_name
        self.aux_args = list(aux) if isinstance(aux, (list, tuple)) else []
        self.aux_kwargs = dict(aux) if isinstance(aux, dict) else {}

    def outputs(self, inputs: dict[Any, Any]) -> list[Any]:
        """The outputs of ``fn`` at ``inputs``."""
        if self.by_name:
            result = self.fn(*self.aux_args, **inputs, **self.aux_kwargs)
        else:
            result = self.fn(*inputs.values(), *self.aux_args, **self.aux_kwargs)
        listed = list(result) if isinstance(result, (list, tuple)) else [result]
        for position, out in enumerate(listed):
            if not isinstance(out, nd.NDArray):
                raise InvalidValue(f"check_numeric_gradient: output {position} of the function "
                                   f"is a {type(out).__name__}, not an NDArray")
        return listed


def _projected(outputs: list[Any], projections: list[np.ndarray]) -> float:
    """``Σ outputs · projections``, in float64 on the host."""
    return float(sum(np.sum(out.asnumpy().astype(np.float64) * proj)
                     for out, proj in zip(outputs, projections)))


def _numeric(evaluation: _Evaluation, inputs: dict[Any, Any], key: Any, host: np.ndarray,
             stype: str, projections: list[np.ndarray], eps: float, train: bool) -> np.ndarray:
    """The central differences of the projected outputs with respect to input ``key``: each
    element moved by ``±eps/2`` (divided by the step its dtype really took)."""
    ctx, dtype = inputs[key].context, inputs[key].dtype
    grad = np.zeros(host.shape, np.float64)
    moved = dict(inputs)
    scope = autograd.train_mode if train else autograd.predict_mode
    with scope():
        for i in range(host.size):
            values = []
            for step in (eps / 2, -eps / 2):
                point = host.copy()
                point.ravel()[i] += step
                moved[key] = _device_value(point, stype, ctx, dtype)
                values.append((_projected(evaluation.outputs(moved), projections),
                               float(np.asarray(point.ravel()[i], dtype))))
            (f_plus, x_plus), (f_minus, x_minus) = values
            grad.ravel()[i] = (f_plus - f_minus) / (x_plus - x_minus)
    return grad


def _backward(evaluation: _Evaluation, inputs: dict[Any, Any], reqs: dict[Any, str],
              grad_stype_dict: dict[Any, str], train: bool) -> list[np.ndarray]:
    """Record ``fn`` at ``inputs`` (the checked ones with ``attach_grad``), run ``backward``
    with random head gradients (twice for ``grad_req='add'``, not at all when every
    ``grad_req`` is ``'null'``); the projections used."""
    for key, req in reqs.items():
        inputs[key].attach_grad(req, stype=grad_stype_dict.get(key))
    projections: list[np.ndarray] = []
    for _ in range(2 if "add" in reqs.values() else 1):
        with autograd.record(train_mode=train):
            outputs = evaluation.outputs(inputs)
        if not projections:
            projections = [np.random.rand(*out.shape) + 0.1 for out in outputs]
        if all(req == "null" for req in reqs.values()):  # nothing recorded: nothing to run
            break
        autograd.backward(outputs, [array(proj, ctx=out.context, dtype=out.dtype)
                                       for out, proj in zip(outputs, projections)])
    return projections


def check_numeric_gradient(fn: Callable[..., Any], location: Any, aux_states: Any = None,
                           numeric_eps: float | None = 1e-3, rtol: float = 1e-2,
                           atol: float | None = None, grad_nodes: Any = None,
                           use_forward_train: bool = True, ctx: Context | None = None,
                           grad_stype_dict: dict[Any, str] | None = None,
                           dtype: Any = np.float32) -> None:
    """Check the autograd gradients of ``fn`` (a Symbol, or a function of NDArrays) against
    central finite differences, as MXNet's ``check_numeric_gradient``.

    ``location``: the inputs (a Symbol's: a list in ``list_arguments`` order or a dict by
    name), a list (passed by position, keyed by position) or a dict (passed
    by name); numpy, NDArrays of any storage type (kept) or scipy sparse matrices (csr), cast to
    ``dtype`` on ``ctx``. ``aux_states``: more arguments (a list after the inputs, or a dict by
    name), never differentiated. ``grad_nodes``: the keys checked (default all) or a dict key ->
    grad_req (``'add'`` runs backward twice and checks the doubled sum, ``'null'`` that the
    buffer stays zero); ``grad_stype_dict``: key -> gradient storage type. The gradient of
    ``Σ fn(...) · P`` (``P`` random, uniform in [0.1, 1.1)) is compared with differences of the
    same sum, read into float64 on the host; ``atol=None`` is the larger of MXNet's default for
    ``dtype`` and ``numeric_eps²``. Raises ``AssertionError`` naming the input on a mismatch.
    """
    if isinstance(fn, Symbol):
        fn, location = _symbol_function(fn, ctx), _symbol_location(fn, location)
    if not callable(fn):
        raise NotSupported(f"check_numeric_gradient takes a Symbol or a Python function of "
                           f"NDArrays, got {type(fn).__name__}")
    if np.dtype(dtype) not in _FLOATS:
        raise InvalidValue(f"check_numeric_gradient: dtype must be float16, float32 or float64, "
                           f"got {np.dtype(dtype)}")
    eps = float(_NUMERIC_EPS[np.dtype(dtype)] if numeric_eps is None else numeric_eps)
    if eps <= 0 or (eps < 1e-5 and np.dtype(dtype) != np.float64):
        raise InvalidValue(f"check_numeric_gradient: numeric_eps={eps} is too small for {dtype} "
                           "finite differences")
    atol = max(get_atol(None, dtype), eps * eps) if atol is None else atol
    ctx = current_context() if ctx is None else ctx
    by_name = isinstance(location, dict)
    given = location if by_name else dict(enumerate(location))
    hosts = {key: _host_value(value, key) for key, value in given.items()}
    inputs = {key: _device_value(host, stype, ctx, dtype) for key, (host, stype) in hosts.items()}
    reqs = _grad_reqs(list(inputs), grad_nodes)
    evaluation = _Evaluation(fn, by_name, aux_states)
    projections = _backward(evaluation, dict(inputs), reqs, grad_stype_dict or {},
                            use_forward_train)
    for key, req in reqs.items():
        host, stype = hosts[key]
        backward = inputs[key].grad.asnumpy().astype(np.float64)
        if req == "null":
            expected = np.zeros(host.shape)
        else:
            expected = _numeric(evaluation, inputs, key, host, stype, projections, eps,
                                use_forward_train) * (2 if req == "add" else 1)
        try:
            assert_almost_equal(expected, backward, rtol, atol,
                                names=(f"NUMERICAL_{key}", f"BACKWARD_{key}"))
        except AssertionError as error:
            raise AssertionError(f"check_numeric_gradient: the gradient of input {key!r} "
                                 f"(grad_req={req!r}) differs from its finite differences: "
                                 f"{error}") from None


__all__ = [
    "Context", "DataMissing", "almost_equal", "array", "download", "get_bz2_data", "get_mnist",
    "get_mnist_pkl", "get_mnist_ubyte", "get_zip_data", "os", "assert_allclose",
    "assert_almost_equal",
    "assert_almost_equal_ignore_nan", "assert_exception", "assign_each", "assign_each2",
    "compare_ndarray_tuple", "compare_optimizer", "create_sparse_array", "create_sparse_array_zd",
    "current_context", "default_context", "default_dtype", "get_atol", "get_rtol", "get_tols",
    "list_gpus", "mx", "np", "np_reduce", "rnd", "rand_coord_2d", "rand_ndarray", "rand_shape_2d",
    "rand_shape_3d", "rand_shape_nd", "rand_sparse_ndarray", "random_arrays", "random_sample",
    "same", "set_default_context", "sys",
]
__all__ += ["check_numeric_gradient"]


# -- symbols ------------------------------------------------------------------------------------
def _symbol_location(sym: Any, location: Any) -> dict[str, Any]:
    """``location`` (a list in ``sym.list_arguments()`` order, or a dict naming every
    argument) as a dict by argument name."""
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise InvalidValue(f"location names {sorted(location)}, the symbol's arguments are "
                               f"{names}")
        return dict(location)
    if not isinstance(location, (list, tuple)) or len(location) != len(names):
        raise InvalidValue(f"location must be a dict or a list of {len(names)} arrays (the "
                           f"arguments {names})")
    return dict(zip(names, location))


def _symbol_arrays(sym: Any, location: Any, ctx: Context, dtype: Any) -> dict[str, Any]:
    """The arguments as NDArrays on ``ctx``: numpy values made arrays of ``dtype``
    (``'asnumpy'``: their own), NDArrays kept."""
    return {name: value if isinstance(value, nd.NDArray) else
            array(value, ctx=ctx, dtype=np.asarray(value).dtype if dtype == "asnumpy" else dtype)
            for name, value in _symbol_location(sym, location).items()}


def _symbol_aux(sym: Any, aux_states: Any, ctx: Context, dtype: Any) -> dict[str, Any]:
    """``aux_states`` (a list in ``sym.list_auxiliary_states()`` order, a dict by name, or
    None) as NDArrays on ``ctx`` by name, as ``_symbol_arrays`` makes the arguments."""
    names = sym.list_auxiliary_states()
    given = dict(aux_states) if isinstance(aux_states, dict) else dict(zip(names, aux_states or ()))
    return {name: value if isinstance(value, nd.NDArray) else
            array(value, ctx=ctx, dtype=np.asarray(value).dtype if dtype == "asnumpy" else dtype)
            for name, value in given.items()}


def _symbol_function(sym: Any, ctx: Context | None) -> Callable[..., Any]:
    """``sym`` as a function of its arguments (by name) and auxiliary states (by position,
    in ``list_auxiliary_states`` order, or by name), run in the caller's autograd scope."""
    aux_names = sym.list_auxiliary_states()

    def run(*aux: Any, **arrays: Any) -> list[Any]:
        states = dict(zip(aux_names, aux))
        states.update({name: arrays.pop(name) for name in aux_names if name in arrays})
        return sym.bind(ctx, arrays, grad_req="null", aux_states=states).compute()

    return run


def _head_grads(out_grads: Any, sym: Any, ctx: Context, dtype: Any) -> Any:
    """``out_grads`` (a list, a dict by output name, or None) as NDArrays."""
    if out_grads is None:
        return None
    if isinstance(out_grads, dict):
        out_grads = [out_grads[name] for name in sym.list_outputs()]
    return [g if isinstance(g, nd.NDArray) else
            array(g, ctx=ctx, dtype=np.asarray(g).dtype if dtype == "asnumpy" else dtype)
            for g in out_grads]


def check_symbolic_forward(sym: Any, location: Any, expected: Any, rtol: Any = None,
                           atol: Any = None, aux_states: Any = None, ctx: Context | None = None,
                           equal_nan: bool = False, dtype: Any = np.float32) -> list[Any]:
    """Run ``sym`` forward (``is_train=False``) at ``location`` (auxiliary states:
    ``aux_states``) and compare each output with ``expected`` (a list, or a dict by output
    name); returns the outputs."""
    ctx = ctx or default_context()
    executor = sym.bind(ctx, _symbol_arrays(sym, location, ctx, dtype), grad_req="null",
                        aux_states=_symbol_aux(sym, aux_states, ctx, dtype))
    outputs = executor.forward(is_train=False)
    if isinstance(expected, dict):
        expected = [expected[name] for name in sym.list_outputs()]
    for name, expect, output in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(expect, output, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym: Any, location: Any, out_grads: Any, expected: Any,
                            rtol: Any = None, atol: Any = None, aux_states: Any = None,
                            grad_req: Any = "write", ctx: Context | None = None,
                            grad_stypes: dict[str, str] | None = None, equal_nan: bool = False,
                            dtype: Any = np.float32) -> dict[str, Any]:
    """Run ``sym`` forward (``is_train=True``) and backward with ``out_grads`` at ``location``
    and compare the gradients with ``expected`` (a list in argument order, or a dict by name):
    ``'write'`` the gradient, ``'add'`` what was added to a random buffer, ``'null'`` the
    buffer untouched. Returns the gradient arrays."""
    ctx = ctx or default_context()
    names = sym.list_arguments()
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    reqs = dict(zip(names, grad_reqs(grad_req, names)))
    initial = {name: np.random.normal(size=np.shape(value)) for name, value in expected.items()}
    grads = {}
    for name, values in initial.items():
        stype = (grad_stypes or {}).get(name) or "default"
        grads[name] = nd.zeros(values.shape, ctx=ctx, dtype=dtype if dtype != "asnumpy" else
                                  np.asarray(expected[name]).dtype, stype=stype)
        if stype == "default":
            grads[name][:] = values
        else:
            initial[name] = np.zeros(values.shape)
    executor = sym.bind(ctx, _symbol_arrays(sym, location, ctx, dtype), grads, reqs,
                        aux_states=_symbol_aux(sym, aux_states, ctx, dtype))
    executor.forward(is_train=True)
    executor.backward(_head_grads(out_grads, sym, ctx, dtype))
    for name, expect in expected.items():
        got = grads[name].asnumpy()
        want = {"write": (expect, got), "add": (expect, got - initial[name]),
                "null": (initial[name], got)}.get(reqs.get(name) or "null")
        if want is None:
            raise InvalidValue(f"check_symbolic_backward: grad_req {reqs[name]!r} of {name} is "
                               "not write, add or null")
        assert_almost_equal(*want, rtol, atol, (f"EXPECTED_{name}", f"BACKWARD_{name}"),
                            equal_nan=equal_nan)
    return grads


def simple_forward(sym: Any, ctx: Context | None = None, is_train: bool = False,
                   **inputs: Any) -> Any:
    """The outputs of ``sym`` on ``inputs`` (by argument or auxiliary-state name) as numpy
    (one array for one output)."""
    arrays = {k: v if isinstance(v, nd.NDArray) else array(v) for k, v in inputs.items()}
    aux = {name: arrays.pop(name) for name in sym.list_auxiliary_states() if name in arrays}
    executor = sym.bind(ctx or default_context(), arrays, aux_states=aux)
    outputs = [out.asnumpy() for out in executor.forward(is_train=is_train)]
    return outputs[0] if len(outputs) == 1 else outputs


__all__ += ["check_symbolic_backward", "check_symbolic_forward", "simple_forward"]


def _least_precise(dtypes: list[Any]) -> np.dtype:
    """The dtype of fewest bytes among ``dtypes``."""
    return min((np.dtype(d) for d in dtypes), key=lambda d: d.itemsize)


def check_consistency(sym: Any, ctx_list: list[dict[str, Any]], scale: float = 1.0,
                      grad_req: str = "write", arg_params: dict[str, Any] | None = None,
                      aux_params: dict[str, Any] | None = None, rtol: Any = None,
                      atol: Any = None, raise_on_err: bool = True,
                      ground_truth: dict[str, Any] | None = None, equal_nan: bool = False,
                      use_uniform: bool = False, rand_type: Any = np.float64) -> dict[str, Any]:
    """Run ``sym`` (or one symbol per entry) bound as each entry of ``ctx_list`` says
    (``ctx``, shapes, ``type_dict``, ``stype_dict``) on the same random arguments and compare
    the outputs (predict and train) and the gradients (head gradients: the first executor's
    outputs) with those of the most precise one (or ``ground_truth``), as MXNet's; returns the
    values compared against, as numpy by name."""
    symbols = [sym] * len(ctx_list) if isinstance(sym, Symbol) else list(sym)
    if len(ctx_list) < 2 or len(symbols) != len(ctx_list):
        raise InvalidValue(f"check_consistency: ctx_list needs two entries or more (and one "
                           f"symbol each), got {len(ctx_list)} entries, {len(symbols)} symbols")
    executors = [s.simple_bind(grad_req=grad_req, **entry) for s, entry in zip(symbols, ctx_list)]
    params = dict(arg_params or {})
    for name, arr in sorted(executors[0].arg_dict.items()):
        if name not in params:
            params[name] = (np.random.uniform(-0.92 * scale, 0.92 * scale, arr.shape)
                            if use_uniform else np.random.normal(size=arr.shape, scale=scale)
                            ).astype(rand_type)
    aux = dict(aux_params or {})
    for name, arr in executors[0].aux_dict.items():
        aux.setdefault(name, np.zeros(arr.shape))  # MXNet's: zeros unless given
    for exe in executors:
        for name, arr in [*exe.arg_dict.items(), *exe.aux_dict.items()]:
            value = array(_numpy({**params, **aux}[name]), ctx=arr.context, dtype=arr.dtype)
            arr[:] = value if arr.stype == "default" else value.tostype(arr.stype)
    names = symbols[0].list_outputs()
    predicted = [[out.asnumpy() for out in exe.forward(is_train=False)] for exe in executors]
    truth_index = int(np.argmax([np.dtype(p[0].dtype).itemsize for p in predicted]))
    results = [dict(zip(names, p)) for p in predicted]
    if grad_req != "null":
        trained = [exe.forward(is_train=True) for exe in executors]
        heads = [out.asnumpy().astype(_least_precise([t[i].dtype for t in trained]))
                 for i, out in enumerate(trained[0])]
        for exe, outputs, result in zip(executors, trained, results):
            exe.backward([array(h, ctx=o.context, dtype=o.dtype) for h, o in zip(heads, outputs)])
            result.update({f"train_{n}": o.asnumpy() for n, o in zip(names, outputs)})
            result.update({n: g.asnumpy() for n, g in exe.grad_dict.items()})
    truth = ground_truth or results[truth_index]
    for position, result in enumerate(results):
        if position == truth_index and ground_truth is None:
            continue
        for name, value in result.items():
            if name not in truth:
                continue
            try:
                assert_almost_equal(value, truth[name], rtol, atol,
                                    (f"ctx_list[{position}] {name}", f"ground truth {name}"),
                                    equal_nan=equal_nan)
            except AssertionError:
                if raise_on_err:
                    raise
    return truth


__all__ += ["check_consistency"]


# -- environment and stochastic checks ------------------------------------------------------------
@contextlib.contextmanager
def environment(*args: Any) -> Any:
    """Set environment variables for a ``with`` block and restore them after (MXNet's
    ``environment(name, value)`` or ``environment({name: value, ...})``; a value of None
    unsets the variable)."""
    if len(args) == 2:
        settings = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        settings = dict(args[0])
    else:
        raise InvalidValue(f"environment takes (name, value) or a dict, got {args!r}")
    before = {name: os.environ.get(name) for name in settings}
    try:
        for name, value in settings.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = str(value)
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def retry(n: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Run a stochastic test up to ``n`` times until it does not fail an assertion."""
    if not isinstance(n, int) or n < 1:
        raise InvalidValue(f"retry: n must be a positive int, got {n!r}")

    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> None:
            for attempt in range(n):
                try:
                    test(*args, **kwargs)
                    return
                except AssertionError:
                    if attempt == n - 1:
                        raise
        return run
    return decorate


def gen_buckets_probs_with_ppf(ppf: Callable[[float], float],
                               nbuckets: int) -> tuple[list[tuple[float, float]], list[float]]:
    """``nbuckets`` equally likely buckets between the quantiles of ``ppf`` (the inverse cdf),
    and their probabilities, for ``chi_square_check``."""
    if nbuckets < 1:
        raise InvalidValue(f"gen_buckets_probs_with_ppf: nbuckets must be >= 1, got {nbuckets}")
    return ([(ppf(i / nbuckets), ppf((i + 1) / nbuckets)) for i in range(nbuckets)],
            [1.0 / nbuckets] * nbuckets)


def mean_check(generator: Callable[[int], Any], mu: float, sigma: float,
               nsamples: int = 1000000) -> bool:
    """Whether the mean of ``generator(nsamples)`` lies within ``mu ± 3 sigma / sqrt(n)``."""
    mean = np.asarray(generator(nsamples)).mean()
    return bool(abs(mean - mu) < 3 * sigma / np.sqrt(nsamples))


def var_check(generator: Callable[[int], Any], sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance of ``generator(nsamples)`` lies within
    ``sigma² ± 3 sqrt(2 sigma⁴ / (n - 1))``."""
    var = np.asarray(generator(nsamples)).var(ddof=1)
    return bool(abs(var - sigma**2) < 3 * np.sqrt(2 * sigma**4 / (nsamples - 1)))


def chi_square_check(generator: Callable[[int], Any], buckets: list, probs: Sequence[float],
                     nsamples: int = 1000000) -> tuple[float, np.ndarray, np.ndarray]:
    """The chi-square test's p-value that ``generator(nsamples)`` follows ``probs`` over
    ``buckets`` (``(low, high)`` ranges of a continuous distribution, or the values of a
    discrete one), with the observed and expected counts. The expected counts are scaled to
    the samples that fell in a bucket (MXNet truncates them, which newer scipy refuses)."""
    import scipy.stats

    if not isinstance(buckets, list) or len(buckets) != len(probs) or not buckets:
        raise InvalidValue(f"chi_square_check: buckets must be a non-empty list with one "
                           f"probability each, got {len(buckets)} buckets, {len(probs)} probs")
    samples = np.asarray(generator(nsamples)).reshape(-1)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.array([edge for bucket in buckets for edge in bucket], np.float64)
        if np.any(np.diff(edges) < 0):
            raise InvalidValue(f"chi_square_check: buckets must be ascending and disjoint, got "
                               f"{buckets}")
        position = np.searchsorted(edges, samples, side="right")
        observed = np.array([(position == 2 * i + 1).sum() for i in range(len(buckets))])
    else:
        observed = np.array([(samples == value).sum() for value in buckets])
    weights = np.asarray(probs, np.float64)
    expected = weights / weights.sum() * observed.sum()
    _, p = scipy.stats.chisquare(observed, expected)
    return float(p), observed, expected


def verify_generator(generator: Callable[[int], Any], buckets: list, probs: Sequence[float],
                     nsamples: int = 1000000, nrepeat: int = 5, success_rate: float = 0.2,
                     alpha: float = 0.05) -> list[float]:
    """Run ``chi_square_check`` ``nrepeat`` times; raise ``AssertionError`` unless at least
    ``success_rate`` of them have p > ``alpha``. Returns the p-values."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    values = [p for p, _, _ in runs]
    if sum(p > alpha for p in values) < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={values}, "
                             f"obs_freq={[o.tolist() for _, o, _ in runs]}, "
                             f"expected_freq={[e.tolist() for _, _, e in runs]}\n"
                             f"buckets={buckets}, probs={probs}")
    return values


@contextlib.contextmanager
def discard_stderr() -> Any:
    """Send what the block writes to the process's standard error (file descriptor 2, C
    libraries included) to the null device."""
    sys.stderr.flush()
    descriptor = 2  # the process's standard error, whatever object sys.stderr is now
    saved = os.dup(descriptor)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), descriptor)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, descriptor)
        os.close(saved)


from .util import use_np  # noqa: E402 - MXNet's test_utils re-exports it

from .test_data import DummyIter, download_model, get_mnist_iterator  # noqa: E402
from .test_matrices import *  # noqa: E402, F403 - matrices and large tensors
from .test_matrices import __all__ as _matrices

__all__ += [*_matrices, "DummyIter", "download_model", "get_mnist_iterator"]
__all__ += ["chi_square_check", "discard_stderr", "environment", "gen_buckets_probs_with_ppf",
            "mean_check", "retry", "use_np", "var_check", "verify_generator"]


# -- tolerance tables, comparisons within an error rate, numeric_grad, hybridize consistency -----
_EXACT = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def default_rtols() -> dict[np.dtype, float]:
    """MXNet's default relative tolerance per dtype (0 for bools and integers)."""
    return {**{d: rtol for d, (rtol, _) in _FLOATS.items()}, **{np.dtype(t): 0 for t in _EXACT}}


def default_atols() -> dict[np.dtype, float]:
    """MXNet's default absolute tolerance per dtype (0 for bools and integers)."""
    return {**{d: atol for d, (_, atol) in _FLOATS.items()}, **{np.dtype(t): 0 for t in _EXACT}}


def default_numeric_eps() -> dict[np.dtype, float]:
    """MXNet's default finite-difference step per float dtype (powers of two)."""
    return dict(_NUMERIC_EPS)


def effective_dtype(dat: Any) -> np.dtype:
    """The dtype whose tolerances ``dat``'s comparisons use: its own (sparsegen's kernels
    compute float32 in float32, never in TF32, so MXNet's float16 for float32 on sm_80 GPUs
    does not apply)."""
    return np.dtype(dat.dtype)


def get_tolerance(dat: Any, tol: Any, default_tol: dict[Any, float]) -> float:
    """``tol`` when it is a number, else its entry (a dict dtype -> number) for ``dat``'s
    effective dtype, else ``default_tol``'s."""
    if isinstance(tol, numbers.Number):
        return tol  # type: ignore[return-value]
    dtype = effective_dtype(dat)
    return (tol or {}).get(dtype, default_tol[dtype])


def get_etol(etol: float | None = None) -> float:
    """``etol``, or the default error-rate tolerance 0."""
    return 0 if etol is None else etol


def checkShapes(a: Any, b: Any) -> None:  # noqa: N802 - MXNet's name
    """Raise ``AssertionError`` unless ``a`` and ``b`` have the same shape."""
    _check_shapes(a, b)


def locationError(a: Any, b: Any, index: Any, names: tuple[str, str],  # noqa: N802
                  maxError: bool = False) -> str:  # noqa: N803
    """The message naming position ``index`` of ``a`` and ``b`` and their values there."""
    maximum = "maximum " if maxError else ""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (
        maximum, str(index), names[0], a[index], names[1], b[index])


def assert_almost_equal_with_err(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                 etol: float | None = None, names: tuple[str, str] = ("a", "b"),
                                 equal_nan: bool = False,
                                 mismatches: tuple[int, int] = (10, 10)) -> None:
    """Raise ``AssertionError`` when more than a fraction ``etol`` of the elements of ``a`` and
    ``b`` differ beyond the tolerances (``etol`` 0: ``assert_almost_equal``)."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.asarray(_numpy(a)), np.asarray(_numpy(b))
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    error = 1 - np.count_nonzero(close) / close.size if close.size else 0.0
    if error > etol:
        where, excess = _worst(a, b, rtol, atol)
        wide_a, wide_b = np.broadcast_arrays(a, b)
        raise AssertionError(
            f"{error:.6f} of the elements differ beyond rtol={rtol:e}, atol={atol:e}, more than "
            f"etol={etol}; worst error {excess:f}. "
            f"{locationError(wide_a, wide_b, where, names, maxError=True)}")


def same_array(array1: nd.NDArray, array2: nd.NDArray) -> bool:
    """Whether two NDArrays share memory: adding 1 to ``array1`` in place shows in
    ``array2`` (``array1`` is restored)."""
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def same_symbol_structure(sym1: Any, sym2: Any) -> bool:
    """Whether two symbols' graphs name the same op at each node position."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))


def numeric_grad(executor: Any, location: dict[str, np.ndarray], aux_states: Any = None,
                 eps: float = 1e-4, use_forward_train: bool = True,
                 dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """Central finite differences of the sum of ``executor``'s first output with respect to
    each float argument in ``location`` (name -> numpy value, every argument given), with the
    auxiliary states reset to ``aux_states`` before each forward pass."""
    if np.dtype(dtype) not in _NUMERIC_EPS:
        raise ValueError(f"numeric_grad: dtype must be float16, float32 or float64, got {dtype}")

    def put(name: str, value: np.ndarray) -> None:
        target = executor.arg_dict[name]
        target[:] = nd.array(value, dtype=dtype).tostype(target.stype)

    def forward() -> np.ndarray:
        for key, value in (aux_states or {}).items():
            executor.aux_dict[key][:] = value
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    grads = {}
    for name in location:
        location[name] = np.array(location[name], order="C")
    for name, value in location.items():
        grads[name] = np.zeros(value.shape, dtype=dtype)
        if value.dtype.kind != "f":
            continue
        flat, original = value.ravel(), value.copy()
        for i in range(flat.size):
            flat[i] = original.ravel()[i] + eps / 2
            put(name, value)
            above = forward()
            flat[i] = original.ravel()[i] - eps / 2
            put(name, value)
            below = forward()
            grads[name].ravel()[i] = (above - below).sum() / eps
            flat[i] = original.ravel()[i]
        put(name, original)
    return grads


def check_gluon_hybridize_consistency(net_builder: Callable[..., Any], data_l: list[Any],
                                      numpy_func: Callable[..., Any] | None = None,
                                      test_grad: bool = True, rtol: float = 1e-4,
                                      atol: float = 1e-4) -> None:
    """Check that a HybridBlock ``net_builder(prefix='net_')`` gives the same output (and,
    with ``test_grad``, input gradients) hybridized or not, with and without autograd, all
    from the first build's parameters; and ``numpy_func``'s output when given."""
    from . import autograd
    from .initializer import Initializer

    class _Saved(Initializer):
        """The first build's parameter values, by name."""

        def __init__(self, values: dict[str, np.ndarray]) -> None:
            super().__init__()
            self._values = values

        def __call__(self, desc: Any, arr: Any) -> None:
            arr[:] = self._values[str(desc)]

    saved_out = saved_grads = init = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            net.initialize() if init is None else net.initialize(init)
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if init is None:
                init = _Saved({k: v.data().asnumpy() for k, v in net.collect_params().items()})
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if saved_grads is None:
                    saved_grads = grads
                for grad, first in zip(grads, saved_grads):
                    assert_almost_equal(grad, first, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol,
                            atol=atol)


__all__ += ["assert_almost_equal_with_err", "checkShapes", "check_gluon_hybridize_consistency",
           "default_atols", "default_numeric_eps", "default_rtols", "effective_dtype",
           "get_etol", "get_tolerance", "locationError", "numeric_grad", "same_array",
           "same_symbol_structure"]
