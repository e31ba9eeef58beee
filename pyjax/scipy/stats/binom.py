"""``pyjax.scipy.stats.binom``, as ``jax.scipy.stats.binom``."""
from pyjax._src.scipy.stats.discrete import binom as _dist

logpmf = _dist.logpmf
pmf = _dist.pmf

del _dist
