"""``jax.experimental.compilation_cache``."""
from pyjax.experimental.compilation_cache import compilation_cache as compilation_cache
