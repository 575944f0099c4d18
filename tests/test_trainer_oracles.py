"""gluon.Trainer.step against hand-computed numpy updates over three steps
(tests/fixtures/trainer_oracles.py): SGD (momentum, wd, clip_gradient) and Adam, lazy and
standard, for a dense gradient (``Embedding``), a row_sparse gradient of a dense weight
(``Embedding(sparse_grad=True)``) and a row_sparse weight (``contrib.nn.SparseEmbedding``), with
``rescale_grad = scale / batch_size``. tests/fixtures/check_trainer_oracles.py runs the same
steps on MXNet 1.9.1 against the same oracles.

What tests/test_gluon_trainer.py has already (one SGD step with wd, two dense Adam steps, one
lazy SGD step, dense versus sparse curves) is not repeated here.
"""

import numpy as np
import pytest

import sparsegen as mx
from fixtures.trainer_oracles import ADAM, KINDS, OPTIONS, SGD, W0, adam_oracle, check, sgd_oracle

# SparseEmbedding's lookup of a row_sparse weight falls back to dense (docs/mxnet-differences.md)
pytestmark = pytest.mark.filterwarnings("ignore::sparsegen.errors.StorageFallbackWarning")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("optimizer", OPTIONS)
@pytest.mark.parametrize("lazy_update", [True, False])
def test_step_equals_the_hand_computed_update(kind, optimizer, lazy_update):
    got, want = check(mx, kind, optimizer, lazy_update)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_lazy_and_standard_updates_differ_on_absent_rows():
    """The grid above can tell lazy from standard: row 4 (never looked up) moves only in the
    standard update (weight decay, momentum, Adam's moving averages of g + wd * w)."""
    for oracle, options in ((sgd_oracle, SGD), (adam_oracle, ADAM)):
        lazy, standard = oracle(options, True), oracle(options, False)
        np.testing.assert_array_equal(lazy[4], W0[4])
        assert not np.allclose(standard[4], W0[4])
