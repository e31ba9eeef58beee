"""Layer 6: ``jax.scipy``, written on top of ``numpy`` and ``lax``."""
