"""Shared pieces of the batching (``vmap``) rules that primitives declare with themselves.

A rule has the signature of ``core/rules.py``: ``batch(args, dims, **params) -> (out, out_dim)``,
where each entry of ``dims`` is the batch axis of the matching operand or ``not_mapped``. Rules run
with the parent trace current, so the primitives they bind apply to the batched values (an eager
computation, a Jaxpr being staged, or an outer ``vmap``). They move the batch axis as little as
possible: most rules rewrite their params to carry the batch axis where it already is.

Every lax module imports this one to declare its primitives, so the primitives these helpers
bind come from a module imported at the bottom (read when a rule runs). The generic rules are
``with_self`` factories: the declaration hands them the primitive they batch.
"""
from __future__ import annotations

from pyjax._src.core.primitive import with_self
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
    return shape_ops.transpose_p.bind(x, permutation=tuple(perm))


def broadcast_batched(x, size, dim):
    """The unbatched ``x`` as a batched value: a new axis of ``size`` at ``dim``."""
    shape = list(shape_of(x))
    out_shape = tuple(shape[:dim] + [size] + shape[dim:])
    kept = tuple(i for i in range(len(out_shape)) if i != dim)
    return shape_ops.broadcast_in_dim_p.bind(x, shape=out_shape, broadcast_dimensions=kept,
                                             sharding=None)


def bdim_to(x, d, dst, size):
    """``x`` (batched at ``d``, or ``not_mapped``) batched at ``dst``."""
    if d is not_mapped:
        return broadcast_batched(x, size, dst)
    return move_axis(x, d, dst)


# ---- generic rules ----

def elementwise_rule(scalar_ok=None):
    """The rule of an elementwise primitive whose operands have equal shapes, except that
    rank-0 operands broadcast implicitly. ``scalar_ok(i, n)`` says whether operand ``i`` of
    ``n`` may stay rank 0 while others are not (all of them by default).

    The batch axis stays where the first full-rank batched operand has it; other batched
    operands are moved there, per-example scalars and unbatched full-rank operands are
    broadcast, unbatched scalars stay scalars."""
    return with_self(lambda prim: _elementwise_rule(prim, scalar_ok))


def _elementwise_rule(prim, scalar_ok):
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
        bcast = shape_ops.broadcast_in_dim_p
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
        return prim.bind(*new, **params), d_out
    rule.__name__ = f"{prim.name}_batch_rule"
    return rule


def _named(prim, rule):
    rule.__name__ = f"{prim.name}_batch_rule"
    return rule


def reduce_axes_rule():
    """The rule of a primitive reducing its one operand over the params' ``axes``."""
    def make(prim):
        def rule(args, dims, *, axes, **params):
            (x,), (d,) = args, dims
            new_axes = tuple(to_batched_axis(a, d) for a in axes)
            out_d = d - sum(1 for a in axes if a < d)
            return prim.bind(x, axes=new_axes, **params), out_d
        return _named(prim, rule)
    return with_self(make)


def axis_param_rule():
    """The rule of a one-operand primitive acting along the params' ``axis`` (shape kept)."""
    def make(prim):
        def rule(args, dims, *, axis, **params):
            (x,), (d,) = args, dims
            return prim.bind(x, axis=to_batched_axis(axis, d), **params), d
        return _named(prim, rule)
    return with_self(make)


def unbatched_rule():
    """The rule of a primitive without operands (never batched): it binds unbatched."""
    def make(prim):
        def rule(args, dims, **params):
            return prim.bind(*args, **params), not_mapped
        return _named(prim, rule)
    return with_self(make)


# Last, and read only inside rules: shape_ops declares its primitives with the helpers above.
from pyjax._src.lax import shape_ops  # noqa: E402
