"""``pyjax.scipy.stats.multinomial``, as ``jax.scipy.stats.multinomial``."""
from pyjax._src.scipy.stats.discrete import multinomial as _dist

logpmf = _dist.logpmf
pmf = _dist.pmf

del _dist
