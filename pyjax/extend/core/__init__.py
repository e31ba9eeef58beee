"""Primitives, Jaxprs and trace state for library authors, as ``jax.extend.core``."""
from pyjax._src.core.jaxpr import (
    ClosedJaxpr as ClosedJaxpr, Eqn as JaxprEqn, Jaxpr as Jaxpr, Literal as Literal, Var as Var,
    jaxpr_as_fun as jaxpr_as_fun)
from pyjax._src.extend import (
    Effect as Effect, JaxStylePrimitive as Primitive, find_top_trace as find_top_trace,
    get_opaque_trace_state as get_opaque_trace_state, mapped_aval as mapped_aval,
    unmapped_aval as unmapped_aval)
from pyjax._src.core.trace import get_aval as get_aval  # noqa: E402
from pyjax._src.core.abstract import ShapedArray as ShapedArray  # noqa: E402
