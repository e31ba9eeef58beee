"""``pyjax.scipy.special``: special functions, as ``jax.scipy.special``."""
from pyjax._src.scipy.special import *  # noqa: F401,F403
