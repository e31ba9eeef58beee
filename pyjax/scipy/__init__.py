"""``pyjax.scipy``: SciPy's API on pyjax arrays, as ``jax.scipy``."""
from pyjax.scipy import special as special  # noqa: F401
