"""``pyjax.scipy.stats.gennorm``, as ``jax.scipy.stats.gennorm``."""
from pyjax._src.scipy.stats.continuous import gennorm as _dist

cdf = _dist.cdf
logpdf = _dist.logpdf
pdf = _dist.pdf

del _dist
