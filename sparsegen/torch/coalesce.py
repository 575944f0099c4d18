"""The sparse COO gradients of ``nn.Embedding(sparse=True)`` / ``nn.EmbeddingBag(sparse=True)``
as sorted unique rows and their summed values, on generated kernels where the gradient lives (CPU
or a CUDA GPU): the one-hot csr matrix of the gradient's row ids, transposed, times its values
(``dot_csrT``: sort by column, then sum)."""

from __future__ import annotations

import math
from typing import Any

import torch

from ..device import DeviceArray, item
from ..errors import SparsegenError
from ..formats import CSR, INDEX_DTYPE
from ..ops.dot import csr_t_dense
from ..ops.gather import first_out_of_range
from ..ops.retain import first_unsorted
from ..ops.shape import arange

FLOATS = (torch.float16, torch.float32, torch.float64)
"""The dtypes of the uncoalesced gradients summed here (the csrᵀ·dense kernel's float dtypes)."""


def coalesce(grad: Any, rows: int) -> tuple[Any, Any]:
    """``(ids, values)`` of a sparse COO gradient of a ``(rows, ...)`` parameter, as tensors on
    the gradient's device: int64 row ids checked to lie in ``[0, rows)``, sorted and unique, and
    ``(len(ids), width)`` values with the rows of repeated ids summed. A gradient torch already
    coalesced is returned as its own tensors (no copy), once its ids are checked to rise (torch
    takes ``is_coalesced=True`` on trust). float16 rows are summed in float16, as torch's own
    ``coalesce`` sums them."""
    width = math.prod(grad.shape[1:])
    ids, values = row_ids(grad), grad._values().reshape(grad._nnz(), width)
    if grad.is_coalesced():
        check_ids(array(ids), rows, rising=True)
        return ids, values
    if values.dtype not in FLOATS:
        raise SparsegenError(f"an uncoalesced sparse gradient must be float16, float32 or "
                             f"float64 (the csrᵀ·dense kernel's float dtypes), got {values.dtype}")
    summed_ids, summed = coalesce_rows(array(ids), array(values.contiguous()), rows)
    return torch.from_dlpack(summed_ids), torch.from_dlpack(summed)


def row_ids(grad: Any) -> Any:
    """The row ids of a sparse COO gradient (one per stored row, as stored): it must be sparse
    in its first dimension only."""
    if grad.sparse_dim() != 1:
        raise SparsegenError(f"a sparse gradient must be sparse in its first dimension only, got "
                             f"sparse_dim {grad.sparse_dim()}")
    return grad._indices()[0]


def coalesce_rows(ids: Any, values: Any, rows: int) -> tuple[Any, Any]:
    """The sorted unique ids among int64 ``ids`` (each in ``[0, rows)``) and the sums of the rows
    of ``values`` at each, as buffers where the inputs live (numpy arrays or ``DeviceArray``s of
    one device): the row ids are checked there, and nothing is written when one is out of
    range."""
    check_ids(ids, rows)
    count = ids.size
    where = ids.device if isinstance(ids, DeviceArray) else None
    onehot = CSR(arange(count, 1, 0, 1, values.dtype, where), ids,
                 arange(count + 1, 0, 1, 1, INDEX_DTYPE, where), (count, rows))
    summed = csr_t_dense(onehot, values)
    return summed.indices, summed.data


def check_ids(ids: Any, rows: int, rising: bool = False) -> None:
    """Refuses int64 row ids (a numpy array or ``DeviceArray``) outside ``[0, rows)`` or, when
    ``rising``, not each above the one before, naming one and its position (a kernel where the
    ids live)."""
    position = first_unsorted(ids, rows) if rising else first_out_of_range(ids, 0, rows)
    if position < 0:
        return
    value = item(ids, position)
    if not 0 <= value < rows:
        raise SparsegenError(f"sparse gradient row ids must lie in [0, {rows}), got {value} at "
                             f"position {position}")
    raise SparsegenError(f"a coalesced sparse gradient's row ids must be sorted and unique, got "
                         f"{item(ids, position - 1)} then {value} at position {position}")


def array(tensor: Any) -> Any:
    """A torch tensor's memory as the ops' buffer: numpy for a CPU tensor, else a
    ``DeviceArray`` in its GPU's memory (no copy either way)."""
    if tensor.device.type == "cpu":
        return tensor.numpy()
    if tensor.device.type != "cuda":
        raise SparsegenError(f"sparse gradients on {tensor.device} are not supported: only CPU "
                             "and CUDA tensors")
    return DeviceArray.from_dlpack(tensor)
