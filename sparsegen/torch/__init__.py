"""``sparsegen.torch``: torch optimizers on sparsegen's generated kernels (docs/torch.md).

They update parameters in place (no copy) from dense gradients or the sparse COO gradients of
``nn.Embedding(sparse=True)`` / ``nn.EmbeddingBag(sparse=True)``, coalesced on generated kernels,
and support ``state_dict`` / ``load_state_dict``, parameter groups and lr schedulers (they are
``torch.optim.Optimizer`` subclasses). ``TorchRuleOptimizer(params, rule, **hyper)`` runs any
update rule (sparsegen.updates; ``mx.optimizer.RuleOptimizer`` is its MXNet counterpart).
"""

from .coalesce import coalesce
from .optimizer import TorchRuleOptimizer
from .optimizers import SGD, Adagrad, Adam, AdamW, Ftrl, Lion, RowWiseAdagrad

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Ftrl", "Lion", "RowWiseAdagrad",
           "TorchRuleOptimizer", "coalesce"]
