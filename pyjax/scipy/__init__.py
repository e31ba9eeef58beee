"""``pyjax.scipy``: SciPy's API over pyjax arrays (JAX's ``jax.scipy``)."""
