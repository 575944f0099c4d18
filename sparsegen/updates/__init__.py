"""User-written update rules compiled to fused kernels (docs/rules.md).

An update rule is a Python function of one element of the weight, its states, the gradient and
scalar hyper-parameters (plus per-row reductions and row states) returning the new weight and
states; sparsegen traces it once and generates its ``lazy`` / ``std`` / ``dense`` kernels for
CPU and CUDA with the project's schedules, knob spaces, tuner, cache and export, as for the
built-in optimizers (which are rules written the same way, update_rules/builtin.py)::

    import sparsegen as mx

    @mx.updates.update_rule(states=("mom",), hyper=("lr", "beta1", "beta2", "wd"))
    def my_lion(x, h, g, f):
        \"\"\"Lion: the sign of an interpolated momentum.\"\"\"
        step = f.sign(h.beta1 * x.mom + (f.one - h.beta1) * g)
        return x.weight - h.lr * (step + h.wd * x.weight), h.beta2 * x.mom + (f.one - h.beta2) * g

    K = mx.updates.kernel(my_lion, "float32")       # sparsegen.kernels: numpy / torch arrays
    K.lazy(weight, grad_data, grad_indices, mom, 1e-4, 0.9, 0.99, 0.0)

A rule that cannot compile is refused at definition with ``UpdateRuleError`` pointing at the
offending line of the function.
"""

from ..update_rules.language import UpdateRule, UpdateRuleError
from .define import define_update, get_rule, kernel, register, update_rule
from .elementwise import elementwise
from .library import adamw, lamb_rows, lion, rowwise_adagrad, torch_adagrad, torch_sgd_momentum

__all__ = ["UpdateRule", "UpdateRuleError", "adamw", "define_update", "elementwise", "get_rule",
           "kernel", "lamb_rows", "lion", "register", "rowwise_adagrad", "torch_adagrad",
           "torch_sgd_momentum", "update_rule"]
