"""``pyjax.scipy.stats.chi2``, as ``jax.scipy.stats.chi2``."""
from pyjax._src.scipy.stats.continuous import chi2 as _dist

cdf = _dist.cdf
logcdf = _dist.logcdf
logpdf = _dist.logpdf
logsf = _dist.logsf
pdf = _dist.pdf
sf = _dist.sf

del _dist
