"""``axis_index_groups``: a collective over a named axis acts within groups of its positions
(``[[0, 1], [2, 3]]``: positions 0 and 1 reduce together, 2 and 3 together).

Groups must partition the axis into groups of one size (JAX's "axis_index_groups must cover
all indices exactly once"; unequal sizes are refused, as JAX refuses them for all_gather and
psum_scatter and would divide pmean's sums by the first group's size). Here: the check, and
the batched forms used by ``vmap`` with an axis name (and so by ``pmap`` under ``jit``/``grad``):
the values are permuted so that each group is contiguous, reshaped to (groups, group size, ...),
combined along the group axis, and sent back to their positions.
"""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import shape_ops
from pyjax._src.lax import slicing


def check_groups(groups, axis_size, fn, axis_name):
    """``groups`` as a tuple of equal-length tuples partitioning ``range(axis_size)``, or a
    ValueError/TypeError saying what is wrong; None stays None."""
    if groups is None:
        return None
    try:
        canon = tuple(tuple(int(operator_index(i)) for i in g) for g in groups)
    except (TypeError, AttributeError):
        raise TypeError(f"{fn}: axis_index_groups must be a sequence of sequences of ints, "
                        f"got {groups!r}") from None
    flat = [i for g in canon for i in g]
    if not canon or sorted(flat) != list(range(axis_size)):
        raise ValueError(f"axis_index_groups must cover all indices exactly once: {fn} got "
                         f"{[list(g) for g in canon]} for axis {axis_name!r} of size "
                         f"{axis_size} (each of 0..{axis_size - 1} in exactly one group)")
    sizes = sorted({len(g) for g in canon})
    if len(sizes) > 1:
        raise ValueError(f"axis_index_groups must all be the same size: {fn} got groups of "
                         f"sizes {[len(g) for g in canon]}")
    return canon


def operator_index(i):
    if isinstance(i, (bool, np.bool_)):
        raise TypeError
    return operator.index(i)


class Layout:
    """Static index arrays of a grouping of ``n`` positions."""

    def __init__(self, groups):
        self.num, self.size = len(groups), len(groups[0])
        self.perm = np.asarray([i for g in groups for i in g], np.int32)   # group-major
        n = len(self.perm)
        self.inverse = np.empty(n, np.int32)
        self.inverse[self.perm] = np.arange(n, dtype=np.int32)
        self.group_of = (self.inverse // self.size).astype(np.int32)
        self.position = (self.inverse % self.size).astype(np.int32)   # place in its group


def take0(x, idx):
    """``x[idx]`` along axis 0 for a static int32 index vector."""
    shape = bu.shape_of(x)
    rest = len(shape) - 1
    dn = slicing.GatherDimensionNumbers(offset_dims=tuple(range(1, rest + 1)),
                                        collapsed_slice_dims=(0,), start_index_map=(0,))
    return slicing.gather_p.bind(x, np.asarray(idx, np.int32)[:, None], dimension_numbers=dn,
                                 slice_sizes=(1,) + shape[1:], indices_are_sorted=False,
                                 unique_indices=False,
                                 mode=slicing.GatherScatterMode.PROMISE_IN_BOUNDS,
                                 fill_value=None)


def _reshape(x, shape):
    return shape_ops.reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None,
                                    sharding=None)


def by_group(x, d, n, lay):
    """``x`` (batched at ``d`` along an axis of ``n``) as (groups, group size, ...)."""
    x = take0(bu.bdim_to(x, d, 0, n), lay.perm)
    return _reshape(x, (lay.num, lay.size) + bu.shape_of(x)[1:])


def reduce(x, d, n, groups, reduce_p):
    """Each position gets the reduction (``reduce_p`` over axes) of its group; batched at 0."""
    lay = Layout(groups)
    per_group = reduce_p.bind(by_group(x, d, n, lay), axes=(1,))
    return take0(per_group, lay.group_of)


def gather(x, d, n, groups, axis, tiled):
    """all_gather within groups: each position gets its group's values stacked (or, tiled,
    concatenated) at per-example ``axis``; batched at 0."""
    lay = Layout(groups)
    y = take0(by_group(x, d, n, lay), lay.group_of)       # (n, k, per-example...)
    y = bu.move_axis(y, 1, 1 + axis)
    if tiled:
        shape = bu.shape_of(y)
        y = _reshape(y, shape[:1 + axis] + (shape[1 + axis] * shape[2 + axis],)
                     + shape[3 + axis:])
    return y


def scatter(x, d, n, groups, dim, tiled, reduce_sum_p):
    """psum_scatter within groups: position ``p`` of a group gets block ``p`` (along
    per-example ``dim``) of its group's sum; batched at 0."""
    lay = Layout(groups)
    total = reduce_sum_p.bind(by_group(x, d, n, lay), axes=(1,))   # (groups, per-example...)
    if tiled:
        shape = bu.shape_of(total)
        total = _reshape(total, shape[:1 + dim] + (lay.size, shape[1 + dim] // lay.size)
                         + shape[2 + dim:])
    total = bu.move_axis(total, 1 + dim, 1)                 # (groups, k, rest...)
    shape = bu.shape_of(total)
    blocks = _reshape(total, (lay.num * lay.size,) + shape[2:])   # in group-major order
    return take0(blocks, lay.inverse)


def apply_to_replica_groups(replica_groups, groups):
    """The device groups of a collective over an axis whose replica groups are
    ``replica_groups`` (positions along the axis, per setting of the other axes), within
    ``groups`` of axis positions."""
    if groups is None:
        return replica_groups
    return [[row[i] for i in g] for row in replica_groups for g in groups]
