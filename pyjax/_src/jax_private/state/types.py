"""`jax._src.state.types`: the abstract value of a mutable array reference (flax.nnx imports
`AbstractRef` to recognise refs). The one definition is `core/refs.py`."""
from pyjax._src.core.refs import AbstractRef  # noqa: F401
