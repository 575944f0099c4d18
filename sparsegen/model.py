"""``mx.model``: ``BatchEndParam`` and checkpoints in MXNet 1.9.1's files:
``prefix-symbol.json`` (the symbol's own ``save``) and ``prefix-%04d.params`` (arrays named
``arg:<name>`` / ``aux:<name>`` in MXNet's NDArray format, ``ndarray/persist.py``)."""

from __future__ import annotations

import logging
from collections import namedtuple
from typing import Any

from .context import cpu
from . import symbol as symbol_module
from .errors import InvalidType, InvalidValue
from .ndarray import NDArray
from .ndarray.persist import load, save
from .params import integer

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])
"""What a batch-end callback receives: epoch, batch number, the metric and the caller's locals."""


def _params_file(prefix: str, epoch: Any) -> str:
    if not isinstance(prefix, str):
        raise InvalidType(f"checkpoint: prefix must be a string, got {type(prefix).__name__}")
    return f"{prefix}-{integer(epoch, 'checkpoint: epoch'):04d}.params"


def _named(kind: str, params: Any) -> dict[str, NDArray]:
    """``params`` (a dict of name -> NDArray, or None) keyed ``kind:name``, on the CPU."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise InvalidType(f"save_checkpoint: {kind}_params must be a dict of name -> NDArray, "
                          f"got {type(params).__name__}")
    for name, array in params.items():
        if not isinstance(array, NDArray):
            raise InvalidType(f"save_checkpoint: {kind}_params[{name!r}] must be an NDArray, "
                              f"got {type(array).__name__}")
    return {f"{kind}:{name}": array.as_in_context(cpu()) for name, array in params.items()}


def save_checkpoint(prefix: str, epoch: int, symbol: Any, arg_params: dict[str, NDArray],
                    aux_params: dict[str, NDArray], remove_amp_cast: bool = True) -> None:
    """Write ``prefix-symbol.json`` (``symbol.save``, skipped when ``symbol`` is None) and
    ``prefix-%04d.params`` (``epoch``) with ``arg:`` / ``aux:`` keys, as MXNet's."""
    param_name = _params_file(prefix, epoch)
    _named("arg", arg_params), _named("aux", aux_params)  # checked before anything is written
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    write_params(param_name, arg_params, aux_params)
    logging.info('Saved checkpoint to "%s"', param_name)


def write_params(fname: str, arg_params: dict[str, NDArray], aux_params: dict[str, NDArray]
                 ) -> None:
    """Write the parameters to ``fname`` with ``arg:`` / ``aux:`` keys (MXNet's format)."""
    save(fname, {**_named("arg", arg_params), **_named("aux", aux_params)})


def load_params(prefix: str, epoch: int) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    return read_params(_params_file(prefix, epoch))


def read_params(param_name: str) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
    """``(arg_params, aux_params)`` from the file ``param_name`` (``arg:`` / ``aux:`` keys)."""
    arrays = load(param_name)
    if not isinstance(arrays, dict):
        if arrays:
            raise InvalidValue(f"load_params: {param_name} holds unnamed arrays, not a "
                               "checkpoint (arg:/aux: names)")
        logging.warning("Params file '%s' is empty", param_name)
        arrays = {}
    arg_params: dict[str, NDArray] = {}
    aux_params: dict[str, NDArray] = {}
    for key, array in arrays.items():
        kind, _, name = key.partition(":")
        {"arg": arg_params, "aux": aux_params}.get(kind, {})[name] = array
    return arg_params, aux_params


def load_checkpoint(prefix: str, epoch: int) -> tuple[Any, dict[str, NDArray],
                                                      dict[str, NDArray]]:
    """``(symbol, arg_params, aux_params)``: the symbol from ``prefix-symbol.json`` by
    ``mx.sym.load``, the parameters from ``prefix-%04d.params``."""
    symbol = symbol_module.load(f"{prefix}-symbol.json")
    return (symbol, *load_params(prefix, epoch))


__all__ = ["BatchEndParam", "load_checkpoint", "load_params", "read_params", "save_checkpoint",
           "write_params"]
