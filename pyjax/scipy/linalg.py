"""``pyjax.scipy.linalg``: SciPy's linear algebra (JAX's ``jax.scipy.linalg``)."""
from pyjax._src.scipy.linalg import *  # noqa: F401,F403
