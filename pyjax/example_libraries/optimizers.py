"""First-order optimizers over pytrees, as ``jax.example_libraries.optimizers``."""
from pyjax._src.example_libraries.optimizers import *  # noqa: F401,F403
from pyjax._src.example_libraries.optimizers import __all__  # noqa: F401
