"""``pyjax.scipy.stats.nbinom``, as ``jax.scipy.stats.nbinom``."""
from pyjax._src.scipy.stats.discrete import nbinom as _dist

logpmf = _dist.logpmf
pmf = _dist.pmf

del _dist
