"""Wrapped functions, as ``jax.extend.linear_util``."""
from pyjax._src.extend import WrappedFun as WrappedFun, wrap_init as wrap_init
