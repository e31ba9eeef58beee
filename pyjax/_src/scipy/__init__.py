"""Layer 6: ``jax.scipy`` written over ``jax.numpy`` and ``lax``."""
