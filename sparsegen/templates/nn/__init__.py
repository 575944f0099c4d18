"""Templates of the neural-network and indexing ops of ``mx.nd``: dtype casts (``astype``), gathers
by id (``gather``: take, pick, gather_nd, scatter_nd, one_hot, Embedding, csr take), maps over
lines of an axis (``lines``: softmax, log_softmax, Activation's softrelu / softsign,
FullyConnected's bias) and sorts along an axis (``sort``: sort, argsort, topk).

An axis is addressed as a ``(pre, n, post)`` view of a C-contiguous array: ``pre`` the product
of the dimensions before it, ``n`` its length, ``post`` the product of those after it.
"""
