"""Lowering rules, as ``jax.interpreters.mlir``: a rule made with ``lower_fun`` (a Python
function of lax operations) works; JAX's MLIR-builder rules cannot run on pyjax's StableHLO
text builder, so such a rule raises NotImplementedError when the primitive is lowered."""
from pyjax._src.core.rules import lower_fun as _lower_fun


def lower_fun(fun, multiple_results=True):
    rule = _lower_fun(fun, multiple_results=multiple_results)
    rule._pyjax_lower_fun = True
    return rule


def register_lowering(prim, rule, platform=None):
    if getattr(rule, "_pyjax_lower_fun", False):
        prim.def_rule("lower", rule)
        return rule

    def unsupported(ctx, *args, **params):
        raise NotImplementedError(
            f"primitive {prim.name!r}: its lowering rule was written against JAX's MLIR "
            "builder; pyjax can only lower rules made with jax.interpreters.mlir.lower_fun")
    prim.def_rule("lower", unsupported)
    return rule
