"""`jax._src.dtypes`: the public `jax.dtypes` names plus the few private ones libraries use."""
import numpy as np

from pyjax import dtypes as _public

globals().update({k: getattr(_public, k) for k in dir(_public) if not k.startswith("_")})

DType = np.dtype


class ExtendedDType:
    """Base class of dtypes that are not NumPy's (JAX's key and fp8-metadata dtypes). pyjax
    arrays cannot hold such a dtype yet; libraries subclass it to declare theirs."""
    type: type
    name: str


def supports_inf(dtype) -> bool:
    """Whether `dtype` can represent infinity (float8_e4m3fn, for one, cannot)."""
    dt = np.dtype(dtype)
    if not (np.issubdtype(dt, np.inexact) or dt.kind == "V"):  # ml_dtypes floats have kind V
        return False
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.array(np.inf).astype(dt)))
