"""Collective primitives over named axes: ``psum``, ``pmax``, ``pmin``, ``all_gather``,
``axis_index``, ``ppermute`` (and ``pmean`` built on ``psum``).

An axis name is bound by a mapping transformation (``vmap(..., axis_name=...)`` now; ``pmap`` and
``shard_map`` later). Inside ``vmap`` a collective is batched away by its batching rule: the
trace whose axis it names handles it, receiving that axis as ``axis_data`` (a primitive
declared with an ``axis_aware`` rule gets the extra keyword). Its lowering is for the
device-mapping transformations and is not written yet.

``axis_env`` is the stack of names bound while a mapped function is being traced, so that the
functions here can report an unbound name where the user wrote it.
"""
from __future__ import annotations

import math
import threading
import weakref

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr
from pyjax._src.core.primitive import Primitive, with_self
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, Zero, is_undefined_primal, not_mapped
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax import collective_groups as cg
from pyjax._src.lax import collective_lowering as cl
from pyjax._src.lax import elementwise as ew
from pyjax._src.core.axes import canonicalize_axis
from pyjax._src.lax import reductions
from pyjax._src.lax import shape_ops
from pyjax._src.lax import slicing
from pyjax._src.lax.base import aval_of

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "ppermute", "pshuffle",
           "axis_size", "psum_scatter", "all_to_all", "psum_p", "pmax_p", "pmin_p",
           "all_gather_p", "axis_index_p", "ppermute_p", "reduce_scatter_p", "all_to_all_p"]


# ---- the names bound while tracing ----

class _AxisEnv(threading.local):
    def __init__(self):
        self.frames = []  # (name, size), innermost last
        self.vma_checked = []  # names bound by a shard_map with check_vma=True


axis_env = _AxisEnv()


class bind_axis:
    """Context manager: ``name`` (of ``size``) is bound while the block runs (by a shard_map
    that checks varying manual axes when ``vma_checked``)."""

    __slots__ = ("name", "size", "vma_checked")

    def __init__(self, name, size, vma_checked=False):
        self.name, self.size, self.vma_checked = name, size, vma_checked

    def __enter__(self):
        axis_env.frames.append((self.name, self.size))
        axis_env.vma_checked.append(self.name if self.vma_checked else None)

    def __exit__(self, *exc):
        axis_env.frames.pop()
        axis_env.vma_checked.pop()
        return False


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _size_of(name):
    for n, size in reversed(axis_env.frames):
        if n == name:
            return size
    bound = [n for n, _ in axis_env.frames]
    raise NameError(f"unbound axis name: {name}. The following axis names (e.g. defined by "
                    f"vmap's axis_name or pmap) are available to collective operations: {bound}")


def axis_size(axis_name):
    """The size of the named mapped axis (the product of the sizes for several names)."""
    return math.prod(_size_of(n) for n in _names(axis_name))


# ---- which primitives need the axis, and whether a Jaxpr uses it ----

# A primitive's ``axis_aware`` rule (params, axis_name) -> bool says whether an application uses
# the axis. The batching trace handles such an application even when no operand is batched, and
# passes ``axis_data`` (name, size, spmd_name) to the batch rule.

def _uses_axes(params, name):
    return name in params["axes"]


def _names_axis(params, name):
    return params["axis_name"] == name


def jaxpr_uses_axis(jaxpr, name) -> bool:
    """Does ``jaxpr`` (a Jaxpr or ClosedJaxpr, sub-Jaxprs included) apply a collective over
    ``name``?"""
    if isinstance(jaxpr, ClosedJaxpr):
        cache = _uses_cache.get(jaxpr)
        if cache is None:
            cache = _uses_cache[jaxpr] = {}
        hit = cache.get(name)
        if hit is None:
            hit = cache[name] = jaxpr_uses_axis(jaxpr.jaxpr, name)
        return hit
    for eqn in jaxpr.eqns:
        check = eqn.primitive.axis_aware
        if check is not None and check(eqn.params, name):
            return True
    return False


_uses_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def params_use_axis(params, name):
    """The ``axis_aware`` rule of call primitives: a Jaxpr in the params uses the name."""
    return any(isinstance(v, (Jaxpr, ClosedJaxpr)) and jaxpr_uses_axis(v, name)
               for v in params.values())


# ---- psum / pmax / pmin ----

def _same_avals(*avals, axes, axis_index_groups=None):
    return [a for a in avals]


def _make_reducer(reduce_p, unbatched):
    """The rule of an all-reduce: reduce over the batch axis when it names this trace's axis
    (``unbatched(x, size)`` for an operand that does not vary along it); otherwise bind the
    collective on the batched values (elementwise in the batch axis)."""
    def make(prim):
        def rule(args, dims, *, axes, axis_index_groups=None, axis_data):
            if axis_data.name not in axes:
                outs = prim.bind(*args, axes=axes, axis_index_groups=axis_index_groups)
                return outs, list(dims)
            if axis_index_groups is not None:
                if len(axes) > 1:
                    raise NotImplementedError(
                        f"{prim} over several axis names {axes} with axis_index_groups "
                        "inside vmap (or a pmap under jit/grad/vmap)")
                k = len(axis_index_groups[0])
                outs = [unbatched(x, k) if d is not_mapped else
                        cg.reduce(x, d, axis_data.size, axis_index_groups, reduce_p)
                        for x, d in zip(args, dims)]
                return outs, [not_mapped if d is not_mapped else 0 for d in dims]
            outs = [unbatched(x, axis_data.size) if d is not_mapped else
                    reduce_p.bind(x, axes=(d,)) for x, d in zip(args, dims)]
            rest = tuple(a for a in axes if a != axis_data.name)
            if rest:
                outs = prim.bind(*outs, axes=rest, axis_index_groups=None)
            return outs, [not_mapped] * len(outs)
        return rule
    return with_self(make)


def _times(x, n):
    av = aval_of(x)
    if dtypes.is_bool(av.dtype):
        return x  # psum of booleans is their logical or
    return ew.mul(x, np.asarray(n, av.dtype)[()] if not av.weak_type else _weak_scalar(n, av))


def _weak_scalar(n, av):
    if dtypes.is_complex(av.dtype):
        return complex(n)
    if dtypes.is_inexact(av.dtype):
        return float(n)
    return int(n)


def _psum_jvp(primals, tangents, **params):
    out = psum_p.bind(*primals, **params)
    nz = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    t_nz = psum_p.bind(*[tangents[i] for i in nz], **params) if nz else []
    t_out = [Zero(aval_of(o)) for o in out]
    for i, t in zip(nz, t_nz):
        t_out[i] = t
    return out, t_out


def _psum_transpose(cts, *args, **params):
    # Each example's output is the sum over the axis, so each input's cotangent is the sum of
    # the outputs' cotangents over the axis: psum is its own transpose.
    nz = [i for i, c in enumerate(cts) if type(c) is not Zero]
    summed = psum_p.bind(*[cts[i] for i in nz], **params) if nz else []
    out = [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
    for i, s in zip(nz, summed):
        out[i] = s
    return out


def _all_reduce_lower(op_name, prim_name):
    def lower(ctx, *args, axes, axis_index_groups=None):
        return cl.all_reduce(ctx, args, axes, op_name, prim_name, axis_index_groups)
    return lower


psum_p = Primitive("psum", abstract_eval=_same_avals,
                   lower=_all_reduce_lower("stablehlo.add", "psum"),
                   multiple_results=True, linear=True, jvp=_psum_jvp,
                   transpose=_psum_transpose, axis_aware=_uses_axes,
                   batch=_make_reducer(reductions.reduce_sum_p, _times))


def _pminmax_jvp(prim):
    # As for max reductions: the tangent of the winners, averaged over ties.
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t_out = []
        for x, t, m in zip(primals, tangents, out):
            if type(t) is Zero or not dtypes.is_inexact(aval_of(x).dtype):
                t_out.append(Zero(aval_of(m)))
                continue
            hit = ew.convert_element_type(ew.eq(x, m), aval_of(t).dtype)
            # Two binds: the count of winners is a primal value, not part of the linear map.
            num, = psum_p.bind(ew.mul(t, hit), **params)
            cnt, = psum_p.bind(hit, **params)
            t_out.append(ew.div(num, cnt))
        return out, t_out
    return jvp


pmax_p = Primitive("pmax", abstract_eval=_same_avals,
                   lower=_all_reduce_lower("stablehlo.maximum", "pmax"),
                   multiple_results=True, jvp=with_self(_pminmax_jvp), axis_aware=_uses_axes,
                   batch=_make_reducer(reductions.reduce_max_p, lambda x, n: x))
pmin_p = Primitive("pmin", abstract_eval=_same_avals,
                   lower=_all_reduce_lower("stablehlo.minimum", "pmin"),
                   multiple_results=True, jvp=with_self(_pminmax_jvp), axis_aware=_uses_axes,
                   batch=_make_reducer(reductions.reduce_min_p, lambda x, n: x))


def _tree_bind(prim, x, axis_name, *, axis_index_groups=None):
    names = _names(axis_name)
    groups = _groups(prim.name, names, axis_index_groups)
    leaves, tree = pytree.tree_flatten(x)
    outs = prim.bind(*leaves, axes=names, axis_index_groups=groups) if leaves else []
    return pytree.tree_unflatten(tree, outs)


def _groups(fn, names, axis_index_groups):
    """The checked, canonical ``axis_index_groups`` of a collective over ``names`` (positions
    along them flattened in order) -- after checking that every name is bound."""
    n = math.prod(_size_of(name) for name in names)
    return cg.check_groups(axis_index_groups, n, fn, names[0] if len(names) == 1 else names)


def _no_groups_under_checked_shard_map(fn, names, axis_index_groups):
    # JAX's psum/pmean inside a shard_map with check_vma=True (its default) raise here too.
    if axis_index_groups is not None and any(n in axis_env.vma_checked for n in names):
        raise NotImplementedError(
            f"{fn} with axis_index_groups inside shard_map(check_vma=True) is not supported "
            "(as in JAX); pass check_vma=False to shard_map")


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum ``x`` (a pytree of arrays) over the mapped axis ``axis_name`` (a name or a tuple of
    names): every example gets the total."""
    _no_groups_under_checked_shard_map("psum", _names(axis_name), axis_index_groups)
    # As JAX: booleans are counted (summed as int32), not or-ed.
    x = pytree.tree_map(lambda v: ew.convert_element_type(v, np.dtype(np.int32))
                        if dtypes.is_bool(aval_of(v).dtype) else v, x)
    return _tree_bind(psum_p, x, axis_name, axis_index_groups=axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of ``x`` (a pytree) over the mapped axis ``axis_name``."""
    return _tree_bind(pmax_p, x, axis_name, axis_index_groups=axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of ``x`` (a pytree) over the mapped axis ``axis_name``."""
    return _tree_bind(pmin_p, x, axis_name, axis_index_groups=axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` (a pytree) over the mapped axis ``axis_name``; integer inputs give
    floating results, as ``psum(x) / axis_size``."""
    _no_groups_under_checked_shard_map("pmean", _names(axis_name), axis_index_groups)
    groups = _groups("pmean", _names(axis_name), axis_index_groups)
    n = axis_size(axis_name) if groups is None else len(groups[0])
    total = psum(x, axis_name, axis_index_groups=groups)

    def div(v):
        av = aval_of(v)
        if not dtypes.is_inexact(av.dtype):
            v = ew.convert_element_type(v, dtypes.to_inexact_dtype(av.dtype))
            av = aval_of(v)
        return ew.div(v, np.asarray(n, av.dtype)[()] if not av.weak_type
                      else _weak_scalar(n, av))
    return pytree.tree_map(div, total)


# ---- axis_index ----

def _axis_index_abstract_eval(*, axis_name):
    return ShapedArray((), np.dtype(np.int32), False)


def _axis_index_rule(args, dims, *, axis_name, axis_data):
    # Only reached for this trace's own name (the axis_aware rule says so).
    iota = shape_ops.iota_p.bind(dtype=np.dtype(np.int32), shape=(axis_data.size,),
                                    dimension=0, sharding=None)
    return iota, 0


axis_index_p = Primitive("axis_index", abstract_eval=_axis_index_abstract_eval,
                         lower=lambda ctx, *, axis_name: cl.axis_index(ctx, axis_name),
                         jvp=NOT_DIFFERENTIABLE,
                         batch=_axis_index_rule, axis_aware=_names_axis)


def axis_index(axis_name):
    """The position (int32) of the current example along the mapped axis ``axis_name``."""
    _size_of(axis_name)
    return axis_index_p.bind(axis_name=axis_name)


# ---- all_gather ----

def _all_gather_abstract_eval(x, *, axis_name, all_gather_dimension, axis_size, tiled,
                              axis_index_groups=None):
    shape = list(x.shape)
    d = all_gather_dimension
    if not 0 <= d <= len(shape) - (1 if tiled else 0):
        raise ValueError(f"all_gather: axis {d} is out of bounds for an operand of shape "
                         f"{tuple(shape)}{' (tiled)' if tiled else ''}")
    if tiled:
        shape[d] *= axis_size
    else:
        shape.insert(d, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_gather_rule(args, dims, *, axis_name, all_gather_dimension, axis_size, tiled,
                     axis_index_groups=None, axis_data):
    (x,), (d,) = args, dims
    a = all_gather_dimension
    if axis_data.name != axis_name:  # another trace's axis: gather the batched values
        if tiled:
            p, out_d = bu.to_batched_axis(a, d), d
        else:
            p, out_d = (a, d + 1) if a <= d else (a + 1, d)
        out = all_gather_p.bind(x, axis_name=axis_name, all_gather_dimension=p,
                                axis_size=axis_size, tiled=tiled,
                                axis_index_groups=axis_index_groups)
        return out, out_d
    if axis_index_groups is not None:   # every example gets its group's values
        return cg.gather(x, d, axis_data.size, axis_index_groups, a, tiled), 0
    # Every example gets the whole batch: the batch axis becomes axis ``a`` of one value.
    x = bu.bdim_to(x, d, a, axis_data.size)
    if tiled:
        shape = bu.shape_of(x)
        x = shape_ops.reshape_p.bind(
            x, new_sizes=shape[:a] + (shape[a] * shape[a + 1],) + shape[a + 2:],
            dimensions=None, sharding=None)
    return x, not_mapped


def _all_gather_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = all_gather_p.bind(x, **params)
    return out, (Zero(aval_of(out)) if type(t) is Zero else all_gather_p.bind(t, **params))


def _all_gather_transpose(ct, x, *, axis_name, all_gather_dimension, axis_size, tiled,
                          axis_index_groups=None):
    # Example i's input reaches slot i of every example's output: its cotangent is slot i of
    # the sum over the axis of the output cotangents.
    if type(ct) is Zero:
        return [Zero(x.aval)]
    total, = psum_p.bind(ct, axes=(axis_name,), axis_index_groups=axis_index_groups)
    i = axis_index_p.bind(axis_name=axis_name)
    if axis_index_groups is not None:   # the slot of example i is its place in its group
        place = cg.Layout(axis_index_groups).position
        i = shape_ops.reshape_p.bind(
            shape_ops.dynamic_slice_p.bind(place, i, slice_sizes=(1,)), new_sizes=(),
            dimensions=None, sharding=None)
    a = all_gather_dimension
    shape = aval_of(total).shape
    n = x.aval.shape[a] if tiled else 1
    start = ew.mul(i, np.int32(n)) if tiled else i
    zero = np.int32(0)
    starts = [zero] * len(shape)
    starts[a] = start
    sizes = list(shape)
    sizes[a] = n
    piece = shape_ops.dynamic_slice_p.bind(total, *starts, slice_sizes=tuple(sizes))
    if not tiled:
        piece = shape_ops.squeeze_p.bind(piece, dimensions=(a,))
    return [piece]


all_gather_p = Primitive("all_gather", abstract_eval=_all_gather_abstract_eval,
                         lower=lambda ctx, x, *, axis_name, all_gather_dimension, axis_size,
                         tiled, axis_index_groups=None: cl.all_gather(
                             ctx, x, axis_name, all_gather_dimension, tiled,
                             index_groups=axis_index_groups),
                         linear=True, jvp=_all_gather_jvp,
                         transpose=_all_gather_transpose, batch=_all_gather_rule,
                         axis_aware=_names_axis)


def _single_name(fn, axis_name):
    if isinstance(axis_name, (tuple, list)):
        if len(axis_name) != 1:
            raise NotImplementedError(f"{fn} over several axis names {tuple(axis_name)}")
        axis_name = axis_name[0]
    _size_of(axis_name)
    return axis_name


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Gather ``x`` (a pytree) from every example along the mapped axis ``axis_name``: each
    example gets the stack of all of them at position ``axis`` (concatenated along ``axis``
    when ``tiled``)."""
    name = _single_name("all_gather", axis_name)
    groups = _groups("all_gather", (name,), axis_index_groups)
    n = axis_size(name) if groups is None else len(groups[0])

    def gather(leaf):
        nd = aval_of(leaf).ndim + (0 if tiled else 1)
        a = canonicalize_axis(axis, nd, "axis", "all_gather", strict=False)
        return all_gather_p.bind(leaf, axis_name=name, all_gather_dimension=a, axis_size=n,
                                 tiled=bool(tiled), axis_index_groups=groups)
    return pytree.tree_map(gather, x)


# ---- ppermute ----

def _ppermute_rule(args, dims, *, axis_name, perm, axis_data):
    (x,), (d,) = args, dims
    if axis_data.name != axis_name:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    n = axis_data.size
    src_of = np.full(n, -1, np.int32)
    for s, t in perm:
        src_of[t] = s
    x = bu.bdim_to(x, d, 0, n)
    shape = bu.shape_of(x)
    if src_of.tolist() == list(range(n)):  # the identity permutation
        return x, 0
    rest = len(shape) - 1
    dn = slicing.GatherDimensionNumbers(offset_dims=tuple(range(1, rest + 1)),
                                        collapsed_slice_dims=(0,), start_index_map=(0,))
    idx = np.maximum(src_of, 0)[:, None]
    out = slicing.gather_p.bind(x, idx, dimension_numbers=dn, slice_sizes=(1,) + shape[1:],
                                indices_are_sorted=False, unique_indices=False,
                                mode=slicing.GatherScatterMode.PROMISE_IN_BOUNDS,
                                fill_value=None)
    if (src_of < 0).any():  # examples that receive nothing get zeros
        keep = shape_ops.broadcast_in_dim_p.bind(src_of >= 0, shape=shape,
                                                 broadcast_dimensions=(0,), sharding=None)
        zeros = shape_ops.broadcast_in_dim_p.bind(np.zeros((), aval_of(x).dtype), shape=shape,
                                                  broadcast_dimensions=(), sharding=None)
        out = ew.select_n_p.bind(keep, zeros, out)
    return out, 0


def _ppermute_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = ppermute_p.bind(x, **params)
    return out, (Zero(aval_of(out)) if type(t) is Zero else ppermute_p.bind(t, **params))


def _ppermute_transpose(ct, x, *, axis_name, perm):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))]


ppermute_p = Primitive("ppermute", abstract_eval=lambda x, **_: x,
                       lower=lambda ctx, x, *, axis_name, perm: cl.collective_permute(
                           ctx, x, axis_name, perm),
                       linear=True, jvp=_ppermute_jvp,
                       transpose=_ppermute_transpose, batch=_ppermute_rule,
                       axis_aware=_names_axis)


def ppermute(x, axis_name, perm):
    """Send ``x`` (a pytree) between examples along the mapped axis ``axis_name``: ``perm`` is
    a sequence of ``(source, destination)`` pairs; examples that are no destination get
    zeros."""
    name = _single_name("ppermute", axis_name)
    n = axis_size(name)
    perm = tuple((int(s), int(t)) for s, t in perm)
    srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got perm={perm}")
    if any(not 0 <= i < n for i in srcs + dsts):
        raise ValueError(f"ppermute perm {perm} has an index out of range for axis "
                         f"{name!r} of size {n}")
    return pytree.tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=name, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Example ``i`` gets the value of example ``perm[i]`` (a permutation of the axis)."""
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"pshuffle perm must be a permutation, got {perm}")
    return ppermute(x, axis_name, [(s, t) for t, s in enumerate(perm)])


# ---- psum_scatter (reduce_scatter) ----

def _reduce_scatter_abstract_eval(x, *, axis_name, scatter_dimension, axis_size, tiled,
                                  axis_index_groups=None):
    shape = list(x.shape)
    d = scatter_dimension
    if not 0 <= d < len(shape):
        raise ValueError(f"psum_scatter: scatter_dimension {d} is out of bounds for an "
                         f"operand of shape {tuple(shape)}")
    if tiled:
        if shape[d] % axis_size:
            raise ValueError(f"psum_scatter: the size {shape[d]} of dimension {d} of the "
                             f"operand (shape {tuple(shape)}) must be divisible by the size "
                             f"{axis_size} of axis {axis_name!r}")
        shape[d] //= axis_size
    else:
        if shape[d] != axis_size:
            raise ValueError(f"psum_scatter: without tiled=True the size {shape[d]} of "
                             f"dimension {d} of the operand (shape {tuple(shape)}) must equal "
                             f"the size {axis_size} of axis {axis_name!r}")
        del shape[d]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _reduce_scatter_rule(args, dims, *, axis_name, scatter_dimension, axis_size, tiled,
                         axis_index_groups=None, axis_data):
    (x,), (b,) = args, dims
    d = scatter_dimension
    if axis_data.name != axis_name:  # another trace's axis: scatter the batched values
        p = bu.to_batched_axis(d, b)
        out = reduce_scatter_p.bind(x, axis_name=axis_name, scatter_dimension=p,
                                    axis_size=axis_size, tiled=tiled,
                                    axis_index_groups=axis_index_groups)
        return out, (b if tiled or b < p else b - 1)
    if axis_index_groups is not None:   # place p of a group gets block p of its group's sum
        return cg.scatter(x, b, axis_data.size, axis_index_groups, d, tiled,
                          reductions.reduce_sum_p), 0
    # Example i gets block i of the sum over the batch.
    n = axis_data.size
    total = _times(x, n) if b is not_mapped else reductions.reduce_sum_p.bind(x, axes=(b,))
    if tiled:
        shape = bu.shape_of(total)
        total = shape_ops.reshape_p.bind(
            total, new_sizes=shape[:d] + (n, shape[d] // n) + shape[d + 1:], dimensions=None,
            sharding=None)
    return total, d


def _reduce_scatter_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = reduce_scatter_p.bind(x, **params)
    return out, (Zero(aval_of(out)) if type(t) is Zero else reduce_scatter_p.bind(t, **params))


def _reduce_scatter_transpose(ct, x, *, axis_name, scatter_dimension, axis_size, tiled,
                              axis_index_groups=None):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [all_gather_p.bind(ct, axis_name=axis_name, all_gather_dimension=scatter_dimension,
                              axis_size=axis_size, tiled=tiled,
                              axis_index_groups=axis_index_groups)]


reduce_scatter_p = Primitive(
    "reduce_scatter", abstract_eval=_reduce_scatter_abstract_eval,
    lower=lambda ctx, x, *, axis_name, scatter_dimension, axis_size, tiled,
    axis_index_groups=None: cl.reduce_scatter(ctx, x, axis_name, scatter_dimension, tiled,
                                              axis_index_groups),
    linear=True, jvp=_reduce_scatter_jvp, transpose=_reduce_scatter_transpose,
    batch=_reduce_scatter_rule, axis_aware=_names_axis)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """Sum ``x`` (a pytree) over the mapped axis ``axis_name`` and give example ``i`` block
    ``i`` of the sum along ``scatter_dimension`` (that dimension has the axis' size, or, when
    ``tiled``, a multiple of it)."""
    name = _single_name("psum_scatter", axis_name)
    groups = _groups("psum_scatter", (name,), axis_index_groups)
    n = axis_size(name) if groups is None else len(groups[0])

    def scatter(leaf):
        nd = aval_of(leaf).ndim
        d = canonicalize_axis(scatter_dimension, nd, "scatter_dimension", "psum_scatter",
                              strict=False)
        return reduce_scatter_p.bind(leaf, axis_name=name, scatter_dimension=d, axis_size=n,
                                     tiled=bool(tiled), axis_index_groups=groups)
    return pytree.tree_map(scatter, x)


# ---- all_to_all ----

def _all_to_all_abstract_eval(x, *, axis_name, split_axis, concat_axis, axis_size,
                              axis_index_groups=None):
    shape = list(x.shape)
    for what, a in (("split_axis", split_axis), ("concat_axis", concat_axis)):
        if not 0 <= a < len(shape):
            raise ValueError(f"all_to_all: {what} {a} is out of bounds for an operand of "
                             f"shape {tuple(shape)}")
    if shape[split_axis] % axis_size:
        raise ValueError(f"all_to_all: the size {shape[split_axis]} of split_axis "
                         f"{split_axis} (operand shape {tuple(shape)}) must be divisible by "
                         f"the size {axis_size} of axis {axis_name!r}")
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_to_all_rule(args, dims, *, axis_name, split_axis, concat_axis, axis_size,
                     axis_index_groups=None, axis_data):
    (x,), (b,) = args, dims
    if axis_data.name != axis_name:
        out = all_to_all_p.bind(x, axis_name=axis_name,
                                split_axis=bu.to_batched_axis(split_axis, b),
                                concat_axis=bu.to_batched_axis(concat_axis, b),
                                axis_size=axis_size, axis_index_groups=axis_index_groups)
        return out, b
    n = axis_data.size
    if axis_index_groups is not None:   # the exchange within each group, in group order
        lay = cg.Layout(axis_index_groups)
        x = cg.by_group(x, b, n, lay)    # (groups, k, *per-example shape)
        x = _exchange(x, lay.size, split_axis, concat_axis, lead=1)
        x = shape_ops.reshape_p.bind(x, new_sizes=(n,) + bu.shape_of(x)[2:], dimensions=None,
                                     sharding=None)
        return cg.take0(x, lay.inverse), 0
    return _exchange(bu.bdim_to(x, b, 0, n), n, split_axis, concat_axis, lead=0), 0


def _exchange(x, n, s, c, lead):
    """Example j gets, along concat axis ``c``, chunk j (of split axis ``s``) of every
    example i; ``x`` is (``lead`` leading dims, i, *per-example shape)."""
    pre = bu.shape_of(x)[:lead]
    shape = bu.shape_of(x)[lead + 1:]
    split = shape[:s] + (n, shape[s] // n) + shape[s + 1:]  # per example: (.., j, m, ..)
    x = shape_ops.reshape_p.bind(x, new_sizes=pre + (n,) + split, dimensions=None,
                                 sharding=None)
    i_pos, j_pos = lead, lead + 1 + s
    rest = [k for k in range(lead + 1 + len(split)) if k >= lead and k not in (i_pos, j_pos)]
    # per-example dims after removing j: index of dim c in ``rest`` order is c (as m sits at s)
    perm = list(range(lead)) + [j_pos] + rest[:c] + [i_pos] + rest[c:]
    x = shape_ops.transpose_p.bind(x, permutation=tuple(perm))
    out_shape = list(shape)
    out_shape[s] //= n
    out_shape[c] *= n
    return shape_ops.reshape_p.bind(x, new_sizes=pre + (n,) + tuple(out_shape),
                                    dimensions=None, sharding=None)


def _all_to_all_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = all_to_all_p.bind(x, **params)
    return out, (Zero(aval_of(out)) if type(t) is Zero else all_to_all_p.bind(t, **params))


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, axis_size,
                          axis_index_groups=None):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                              concat_axis=split_axis, axis_size=axis_size,
                              axis_index_groups=axis_index_groups)]


all_to_all_p = Primitive(
    "all_to_all", abstract_eval=_all_to_all_abstract_eval,
    lower=lambda ctx, x, *, axis_name, split_axis, concat_axis, axis_size,
    axis_index_groups=None: cl.all_to_all(ctx, x, axis_name, split_axis, concat_axis,
                                          axis_size, axis_index_groups),
    linear=True, jvp=_all_to_all_jvp, transpose=_all_to_all_transpose,
    batch=_all_to_all_rule, axis_aware=_names_axis)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Example ``j`` gets chunk ``j`` (of ``split_axis``) of every example, concatenated
    along ``concat_axis``. Without ``tiled`` the split axis has the axis' size and is
    removed, and a new axis of that size is inserted at ``concat_axis``."""
    name = _single_name("all_to_all", axis_name)
    groups = _groups("all_to_all", (name,), axis_index_groups)
    n = axis_size(name) if groups is None else len(groups[0])

    def a2a(leaf):
        nd = aval_of(leaf).ndim
        s = canonicalize_axis(split_axis, nd, "split_axis", "all_to_all", strict=False)
        c = canonicalize_axis(concat_axis, nd if tiled else nd, "concat_axis", "all_to_all",
                              strict=False)
        if tiled:
            return all_to_all_p.bind(leaf, axis_name=name, split_axis=s, concat_axis=c,
                                     axis_size=n, axis_index_groups=groups)
        shape = aval_of(leaf).shape
        if shape[s] != n:
            raise ValueError(f"all_to_all requires the size of the mapped axis axis_name to "
                             f"equal x.shape[split_axis], but they are {n} and {shape[s]} "
                             "respectively.")
        if s < c:
            c += 1
            leaf = shape_ops.expand_dims(leaf, (c,))
        elif s > c:
            leaf = shape_ops.expand_dims(leaf, (c,))
            s += 1
        out = all_to_all_p.bind(leaf, axis_name=name, split_axis=s, concat_axis=c,
                                axis_size=n, axis_index_groups=groups)
        if s != c:
            out = shape_ops.squeeze(out, (s,))
        return out
    return pytree.tree_map(a2a, x)
