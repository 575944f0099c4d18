"""The project's error and warning classes."""


class SparsegenError(Exception):
    """Every error sparsegen raises on bad input; ``MXNetError`` is its alias (MXNet code catches that)."""


MXNetError = SparsegenError


class StorageFallbackWarning(UserWarning):
    """An op ran its dense kernel on sparse inputs (MXNet logs this as a storage fallback)."""


class KernelCacheWarning(UserWarning):
    """A cached kernel failed its checks and was rebuilt, or the cache directory is not writable."""


class TargetWarning(UserWarning):
    """The compile target is weaker than the machine (for example LLVM reports a ``generic`` CPU)."""
