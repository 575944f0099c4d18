"""The types of ``mx.sym``'s shape rules: ``infer.SHAPE_RULES`` and the tables of the op
families it merges (``linalg_shapes``, ``graph_shapes``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Shape = tuple[int, ...] | None
"""A shape as inference holds it: None where even the number of dimensions is unknown, and
``infer.UNKNOWN`` for each dimension not known yet (MXNet's partial shapes)."""
Params = dict[str, Any]
"""An op's parsed attributes."""
Answer = tuple[list[Shape], Any]
"""A rule's answer: the input shapes filled in, and the output shape (a list of them for an op
of several outputs)."""
ShapeRule = Callable[[list[Shape], Params, list[Shape]], Answer]
"""``rule(input shapes, params, output shapes known so far) -> Answer``. A rule sees only
complete shapes (or None) unless it is marked ``infer.handles_unknown_dims``."""
