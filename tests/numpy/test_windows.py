"""Window functions and i0 against NumPy/SciPy; grad(i0) against scipy's i1."""
import numpy as np
import pytest
import scipy.special

import pyjax
import pyjax.numpy as jnp


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name):
    for M in [0, 1, 2, 7]:
        got = getattr(jnp, name)(M)
        assert got.dtype == np.float32 and got.shape == (max(M, 0),)
        np.testing.assert_allclose(np.asarray(got), getattr(np, name)(M), atol=1e-6)
    with pytest.raises(TypeError, match="static integer"):
        getattr(jnp, name)(2.5)


def test_kaiser_and_traced_beta():
    np.testing.assert_allclose(np.asarray(jnp.kaiser(9, 5.0)), np.kaiser(9, 5.0), rtol=1e-6)
    f = pyjax.jit(lambda b: jnp.kaiser(6, b))
    np.testing.assert_allclose(np.asarray(f(2.0)), np.kaiser(6, 2.0), rtol=1e-6)


def test_i0_values_both_branches(x64):
    x = np.concatenate([np.linspace(-40, 40, 161), [29.99, 30.0, 30.01, 100.0, 700.0]])
    got = jnp.i0(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), np.i0(x), rtol=1e-14)
    g = pyjax.vmap(pyjax.grad(jnp.i0))(x)
    np.testing.assert_allclose(np.asarray(g), scipy.special.i1(x), rtol=1e-14, atol=1e-300)


def test_i0_float32_and_ints():
    x = np.linspace(-80, 80, 41).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.i0(x)), np.i0(x.astype(float)), rtol=2e-6)
    assert jnp.i0(np.arange(3)).dtype == np.float32
    with pytest.raises(ValueError, match="complex"):
        jnp.i0(np.ones(2, np.complex64))
