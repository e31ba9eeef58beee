"""Mutable array references (`jax.new_ref`, `jax.Ref`): the operations users call. The box and
the trace-time discharge are in `core/refs.py`; docs/refs.md explains the design."""
