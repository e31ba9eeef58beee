"""Flattening pytrees to one vector, as ``jax.flatten_util``."""
from pyjax._src.flatten_util import ravel_pytree as ravel_pytree

__all__ = ["ravel_pytree"]
