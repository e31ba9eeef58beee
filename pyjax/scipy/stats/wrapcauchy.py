"""``pyjax.scipy.stats.wrapcauchy``, as ``jax.scipy.stats.wrapcauchy``."""
from pyjax._src.scipy.stats.continuous import wrapcauchy as _dist

logpdf = _dist.logpdf
pdf = _dist.pdf

del _dist
