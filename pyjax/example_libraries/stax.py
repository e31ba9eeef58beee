"""Neural-network layers as (init_fun, apply_fun) pairs, as ``jax.example_libraries.stax``."""
from pyjax._src.example_libraries.stax import *  # noqa: F401,F403
from pyjax._src.example_libraries.stax import __all__  # noqa: F401
