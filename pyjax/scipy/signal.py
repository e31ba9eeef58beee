"""``pyjax.scipy.signal``: signal processing, as ``jax.scipy.signal``."""
# FFT-based convolution and spectral analysis
from pyjax._src.scipy.signal_spectral import (  # noqa: F401
    csd as csd, detrend as detrend, fftconvolve as fftconvolve, istft as istft, stft as stft,
    welch as welch)
# Direct convolution (convolve, convolve2d, correlate, correlate2d) comes from
# pyjax._src.scipy.signal_conv, added here by its own change.
