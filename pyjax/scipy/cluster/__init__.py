"""``pyjax.scipy.cluster``, as ``jax.scipy.cluster``."""
from pyjax.scipy.cluster import vq as vq  # noqa: F401
