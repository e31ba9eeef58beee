"""``pyjax.scipy.stats.multivariate_normal``, as ``jax.scipy.stats.multivariate_normal``."""
from pyjax._src.scipy.stats.multivariate import multivariate_normal as _dist

logpdf = _dist.logpdf
pdf = _dist.pdf

del _dist
