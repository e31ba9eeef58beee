"""jax.scipy.fft: the type-2 DCT and its inverse against scipy.fft (lengths odd and even,
norm None and "ortho", n truncating and padding, the n-dimensional forms), and JAX's limits."""
import numpy as np
import pytest
import scipy.fft

import pyjax
import pyjax.scipy.fft as jfft

RNG = np.random.RandomState(0)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_dct_and_idct_match_scipy(n):
    x = RNG.randn(3, n).astype(np.float32)
    for norm in (None, "ortho"):
        np.testing.assert_allclose(jfft.dct(x, norm=norm), scipy.fft.dct(x, norm=norm),
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(jfft.idct(x, norm=norm), scipy.fft.idct(x, norm=norm),
                                   rtol=1e-4, atol=1e-5)


def test_lengths_axes_nd_jit_and_limits():
    x = RNG.randn(4, 6).astype(np.float32)
    np.testing.assert_allclose(jfft.dct(x, n=3, axis=0), scipy.fft.dct(x, n=3, axis=0),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jfft.dct(x, n=9), scipy.fft.dct(x, n=9), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jfft.dctn(x, norm="ortho"), scipy.fft.dctn(x, norm="ortho"),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jfft.idctn(x, s=(3, 4)), scipy.fft.idctn(x, s=(3, 4)),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(pyjax.jit(lambda v: jfft.idct(jfft.dct(v)))(x), x, rtol=1e-4,
                               atol=1e-5)
    assert jfft.dct(np.arange(3)).dtype == np.float32  # integers promote, as in JAX
    # JAX 0.10.2: type=3 raises NotImplementedError("Only DCT type 2 is implemented."),
    # norm="forward" raises ValueError "jax.scipy.fft.dct: norm='forward' is not implemented"
    with pytest.raises(NotImplementedError, match="Only DCT type 2"):
        jfft.dct(x, type=3)
    with pytest.raises(ValueError, match="norm='forward' is not implemented"):
        jfft.dct(x, norm="forward")
