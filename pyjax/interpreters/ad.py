"""Forward- and reverse-mode rules, as ``jax.interpreters.ad``: rule tables for primitives
made with ``jax.extend.core.Primitive`` (JAX's rule signatures are pyjax's) and the symbolic
values the rules see."""
from pyjax._src.core.rules import (  # noqa: F401
    UndefinedPrimal as UndefinedPrimal, Zero as Zero, is_undefined_primal as is_undefined_primal)
from pyjax._src.extend import RuleTable as _RuleTable
from pyjax._src.interpreters.ad import JVPTracer as JVPTracer, JVPTrace as JVPTrace  # noqa: F401
from pyjax._src.lax.ad_util import instantiate as _instantiate

primitive_jvps = _RuleTable("jvp")
primitive_transposes = _RuleTable("transpose")


def instantiate_zeros(tangent):
    """A symbolic Zero as an array of zeros; other tangents unchanged."""
    return _instantiate(tangent)


def _zero_from_primal_value(x):
    from pyjax._src.lax.ad_util import tangent_aval
    from pyjax._src.core.trace import aval_of
    return Zero(tangent_aval(aval_of(x)))


Zero.from_primal_value = staticmethod(_zero_from_primal_value)
