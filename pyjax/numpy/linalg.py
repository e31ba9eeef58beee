"""``pyjax.numpy.linalg``: NumPy's linear algebra (JAX's ``jax.numpy.linalg``)."""
from pyjax._src.numpy.linalg import *  # noqa: F401,F403
