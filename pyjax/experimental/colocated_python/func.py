"""``jax.experimental.colocated_python.func`` (Pathways only; see the package)."""
