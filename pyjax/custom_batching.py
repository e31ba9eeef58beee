"""Custom batching rules, as ``jax.custom_batching``."""
from pyjax._src.transformations.custom_batching import (  # noqa: F401
    custom_vmap as custom_vmap, sequential_vmap as sequential_vmap)
