"""``pyjax.scipy.stats.uniform``, as ``jax.scipy.stats.uniform``."""
from pyjax._src.scipy.stats.continuous import uniform as _dist

cdf = _dist.cdf
logpdf = _dist.logpdf
pdf = _dist.pdf
ppf = _dist.ppf

del _dist
