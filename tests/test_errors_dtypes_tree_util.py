"""The rest of ``pyjax.errors``, ``pyjax.dtypes`` and ``pyjax.tree_util`` (issue 16, item 6)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import dtypes, errors, random, tree_util


def test_error_classes():
    assert issubclass(errors.JAXIndexError, IndexError)
    assert issubclass(errors.NonConcreteBooleanIndexError, errors.JAXIndexError)
    assert issubclass(errors.JaxprTypeError, TypeError)
    assert issubclass(errors.InconclusiveDimensionOperation, Exception)
    with pytest.raises(errors.JAXIndexError):
        pyjax.jit(lambda x, m: x[m])(jnp.ones(3), jnp.array([True, False, True]))


def test_jaxpr_type_error_is_what_the_checker_raises():
    from pyjax._src.core import jaxpr as jaxpr_mod
    assert jaxpr_mod.JaxprTypeError is errors.JaxprTypeError


def test_extended_and_prng_key_dtypes():
    k = random.key(0)
    assert jnp.issubdtype(k.dtype, dtypes.prng_key)
    assert jnp.issubdtype(k.dtype, dtypes.extended)
    assert not jnp.issubdtype(k.dtype, jnp.floating)
    assert not jnp.issubdtype(jnp.float32, dtypes.prng_key)
    assert not jnp.issubdtype(np.dtype(np.int32), dtypes.extended)
    assert dtypes.issubdtype(dtypes.prng_key, dtypes.extended)


def test_itemsize_bits_and_scalar_type_of():
    assert dtypes.itemsize_bits(jnp.int4) == 4
    assert dtypes.itemsize_bits(np.bool_) == 8
    assert dtypes.itemsize_bits(jnp.bfloat16) == 16
    assert dtypes.itemsize_bits(np.float64) == 64
    assert dtypes.itemsize_bits(random.key(0).dtype) == 64
    with pytest.raises(ValueError):
        dtypes.itemsize_bits(None)
    assert dtypes.scalar_type_of(jnp.ones(2, jnp.uint8)) is int
    assert dtypes.scalar_type_of(jnp.bfloat16(1)) is float
    assert dtypes.scalar_type_of(True) is bool
    assert dtypes.scalar_type_of(jnp.array(1j)) is complex


def test_default_registry():
    reg = tree_util.default_registry
    leaves, tree = reg.flatten({"a": 1, "b": (2, None, 3)})
    assert leaves == [1, 2, 3]
    assert tree == tree_util.tree_structure({"a": 0, "b": (0, None, 0)})
    leaves, _ = reg.flatten([1, (2, 3)], leaf_predicate=lambda x: isinstance(x, tuple))
    assert leaves == [1, (2, 3)]
    assert reg.flatten_one_level(5) is None
    children, _ = reg.flatten_one_level((7, 8))
    assert list(children) == [7, 8]

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    reg.register_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    assert tree_util.tree_leaves(Pair(1, [2])) == [1, 2]
