"""Gluon's op hooks (``HybridBlock.register_op_hook``): a hybridized block with a hook runs as
its graph, and the graph's executor reports each op's outputs (and with ``monitor_all`` its
inputs) to the hook, named as MXNet's cached graph names them (``dense0_fwd_output``,
``dense0_fwd_data``, ``relu0_fwd_input0``): the monitor of ``Executor.set_monitor_callback``,
with the op's name (``symbol/executor.py``)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidType
from .cached_graph import graph_of, input_names
from .parameter import DeferredInitializationError


def check_callback(callback: Any) -> None:
    """Refuse a hook that cannot be called."""
    if not callable(callback):
        raise InvalidType(f"register_op_hook: callback must be callable, got "
                          f"{type(callback).__name__}")


def hooked_call(block: Any, args: tuple[Any, ...]) -> Any:
    """The output of the hybridized ``block`` on the arrays ``args``, run as its graph
    (``cached_graph.graph_of``) with its op hook installed."""
    graph = graph_of(block, len(args))
    if block._hooked_call is None or block._hooked_call[0] is not graph:
        call = graph.graph_call()
        call.register_op_hook(*block._op_hook)
        block._hooked_call = (graph, call)
    call = block._hooked_call[1]
    names = input_names(len(args))
    ctx = args[0].context
    wanted = set(graph.list_arguments()) | set(graph.list_auxiliary_states())
    params = {name: p for name, p in block.collect_params().items() if name in wanted}
    try:
        arrays = {name: p.data(ctx) for name, p in params.items()}
    except DeferredInitializationError:
        shapes = {name: array.shape for name, array in zip(names, args)}
        arg_shapes, _, aux_shapes = graph.infer_shape(**shapes)
        found = {**dict(zip(graph.list_arguments(), arg_shapes)),
                 **dict(zip(graph.list_auxiliary_states(), aux_shapes))}
        for name, param in params.items():
            if param._data is None:
                param.shape = found[name]
                param._finish_deferred_init()
        arrays = {name: p.data(ctx) for name, p in params.items()}
    outputs = call({**dict(zip(names, args)), **arrays}, ctx)
    return outputs[0] if len(outputs) == 1 else outputs
