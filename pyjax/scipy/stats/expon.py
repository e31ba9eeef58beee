"""``pyjax.scipy.stats.expon``, as ``jax.scipy.stats.expon``."""
from pyjax._src.scipy.stats.continuous import expon as _dist

cdf = _dist.cdf
logcdf = _dist.logcdf
logpdf = _dist.logpdf
logsf = _dist.logsf
pdf = _dist.pdf
ppf = _dist.ppf
sf = _dist.sf

del _dist
