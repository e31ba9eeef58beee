"""``pyjax.scipy.stats.pareto``, as ``jax.scipy.stats.pareto``."""
from pyjax._src.scipy.stats.continuous import pareto as _dist

cdf = _dist.cdf
logcdf = _dist.logcdf
logpdf = _dist.logpdf
logsf = _dist.logsf
pdf = _dist.pdf
ppf = _dist.ppf
sf = _dist.sf

del _dist
