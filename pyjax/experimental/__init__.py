"""``jax.experimental``: the parts pyjax has (``io_callback``, ``compilation_cache``)."""
from pyjax._src.callback import io_callback as io_callback
from pyjax.experimental import checkify as checkify
