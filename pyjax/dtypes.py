"""``jax.dtypes``: dtype utilities."""
from pyjax._src.core.dtypes import (  # noqa: F401
    canonicalize_dtype, float0, finfo, iinfo, issubdtype, isdtype, promote_types,
    result_type, TypePromotionError)
from pyjax._src.core.dtypes import is_weakly_typed  # noqa: F401
from pyjax._src.core.dtypes import (  # noqa: F401
    extended, itemsize_bits, prng_key, scalar_type_of)


def __getattr__(name):   # bfloat16: imports ml_dtypes on first use
    if name == "bfloat16":  # the scalar type (`ml_dtypes.bfloat16`), as JAX's: usable in
        from pyjax._src.core import dtypes  # isinstance (equinox's deserialisation)
        return globals().setdefault(name, dtypes.bfloat16.type)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"bfloat16"})
