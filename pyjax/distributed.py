"""``jax.distributed``: connecting the processes of a multi-process run."""
from pyjax._src.runtime.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
