"""Graph queries on csr adjacency matrices (MXNet's DGL contrib ops), on the generated ``graph``
kernel."""

from __future__ import annotations

from typing import Any

from ..device import empty_like
from ..formats import CSR
from .layout import dtype_name, kernel


def edge_id(m: CSR, u: Any, v: Any) -> Any:
    """``m[u[i], v[i]]`` where that entry is stored, else -1, in ``m``'s dtype: ``u`` and ``v``
    are int64 buffers of one length beside ``m``'s, every ``u[i]`` a row of ``m``."""
    out = empty_like(m.data, (u.shape[0],), m.dtype)
    if u.shape[0]:
        graph = kernel("graph", (dtype_name(m.dtype),), m.data, u.shape[0])
        graph.edge_id(m.data, m.indices, m.indptr, u, v, out)
    return out
