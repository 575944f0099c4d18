"""The tolerance and comparison helpers of ``mx.test_utils`` that ``test_utils.py`` does not
hold (MXNet 1.9.1's names and signatures): the default tolerance tables, ``get_tolerance``,
``effective_dtype``, comparisons within an error rate (``assert_almost_equal_with_err``),
``checkShapes``, ``locationError``, ``same_array``, ``same_symbol_structure``, finite
differences through an executor (``numeric_grad``) and ``check_gluon_hybridize_consistency``."""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ndarray as nd
from .test_utils import (_FLOATS, _NUMERIC_EPS, _check_shapes, _numpy, _worst,
                         assert_almost_equal, get_tols, same)

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


__all__ = ["assert_almost_equal_with_err", "checkShapes", "check_gluon_hybridize_consistency",
           "default_atols", "default_numeric_eps", "default_rtols", "effective_dtype",
           "get_etol", "get_tolerance", "locationError", "numeric_grad", "same_array",
           "same_symbol_structure"]
