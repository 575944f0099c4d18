"""``mx.base``: the names MXNet code imports from ``mxnet.base`` (its error class, the default
element type, the number types its functions accept)."""

from __future__ import annotations

import numpy as np

from .errors import MXNetError

mx_real_t = np.float32
"""The default element type of new arrays, as MXNet's."""

numeric_types = (float, int, np.generic)
"""The scalar types MXNet's operators take as numbers."""

integer_types = (int, np.integer)
"""The integer types MXNet accepts where it needs an int."""

string_types = (str,)
"""The string types (MXNet's Python 2 compatibility name)."""

__all__ = ["MXNetError", "integer_types", "mx_real_t", "numeric_types", "string_types"]
