"""``pyjax.scipy.stats.geom``, as ``jax.scipy.stats.geom``."""
from pyjax._src.scipy.stats.discrete import geom as _dist

logpmf = _dist.logpmf
pmf = _dist.pmf

del _dist
