"""Gluon's op hooks (``HybridBlock.register_op_hook``): a hybridized block with a hook runs as
its graph, and the graph's executor reports each op's outputs (and with ``monitor_all`` its
inputs) to the hook, named as MXNet's cached graph names them (``dense0_fwd_output``,
``dense0_fwd_data``, ``relu0_fwd_input0``): the monitor of ``Executor.set_monitor_callback``,
with the op's name (``symbol/executor.py``)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidType
from .parameter import DeferredInitializationError


def input_names(count: int) -> list[str]:
    """MXNet's names of a hybridized block's inputs: ``data``, or ``data0``, ``data1``, ..."""
    return ["data"] if count == 1 else [f"data{i}" for i in range(count)]


def check_callback(callback: Any) -> None:
    """Refuse a hook that cannot be called."""
    if not callable(callback):
        raise InvalidType(f"register_op_hook: callback must be callable, got "
                          f"{type(callback).__name__}")


def hooked_call(block: Any, args: tuple[Any, ...]) -> Any:
    """The output of the hybridized ``block`` on the arrays ``args``, run as its graph (built
    once per ``hybridize`` and number of inputs) with its op hook installed."""
    from .. import symbol

    names = input_names(len(args))
    made = block._hooked_graph
    if made is None or made[0] != len(args):
        graph = block.forward(*[symbol.var(name) for name in names])
        count = len(graph) if isinstance(graph, (list, tuple)) else 1
        if isinstance(graph, (list, tuple)):
            graph = symbol.Group(list(graph))
        call = graph.graph_call()
        call.register_op_hook(block._op_hook[0], block._op_hook[1])
        made = block._hooked_graph = (len(args), graph, call, count)
    _, graph, call, count = made
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
    return outputs[0] if count == 1 else outputs

