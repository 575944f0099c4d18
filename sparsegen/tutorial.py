"""The MXNet row_sparse tutorial as runnable steps: ``sparsegen demo`` and docs/tutorial.md use them."""

from __future__ import annotations

import contextlib
import io
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    """One tutorial cell: its section, an explanation, the code, and the expression it shows."""

    section: str
    text: str
    code: str
    show: str


STEPS: tuple[Step, ...] = (
    Step(
        "Motivation",
        "Y = X W, and the gradient of Y with respect to W.",
        """
        import sparsegen as mx
        X = mx.nd.array([[1, 0]])
        W = mx.nd.array([[3, 4, 5], [6, 7, 8]])
        Y = mx.nd.dot(X, W)
        """,
        "{'X': X, 'W': W, 'Y': Y}",
    ),
    Step(
        "Motivation",
        "grad_W = Xᵀ · ones: row 1 is all zeros because column 1 of X is.",
        """
        grad_W = mx.nd.dot(X, mx.nd.ones_like(Y), transpose_a=True)
        """,
        "grad_W",
    ),
    Step(
        "Row Sparse Format",
        "A RowSparseNDArray keeps the non-zero rows (`data`) and their ids (`indices`).",
        """
        import numpy as np
        import sparsegen as mx
        dense = np.array([[1, 2, 3], [0, 0, 0], [4, 0, 5], [0, 0, 0], [0, 0, 0]])
        rsp = mx.nd.sparse.row_sparse_array(dense)
        """,
        "{'data': rsp.data.asnumpy(), 'indices': rsp.indices.asnumpy()}",
    ),
    Step(
        "Array Creation",
        "From (data, indices) as Python lists or numpy arrays.",
        """
        shape = (6, 2)
        a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=shape)
        b = mx.nd.sparse.row_sparse_array((np.array([[1, 2], [3, 4]]), np.array([1, 4])), shape=shape)
        """,
        "{'a': a, 'b': b}",
    ),
    Step(
        "Setting Type",
        "Lists give float32; `dtype=` chooses another element type.",
        """
        c = mx.nd.sparse.array(a)
        d = mx.nd.array(a, dtype=np.float16)
        """,
        "(c.dtype, d.dtype)",
    ),
    Step("Inspecting Arrays", "`asnumpy` fills a dense numpy array.", "", "a.asnumpy()"),
    Step(
        "Inspecting Arrays",
        "The internal storage: `data` and `indices`.",
        """
        data = a.data
        indices = a.indices
        """,
        "{'a.stype': a.stype, 'data': data, 'indices': indices}",
    ),
    Step(
        "Storage Type Conversion",
        "`tostype` converts between dense and row_sparse.",
        """
        ones = mx.nd.ones((2, 2))
        rsp = ones.tostype('row_sparse')
        dense = rsp.tostype('default')
        """,
        "{'rsp': rsp, 'dense': dense}",
    ),
    Step(
        "Storage Type Conversion",
        "`cast_storage` does the same.",
        """
        rsp = mx.nd.sparse.cast_storage(ones, 'row_sparse')
        dense = mx.nd.sparse.cast_storage(rsp, 'default')
        """,
        "{'rsp': rsp, 'dense': dense}",
    ),
    Step(
        "Copies",
        "`copy` makes a new array; `copyto` and `[:]` copy into an existing one.",
        """
        a = mx.nd.ones((2, 2)).tostype('row_sparse')
        b = a.copy()
        c = mx.nd.sparse.zeros('row_sparse', (2, 2))
        c[:] = a
        d = mx.nd.sparse.zeros('row_sparse', (2, 2))
        a.copyto(d)
        """,
        "{'b is a': b is a, 'b.asnumpy()': b.asnumpy(), 'c.asnumpy()': c.asnumpy(), "
        "'d.asnumpy()': d.asnumpy()}",
    ),
    Step(
        "Copies",
        "The destination keeps its storage type; the source is converted first.",
        """
        e = mx.nd.sparse.zeros('row_sparse', (2, 2))
        f = mx.nd.sparse.zeros('row_sparse', (2, 2))
        g = mx.nd.ones(e.shape)
        e[:] = g
        g.copyto(f)
        """,
        "{'e.stype': e.stype, 'f.stype': f.stype, 'g.stype': g.stype}",
    ),
    Step(
        "Retain Row Slices",
        "`retain` keeps the requested row ids; ids that are not stored become zero rows.",
        """
        rsp = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4], [5, 6]], [0, 2, 3]), shape=(5, 2))
        rsp_retained = mx.nd.sparse.retain(rsp, mx.nd.array([0, 1]))
        """,
        "{'rsp.asnumpy()': rsp.asnumpy(), 'rsp_retained': rsp_retained, "
        "'rsp_retained.asnumpy()': rsp_retained.asnumpy()}",
    ),
    Step(
        "Sparse Operators and Storage Type Inference",
        "dot(csrᵀ, dense) infers a row_sparse output.",
        """
        lhs = mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
        rhs = mx.nd.ones((3, 2))
        transpose_dot = mx.nd.sparse.dot(lhs, rhs, transpose_a=True)
        """,
        "{'transpose_dot': transpose_dot, 'transpose_dot.asnumpy()': transpose_dot.asnumpy()}",
    ),
    Step(
        "Sparse Operators and Storage Type Inference",
        "Zero times 2 is zero, so `a * 2` stays row_sparse; adding a dense array gives dense.",
        """
        a = transpose_dot.copy()
        b = a * 2
        c = a + mx.nd.ones((5, 2))
        """,
        "{'b.stype': b.stype, 'c.stype': c.stype}",
    ),
    Step(
        "Sparse Operators and Storage Type Inference",
        "An op without a sparse kernel falls back to dense with a StorageFallbackWarning; an "
        "`out=` array keeps its storage type.",
        """
        e = mx.nd.sparse.zeros('row_sparse', a.shape)
        d = mx.nd.log(a)
        e = mx.nd.log(a, out=e)
        """,
        "{'a.stype': a.stype, 'd.stype': d.stype, 'e.stype': e.stype}",
    ),
    Step(
        "Sparse Optimizers",
        "SGD with momentum on a row_sparse gradient updates only the rows in grad.indices.",
        """
        weight = mx.nd.ones((4, 2)).tostype('row_sparse')
        grad = mx.nd.sparse.row_sparse_array(([[1, 2], [4, 5]], [1, 2]), shape=(4, 2))
        sgd = mx.optimizer.SGD(learning_rate=0.01, momentum=0.01)
        momentum = sgd.create_state(0, weight)
        sgd.update(0, weight, grad, momentum)
        """,
        "{'weight.asnumpy()': weight.asnumpy(), 'momentum.asnumpy()': momentum.asnumpy()}",
    ),
    Step(
        "CSRNDArray",
        "The CSR counterpart: (data, indices, indptr), scipy interop and row slices.",
        """
        csr = mx.nd.sparse.csr_matrix(([7, 8, 9], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
        """,
        "{'csr': csr, 'dense': csr.asnumpy(), 'indptr': csr.indptr.asnumpy(), "
        "'rows 1:3': csr[1:3].asnumpy(), 'scipy nnz': csr.asscipy().nnz}",
    ),
    Step(
        "GPU Support",
        "`ctx=mx.gpu()` keeps an array in GPU memory, where every op and optimizer update runs "
        "the CUDA kernels; `as_in_context` copies between devices. Without a GPU, `mx.gpu()` "
        "raises `mx.MXNetError` saying why, so this cell falls back to the CPU.",
        """
        ctx = mx.gpu() if mx.context.num_gpus() > 0 else mx.cpu()
        w = mx.nd.sparse.row_sparse_array(([[1., 2.]], [3]), shape=(5, 2), ctx=ctx)
        back = (w * 2).as_in_context(mx.cpu())
        """,
        "{'back': back, 'indices': back.indices.asnumpy(), 'data': back.data.asnumpy()}",
    ),
)
"""The tutorial's cells in order; every value they show comes from generated kernels."""


def run(steps: tuple[Step, ...] = STEPS) -> list[tuple[Step, str]]:
    """Run every step in one namespace; returns each step with the text its expression prints.

    Storage fallback warnings go to stderr, as MXNet's log lines do; they are not part of what
    a step shows.
    """
    namespace: dict[str, object] = {}
    shown = []
    for step in steps:
        exec(textwrap.dedent(step.code), namespace)  # noqa: S102 - the tutorial's own code
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            print(eval(step.show, namespace))  # noqa: S307 - the tutorial's own expression
        shown.append((step, buffer.getvalue().rstrip()))
    return shown


def markdown(results: list[tuple[Step, str]]) -> str:
    """docs/tutorial.md: every section with its code and what it printed."""
    lines = [
        "# The row_sparse tutorial on sparsegen",
        "",
        "MXNet's RowSparseNDArray tutorial, run with `import sparsegen as mx`. Every value below",
        "was computed by generated kernels; `sparsegen demo` prints the same. This file is",
        "generated by `python -m sparsegen.tutorial` and a test checks that it is current.",
        "",
    ]
    section = None
    for step, printed in results:
        if step.section != section:
            section = step.section
            lines += [f"## {section}", ""]
        code = textwrap.dedent(step.code).strip()
        lines += [step.text, "", "```python"]
        lines += ([code] if code else []) + [step.show, "```", "", "```text", printed, "```", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(run()), end="")
