"""``pyjax.scipy.ndimage``, as ``jax.scipy.ndimage``."""
from pyjax._src.scipy.ndimage import map_coordinates  # noqa: F401
