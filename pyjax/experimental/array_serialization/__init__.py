"""``jax.experimental.array_serialization``."""
