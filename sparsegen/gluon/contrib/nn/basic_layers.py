"""``gluon.contrib.nn``'s layers: ``SparseEmbedding`` (an embedding whose weight and gradient
are row_sparse), ``Concurrent`` / ``HybridConcurrent`` (children on one input, outputs
concatenated) and ``Identity``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .... import ndarray
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential


class SparseEmbedding(Block):
    """Rows of a row_sparse weight (``input_dim`` x ``output_dim``) by index, as
    ``mxnet.gluon.contrib.nn.SparseEmbedding``: each forward pass pulls only the rows of the
    batch (``row_sparse_data``, which needs a ``Trainer``) and the gradient is row_sparse."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32",
                 weight_initializer: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x: Any) -> Any:
        """``Embedding(x, weight rows of x, sparse_grad=True)``."""
        weight = self.weight.row_sparse_data(x)
        return ndarray.Embedding(x, weight, **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return (f"SparseEmbedding({k['input_dim']} -> {k['output_dim']}, "
                f"{np.dtype(k['dtype']).name})")


def _concatenated(outputs: list[Any], axis: int) -> Any:
    """The children's outputs joined along ``axis`` (``mx.nd.concat``, or ``mx.sym.concat``
    of Symbols)."""
    from .... import symbol

    module = symbol if isinstance(outputs[0], symbol.Symbol) else ndarray
    return module.concat(*outputs, dim=axis)


class _Branches:
    """What Concurrent and HybridConcurrent share: the axis, and the forward pass."""

    _children: dict[str, Block]

    def __init__(self, axis: int = -1, prefix: str | None = None, params: Any = None) -> None:
        super().__init__(prefix=prefix, params=params)  # type: ignore[call-arg]
        self.axis = axis

    def forward(self, x: Any) -> Any:
        """The children's outputs on ``x``, concatenated."""
        return _concatenated([block(x) for block in self._children.values()], self.axis)


class Concurrent(_Branches, Sequential):
    """Every child applied to the same input, their outputs concatenated along ``axis``, as
    ``mxnet.gluon.contrib.nn.Concurrent``."""


class HybridConcurrent(_Branches, HybridSequential):
    """``Concurrent`` of HybridBlocks (on arrays or Symbols)."""


class Identity(HybridBlock):
    """The input itself, as ``mxnet.gluon.contrib.nn.Identity`` (a branch of a
    ``Concurrent``)."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        """``x``."""
        return x
