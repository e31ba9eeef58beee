"""``pyjax.numpy.fft``: discrete Fourier transforms, as ``jax.numpy.fft``."""
from pyjax._src.numpy.fft import *  # noqa: F401,F403
