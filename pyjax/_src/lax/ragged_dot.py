"""``lax.ragged_dot_general``: a dot_general whose lhs has one ragged dimension split into
consecutive groups of ``group_sizes[g]`` positions (JAX's three modes).

Each mode is one ``dot_general`` over the lhs masked per group, built from a ``(g, n)``
membership mask of the ragged dimension (``n`` its size): positions past
``sum(group_sizes)`` belong to no group and contribute zeros, as in ``ragged_dot``.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from pyjax._src.core import dtypes
from pyjax._src.lax import dot as lax_dot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import shape_ops
from pyjax._src.lax.base import aval_of

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot_general"]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """Dot dimension numbers ``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``, the lhs ragged dimension and the rhs group dimension (empty when the
    ragged dimension is a contracting or batch dimension). Hashable: sequences are stored as
    tuples, so it can be a static argument of ``jit``."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]

    def __post_init__(self):
        (lc, rc), (lb, rb) = self.dot_dimension_numbers
        object.__setattr__(self, "dot_dimension_numbers",
                           ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(self.lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(self.rhs_group_dimensions))


def _membership(group_sizes, n, dtype):
    """``mask[g, i] = 1`` where position ``i`` of the ragged dimension is in group ``g``."""
    g = aval_of(group_sizes).shape[0]
    ends = red.cumsum(group_sizes, 0)
    starts = ew.sub(ends, group_sizes)
    pos = shape_ops.broadcasted_iota(aval_of(ends).dtype, (g, n), 1)

    def per_group(v):
        return shape_ops.broadcast_in_dim(v, (g, n), (0,))
    inside = ew.bitwise_and(ew.ge(pos, per_group(starts)), ew.lt(pos, per_group(ends)))
    return ew.convert_element_type(inside, dtype)


def _masked(lhs, mask, ragged):
    """``lhs`` with a new leading group axis: ``out[g, ...] = lhs * mask[g]`` along
    ``ragged``."""
    shape = tuple(aval_of(lhs).shape)
    g = aval_of(mask).shape[0]
    full = (g,) + shape
    return ew.mul(shape_ops.broadcast_in_dim(lhs, full, tuple(range(1, len(full)))),
                  shape_ops.broadcast_in_dim(mask, full, (0, ragged + 1)))


def _dims(name, value, ndim):
    out = tuple(int(d) for d in value)
    if any(not 0 <= d < ndim for d in out) or len(set(out)) != len(out):
        raise ValueError(f"ragged_dot_general: {name} {tuple(value)} are not distinct "
                         f"dimensions of a rank-{ndim} operand")
    return out


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """Ragged matrix multiplication (JAX's modes; ``m``/``k``/``b`` the lhs ragged dim):

    1. ragged non-contracting ``m``, rhs group dim ``g``: ``[b.., m.., k..] x [g, b.., k..,
       n..] -> [b.., m.., n..]``, rows of group ``g`` multiplied by ``rhs[g]``;
    2. ragged contracting ``k``, no rhs group dim: ``-> [g, b.., m.., n..]``, the product
       over group ``g``'s part of ``k`` alone;
    3. ragged batch ``b``, no rhs group dim: ``-> [b.., m.., n..]`` (batch entries past
       ``sum(group_sizes)`` are zero).

    ``group_sizes`` is ``int[g]``; ``group_offset`` and ``out_sharding`` are not supported.
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot_general: out_sharding is not supported")
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError("ragged_dot_general: ragged_dot_dimension_numbers must be a "
                        f"lax.RaggedDotDimensionNumbers, got {type(dn).__name__}")
    ls, rs, gs = (tuple(aval_of(v).shape) for v in (lhs, rhs, group_sizes))
    if len(gs) != 1:
        raise NotImplementedError(f"ragged_dot_general: group_sizes must have shape [g], got "
                                  f"{gs} (per-batch group sizes are not supported)")
    if not dtypes.is_integer(aval_of(group_sizes).dtype):
        raise TypeError(f"ragged_dot_general: group_sizes must be integers, got "
                        f"{aval_of(group_sizes).dtype}")
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    lc, lb, rc, rb = (tuple(int(d) for d in v) for v in (lc, lb, rc, rb))
    _dims("lhs contracting/batch dims", lc + lb, len(ls))
    _dims("rhs contracting/batch dims", rc + rb, len(rs))
    if len(dn.lhs_ragged_dimensions) != 1:
        raise ValueError("ragged_dot_general: lhs_ragged_dimensions must name one dimension, "
                         f"got {tuple(dn.lhs_ragged_dimensions)}")
    (ragged,) = _dims("lhs_ragged_dimensions", dn.lhs_ragged_dimensions, len(ls))
    groups = _dims("rhs_group_dimensions", dn.rhs_group_dimensions, len(rs))
    g = gs[0]
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    mask = _membership(group_sizes, ls[ragged], aval_of(lhs).dtype)
    shift = tuple(d + 1 for d in lb), tuple(d + 1 for d in lc)
    if ragged not in lc and ragged not in lb:        # mode 1: the group picks the rhs
        if len(groups) != 1 or rs[groups[0]] != g:
            raise ValueError("ragged_dot_general: with a ragged non-contracting lhs dimension "
                             f"the rhs needs one group dimension of size {g}, got "
                             f"rhs_group_dimensions {tuple(groups)} of rhs shape {rs}")
        return lax_dot.dot_general(_masked(lhs, mask, ragged), rhs,
                                   (((0,) + shift[1], groups + rc), (shift[0], rb)), **kw)
    if groups:
        raise ValueError("ragged_dot_general: the rhs has no group dimension when the ragged "
                         f"lhs dimension is a contracting or batch one, got {tuple(groups)}")
    if ragged in lc:                                 # mode 2: one product per group
        out = lax_dot.dot_general(_masked(lhs, mask, ragged), rhs,
                                  ((shift[1], rc), (shift[0], rb)), **kw)
        # dot_general puts the batch dims first, then the lhs free dims (the group first)
        nb = len(lb)
        perm = (nb,) + tuple(range(nb)) + tuple(range(nb + 1, len(aval_of(out).shape)))
        return shape_ops.transpose(out, perm)
    # mode 3: the batch entries of all groups together (those past the last group are zero)
    inside = red.reduce_max(mask, (0,))
    masked = ew.mul(lhs, shape_ops.broadcast_in_dim(inside, ls, (ragged,)))
    return lax_dot.dot_general(masked, rhs, ((lc, rc), (lb, rb)), **kw)
