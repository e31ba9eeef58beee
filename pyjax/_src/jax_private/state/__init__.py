"""`jax._src.state`: JAX's mutable array references (`jax.Ref`); see core/refs.py."""
