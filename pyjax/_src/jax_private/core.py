"""`jax._src.core`: the public `jax.core` names plus the few private ones libraries use."""
from pyjax import core as _public

globals().update({k: getattr(_public, k) for k in dir(_public) if not k.startswith("_")})


def physical_aval(aval):
    """The aval of the buffer that holds values of `aval`: the aval itself, since every pyjax
    dtype is a NumPy one (JAX's extended dtypes differ here)."""
    return aval


def trace_state_clean():
    """True when no transformation is tracing (numpyro asks before caching closures)."""
    from pyjax._src.core.trace import is_eager
    return is_eager()
