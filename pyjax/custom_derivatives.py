"""Custom differentiation rules, as ``jax.custom_derivatives``."""
from pyjax._src.transformations.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal as CustomVJPPrimal, SymbolicZero as SymbolicZero, custom_jvp as custom_jvp,
    custom_vjp as custom_vjp, custom_jvp_call_p as custom_jvp_call_p,
    custom_vjp_call_p as custom_vjp_call_p,
    custom_vjp_primal_tree_values as custom_vjp_primal_tree_values,
    zero_from_primal as zero_from_primal)
from pyjax._src.transformations.closure import (  # noqa: F401
    closure_convert as closure_convert, custom_gradient as custom_gradient)
from pyjax._src.transformations.linear_call import linear_call as linear_call  # noqa: F401,E402
