"""The tracing and IR types libraries read, as ``jax.core``: tracers, abstract values, Jaxprs,
primitives."""
from pyjax._src.core.abstract import ShapedArray as ShapedArray
from pyjax._src.core.jaxpr import (
    ClosedJaxpr as ClosedJaxpr, Eqn as JaxprEqn, Jaxpr as Jaxpr, Literal as Literal, Var as Var,
    check_jaxpr as check_jaxpr, eval_jaxpr as eval_jaxpr, jaxpr_as_fun as jaxpr_as_fun)
from pyjax._src.core.primitive import Primitive as Primitive
from pyjax._src.core.trace import (
    Trace as Trace, Tracer as Tracer, get_aval as get_aval, is_valid_jaxtype as valid_jaxtype)
from pyjax._src.core.errors import ConcretizationTypeError as ConcretizationTypeError

# every abstract value pyjax has is a ShapedArray
AbstractValue = ShapedArray


def concrete_aval(x):
    """The abstract value of a concrete (non-tracer) value; TypeError for other types."""
    if isinstance(x, Tracer):
        raise TypeError(f"concrete_aval: {type(x).__name__} is a tracer, not a concrete value")
    return get_aval(x)


def typeof(x):
    return get_aval(x)


__all__ = ["AbstractValue", "ClosedJaxpr", "ConcretizationTypeError", "Jaxpr", "JaxprEqn",
           "Literal", "Primitive", "ShapedArray", "Trace", "Tracer", "Var",
           "check_jaxpr", "concrete_aval", "eval_jaxpr", "get_aval", "jaxpr_as_fun", "typeof",
           "valid_jaxtype"]
