"""``pyjax.scipy.stats.norm``, as ``jax.scipy.stats.norm``."""
from pyjax._src.scipy.stats.continuous import norm as _dist

cdf = _dist.cdf
isf = _dist.isf
logcdf = _dist.logcdf
logpdf = _dist.logpdf
logsf = _dist.logsf
pdf = _dist.pdf
ppf = _dist.ppf
sf = _dist.sf

del _dist
