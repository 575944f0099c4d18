"""Storage-level ops: validated formats and numpy buffers in, generated kernels run, formats out.

This layer knows nothing of NDArray classes; the front end (``sparsegen.ndarray``) calls it.
"""
