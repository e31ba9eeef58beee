"""``jax.extend.ifrt_programs``: IFRT program builders (Pathways). pyjax has none: each
function of `ifrt_programs` raises NotImplementedError when called."""
from pyjax._src.multihost import ifrt_programs as ifrt_programs  # noqa: F401
