"""Transformation internals libraries read, as ``jax.interpreters``."""
