"""``jax.dtypes``: dtype utilities."""
from pyjax._src.core.dtypes import (  # noqa: F401
    bfloat16, canonicalize_dtype, float0, finfo, iinfo, issubdtype, isdtype, promote_types,
    result_type, TypePromotionError)
from pyjax._src.core.dtypes import is_weakly_typed  # noqa: F401
from pyjax._src.core.dtypes import (  # noqa: F401
    extended, itemsize_bits, prng_key, scalar_type_of)
