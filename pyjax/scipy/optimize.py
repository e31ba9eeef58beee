"""``pyjax.scipy.optimize``, as ``jax.scipy.optimize``."""
from pyjax._src.scipy.optimize import OptimizeResults, minimize  # noqa: F401
