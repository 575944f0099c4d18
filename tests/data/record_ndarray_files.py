"""Record the NDArray files that tests/test_persist.py loads: files written by MXNet 1.9.1's
``mx.nd.save``, and the values they hold in a plain .npz (the test's oracle).

Run with MXNet 1.9.1 (not sparsegen), from the repository root:
    /work/mxvenv/bin/python tests/data/record_ndarray_files.py
"""

from __future__ import annotations

import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    """Write mxnet_dict.params, mxnet_list.params and mxnet_files.npz beside this script."""
    rng = np.random.default_rng(13)
    dense32 = rng.standard_normal((2, 3)).astype(np.float32)
    dense64 = rng.standard_normal((4,)).astype(np.float64)
    ints = np.array([[1, -2], [2**31 - 1, -2**31]], np.int32)
    rsp_dense = np.zeros((5, 3), np.float32)
    rsp_dense[[1, 4]] = rng.standard_normal((2, 3)).astype(np.float32)
    csr_dense = np.array([[0, 1.5, 0, 0], [0, 0, 0, 0], [2.5, 0, 0, -3]], np.float32)
    arrays = {
        "dense32": mx.nd.array(dense32),
        "dense64": mx.nd.array(dense64, dtype="float64"),
        "int32": mx.nd.array(ints, dtype="int32"),
        "rsp": mx.nd.array(rsp_dense).tostype("row_sparse"),
        "csr": mx.nd.array(csr_dense).tostype("csr"),
        "rsp_empty": mx.nd.sparse.zeros("row_sparse", (3, 2)),
    }
    mx.nd.save(os.path.join(HERE, "mxnet_dict.params"), arrays)
    listed = [
        mx.nd.array(np.arange(6).reshape(3, 2), dtype="int64"),
        mx.nd.array([1, 2, 255], dtype="uint8"),
        mx.nd.array([-1, 2], dtype="int8"),
        mx.nd.array([0.5, -2], dtype="float16"),
        mx.nd.array(csr_dense.astype(np.float64)).tostype("csr"),
    ]
    mx.nd.save(os.path.join(HERE, "mxnet_list.params"), listed)
    expected = {f"dict_{k}": v.asnumpy() for k, v in arrays.items()}
    expected.update({f"list_{i}": v.asnumpy() for i, v in enumerate(listed)})
    expected.update({f"dict_{k}_indices": arrays[k].indices.asnumpy() for k in ("rsp", "csr")})
    expected["dict_csr_indptr"] = arrays["csr"].indptr.asnumpy()
    np.savez(os.path.join(HERE, "mxnet_files.npz"), **expected)


if __name__ == "__main__":
    main()
