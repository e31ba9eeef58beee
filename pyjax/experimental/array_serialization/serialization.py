"""``jax.experimental.array_serialization.serialization``: the abstract
`GlobalAsyncCheckpointManagerBase` that checkpoint managers implement (orbax's accepts one).
JAX's TensorStore-backed `GlobalAsyncCheckpointManager` and `async_serialize` are not here:
orbax-checkpoint serializes arrays with its own TensorStore code."""
from pyjax._src.multihost import (  # noqa: F401
    GlobalAsyncCheckpointManagerBase as GlobalAsyncCheckpointManagerBase)
