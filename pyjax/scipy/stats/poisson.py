"""``pyjax.scipy.stats.poisson``, as ``jax.scipy.stats.poisson``."""
from pyjax._src.scipy.stats.discrete import poisson as _dist

cdf = _dist.cdf
logpmf = _dist.logpmf
pmf = _dist.pmf
entropy = _dist.entropy

del _dist
