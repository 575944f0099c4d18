"""Elementwise kernel templates, one module per operand kind.

- ``arith``: the scalar arithmetic every template uses (binary ops, ``x <op> 0``, clip, scalar
  ops, the non-finite test), following MXNet 1.9.1's dtype rules;
- ``unary``: unary math (``FLOAT_UNARY``) and its flat maps (kernel ``ew_unary``);
- ``dense``: flat maps over dense buffers or stored values (kernel ``ew_dense``);
- ``merge``: phase 1 of sparse (op) sparse, the merged index sets (kernel ``ew_index``);
- ``row_sparse``, ``csr``: phase 2, the values of row_sparse and csr results (``ew_rsp``,
  ``ew_csr``), and sparse-with-dense updates and products.
"""
