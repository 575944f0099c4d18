"""``mx.nd.contrib``: MXNet's contrib operators that sparse code uses."""

from __future__ import annotations

import math
import types
from typing import Any

from ..context import resolve as resolve_context
from ..errors import SparsegenError
from ..params import integer
from . import elemwise, random
from .dispatch import check_out, invoke
from .indexing import array_arg
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


def log_uniform_candidates(F: Any, true_classes: Any, num_sampled: int, range_max: int,
                           **where: Any) -> tuple[Any, Any, Any]:
    """``rand_zipfian`` written once for ``mx.nd`` and ``mx.sym`` (``F``): ``num_sampled``
    classes of ``[0, range_max)`` drawn with replacement from the log-uniform (Zipfian)
    distribution ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``, and the expected counts
    of ``true_classes`` and of the sampled classes in ``num_sampled`` draws (float64)."""
    num_sampled = integer(num_sampled, "rand_zipfian: num_sampled", low=1)
    range_max = integer(range_max, "rand_zipfian: range_max", low=1)
    log_range = math.log(range_max + 1)
    draws = F.random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", **where)
    sampled = (F.exp(draws) - 1).astype("int64") % range_max  # the % keeps rounding in range

    def expected_count(classes: Any) -> Any:
        c = classes.astype("float64")
        return F.log((c + 2.0) / (c + 1.0)) / log_range * num_sampled

    return sampled, expected_count(true_classes), expected_count(sampled)


def rand_zipfian(true_classes: NDArray, num_sampled: int, range_max: int,
                 ctx: Any = None) -> tuple[NDArray, NDArray, NDArray]:
    """MXNet's ``mx.nd.contrib.rand_zipfian``: (sampled classes int64, expected count of each
    true class, expected count of each sampled class), as ``log_uniform_candidates``; the
    candidates of a sampled softmax."""
    ctx = resolve_context(ctx)
    true_classes = array_arg(true_classes, "true_classes", "rand_zipfian").as_in_context(ctx)
    return log_uniform_candidates(_OPS, true_classes, num_sampled, range_max, ctx=ctx)


_OPS = types.SimpleNamespace(random=random, exp=elemwise.exp, log=elemwise.log)
"""The ``mx.nd`` ops ``log_uniform_candidates`` uses."""


__all__ = ["getnnz", "group_adagrad_update", "isfinite", "isinf", "isnan", "quadratic",
           "rand_zipfian"]

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

# -- index and arithmetic ops (contrib_index.py, contrib_math.py) --
from .contrib_index import arange_like, boolean_mask, index_array, index_copy  # noqa: E402
from .contrib_math import (allclose, div_sqrt_dim, gradientmultiplier, round_ste,  # noqa: E402
                           sign_ste)

__all__ += ["allclose", "arange_like", "boolean_mask", "div_sqrt_dim", "gradientmultiplier",
            "index_array", "index_copy", "round_ste", "sign_ste"]

# -- graph ops on csr (contrib_graph.py) --
from .contrib_graph import (  # noqa: E402
    dgl_adjacency, dgl_csr_neighbor_non_uniform_sample, dgl_csr_neighbor_uniform_sample,
    dgl_graph_compact, dgl_subgraph, edge_id)

__all__ += ["dgl_adjacency", "dgl_csr_neighbor_non_uniform_sample",
            "dgl_csr_neighbor_uniform_sample", "dgl_graph_compact", "dgl_subgraph", "edge_id"]

# -- signal ops: transforms, sketches, Hawkes likelihoods (contrib_signal.py) --
from .contrib_signal import count_sketch, fft, hawkesll, ifft  # noqa: E402

__all__ += ["count_sketch", "fft", "hawkesll", "ifft"]

# -- interleaved attention products (contrib_attention.py) --
from .contrib_attention import (interleaved_matmul_encdec_qk,  # noqa: E402
                                interleaved_matmul_encdec_valatt, interleaved_matmul_selfatt_qk,
                                interleaved_matmul_selfatt_valatt)

__all__ += ["interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt",
            "interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt"]
