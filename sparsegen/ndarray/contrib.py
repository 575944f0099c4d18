"""``mx.nd.contrib``: MXNet's contrib operators that sparse code uses."""

from __future__ import annotations

from typing import Any

from ..errors import SparsegenError
from .dispatch import check_out, invoke
from .ndarray import NDArray


# -- reduce --
def getnnz(data: NDArray, axis: Any = None, out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The number of stored entries of a csr array: in all (``(1,)``, axis None) or per row
    (axis 1), int64, as ``mxnet.nd.contrib.getnnz`` (axis 0 raises, as in MXNet)."""
    kwargs.pop("name", None)
    if kwargs:
        raise SparsegenError(f"getnnz: unknown keyword arguments {sorted(kwargs)}")
    if not isinstance(data, NDArray) or data.stype != "csr":
        raise SparsegenError(f"getnnz: data must be a csr array, got "
                             f"{getattr(data, 'stype', type(data).__name__)}")
    if axis == 0 and not isinstance(axis, bool):
        raise SparsegenError("getnnz with axis = 0 is not supported (as in MXNet)")
    if axis is not None and (isinstance(axis, bool) or axis != 1):
        raise SparsegenError(f"getnnz: axis must be None, 0 or 1, got {axis!r}")
    check_out("getnnz", out, (1,) if axis is None else (data.shape[0],), "int64", data.context)
    return invoke("getnnz", (data,), out=out, axis=axis)


from .arith import quadratic  # noqa: E402 - mx.nd.contrib.quadratic
from .optim_ops import group_adagrad_update  # noqa: E402


def isinf(data: NDArray) -> NDArray:
    """1 where ``data`` is +inf or -inf, else 0, in its dtype (MXNet's ``contrib.isinf``)."""
    return abs(data) == float("inf")


def isnan(data: NDArray) -> NDArray:
    """1 where ``data`` is nan, else 0 (MXNet's ``contrib.isnan``)."""
    return data != data


def isfinite(data: NDArray) -> NDArray:
    """1 where ``data`` is neither inf nor nan, else 0 (MXNet's ``contrib.isfinite``)."""
    return (abs(data) != float("inf")) * (data == data)


__all__ = ["getnnz", "group_adagrad_update", "isfinite", "isinf", "isnan", "quadratic"]

# -- nn --
from .nn import Embedding  # noqa: E402


def SparseEmbedding(data: NDArray, weight: NDArray, input_dim: int, output_dim: int,  # noqa: N802
                    dtype: Any = "float32", deterministic: bool = False,
                    out: NDArray | None = None) -> NDArray:
    """``Embedding(..., sparse_grad=True)``, as MXNet's deprecated
    ``mx.nd.contrib.SparseEmbedding`` (the weight's gradient is row_sparse; ``deterministic``
    changes nothing: sparsegen's gradient is always deterministic)."""
    return Embedding(data, weight, input_dim, output_dim, dtype=dtype, sparse_grad=True, out=out)


__all__ += ["SparseEmbedding"]
