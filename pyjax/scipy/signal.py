"""``pyjax.scipy.signal``: signal processing, as ``jax.scipy.signal``."""
# FFT-based convolution and spectral analysis
from pyjax._src.scipy.signal_spectral import (  # noqa: F401
    csd as csd, detrend as detrend, fftconvolve as fftconvolve, istft as istft, stft as stft,
    welch as welch)
# Direct convolution and correlation
from pyjax._src.scipy.signal_conv import (  # noqa: F401
    convolve as convolve, convolve2d as convolve2d, correlate as correlate,
    correlate2d as correlate2d)
