"""A hybridized block's graph, as MXNet's cached op holds it: built once per ``hybridize()``
and number of inputs from ``hybrid_forward`` on symbols (inputs named ``data`` or ``data0``,
``data1``, ...). Op hooks run it (``op_hook.py``); ``autograd.get_symbol`` writes a recorded
call of the block as one ``_CachedOp`` node running it, unless MXNet would inline it (no
``static_alloc``, at most ``inline_limit`` ops, default 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import SparsegenError

INLINE_LIMIT = 2
"""MXNet's default ``inline_limit``: a cached graph of at most this many ops is recorded op by
op."""


def input_names(count: int) -> list[str]:
    """MXNet's names of a hybridized block's inputs: ``data``, or ``data0``, ``data1``, ..."""
    return ["data"] if count == 1 else [f"data{i}" for i in range(count)]


def graph_of(block: Any, count: int) -> Any:
    """The graph of ``block`` for ``count`` inputs (a Symbol; a Group for several outputs),
    built once per ``hybridize()``."""
    from .. import symbol

    made = block._cached_graph
    if made is None or made[0] != count:
        graph = block.forward(*[symbol.var(name) for name in input_names(count)])
        if isinstance(graph, (list, tuple)):
            graph = symbol.Group(list(graph))
        made = block._cached_graph = (count, graph)
    return made[1]


def inlined(block: Any, count: int) -> bool:
    """Whether MXNet records a call of the hybridized ``block`` op by op (no ``static_alloc``
    and at most ``inline_limit`` ops), or as one cached op; a block whose graph cannot be built
    is recorded op by op."""
    flags = block._hybrid_flags
    if flags.get("static_alloc"):
        return False
    try:
        graph = graph_of(block, count)
    except (SparsegenError, TypeError, ValueError, AttributeError, KeyError, IndexError,
            NotImplementedError):  # hybrid_forward written for mx.nd alone: recorded op by op
        return True
    ops = sum(1 for node in graph._nodes() if not node.is_variable)
    return ops <= int(flags.get("inline_limit", INLINE_LIMIT))


@dataclass(frozen=True, eq=False)
class CachedCall:
    """What the tape notes for a hybridized block's call recorded as one cached op
    (``tape.Call.function``): the block's graph, and the arrays of its inputs."""

    block: Any
    graph: Any  # a Symbol

    def inputs(self, arrays: tuple[Any, ...]) -> list[Any]:
        """The arrays of the graph's inputs in order (``list_inputs``): the call's arrays
        (``data``, ``data0``, ...), then the block's parameters on their context."""
        given = dict(zip(input_names(len(arrays)), arrays))
        params = self.block.collect_params()
        ctx = arrays[0].context
        return [given[name] if name in given else params[name].data(ctx)
                for name in self.graph.list_inputs()]


def cached_call(block: Any, arrays: tuple[Any, ...]) -> CachedCall | None:
    """The call of the hybridized ``block`` on ``arrays`` as one cached op, or None when MXNet
    would record it op by op (``inlined``)."""
    if inlined(block, len(arrays)):
        return None
    return CachedCall(block, graph_of(block, len(arrays)))
