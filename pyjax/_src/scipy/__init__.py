"""Layer 6: ``jax.scipy``, written on ``pyjax.numpy`` and ``lax``."""
