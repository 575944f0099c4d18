"""Memory shared through DLPack: numpy views of CPU DLPack arrays (torch tensors and others), and
torch tensors over a format's buffers.

PyTorch is optional: only ``torch_module`` and ``torch_tensor`` import it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..device import copy as copy_buffer
from ..errors import SparsegenError
from ..formats import CSR, RowSparse

_DLPACK_CPU = 1


def dlpack_numpy(array: Any, what: str) -> np.ndarray:
    """A CPU DLPack array (a torch tensor, ...) as numpy, sharing its memory; an array on another
    device, or one DLPack cannot share, raises."""
    if getattr(array, "requires_grad", False):
        array = array.detach()  # a torch tensor in an autograd graph: share its data, not the graph
    device = array.__dlpack_device__() if hasattr(array, "__dlpack_device__") else (_DLPACK_CPU, 0)
    if int(device[0]) != _DLPACK_CPU:
        raise SparsegenError(
            f"{what} lives on DLPack device {tuple(int(d) for d in device)}, not the CPU; "
            "sparsegen arrays are CPU arrays: move it first (tensor.cpu())"
        )
    try:
        return np.from_dlpack(array)
    except (BufferError, TypeError, ValueError, RuntimeError) as err:
        raise SparsegenError(f"{what} cannot be shared through DLPack: {err}") from None


class _Capsule:
    """A bare DLPack capsule (what ``to_dlpack_for_read`` hands out) as an object numpy's
    ``from_dlpack`` takes: a CPU tensor, read once."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return _DLPACK_CPU, 0


def shared(dlpack: Any) -> np.ndarray:
    """The memory of a DLPack capsule or of an object with ``__dlpack__`` (a torch tensor, an
    NDArray) as numpy, shared."""
    if not hasattr(dlpack, "__dlpack__"):
        if type(dlpack).__name__ != "PyCapsule":
            raise SparsegenError(f"from_dlpack: dlpack must be a DLPack capsule or an object with "
                                 f"__dlpack__, got {type(dlpack).__name__}")
        dlpack = _Capsule(dlpack)
    return dlpack_numpy(dlpack, "from_dlpack: dlpack")


def torch_module() -> Any:
    """The ``torch`` module, or a clear error when PyTorch is not installed."""
    try:
        import torch
    except ImportError:
        raise SparsegenError("PyTorch is not installed (pip install torch)") from None
    return torch


def torch_tensor(storage: Any) -> Any:
    """A torch tensor sharing the values of ``storage``: a dense buffer -> strided, ``RowSparse``
    -> sparse COO (one sparse dimension, rows stored whole), ``CSR`` -> sparse CSR. A sparse
    tensor's index tensors are copies (torch lets them be written, and sparsegen's kernels trust
    its own)."""
    torch = torch_module()
    if isinstance(storage, RowSparse):
        ids = torch.from_dlpack(copy_buffer(storage.indices)).reshape(1, -1)
        return torch.sparse_coo_tensor(ids, torch.from_dlpack(storage.data), size=storage.shape,
                                       is_coalesced=True, check_invariants=False)
    if isinstance(storage, CSR):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)
            return torch.sparse_csr_tensor(
                torch.from_dlpack(copy_buffer(storage.indptr)),
                torch.from_dlpack(copy_buffer(storage.indices)),
                torch.from_dlpack(storage.data), size=storage.shape, check_invariants=False,
            )
    return torch.from_dlpack(storage)
