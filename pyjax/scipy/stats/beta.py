"""``pyjax.scipy.stats.beta``, as ``jax.scipy.stats.beta``."""
from pyjax._src.scipy.stats.continuous import beta as _dist

cdf = _dist.cdf
logcdf = _dist.logcdf
logpdf = _dist.logpdf
logsf = _dist.logsf
pdf = _dist.pdf
sf = _dist.sf

del _dist
