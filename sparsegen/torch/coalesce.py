"""The sparse COO gradients of ``nn.Embedding(sparse=True)`` / ``nn.EmbeddingBag(sparse=True)``
as sorted unique rows and their summed values, on generated kernels: the one-hot csr matrix of
the gradient's row ids, transposed, times its values (``dot_csrT``: sort by column, then sum)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import SparsegenError
from ..formats import CSR
from ..ops.dot import csr_t_dense


def coalesce(grad: Any, rows: int) -> tuple[Any, Any]:
    """``(ids, values)`` of a sparse COO gradient of a ``(rows, ...)`` parameter: int64 row ids
    sorted and unique, and ``(len(ids), width)`` values with the rows of repeated ids summed. A
    gradient torch already coalesced is returned as its own tensors (no copy). float16 rows
    are summed in float16, as torch's own ``coalesce`` sums them."""
    if grad.sparse_dim() != 1:
        raise SparsegenError(f"a sparse gradient must be sparse in its first dimension only, got "
                             f"sparse_dim {grad.sparse_dim()}")
    if grad.device.type != "cpu":
        raise SparsegenError(f"sparse gradients on {grad.device} are not coalesced yet: only CPU "
                             "tensors (a dense gradient runs on CUDA)")
    width = int(np.prod(grad.shape[1:], dtype=np.int64))
    ids, values = grad._indices()[0], grad._values().reshape(-1, width)
    if grad.is_coalesced():
        return ids, values
    if values.dtype not in (torch.float16, torch.float32, torch.float64):
        raise SparsegenError(f"an uncoalesced sparse gradient must be float16, float32 or "
                             f"float64 (the csrᵀ·dense kernel's float dtypes), got {values.dtype}")
    host_ids = ids.numpy()
    count = host_ids.size
    if count and (host_ids.min() < 0 or host_ids.max() >= rows):
        raise SparsegenError(f"sparse gradient row ids must lie in [0, {rows}), got "
                             f"{host_ids.min()}..{host_ids.max()}")
    values = values.contiguous().numpy()
    onehot = CSR(np.ones(count, values.dtype), np.ascontiguousarray(host_ids, np.int64),
                 np.arange(count + 1, dtype=np.int64), (count, rows))
    summed = csr_t_dense(onehot, values)
    return summed.indices, summed.data
