"""``pyjax.scipy.cluster.vq``, as ``jax.scipy.cluster.vq``."""
from pyjax._src.scipy.cluster import vq  # noqa: F401
