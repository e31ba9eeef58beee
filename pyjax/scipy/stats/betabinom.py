"""``pyjax.scipy.stats.betabinom``, as ``jax.scipy.stats.betabinom``."""
from pyjax._src.scipy.stats.discrete import betabinom as _dist

logpmf = _dist.logpmf
pmf = _dist.pmf

del _dist
