"""The op vocabularies (``sparsegen/opnames.py``): one list per op family, read by the registry,
the templates, the rules and the front end; the templates' element tables implement exactly
them."""

from sparsegen import opnames, registry

VOCABULARIES = {name: value for name, value in vars(opnames).items() if name.isupper()}


def test_each_vocabulary_is_a_tuple_of_distinct_names():
    assert set(VOCABULARIES) >= {"ELEMWISE_UNARY_SPARSE", "ELEMWISE_UNARY_DENSE",
                                 "ELEMWISE_UNARY_INTERNAL", "ELEMWISE_SCALAR_OPS",
                                 "SPARSE_UNION_OPS", "SPARSE_UPDATE_OPS", "COMPARE_OPS",
                                 "ARITH_BINARY_OPS", "ARITH_SCALAR_OPS", "STRIDED_BINARY_OPS"}
    for name, names in VOCABULARIES.items():
        assert isinstance(names, tuple) and all(isinstance(n, str) for n in names), name
        assert len(set(names)) == len(names), name
    sparse, dense = set(opnames.ELEMWISE_UNARY_SPARSE), set(opnames.ELEMWISE_UNARY_DENSE)
    assert not sparse & dense and not (sparse | dense) & set(opnames.ELEMWISE_UNARY_INTERNAL)


def _functions(kernel: str) -> list[str]:
    return [name for name, _ in registry.KERNELS[kernel].signatures]


def test_the_registry_derives_its_functions_from_the_vocabularies():
    assert _functions("ew_unary") == list(opnames.ELEMWISE_UNARY)
    assert [f for f in _functions("ew_dense") if f.endswith("_scalar")] == list(
        opnames.ELEMWISE_SCALAR_OPS)
    assert _functions("cmp_dense") == [*opnames.COMPARE_OPS,
                                       *(f"{op}_scalar" for op in opnames.COMPARE_OPS)]
    assert _functions("ew_arith")[:-1] == [*opnames.ARITH_BINARY_OPS, *opnames.ARITH_SCALAR_OPS]
    assert _functions("strided") == ["copy", *opnames.STRIDED_BINARY_OPS]
    for kernel in ("ew_rsp", "ew_csr"):
        fills = [f[5:] for f in _functions(kernel) if f.startswith("fill_")]
        assert fills[:len(opnames.SPARSE_UNION_OPS)] == list(opnames.SPARSE_UNION_OPS)
        updates = [f[7:] for f in _functions(kernel) if f.startswith("update_")]
        assert updates == list(opnames.SPARSE_UPDATE_OPS)
    assert set(opnames.SPARSE_UPDATE_OPS) <= set(opnames.SPARSE_UNION_OPS)


def test_the_templates_element_tables_implement_exactly_the_vocabularies():
    """Templates generate one function per vocabulary name, in its order, from their element
    expressions by name: a name without an expression, or an expression no name asks for, is
    a mistake caught here (before a build would raise a KeyError)."""
    from sparsegen.templates import compare, strided
    from sparsegen.templates.elemwise import arith, unary

    assert set(unary.FLOAT_UNARY) == set(opnames.ELEMWISE_UNARY)
    assert set(arith.SCALAR_OPS) == set(opnames.ELEMWISE_SCALAR_OPS)
    assert set(arith.MORE_BINARY) == set(opnames.ARITH_BINARY_OPS)
    assert set(arith.MORE_BINARY) >= set(opnames.SPARSE_UNION_OPS) - {"add", "sub"}
    assert set(arith.ARITH_SCALAR) == set(opnames.ARITH_SCALAR_OPS)
    assert set(compare._TESTS) == set(opnames.COMPARE_OPS)
    assert list(strided.BINARY) == list(opnames.STRIDED_BINARY_OPS)
