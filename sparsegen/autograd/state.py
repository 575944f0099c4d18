"""The ``with`` scopes of ``mx.autograd`` over the recording and training flags (``tape``)."""

from __future__ import annotations

from typing import Any

from ..tape import is_recording, is_training, set_recording, set_training

class _Scope:
    """A ``with`` block that sets the flags it is given and restores them on exit."""

    def __init__(self, recording: bool | None, training: bool | None) -> None:
        self._enter = (recording, training)
        self._saved: tuple[bool, bool] | None = None

    def __enter__(self) -> "_Scope":
        self._saved = (is_recording(), is_training())
        recording, training = self._enter
        if recording is not None:
            set_recording(recording)
        if training is not None:
            set_training(training)
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._saved is not None
        set_recording(self._saved[0])
        set_training(self._saved[1])


def record(train_mode: bool = True) -> _Scope:
    """``with autograd.record():`` records the ops run inside for ``backward`` (in training mode
    unless ``train_mode=False``)."""
    return _Scope(True, train_mode)


def pause(train_mode: bool = False) -> _Scope:
    """``with autograd.pause():`` runs ops unrecorded inside a ``record()`` block."""
    return _Scope(False, train_mode)


def train_mode() -> _Scope:
    """``with autograd.train_mode():`` training mode without changing recording."""
    return _Scope(None, True)


def predict_mode() -> _Scope:
    """``with autograd.predict_mode():`` inference mode without changing recording."""
    return _Scope(None, False)
