"""Layer 2: the primitives, one module per family.

Importing the package imports every module, in this order. A module imports at its top the lax
modules whose helpers or primitives it uses while declaring its own, and at its bottom those
that import it back (``elementwise`` binds ``shape_ops.broadcast_in_dim_p`` in its JVP rules,
``shape_ops`` declares its primitives with ``elementwise``'s): bottom imports are read only
inside rules, which run after the whole package is loaded. Rules name other primitives by
object (``shape_ops.broadcast_in_dim_p``), never by a registry string, so dependencies show.
"""
from pyjax._src.lax import ad_util, base, batch_util  # noqa: F401
from pyjax._src.lax import elementwise, reductions, shape_ops, slicing  # noqa: F401
from pyjax._src.lax import dot, sorting, stop_gradient, parallel  # noqa: F401
from pyjax._src.lax import special  # noqa: F401
from pyjax._src.lax import sharding_constraint  # noqa: F401
from pyjax._src.lax import fft  # noqa: F401
from pyjax._src.lax import convolution, user_reductions, windowed_reductions  # noqa: F401
from pyjax._src.lax import barrier, composite_ops, jax_names, rng  # noqa: F401,E402
from pyjax._src.lax import linalg  # noqa: F401
from pyjax._src.lax import split_stack_tile, trace_ops, point_to_point  # noqa: F401,E402
from pyjax._src.lax import sharding_rules  # noqa: F401,E402  (after every primitive)
