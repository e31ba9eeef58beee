"""``pyjax.scipy.integrate``, as ``jax.scipy.integrate``."""
from pyjax._src.scipy.integrate import trapezoid  # noqa: F401
