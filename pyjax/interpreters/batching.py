"""Batching rules, as ``jax.interpreters.batching``: the rule tables for primitives made with
``jax.extend.core.Primitive`` (JAX's `batcher(args, dims, **params)` signature is pyjax's)."""
from pyjax._src.core.rules import not_mapped as not_mapped  # noqa: F401
from pyjax._src.extend import RuleTable as _RuleTable
from pyjax._src.interpreters.batching import BatchTracer as BatchTracer  # noqa: F401


def _never_uses_axis(params, axis_name):
    return False


class _AxisRuleTable(_RuleTable):
    """A table whose rules need the vmapped axis: the primitive is made axis-aware (pyjax then
    passes `axis_data=` to its batch rule) without claiming any named axis, so the rule still
    runs only when an operand is batched."""

    def __setitem__(self, prim, rule):
        super().__setitem__(prim, rule)
        if getattr(prim, "axis_aware", None) is None:
            prim.def_rule("axis_aware", _never_uses_axis)


def _axis_rule(rule):
    # JAX's `axis_primitive_batchers` rule: (axis_size, axis_name, trace_type, args, dims)
    def batch(args, dims, *, axis_data, **params):
        return rule(axis_data.size, axis_data.name, None, args, dims, **params)
    return batch


def _fancy_rule(rule):
    # JAX's `fancy_primitive_batchers` rule: (axis_data, args, dims)
    def batch(args, dims, *, axis_data, **params):
        return rule(axis_data, args, dims, **params)
    return batch


primitive_batchers = _RuleTable("batch")
axis_primitive_batchers = _AxisRuleTable("batch", adapt=_axis_rule)
fancy_primitive_batchers = _AxisRuleTable("batch", adapt=_fancy_rule)
