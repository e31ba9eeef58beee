"""``jax.experimental.pjit``: empty in JAX 0.10.2 (``pjit`` is ``jax.jit``); the module exists
because libraries import it."""
