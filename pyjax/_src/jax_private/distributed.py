"""`jax._src.distributed`: `global_state`, pyjax's record of `jax.distributed.initialize`
(orbax tests `global_state.client is not None` to see whether the run is multi-process)."""
from pyjax._src.runtime.distributed import global_state  # noqa: F401
