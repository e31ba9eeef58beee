"""Helpers for writing transformations over flattened functions, as ``jax.api_util``."""
from pyjax._src.extend import (  # noqa: F401
    flatten_fun as flatten_fun, flatten_fun_nokwargs as flatten_fun_nokwargs)
from pyjax._src.interpreters.staging import debug_info as debug_info  # noqa: F401
