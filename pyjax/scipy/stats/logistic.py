"""``pyjax.scipy.stats.logistic``, as ``jax.scipy.stats.logistic``."""
from pyjax._src.scipy.stats.continuous import logistic as _dist

cdf = _dist.cdf
isf = _dist.isf
logpdf = _dist.logpdf
pdf = _dist.pdf
ppf = _dist.ppf
sf = _dist.sf

del _dist
