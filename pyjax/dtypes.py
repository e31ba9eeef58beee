"""``jax.dtypes``: dtype utilities."""
from pyjax._src.core.dtypes import (  # noqa: F401
    canonicalize_dtype, float0, finfo, iinfo, issubdtype, isdtype, promote_types,
    result_type, TypePromotionError)
from pyjax._src.core.dtypes import is_weakly_typed  # noqa: F401
from pyjax._src.core.dtypes import (  # noqa: F401
    extended, itemsize_bits, prng_key, scalar_type_of)


def __getattr__(name):   # bfloat16: imports ml_dtypes on first use
    if name == "bfloat16":
        from pyjax._src.core import dtypes
        return globals().setdefault(name, dtypes.bfloat16)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"bfloat16"})
