"""`jax._src.flatten_util`: `ravel_pytree` (blackjax imports it from here)."""
from pyjax._src.flatten_util import ravel_pytree  # noqa: F401
