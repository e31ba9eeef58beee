"""``pyjax.scipy.stats.truncnorm``, as ``jax.scipy.stats.truncnorm``."""
from pyjax._src.scipy.stats.continuous import truncnorm as _dist

cdf = _dist.cdf
logcdf = _dist.logcdf
logpdf = _dist.logpdf
logsf = _dist.logsf
pdf = _dist.pdf
sf = _dist.sf

del _dist
