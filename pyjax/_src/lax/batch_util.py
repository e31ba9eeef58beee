"""Shared pieces of the batching (``vmap``) rules that primitives declare with themselves.

A rule has the signature of ``core/rules.py``: ``batch(args, dims, **params) -> (out, out_dim)``,
where each entry of ``dims`` is the batch axis of the matching operand or ``not_mapped``. Rules run
with the parent trace current, so the primitives they bind apply to the batched values (an eager
computation, a Jaxpr being staged, or an outer ``vmap``). They move the batch axis as little as
possible: most rules rewrite their params to carry the batch axis where it already is.

The helpers bind primitives through the registry, so every lax module can import this one
without an import cycle.
"""
from __future__ import annotations

from pyjax._src.core.primitive import registry
from pyjax._src.core.rules import not_mapped
from pyjax._src.core.trace import shape_of

__all__ = ["not_mapped", "shape_of", "batch_size", "move_axis", "broadcast_batched",
           "bdim_to", "to_batched_axis", "elementwise_rule", "reduce_axes_rule",
           "axis_param_rule", "unbatched_rule"]


def batch_size(args, dims):
    """The size of the mapped axis (from the first batched operand)."""
    for x, d in zip(args, dims):
        if d is not not_mapped:
            return shape_of(x)[d]
    raise ValueError("batch_size: no operand is batched")


def to_batched_axis(axis, bdim):
    """The axis of a batched value that holds the per-example ``axis``."""
    return axis if axis < bdim else axis + 1


def move_axis(x, src, dst):
    """``x`` with its axis ``src`` moved to position ``dst`` (a transpose, or nothing)."""
    if src == dst:
        return x
    nd = len(shape_of(x))
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return registry["transpose"].bind(x, permutation=tuple(perm))


def broadcast_batched(x, size, dim):
    """The unbatched ``x`` as a batched value: a new axis of ``size`` at ``dim``."""
    shape = list(shape_of(x))
    out_shape = tuple(shape[:dim] + [size] + shape[dim:])
    kept = tuple(i for i in range(len(out_shape)) if i != dim)
    return registry["broadcast_in_dim"].bind(x, shape=out_shape, broadcast_dimensions=kept,
                                             sharding=None)


def bdim_to(x, d, dst, size):
    """``x`` (batched at ``d``, or ``not_mapped``) batched at ``dst``."""
    if d is not_mapped:
        return broadcast_batched(x, size, dst)
    return move_axis(x, d, dst)


# ---- generic rules ----

def elementwise_rule(name, scalar_ok=None):
    """The rule of an elementwise primitive whose operands have equal shapes, except that
    rank-0 operands broadcast implicitly. ``scalar_ok(i, n)`` says whether operand ``i`` of
    ``n`` may stay rank 0 while others are not (all of them by default).

    The batch axis stays where the first full-rank batched operand has it; other batched
    operands are moved there, per-example scalars and unbatched full-rank operands are
    broadcast, unbatched scalars stay scalars."""
    def rule(args, dims, **params):
        n = len(args)
        shapes = [shape_of(x) for x in args]
        ranks = [len(s) - (d is not not_mapped) for s, d in zip(shapes, dims)]
        r = max(ranks)
        d_out, full = None, None
        for s, d, k in zip(shapes, dims, ranks):
            if k == r:
                if d is not not_mapped:
                    d_out, full = d, s[:d] + s[d + 1:]
                    break
                if full is None:
                    full = s
        if d_out is None:
            d_out = 0
        size = batch_size(args, dims)
        bshape = full[:d_out] + (size,) + full[d_out:]
        rest = tuple(i for i in range(r + 1) if i != d_out)
        bcast = registry["broadcast_in_dim"]
        new = []
        for i, (x, d, k) in enumerate(zip(args, dims, ranks)):
            if d is not_mapped:
                if k == 0 and (scalar_ok is None or scalar_ok(i, n)):
                    new.append(x)
                else:
                    new.append(bcast.bind(x, shape=bshape, broadcast_dimensions=
                                          rest if k else (), sharding=None))
            elif k == r:
                new.append(move_axis(x, d, d_out))
            else:  # a per-example scalar among full-rank operands
                new.append(bcast.bind(x, shape=bshape, broadcast_dimensions=(d_out,),
                                      sharding=None))
        return registry[name].bind(*new, **params), d_out
    rule.__name__ = f"{name}_batch_rule"
    return rule


def reduce_axes_rule(name):
    """The rule of a primitive reducing its one operand over the params' ``axes``."""
    def rule(args, dims, *, axes, **params):
        (x,), (d,) = args, dims
        new_axes = tuple(to_batched_axis(a, d) for a in axes)
        out_d = d - sum(1 for a in axes if a < d)
        return registry[name].bind(x, axes=new_axes, **params), out_d
    rule.__name__ = f"{name}_batch_rule"
    return rule


def axis_param_rule(name):
    """The rule of a one-operand primitive acting along the params' ``axis`` (shape kept)."""
    def rule(args, dims, *, axis, **params):
        (x,), (d,) = args, dims
        return registry[name].bind(x, axis=to_batched_axis(axis, d), **params), d
    rule.__name__ = f"{name}_batch_rule"
    return rule


def unbatched_rule(name):
    """The rule of a primitive without operands (never batched): it binds unbatched."""
    def rule(args, dims, **params):
        return registry[name].bind(*args, **params), not_mapped
    rule.__name__ = f"{name}_batch_rule"
    return rule
