"""The project's error and warning classes."""


class SparsegenError(Exception):
    """Every error sparsegen raises on bad input; ``MXNetError`` is its alias (MXNet code catches that)."""


MXNetError = SparsegenError


class InvalidValue(SparsegenError, ValueError):
    """A bad argument value where MXNet raises ``ValueError`` (a shape that contradicts the
    source's): catchable as either."""


class InvalidType(SparsegenError, TypeError):
    """A bad argument type where MXNet raises ``TypeError`` (a float in a shape): catchable as
    either."""


class InvalidIndex(SparsegenError, IndexError):
    """A bad indexing key where MXNet raises ``IndexError`` (a boolean mask, a fractional id):
    catchable as either."""


class StorageFallbackWarning(UserWarning):
    """An op ran its dense kernel on sparse inputs (MXNet logs this as a storage fallback)."""


class KernelCacheWarning(UserWarning):
    """A cached kernel failed its checks and was rebuilt, or the cache directory is not writable."""


class TargetWarning(UserWarning):
    """The compile target is weaker than the machine (for example LLVM reports a ``generic`` CPU)."""


class NotSupported(SparsegenError, NotImplementedError):
    """A combination MXNet refuses with ``NotImplementedError`` (csr data in ``NDArrayIter``
    without ``last_batch_handle='discard'``): catchable as either."""


class InvalidState(SparsegenError, RuntimeError):
    """A call the object's state refuses where MXNet raises ``RuntimeError`` (setting a
    parameter that a distributed kvstore updates): catchable as either."""


class NotReady(SparsegenError, AssertionError):
    """A call before the step it needs (a Module used before ``bind`` or ``init_params``), where
    MXNet fails an ``assert``: catchable as either."""


class MissingValue(SparsegenError, RuntimeError):
    """A value the call needs was not given (a parameter absent from ``init_params``'
    ``arg_params`` without ``allow_missing``), where MXNet raises ``RuntimeError``."""


class InvalidCall(SparsegenError, AssertionError):
    """A call the object's configuration rules out, where MXNet fails an ``assert`` (a
    Trainer's ``update()`` when the kvstore runs the updates): catchable as either."""


class InvalidArgument(InvalidValue, AssertionError):
    """A bad argument value that MXNet refuses with a failed ``assert`` (a Parameter's
    ``stype``): catchable as ``ValueError``, ``AssertionError`` or ``MXNetError``."""
