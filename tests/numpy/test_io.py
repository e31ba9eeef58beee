"""save/load round trips, fromstring/fromfunction, the printing helpers, and the names
JAX deliberately leaves unimplemented; plus the new dtype names."""
import io

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp


def test_save_load_round_trip():
    buf = io.BytesIO()
    x = jnp.arange(6.0).reshape(2, 3)
    jnp.save(buf, x)
    buf.seek(0)
    got = jnp.load(buf)
    assert isinstance(got, pyjax.Array) and got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(x))
    buf = io.BytesIO()
    jnp.savez(buf, a=x, b=np.arange(3))
    buf.seek(0)
    with jnp.load(buf) as archive:
        np.testing.assert_array_equal(archive["b"], np.arange(3))


def test_fromstring_and_fromfunction():
    np.testing.assert_array_equal(np.asarray(jnp.fromstring("1 2 3", sep=" ")), [1.0, 2, 3])
    want = np.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int)
    got = jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), want)
    # traced on scalars: Python control flow on shapes is fine, on values needs jnp.where
    got = jnp.fromfunction(lambda i: jnp.where(i > 1, i, -i), (4,))
    np.testing.assert_array_equal(np.asarray(got), [0.0, -1, 2, 3])
    with pytest.raises(NotImplementedError, match="np.fromfile"):
        jnp.fromfile("x")
    with pytest.raises(NotImplementedError, match="np.fromiter"):
        jnp.fromiter(iter([1]), float)


def test_printing():
    x = jnp.array([1 / 3, 2.0])
    assert jnp.array_str(x) == np.array_str(np.asarray(x))
    assert jnp.array_repr(x) == np.array_repr(np.asarray(x))
    with jnp.printoptions(precision=2):
        assert jnp.array_str(x) == "[0.33 2.  ]"
        assert jnp.get_printoptions()["precision"] == 2
    assert jnp.get_printoptions()["precision"] == 8


def test_new_dtype_names():
    for name in ["float6_e2m3fn", "float6_e3m2fn", "int1", "uint1"]:
        assert jnp.dtype(getattr(jnp, name)) == np.dtype(getattr(ml_dtypes, name))
    assert jnp.issubdtype(jnp.float6_e3m2fn, jnp.floating)
    assert jnp.issubdtype(jnp.uint1, jnp.unsignedinteger)
    assert jnp.iinfo(jnp.int1).min == -1
    with pytest.raises(jnp.TypePromotionError, match="1-, 2- and 4-bit"):
        jnp.promote_types(jnp.int1, jnp.int8)
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning
    assert jnp.iterable([1]) and not jnp.iterable(1)
