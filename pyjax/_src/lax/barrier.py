"""``lax.optimization_barrier``: the identity on a pytree of arrays that XLA may not optimise
across (``stablehlo.optimization_barrier``).

Its use here: ``random/prng.py`` passes split keys through it so that XLA does not fold the
key computation into every consumer. Measured on xla-cpu-pjrt 0.0.1 (docs/performance.md):
the barrier stops reshape folding, but XLA may still fuse across it (two transposes on either
side became one loop), so whether a value is kept in memory remains XLA's choice."""
from __future__ import annotations

from pyjax._src.core import pytree
from pyjax._src.core.primitive import Primitive
from pyjax._src.lax.base import aval_of

__all__ = ["optimization_barrier"]


def _abstract_eval(*avals):
    return list(avals)


def _lower(ctx, *operands):
    return ctx.op("stablehlo.optimization_barrier", list(operands), list(ctx.avals_out))


def _jvp(primals, tangents):
    # the barrier is the identity: tangents pass unchanged (no barrier in the linear program)
    return optimization_barrier_p.bind(*primals), list(tangents)


def _batch(args, dims):
    return optimization_barrier_p.bind(*args), list(dims)


optimization_barrier_p = Primitive("optimization_barrier", abstract_eval=_abstract_eval,
                                   lower=_lower, multiple_results=True, jvp=_jvp, batch=_batch)


def optimization_barrier(operand):
    """``operand`` (a pytree of arrays) unchanged; XLA does not move computation across the
    barrier, so what made ``operand`` is computed once, before it."""
    leaves, tree = pytree.tree_flatten(operand)
    if not leaves:
        return operand
    for x in leaves:
        aval_of(x)  # a clear TypeError for non-arrays
    return pytree.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))
