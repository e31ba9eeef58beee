"""Regressions from the FFT edge sweep (docs/linalg_edges.md). NumPy raises on empty
transforms, so the empty-axis cases follow JAX 0.10.2's observed shapes and dtypes (quoted)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp


@pytest.mark.parametrize("name,x,shape", [
    # JAX 0.10.2 (x64): fft(zeros(0)) -> (0,) complex128; irfft of 0 or 1 bins -> (0,) float64;
    # fftn/irfftn of a (3, 0) array -> (3, 0); NumPy raises for all of them (pyjax raised too)
    ("fft", np.zeros(0), (0,)), ("ifft", np.zeros(0), (0,)), ("irfft", np.zeros(0), (0,)),
    ("irfft", np.array([2.5]), (0,)), ("hfft", np.array([2.5]), (0,)),
    ("fftn", np.zeros((3, 0)), (3, 0)), ("irfftn", np.zeros((3, 0)), (3, 0)),
])
def test_empty_transforms_give_empty_results(x64, name, x, shape):
    f = getattr(jnp.fft, name)
    real_out = name in ("irfft", "hfft", "irfftn")
    for got in (f(x), pyjax.jit(f)(x)):
        assert got.shape == shape
        assert got.dtype == (np.float64 if real_out else np.complex128)


def test_explicit_zero_length_still_raises():
    with pytest.raises(ValueError, match="FFT data points"):
        jnp.fft.fft(np.ones(3), n=0)
    with pytest.raises(ValueError):
        jnp.fft.rfft(np.zeros(0))          # JAX 0.10.2 fails to lower this one


def test_bool_input_transforms_in_float32(x64):
    # JAX 0.10.2 with x64: fft of bools is complex64, irfft float32 (ints give complex128)
    b = np.array([True, False, True, True])
    for f, dt in ((jnp.fft.fft, np.complex64), (jnp.fft.rfft, np.complex64),
                  (jnp.fft.irfft, np.float32), (jnp.fft.fftn, np.complex64),
                  (jnp.fft.ihfft, np.complex64)):
        got = f(b)
        assert got.dtype == dt
        want = getattr(np.fft, f.__name__)(b.astype(np.float64))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
    assert jnp.fft.fft(np.arange(3)).dtype == np.complex128


def test_rfftfreq_with_an_integer_dtype_is_not_truncated():
    # JAX 0.10.2: rfftfreq(8, dtype=int32) is [0, 0.125, ..., 0.5] in float32 (pyjax gave int32
    # zeros); fftfreq with an integer dtype stays integer in JAX (zeros), as here
    got = jnp.fft.rfftfreq(8, dtype=jnp.int32)
    assert np.issubdtype(got.dtype, np.floating)
    np.testing.assert_allclose(np.asarray(got), np.fft.rfftfreq(8))
    np.testing.assert_allclose(np.asarray(jnp.fft.rfftfreq(7, 0.5, dtype=jnp.int8)),
                               np.fft.rfftfreq(7, 0.5), rtol=1e-6)
    assert jnp.fft.fftfreq(8, dtype=jnp.int32).dtype == np.int32


def test_zero_frequencies():
    # JAX 0.10.2: fftfreq(0) -> [] and rfftfreq(0) -> [nan] (0 / 0, as NumPy)
    assert jnp.fft.fftfreq(0).shape == (0,)
    assert np.isnan(np.asarray(jnp.fft.rfftfreq(0))).all() and jnp.fft.rfftfreq(0).shape == (1,)
    with pytest.raises(ValueError, match="non-negative"):
        jnp.fft.fftfreq(-1)
