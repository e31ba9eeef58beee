"""``pyjax.scipy.signal``."""
# direct convolution and correlation
from pyjax._src.scipy.signal_conv import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d)
