"""``pyjax.scipy.stats.dirichlet``, as ``jax.scipy.stats.dirichlet``."""
from pyjax._src.scipy.stats.multivariate import dirichlet as _dist

logpdf = _dist.logpdf
pdf = _dist.pdf

del _dist
