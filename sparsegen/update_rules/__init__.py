"""Update rules, the one definition of an optimizer: the rule language (``language``: a row-wise
update written as a Python function of one element, traced into an expression graph) and the
built-in rules (``builtin``). Free of TVM and of the front ends, below the kernel registry,
which derives each rule's kernel and op from it (``registry.add_update_rule``)."""
