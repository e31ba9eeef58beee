"""``pyjax.scipy.stats.t``, as ``jax.scipy.stats.t``."""
from pyjax._src.scipy.stats.continuous import t as _dist

logpdf = _dist.logpdf
pdf = _dist.pdf

del _dist
