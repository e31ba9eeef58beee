"""``pyjax.scipy.stats.gamma``, as ``jax.scipy.stats.gamma``."""
from pyjax._src.scipy.stats.continuous import gamma as _dist

cdf = _dist.cdf
logcdf = _dist.logcdf
logpdf = _dist.logpdf
logsf = _dist.logsf
pdf = _dist.pdf
sf = _dist.sf

del _dist
