"""``pyjax.scipy.stats.vonmises``, as ``jax.scipy.stats.vonmises``."""
from pyjax._src.scipy.stats.continuous import vonmises as _dist

logpdf = _dist.logpdf
pdf = _dist.pdf

del _dist
