"""`str`/`repr` of `jax.typeof(x)` spell the dtype in full, as JAX's `ShapedArray` does;
Jaxprs keep the short form."""
import numpy as np

import pyjax
import pyjax.numpy as jnp


def test_typeof_str_and_repr_use_full_dtype_names():
    t = pyjax.typeof(jnp.ones((3, 4)))
    assert str(t) == "float32[3,4]" and repr(t) == "ShapedArray(float32[3,4])"
    assert t.str_short() == "f32[3,4]" and t.str_short(short_dtypes=False) == "float32[3,4]"
    assert str(pyjax.typeof(jnp.ones(2, jnp.int32))) == "int32[2]"
    assert str(pyjax.typeof(jnp.ones(2, bool))) == "bool[2]"
    assert str(pyjax.typeof(jnp.ones(2, jnp.bfloat16))) == "bfloat16[2]"


def test_weak_type_marks():
    t = pyjax.typeof(2.0)
    assert str(t) == "~float32[]" and repr(t) == "ShapedArray(float32[], weak_type=True)"
    assert str(pyjax.typeof(np.float32(2))) == "float32[]"


def test_keys_and_jaxprs():
    t = pyjax.typeof(pyjax.random.key(0))
    assert str(t) == "key<fry>[]" and repr(t) == "ShapedArray(key<fry>[])"
    jaxpr = str(pyjax.make_jaxpr(lambda a: a * 2)(jnp.ones(3)))
    assert "a:f32[3]" in jaxpr and "float32" not in jaxpr
