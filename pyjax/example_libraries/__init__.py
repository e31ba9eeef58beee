"""Small example libraries, as ``jax.example_libraries``: ``stax`` (layers) and ``optimizers``."""
from pyjax.example_libraries import optimizers as optimizers, stax as stax  # noqa: E402
