"""``gluon.contrib.nn.SparseEmbedding``: an embedding whose weight and gradient are row_sparse."""

from __future__ import annotations

from typing import Any

import numpy as np

from .... import ndarray
from ...block import Block


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
