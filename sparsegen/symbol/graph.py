"""The graph under ``mx.sym``: nodes (an op, a name, MXNet's string attributes, inputs as
``(node, output index)``); a variable is a node whose op is ``"null"``."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from .. import operator

VARIABLE = "null"
"""The op of a variable node, as MXNet's JSON writes it."""

DTYPE_IDS = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
             "int64": 6, "bool": 7}
"""MXNet's dtype codes (a variable's ``__dtype__`` attribute)."""

STYPE_IDS = {"default": 0, "row_sparse": 1, "csr": 2}
"""MXNet's storage-type codes (a variable's ``__storage_type__`` attribute)."""

HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
"""Attributes MXNet also lists without their double underscores (``__lr_mult__`` and
``lr_mult``)."""


BATCH_NORMS = ("BatchNorm", "BatchNorm_v1", "_contrib_BatchNormWithReLU", "_contrib_SyncBatchNorm")
"""BatchNorm and its variants: the same inputs (two of them auxiliary states) and outputs."""

FIXED_OUTPUTS = {**{op: ("output", "mean", "var") for op in BATCH_NORMS},
                 "Dropout": ("output", "mask"), "_contrib_hawkesll": ("output", "out_state")}
"""The output names of ops with a fixed list of several outputs (some hidden: see
``visible_outputs``)."""


CACHED_OP = "_CachedOp"
"""The op of a node that runs a graph of its own (``subgraphs``): MXNet's cached op, a
hybridized Gluon block's call as ``autograd.get_symbol`` finds it."""


@dataclass(frozen=True, eq=False)
class Node:
    """One op of a graph (or a variable: op ``"null"``), compared by identity."""

    op: str
    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    inputs: tuple[tuple["Node", int], ...] = ()
    subgraphs: tuple[object, ...] = ()  # a ``_CachedOp``'s graph (a Symbol), which it runs

    @property
    def is_variable(self) -> bool:
        """Whether the node is a variable (an argument of the graph)."""
        return self.op == VARIABLE


Entry = tuple[Node, int]
"""One output of a node: the node and the output's index."""


def topological(heads: tuple[Entry, ...]) -> list[Node]:
    """Every node ``heads`` reach, inputs before users, in MXNet's depth-first order."""
    order: list[Node] = []
    seen: set[int] = set()
    for head, _ in heads:
        stack: list[tuple[Node, int]] = [(head, 0)]
        while stack:
            node, position = stack.pop()
            if position == 0 and id(node) in seen:
                continue
            if position < len(node.inputs):
                stack.append((node, position + 1))
                child = node.inputs[position][0]
                if id(child) not in seen:
                    stack.append((child, 0))
                continue
            if id(node) not in seen:
                seen.add(id(node))
                order.append(node)
    return order


COUNTED_OUTPUTS = {
    "amp_multicast": "num_outputs", "_multi_lamb_update": "num_tensors",
    "_multi_mp_lamb_update": "num_tensors",
    **{op: "num_weights" for op in (
        "multi_sgd_update", "multi_sgd_mom_update", "multi_mp_sgd_update",
        "multi_mp_sgd_mom_update", "preloaded_multi_sgd_update", "preloaded_multi_sgd_mom_update",
        "preloaded_multi_mp_sgd_update", "preloaded_multi_mp_sgd_mom_update",
        "_multi_adamw_update", "_multi_mp_adamw_update")},
}
"""Ops with one output per weight (or input): the parameter that counts them."""

DGL_OUTPUTS = {"_contrib_dgl_subgraph": (1, 1), "_contrib_dgl_graph_compact": (1, 0),
               "_contrib_dgl_csr_neighbor_uniform_sample": (3, 1),
               "_contrib_dgl_csr_neighbor_non_uniform_sample": (4, 2)}
"""MXNet's DGL ops: (outputs per vertex set, leading inputs that are no vertex set; 0: the
inputs are graphs then as many vertex sets), doubled by ``return_mapping``."""


def _counts(node: Node) -> tuple[int, int]:
    """(outputs, visible outputs) of an op node, as MXNet's ``NumOutputs`` /
    ``NumVisibleOutputs``."""
    p = params(node)
    if node.op == "SliceChannel":
        return int(p.get("num_outputs", 1)), int(p.get("num_outputs", 1))
    if node.op in COUNTED_OUTPUTS:
        count = int(p.get(COUNTED_OUTPUTS[node.op], 1))
        return count, count
    if node.op == "topk":
        ret_typ = p.get("ret_typ", "indices")
        return (2 if ret_typ in ("value", "both") else 1), (2 if ret_typ == "both" else 1)
    if node.op in BATCH_NORMS:
        return 3, 3 if p.get("output_mean_var") else 1
    if node.op == "RNN":  # the output; with state_outputs the states (lstm: and cells)
        count = (3 if p.get("mode") == "lstm" else 2) if p.get("state_outputs") else 1
        return count, count
    if node.op in ("LayerNorm", "GroupNorm") and p.get("output_mean_var"):
        return 3, 3  # the output, the mean and the standard deviation
    if node.op == "split_v2":  # equal sections, or the parts between the indices
        cut = p.get("indices_or_sections", 1)
        count = len(cut) + 1 if isinstance(cut, (tuple, list)) else int(cut)
        return count, count
    if node.op == CACHED_OP and node.subgraphs:  # the outputs of the graph it runs
        count = len(getattr(node.subgraphs[0], "_outputs"))
        return count, count
    if node.op in ("moments", "_histogram"):  # two arrays: mean and variance, counts and edges
        return 2, 2
    if node.op == "multinomial":  # the ids, and with get_prob their log-probabilities
        return (2, 2) if p.get("get_prob") else (1, 1)
    if node.op in ("_linalg_slogdet", "_linalg_gelqf", "_linalg_syevd"):  # sign and log |det|,
        return 2, 2  # Q and L, U and the eigenvalues
    if node.op == "_contrib_hawkesll":  # the log-likelihood and the states
        return 2, 2
    if node.op in DGL_OUTPUTS:  # per graph or seed array: the arrays each gives
        per, skip = DGL_OUTPUTS[node.op]
        count = (len(node.inputs) - skip) // (2 if skip == 0 else 1) * per
        mapped = node.op in ("_contrib_dgl_subgraph", "_contrib_dgl_graph_compact")
        count = count * 2 if mapped and p.get("return_mapping") else count
        return count, count
    return (2, 1) if node.op in ("sort", "Dropout") else (1, 1)


def output_names(node: Node) -> list[str]:
    """The names of every output of ``node`` (``output``, ``output0`` ..., BatchNorm's
    ``output``, ``mean``, ``var``, a custom op's ``list_outputs``), as MXNet lists them."""
    if node.is_variable:
        return [node.name]
    if node.op == "Custom":
        kwargs = dict(strings(node))
        return list(operator.prop(kwargs.pop("op_type"), kwargs).list_outputs())
    if node.op in FIXED_OUTPUTS:
        return list(FIXED_OUTPUTS[node.op])
    if node.op == "RNN":  # as many as state_outputs and the mode give
        return ["output", "state_output", "statecell_output"][:_counts(node)[0]]
    count = _counts(node)[0]
    return ["output"] if count == 1 and node.op != "SliceChannel" else [
        f"output{i}" for i in range(count)]


def visible_outputs(node: Node) -> list[Entry]:
    """The outputs of ``node`` that a symbol of it holds (BatchNorm's output alone unless
    ``output_mean_var``; Dropout's output, not its mask)."""
    count = len(output_names(node)) if node.is_variable or node.op == "Custom" else \
        _counts(node)[1]
    return [(node, i) for i in range(count)]


def entry_name(entry: Entry) -> str:
    """The name of one output: a variable's own, else ``<node name>_<output name>``."""
    node, index = entry
    return node.name if node.is_variable else f"{node.name}_{output_names(node)[index]}"


def mutable_inputs(node: Node) -> tuple[int, ...]:
    """The positions of ``node``'s inputs that its op updates (auxiliary states: BatchNorm's
    moving_mean and moving_var, IdentityAttachKLSparseReg's moving_avg, a custom op's
    ``list_auxiliary_states``)."""
    if node.op in BATCH_NORMS:
        return (3, 4)
    if node.op == "IdentityAttachKLSparseReg":
        return (1,)
    if node.op == "Custom":
        kwargs = dict(strings(node))
        made = operator.prop(kwargs.pop("op_type"), kwargs)
        start = len(made.list_arguments())
        return tuple(range(start, start + len(made.list_auxiliary_states())))
    return ()


def auxiliary(heads: tuple[Entry, ...]) -> set[int]:
    """The ``id`` of every variable that an op of the graph updates (an auxiliary state)."""
    return {id(node.inputs[i][0]) for node in topological(heads) for i in mutable_inputs(node)
            if i < len(node.inputs)}


def dtype_name(code: str) -> str:
    """The numpy name of MXNet's dtype code ``code`` (a string, as an attribute holds it)."""
    for name, value in DTYPE_IDS.items():
        if str(value) == code:
            return name
    return np.dtype(code).name


def stype_name(code: str) -> str:
    """The storage-type name of MXNet's code ``code``."""
    for name, value in STYPE_IDS.items():
        if str(value) == code:
            return name
    return code


def parse_attr(value: str) -> object:
    """An attribute string as the Python value it writes (``'True'``, ``'(2, 3)'``, ``'0.5'``);
    a string that is no literal (``'relu'``) stays a string."""
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def strings(node: Node) -> dict[str, str]:
    """A node's attributes that are op parameters (not ``__key__`` or scope keys), as strings."""
    return {key: value for key, value in node.attrs.items()
            if not key.startswith("__") and key not in HIDDEN_KEYS}


def params(node: Node) -> dict[str, object]:
    """A node's op parameters, parsed (``'True'`` -> True, ``'(2, 3)'`` -> (2, 3))."""
    return {key: parse_attr(value) for key, value in strings(node).items()}
