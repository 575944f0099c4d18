"""``DataParallelExecutorGroup``: one executor per context, each bound to its slice of the
batch (by the work load list), as MXNet 1.9.1's: loads a batch into the
executors, runs them, merges their outputs and keeps their parameter and gradient arrays
side by side for the updates."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..context import Context, cpu
from ..errors import InvalidType, InvalidValue
from ..io import DataDesc
from ..symbol import Symbol
from ..symbol.executor import Executor


def split_slices(batch_size: int, work_load_list: list[float]) -> list[slice]:
    """The batch's slices, one per context, sized by ``work_load_list`` (MXNet's rounding: the
    last context takes what rounding leaves); a slice that would be empty is an error."""
    total = sum(work_load_list)
    counts = [round(load * batch_size / total) for load in work_load_list]
    counts[-1] += max(0, batch_size - sum(counts))
    slices, end = [], 0
    for count in counts:
        begin = min(end, batch_size)
        end = min(begin + count, batch_size)
        if begin >= end:
            raise InvalidValue(f"Module: batch size {batch_size} is too small for the work load "
                               f"list {work_load_list} (some contexts would get no samples)")
        slices.append(slice(begin, end))
    return slices


def group_contexts(group2ctxs: Any, count: int) -> list[dict[str, Context] | None]:
    """Module's ``group2ctxs`` as one ``{ctx_group: Context}`` per data-parallel context: a list
    of such dicts (one per context), or one dict whose values are a Context (every context's)
    or a list of one or ``count`` Contexts; None places nothing."""
    if group2ctxs is None:
        return [None] * count
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != count:
            raise InvalidValue(f"Module: group2ctxs has {len(group2ctxs)} dicts for {count} "
                               "contexts (one per context)")
        return [dict(groups) for groups in group2ctxs]
    if not isinstance(group2ctxs, dict):
        raise InvalidType(f"Module: group2ctxs must be a dict or a list of dicts, got "
                          f"{group2ctxs!r}")
    per_context: list[dict[str, Context] | None] = [{} for _ in range(count)]
    for group, value in group2ctxs.items():
        listed = [value] * count if isinstance(value, Context) else list(value)
        if len(listed) == 1:
            listed *= count
        if len(listed) != count:
            raise InvalidValue(f"Module: group2ctxs[{group!r}] has {len(listed)} contexts for "
                               f"{count} data-parallel contexts (give one, or one per context)")
        for groups, where in zip(per_context, listed):
            groups[group] = where  # type: ignore[index]
    return per_context


def grad_requests(arg_names: list[str], param_names: list[str], data_names: list[str],
                  fixed: list[str], for_training: bool, inputs_need_grad: bool, grad_req: Any
                  ) -> dict[str, str]:
    """The ``grad_req`` of every argument, as MXNet's executor group decides it: parameters
    take ``grad_req`` (``'null'`` when fixed or not training), data inputs only with
    ``inputs_need_grad``, labels and states never; a dict or list overrides by name."""
    if not isinstance(grad_req, (str, list, tuple, dict)):
        raise InvalidValue(f"Module.bind: grad_req must be a str, list, tuple or dict, got "
                           f"{type(grad_req).__name__}")
    default = grad_req if isinstance(grad_req, str) else "write"
    if not for_training:
        return {name: "null" for name in arg_names}
    reqs = {}
    for name in arg_names:
        if name in param_names:
            reqs[name] = "null" if name in fixed else default
        else:
            reqs[name] = default if inputs_need_grad and name in data_names else "null"
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise InvalidValue(f"Module.bind: grad_req has {len(grad_req)} entries for "
                               f"{len(arg_names)} arguments ({arg_names})")
        reqs = dict(zip(arg_names, grad_req))
    elif isinstance(grad_req, dict):
        reqs.update(grad_req)
    return reqs


def merge(parts: list[list[Any]], axes: list[int]) -> list[Any]:
    """One array per output from each context's outputs, joined along the batch axis (on the
    first context; outputs without a batch axis are the first context's)."""
    merged = []
    for arrays, axis in zip(parts, axes):
        if len(arrays) == 1 or axis < 0:
            merged.append(arrays[0])
        else:
            near = arrays[0].context
            merged.append(nd.concat(*[a.as_in_context(near) for a in arrays], dim=axis))
    return merged


class DataParallelExecutorGroup:
    """Executors of ``symbol`` on ``contexts`` bound to the slices of one batch shape; data,
    label, parameter and gradient arrays by name and context."""

    def __init__(self, symbol: Symbol, contexts: list[Context], workload: list[float],
                 data_shapes: list[DataDesc], label_shapes: list[DataDesc] | None,
                 param_names: list[str], for_training: bool, inputs_need_grad: bool,
                 shared_group: "DataParallelExecutorGroup | None" = None, logger: Any = None,
                 fixed_param_names: list[str] | None = None, grad_req: Any = "write",
                 state_names: list[str] | None = None, group2ctxs: Any = None) -> None:
        self.symbol = symbol
        self.contexts = contexts
        self.group2ctxs = group_contexts(group2ctxs, len(contexts))
        self.workload = workload
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.fixed_param_names = fixed_param_names or []
        self.state_names = state_names or []
        self.grad_req = grad_requests(self.arg_names, param_names,
                                      [d.name for d in data_shapes], self.fixed_param_names,
                                      for_training, inputs_need_grad, grad_req)
        self.execs: list[Executor] = []
        self._default_execs: list[Executor] | None = None
        self._bind(data_shapes, label_shapes, shared_group)

    # -- binding -------------------------------------------------------------------------------
    def _bind(self, data_shapes: list[DataDesc], label_shapes: list[DataDesc] | None,
              shared_group: "DataParallelExecutorGroup | None", reshape: bool = False) -> None:
        """Bind (or, with ``reshape``, reshape) one executor per context for these shapes."""
        self.data_shapes, self.label_shapes = data_shapes, label_shapes
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes or []]
        self.data_layouts = [DataDesc.get_batch_axis(d.layout) for d in data_shapes]
        self.label_layouts = [DataDesc.get_batch_axis(d.layout) for d in label_shapes or []]
        self.output_layouts = [DataDesc.get_batch_axis(self.symbol[k].attr("__layout__"))
                               for k in range(len(self.output_names))]
        axis = self.data_layouts[0] if self.data_layouts else -1
        self.batch_size = data_shapes[0].shape[axis] if axis >= 0 else None
        self.slices = (split_slices(self.batch_size, self.workload)
                       if self.batch_size is not None else [slice(None)] * len(self.contexts))
        if self._default_execs is not None and self._shapes_of(0) == self._bound_shapes:
            self.execs = list(self._default_execs)
        elif reshape:
            self.execs = [e.reshape(allow_up_sizing=True, **dict(self._shapes_of(i)))
                          for i, e in enumerate(self._default_execs or self.execs)]
        else:
            self.execs = [self._bind_one(i, shared_group) for i in range(len(self.contexts))]
            self._default_execs, self._bound_shapes = list(self.execs), self._shapes_of(0)
        self._collect()

    def _shapes_of(self, i: int) -> list[tuple[str, tuple[int, ...]]]:
        """``(name, shape)`` of each data and label input in context ``i``'s slice."""
        shapes = []
        for desc, axis in zip(list(self.data_shapes) + list(self.label_shapes or []),
                              self.data_layouts + self.label_layouts):
            shape = list(desc.shape)
            if axis >= 0 and self.batch_size is not None:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            shapes.append((desc.name, tuple(shape)))
        return shapes

    def _bind_one(self, i: int, shared_group: "DataParallelExecutorGroup | None") -> Executor:
        """The executor of context ``i``, sharing parameter arrays with ``shared_group``'s."""
        types = {d.name: d.dtype for d in list(self.data_shapes) + list(self.label_shapes or [])}
        attrs = self.symbol.attr_dict()
        for name in self.data_names:  # a dtype given on the variable wins over the iterator's
            declared = attrs.get(name, {}).get("__dtype__")
            if declared not in (None, "-1"):
                types.pop(name)
        shared = None if shared_group is None else shared_group.execs[i]
        return self.symbol.simple_bind(self.contexts[i], grad_req=self.grad_req,
                                       type_dict=types, shared_exec=shared,
                                       group2ctx=self.group2ctxs[i],
                                       **dict(self._shapes_of(i)))

    def _collect(self) -> None:
        """The arrays of every executor, by argument (one list entry per context)."""
        position = {name: k for k, name in enumerate(self.arg_names)}
        self._data_index = [position[n] for n in self.data_names]
        self._label_index = [position[n] for n in self.label_names if n in position]
        self._param_index = [position[n] for n in self.param_names]
        self.param_arrays = [[e.arg_arrays[k] for e in self.execs] for k in self._param_index]
        self.grad_arrays = ([[e.grad_arrays[k] for e in self.execs] for k in self._param_index]
                            if self.for_training else [])
        self.aux_arrays = [[e.aux_arrays[k] for e in self.execs]
                           for k in range(len(self.aux_names))]

    def reshape(self, data_shapes: list[DataDesc], label_shapes: list[DataDesc] | None) -> None:
        """Rebind for new input shapes; parameter arrays stay shared."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        self._bind(data_shapes, label_shapes, None, reshape=True)

    # -- parameters ----------------------------------------------------------------------------
    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any],
                   allow_extra: bool = False) -> None:
        """Copy the parameters into every executor."""
        for executor in self.execs:
            executor.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        """Copy the executors' parameters (averaged over the contexts) into the dicts' arrays."""
        for names, blocks, out in ((self.param_names, self.param_arrays, arg_params),
                                   (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                if len(block) == 1:
                    weight = block[0]
                else:
                    weight = nd.add_n(*[w.as_in_context(cpu()) for w in block]) / len(block)
                weight.copyto(out[name])

    # -- running -------------------------------------------------------------------------------
    def _load(self, indices: list[int], names: list[str], axes: list[int], arrays: Any) -> None:
        """Put each array of a batch (its slice, on each context) into the executors: the
        array itself where it matches the bound one and takes no gradient, else a copy."""
        single = len(self.execs) == 1
        for index, name, axis, value in zip(indices, names, axes, arrays):
            for executor, ctx, part in zip(self.execs, self.contexts, self.slices):
                if not single and axis >= 0:
                    value_i = (value[part] if axis == 0 else
                               nd.slice_axis(value, axis=axis, begin=part.start, end=part.stop))
                else:
                    value_i = value
                bound = executor.arg_arrays[index]
                if (self.grad_req[name] == "null" and value_i.context == ctx
                        and value_i.shape == bound.shape and value_i.stype == bound.stype
                        and np.dtype(value_i.dtype) == np.dtype(bound.dtype)):
                    executor.arg_arrays[index] = value_i
                else:
                    value_i.copyto(bound)

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Load ``data_batch`` (its labels too, when it has them) and run every executor."""
        self._load(self._data_index, self.data_names, self.data_layouts, data_batch.data)
        if self._label_index and data_batch.label:
            self._load(self._label_index, self.label_names, self.label_layouts,
                       data_batch.label)
        train = self.for_training if is_train is None else is_train
        for executor in self.execs:
            executor.forward(is_train=train)

    def backward(self, out_grads: Any = None) -> None:
        """Run every executor's backward pass on its slice of ``out_grads``."""
        if not self.for_training:
            raise InvalidValue("Module.backward: the module was bound with for_training=False")
        if out_grads is not None and not isinstance(out_grads, (list, tuple)):
            out_grads = [out_grads]
        for executor, ctx, part in zip(self.execs, self.contexts, self.slices):
            grads = None
            if out_grads is not None:
                grads = out_grads if len(self.execs) == 1 else [
                    nd.slice_axis(g, axis=axis, begin=part.start, end=part.stop)
                    .as_in_context(ctx) if axis >= 0 else g.as_in_context(ctx)
                    for g, axis in zip(out_grads, self.output_layouts)]
            executor.backward(out_grads=grads)

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The outputs: merged over the contexts, or one list per output of each context's."""
        parts = [[e.outputs[k] for e in self.execs] for k in range(len(self.output_names))]
        return merge(parts, self.output_layouts) if merge_multi_context else parts

    def get_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """``(name, shape)`` of each output for the whole batch."""
        shapes = []
        for name, out, axis in zip(self.output_names, self.execs[0].outputs,
                                   self.output_layouts):
            shape = list(out.shape)
            if axis >= 0 and self.batch_size is not None:
                shape[axis] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The gradients of the data inputs (``inputs_need_grad``), merged or per context."""
        parts = [[e.grad_arrays[k] for e in self.execs] for k in self._data_index]
        return merge(parts, self.data_layouts) if merge_multi_context else parts

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Add each context's outputs against its slice of ``labels`` to ``eval_metric``."""
        for k, (executor, part) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                sliced = labels[k]
            elif len(self.execs) == 1:
                sliced = labels
            else:
                sliced = [label[part] if axis == 0 else label if axis < 0 else
                          nd.slice_axis(label, axis=axis, begin=part.start, end=part.stop)
                          for label, axis in zip(labels, self.label_layouts)]
            eval_metric.update_dict(OrderedDict(zip(self.label_names, sliced)),
                                    OrderedDict(zip(self.output_names, executor.outputs)))

    def install_monitor(self, monitor: Any) -> None:
        """``monitor.install(executor)`` for every executor."""
        for executor in self.execs:
            monitor.install(executor)
