"""``pyjax.scipy``: SciPy's API on pyjax arrays (submodules import on use, as in JAX)."""
