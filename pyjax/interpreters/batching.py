"""Batching rules, as ``jax.interpreters.batching``: the rule table for primitives made with
``jax.extend.core.Primitive`` (JAX's `batcher(args, dims, **params)` signature is pyjax's)."""
from pyjax._src.core.rules import not_mapped as not_mapped  # noqa: F401
from pyjax._src.extend import RuleTable as _RuleTable
from pyjax._src.interpreters.batching import BatchTracer as BatchTracer  # noqa: F401


def _axis_rule(rule):
    def batch(args, dims, *, axis_data=None, **params):
        return rule(axis_data, args, dims, **params)
    return batch


primitive_batchers = _RuleTable("batch")
# JAX's axis-aware batchers take the axis data first; pyjax passes it as `axis_data=`
axis_primitive_batchers = _RuleTable("batch", adapt=_axis_rule)
