"""``pyjax.scipy.stats.laplace``, as ``jax.scipy.stats.laplace``."""
from pyjax._src.scipy.stats.continuous import laplace as _dist

cdf = _dist.cdf
logpdf = _dist.logpdf
pdf = _dist.pdf

del _dist
