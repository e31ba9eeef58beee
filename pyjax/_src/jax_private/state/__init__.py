"""`jax._src.state`: JAX's mutable array references (`jax.Ref`). pyjax has no refs; the type
names exist so libraries can test `isinstance(x, AbstractRef)` (always False here)."""
