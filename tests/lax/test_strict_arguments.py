"""lax does not promote, and its out-of-bounds defaults are JAX's.

- ``lax.gather``'s default mode is ``promise_in_bounds`` (XLA clamps); the scatters' default
  drops out-of-bounds updates; jnp indexing and ``.at[].get()`` clamp; ``jnp.take`` fills.
- ``lax.integer_pow`` takes an integer exponent only.
- lax's binary functions need equal dtypes: Python scalars are weakly typed, but mixing an int
  and a float scalar, or a Python scalar that would lose its value, is a TypeError.
"""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax

DN = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
SDN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                  scatter_dims_to_operand_dims=(0,))


def test_lax_gather_default_clamps():
    x = jnp.arange(5.)
    np.testing.assert_array_equal(np.asarray(lax.gather(x, jnp.array([[7]]), DN, (1,))), [4.])
    np.testing.assert_array_equal(
        np.asarray(pyjax.jit(lambda a, i: lax.gather(a, i, DN, (1,)))(x, jnp.array([[-3], [2]]))),
        [0., 2.])
    # mode="fill" still fills
    np.testing.assert_array_equal(
        np.asarray(lax.gather(x, jnp.array([[7]]), DN, (1,), mode="fill")), [np.nan])


def test_lax_scatter_defaults_drop():
    x = jnp.zeros(4)
    idx = jnp.array([[1], [9]])
    for f in (lax.scatter, lax.scatter_add, lax.scatter_mul, lax.scatter_min, lax.scatter_max):
        got = np.asarray(f(x, idx, jnp.array([5., 7.]), SDN))
        want = {lax.scatter: [0, 5, 0, 0], lax.scatter_add: [0, 5, 0, 0],
                lax.scatter_mul: [0, 0, 0, 0], lax.scatter_min: [0, 0, 0, 0],
                lax.scatter_max: [0, 5, 0, 0]}[f]
        np.testing.assert_array_equal(got, want)


def test_jnp_indexing_defaults():
    x = jnp.arange(5.)
    assert float(x[jnp.array(7)]) == 4.  # retrieval clamps
    np.testing.assert_array_equal(np.asarray(x[jnp.array([7, -9])]), [4., 0.])
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([7])].get()), [4.])
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([7])].get(mode="fill")), [np.nan])
    np.testing.assert_array_equal(np.asarray(jnp.take(x, jnp.array([7]))), [np.nan])
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([7])].set(9.)), np.arange(5.))


@pytest.mark.parametrize("y", [1.5, 2.0, "2", None])
def test_integer_pow_needs_an_integer(y):
    with pytest.raises(TypeError, match="integer"):
        lax.integer_pow(jnp.arange(3.), y)


def test_integer_pow_accepts_integers():
    np.testing.assert_array_equal(np.asarray(lax.integer_pow(jnp.arange(3.), np.int64(3))),
                                  [0., 1., 8.])


def test_mixed_python_scalars_raise():
    with pytest.raises(TypeError, match="lax.add requires arguments to have the same dtypes, "
                                        "got int32, float32"):
        lax.add(1, 1.0)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.mul(2.0, 1j)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.max(jnp.asarray(1), 2.0)  # a weak int array and a float scalar


@pytest.mark.parametrize("fn", [lax.add, lax.sub, lax.mul, lax.div, lax.max, lax.min, lax.rem])
def test_python_scalar_that_would_lose_its_value_raises(fn):
    x = jnp.arange(3, dtype=np.int32)
    with pytest.raises(TypeError, match="same dtypes, got int32, float32"):
        fn(x, 1.5)
    with pytest.raises(TypeError, match="same dtypes"):
        fn(1.5, x)
    with pytest.raises(TypeError, match="same dtypes"):
        fn(jnp.arange(3.), 1j)


def test_weak_python_scalars_are_accepted():
    x = jnp.arange(3.)
    np.testing.assert_array_equal(np.asarray(lax.add(x, 1.0)), [1., 2., 3.])
    assert int(lax.add(1, 1)) == 2
    assert float(lax.mul(2.0, 1.5)) == 3.0
    h = jnp.arange(3, dtype=np.float16)
    out = lax.mul(h, 2.0)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])
    with pytest.raises(TypeError, match="same dtypes"):
        lax.add(h, jnp.arange(3, dtype=np.float32))  # strong dtypes never mix


def test_pad_value_dtype():
    x = jnp.arange(3, dtype=np.int32)
    with pytest.raises(TypeError, match="int32, float32"):
        lax.pad(x, 0.5, [(1, 1, 0)])
    with pytest.raises(TypeError, match="same dtype"):
        lax.pad(jnp.arange(3.), np.int32(0), [(1, 1, 0)])
    np.testing.assert_array_equal(np.asarray(lax.pad(x, -1, [(1, 1, 0)])), [-1, 0, 1, 2, -1])
    with pytest.raises(TypeError, match="float32"):
        lax.dynamic_update_slice(x, 1.5, (0,))
