"""The sparsegen version string (part of every kernel cache key)."""

__version__ = "0.1.0"
