"""``pyjax.scipy.stats.bernoulli``, as ``jax.scipy.stats.bernoulli``."""
from pyjax._src.scipy.stats.discrete import bernoulli as _dist

cdf = _dist.cdf
logpmf = _dist.logpmf
pmf = _dist.pmf
ppf = _dist.ppf

del _dist
