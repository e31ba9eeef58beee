"""Sharding rules of the lax primitives (explicit sharding, core/sharding_rules.py), given by
category: elementwise ops keep their operands' common sharding, reductions drop the reduced
dimensions, shape operations move shardings with the dimensions, ``dot_general`` follows
JAX's rules, gathers/scatters/convolutions/windows take splits where they do not cross
them. The lax primitives left without a rule declare ``UNSHARDED_ONLY`` (an operand split
over an Explicit axis raises). Error texts are JAX 0.10.2's where JAX has them (checked
against JAX by hand; the tests assert them)."""
from __future__ import annotations

import math

from pyjax._src.core.sharding_rules import (UNSHARDED_ONLY, ShardingTypeError,
                                            explicit_spec, format_entry, format_spec,
                                            param_spec, spec_str)
from pyjax._src.lax import (barrier, dot, elementwise, fft, reductions, shape_ops,
                            sharding_constraint, slicing, sorting, stop_gradient)


def _spec(aval):
    s = explicit_spec(aval)
    return ((),) * len(aval.shape) if s is None else s


def _mesh_sizes(avals):
    for a in avals:
        s = getattr(a, "sharding", None)
        if explicit_spec(a) is not None:
            return dict(zip(s.mesh.axis_names, s.mesh.axis_sizes))
    return {}


# ---- elementwise: the common sharding of the operands of the result's rank ----

def nary_rule(name):
    def rule(avals_in, aval_out, **params):
        out_ndim = len(getattr(aval_out, "shape", ()))
        want = param_spec(params, out_ndim)
        if want is not None:
            return want
        specs = [_spec(a) for a in avals_in if len(a.shape) == out_ndim]
        out = []
        for d in range(out_ndim):
            got = {s[d] for s in specs if s[d]}
            if len(got) > 1:
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: "
                    f"{', '.join(format_spec(s) for s in specs)}.")
            out.append(got.pop() if got else ())
        return tuple(out)
    return rule


# ---- reductions ----

def _reduce_rule(avals_in, aval_out, *, axes, **_):
    return tuple(p for i, p in enumerate(_spec(avals_in[0])) if i not in axes)


def _cumulative_rule(avals_in, aval_out, *, axis, **_):
    spec = _spec(avals_in[0])
    if spec[axis]:
        raise ShardingTypeError(f"Input should be unsharded over the axis being reduced. Got "
                                f"input type={avals_in[0]} and axis={axis}")
    return spec


def _sort_rule(avals_in, avals_out, *, dimension, **_):
    # unsplit operands (argsort's iota) join the keys' sharding
    spec = nary_rule("sort")(avals_in, avals_out[0])
    if spec[dimension]:
        typed = next(a for a in avals_in if explicit_spec(a) is not None)
        raise ShardingTypeError(f"Arguments to sort must be unsharded over the sorting "
                                f"dimension. Got arg sharding={typed.sharding} and "
                                f"sorting dimension={dimension}")
    return [spec] * len(avals_out)


def _top_k_rule(avals_in, avals_out, **_):
    spec = _spec(avals_in[0])
    if spec[-1]:
        raise ShardingTypeError(f"The input should be unsharded over the axis along which to "
                                f"compute the top_k values. Got input type={avals_in[0]} and "
                                f"axis={len(spec) - 1}")
    return [spec, spec]


def _approx_top_k_rule(avals_in, avals_out, *, reduction_dimension, **_):
    spec = _spec(avals_in[0])
    if spec[reduction_dimension]:  # JAX prints the dimension as it was passed (-1)
        raise ShardingTypeError(f"reduction dimension {reduction_dimension} in operand "
                                f"{avals_in[0]} should be unsharded i.e. the spec of that dim "
                                "should be `None`.")
    return [spec, spec]


def _user_reduce_rule(avals_in, avals_out, *, dimensions, **_):
    # like the monoid reductions: every result drops the reduced dimensions of operand 0's
    # spec (the operands' shardings must agree, the init values are scalars)
    n = len(avals_in) // 2
    spec = nary_rule("reduce")(avals_in[:n], avals_in[0])
    out = tuple(p for i, p in enumerate(spec) if i not in dimensions)
    return [out] * len(avals_out)


# ---- shape operations ----

def _broadcast_in_dim_rule(avals_in, aval_out, *, shape, broadcast_dimensions, **params):
    want = param_spec(params, len(shape))
    if want is not None:
        return want
    out = [()] * len(shape)
    for p, d in zip(_spec(avals_in[0]), broadcast_dimensions):
        out[d] = p
    return tuple(out)


def _transpose_rule(avals_in, aval_out, *, permutation):
    spec = _spec(avals_in[0])
    return tuple(spec[p] for p in permutation)


def _squeeze_rule(avals_in, aval_out, *, dimensions):
    return tuple(p for i, p in enumerate(_spec(avals_in[0])) if i not in dimensions)


def _same_rule(avals_in, aval_out, **_):
    return _spec(avals_in[0])


def _check_divisible(what, avals_in, out_shape, spec=None):
    sizes = _mesh_sizes(avals_in)
    spec = _spec(avals_in[0]) if spec is None else spec
    for p, n in zip(spec, out_shape):
        k = math.prod(sizes[a] for a in p)
        if p and n % k:
            raise ShardingTypeError(
                f"{what} on sharded dims where out dim ({n}) is not divisible by mesh axes "
                f"({k}) with spec ({', '.join(p)}) is not implemented. Got input "
                f"type={_first_typed(avals_in).str_short()} and output "
                f"shape={tuple(out_shape)}")
    return spec


def _first_typed(avals):
    return next((a for a in avals if explicit_spec(a) is not None), avals[0])


def _slice_rule(avals_in, aval_out, **_):
    return _check_divisible("slicing", avals_in, aval_out.shape)


def _pad_rule(avals_in, aval_out, **_):
    if explicit_spec(avals_in[1]) is not None:
        raise ShardingTypeError(f"pad's padding value must be unsharded, got {avals_in[1]}")
    return _check_divisible("padding", avals_in, aval_out.shape)


def _dynamic_slice_rule(avals_in, aval_out, *, slice_sizes):
    spec = _spec(avals_in[0])
    for d, (p, n, m) in enumerate(zip(spec, avals_in[0].shape, slice_sizes)):
        if p and n != m:
            raise ShardingTypeError(
                f"dynamic_slice on sharded dims is not implemented: dimension {d} of "
                f"{avals_in[0]} is sharded and sliced to size {m}")
    if any(explicit_spec(a) is not None for a in avals_in[1:]):
        raise ShardingTypeError("dynamic_slice start indices must be unsharded")
    return spec


def _dynamic_update_slice_rule(avals_in, aval_out):
    # JAX 0.10.2: the operand's and the update's shardings must be equal (dynamic_slice's
    # transpose updates zeros typed like its operand: ad_util.typed_zeros)
    if any(explicit_spec(a) is not None for a in avals_in[2:]):
        raise ShardingTypeError("dynamic_update_slice start indices must be unsharded")
    spec, upd = _spec(avals_in[0]), _spec(avals_in[1])
    if spec != upd:
        mesh = _first_typed(avals_in).sharding.mesh
        names = tuple(n for n, t in zip(mesh.axis_names, mesh.axis_types)
                      if t.name == "Explicit")
        raise ShardingTypeError(
            f"dynamic_update_slice operand sharding must be equal to update sharding, got "
            f"operand sharding {_long(avals_in[0])}({{Explicit: {names}}}) and update "
            f"sharding {_long(avals_in[1])}({{Explicit: {names}}}).")
    return spec


def _long(aval):
    """``aval`` as JAX prints a type: ``float32[8@X,4]``, ``float32[8,2]``."""
    return spec_str(aval, _spec(aval)).replace(
        aval.str_short().split("[")[0] + "[", aval.dtype.name + "[", 1)


def _concatenate_rule(avals_in, aval_out, *, dimension):
    # Unsplit operands join split ones (jnp.pad and friends concatenate fresh zeros); JAX
    # itself asks for equal shardings, so this accepts more programs, never other values.
    specs = [_spec(a) for a in avals_in]
    out = []
    for d in range(len(aval_out.shape)):
        got = {s[d] for s in specs if s[d]}
        if len(got) > 1:
            raise ShardingTypeError(
                f"All operands should have the same sharding. Got shardings "
                f"{', '.join(format_spec(s) for s in specs)}")
        out.append(got.pop() if got else ())
    return _check_divisible("concatenate", avals_in, aval_out.shape, tuple(out))


def _split_rule(avals_in, avals_out, *, sizes, axis):
    spec = _spec(avals_in[0])
    for o in avals_out:
        _check_divisible("split", avals_in, o.shape, spec)
    return [spec] * len(avals_out)


def _stack_rule(avals_in, aval_out, *, axis):
    # jnp.stack in JAX concatenates its expanded operands: their shardings must be equal
    specs = [_spec(a) for a in avals_in]
    if len(set(specs)) > 1:
        raise ShardingTypeError(f"All operands should have the same sharding. Got shardings "
                                f"{', '.join(format_spec(s) for s in specs)}")
    return specs[0][:axis] + ((),) + specs[0][axis:]


def _unstack_rule(avals_in, avals_out, *, axis):
    spec = _spec(avals_in[0])
    if spec[axis]:
        raise ShardingTypeError(f"unstack operand cannot be sharded on the unstacking axis "
                                f"{axis}. Got operand type={avals_in[0].str_short()}")
    return [spec[:axis] + spec[axis + 1:]] * len(avals_out)


def _tile_rule(avals_in, aval_out, *, reps):
    operand = avals_in[0]
    spec = _spec(operand)
    for d, (p, r) in enumerate(zip(spec, reps)):
        if p and r != 1:
            raise ShardingTypeError(f"Operand cannot be sharded on dimension {d} when the "
                                    f"tiling is non-trivial. Got input type: {operand} with "
                                    f"reps: {tuple(reps)}")
    return spec


def _iota_rule(avals_in, aval_out, *, shape, **params):
    want = param_spec(params, len(shape))
    return ((),) * len(shape) if want is None else want


def _reshape_rule(avals_in, aval_out, *, new_sizes, dimensions=None, **params):
    want = param_spec(params, len(new_sizes))
    if want is not None:
        return want
    operand = avals_in[0]
    spec = _spec(operand)
    shape = operand.shape
    if dimensions is not None:
        spec = tuple(spec[d] for d in dimensions)
        shape = tuple(shape[d] for d in dimensions)
    if not any(spec):
        return ((),) * len(new_sizes)
    sizes = _mesh_sizes(avals_in)
    out = _reshape_spec(shape, spec, tuple(new_sizes), sizes)
    if out is None:
        raise ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via "
            "the `out_sharding` argument of jax.lax.reshape. Got operand type: "
            f"{operand}, new sizes: {tuple(new_sizes)}")
    return out


def _reshape_spec(shape, spec, new, sizes):
    """JAX's reshape rule: dimensions are matched in groups of equal size; a dimension kept
    keeps its sharding, one split gives it to its major part (which the axes must divide),
    several merged give theirs in order when the sharded ones come first; else None."""
    out = []
    i = j = 0
    while i < len(shape) or j < len(new):
        if j < len(new) and new[j] == 1 and (i >= len(shape) or shape[i] != 1):
            out.append(())
            j += 1
            continue
        if i < len(shape) and shape[i] == 1 and (j >= len(new) or new[j] != 1):
            if spec[i]:
                return None
            i += 1
            continue
        gi, gj = [i], [j]
        a, b = shape[i], new[j]
        i += 1
        j += 1
        while a != b:
            if a < b:
                a *= shape[i]
                gi.append(i)
                i += 1
            else:
                b *= new[j]
                gj.append(j)
                j += 1
        in_specs = [spec[k] for k in gi]
        if len(gi) == 1 and len(gj) == 1:
            out.append(in_specs[0])
        elif len(gi) == 1:  # split: the major output dimension takes the sharding
            p = in_specs[0]
            if p and new[gj[0]] % math.prod(sizes[n] for n in p):
                return None
            out += [p] + [()] * (len(gj) - 1)
        elif len(gj) == 1:  # merge: sharded dimensions must come first
            flags = [bool(p) for p in in_specs]
            if flags != sorted(flags, reverse=True):
                return None
            out.append(tuple(n for p in in_specs for n in p))
        elif any(in_specs):
            return None
        else:
            out += [()] * len(gj)
    return tuple(out)


# ---- dot_general ----

def _dot_general_rule(avals_in, aval_out, *, dimension_numbers, out_sharding=None, **_):
    lhs, rhs = avals_in
    (lc, rc), (lb, rb) = dimension_numbers
    if out_sharding is not None:
        return param_spec({"out_sharding": out_sharding}, len(aval_out.shape))
    ls, rs = _spec(lhs), _spec(rhs)
    lbs, rbs = tuple(ls[d] for d in lb), tuple(rs[d] for d in rb)
    batch = []
    for a, b in zip(lbs, rbs):
        if a and b and a != b:
            raise ShardingTypeError(
                "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                f"the consistent sharding, got {format_spec(lbs)} and {format_spec(rbs)}.")
        batch.append(a or b)
    lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
    if any(lcs) and any(rcs):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. "
            f"Got lhs_contracting_spec={format_spec(lcs)} and "
            f"rhs_contracting_spec={format_spec(rcs)}")
    lfree = [ls[d] for d in range(len(ls)) if d not in lb and d not in lc]
    rfree = [rs[d] for d in range(len(rs)) if d not in rb and d not in rc]
    out = tuple(batch + lfree + rfree)
    used = [n for p in out for n in p]
    if len(used) != len(set(used)):
        raise ShardingTypeError(
            f"dot_general operation with inputs: {lhs.str_short()}, {rhs.str_short()} "
            f"produces an illegally sharded result: {spec_str(aval_out, out)}")
    return out


# ---- gather: split operand dimensions must be whole windows ----

def _gather_rule(avals_in, aval_out, *, dimension_numbers, slice_sizes, **_):
    """A dimension of the operand may be split only where the gather takes it whole (a
    window dimension neither indexed nor collapsed: ``take(emb, ids, axis=0)`` with ``emb``
    split over its features); the result's batch dimensions take the indices'."""
    operand, indices = avals_in
    dn = dimension_numbers
    ospec, ispec = _spec(operand), _spec(indices)
    if ispec[-1]:
        raise ShardingTypeError(f"gather indices must be unsharded over their index vector "
                                f"(last) dimension, got {indices}")
    batch = list(ispec[:-1])
    for od, idd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        if ospec[od]:  # a batched gather (take_along_axis, sort's gradient): paired dims
            if batch[idd] and batch[idd] != ospec[od]:
                raise ShardingTypeError(
                    f"gather operand batching dimension {od} and indices batching dimension "
                    f"{idd} are sharded differently: {operand} and {indices}")
            batch[idd] = ospec[od]
    for d, p in enumerate(ospec):
        if p and (d in dn.start_index_map or d in dn.collapsed_slice_dims
                  or slice_sizes[d] != operand.shape[d]) and d not in dn.operand_batching_dims:
            raise ShardingTypeError(
                f"gather on sharded dims is not implemented: operand dimension {d} of "
                f"{operand} is indexed or sliced. Reshard it first "
                f"(jax.sharding.reshard(x, P(...)) with that dimension unsharded)")
    window = [ospec[d] for d in range(len(ospec))
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out, wi, bi = [], iter(window), iter(batch)
    for i in range(len(aval_out.shape)):
        out.append(next(wi) if i in dn.offset_dims else next(bi))
    return tuple(out)


def _scatter_rule(avals_in, aval_out, *, dimension_numbers, **_):
    """The result has the operand's sharding, whose split dimensions must be whole windows;
    the updates and indices may be split anywhere (XLA's partitioner combines the pieces)."""
    operand, indices, updates = avals_in
    dn = dimension_numbers
    spec = _spec(operand)
    sizes = slicing._window_sizes(operand.shape, updates.shape, dn)
    for d, p in enumerate(spec):
        if p and d not in dn.operand_batching_dims and (
                d in dn.inserted_window_dims or d in dn.scatter_dims_to_operand_dims
                or sizes[d] != operand.shape[d]):
            raise ShardingTypeError(
                f"scatter on sharded dims is not implemented: operand dimension {d} of "
                f"{operand} is indexed or partly updated. Reshard it first")
    return spec


# ---- windows and convolutions: split spatial dimensions stay split (XLA exchanges halos) ----

def _check_out_divisible(name, avals_in, out_shape, spec):
    # JAX's text (its _check_divisible for convolutions and windows)
    sizes = _mesh_sizes(avals_in)
    for p, n in zip(spec, out_shape):
        k = math.prod(sizes[a] for a in p)
        if p and n % k:
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({n}) is not divisible by mesh axes "
                f"({k}) with spec ({', '.join(p)}) is not implemented. Got input "
                f"type={_first_typed(avals_in).str_short()} and output "
                f"shape={tuple(int(d) for d in out_shape)}")


def window_rule(name):
    """JAX 0.10.2: any dimension may be split (pooling over a split image), the result keeps
    the operands' sharding, whose axes must divide the result's dimensions."""
    def rule(avals_in, avals_out, **_):
        outs = avals_out if isinstance(avals_out, (list, tuple)) else [avals_out]
        spec = nary_rule(name)(avals_in, outs[0])
        for o in outs:
            _check_out_divisible("reduce_window", avals_in, o.shape, spec)
        return [spec] * len(outs) if isinstance(avals_out, (list, tuple)) else spec
    return rule


def _conv_rule(avals_in, aval_out, *, dimension_numbers, feature_group_count,
               batch_group_count, **_):
    """The input's batch and spatial dimensions may be split and give the result's (JAX
    0.10.2; XLA exchanges the halos of split spatial dimensions). The kernel's output features
    may be split too (model parallelism), and the contracted input features (the batch of a
    kernel gradient) give an unsplit result there: XLA completes the sum. JAX asks for
    ``out_sharding=`` in those last cases. (The kernel gradient of a spatially split input
    gathers the spatial dimensions first: convolution.py.)"""
    lhs, rhs = avals_in
    dn = dimension_numbers
    ls, rs = _spec(lhs), _spec(rhs)
    ungrouped = feature_group_count == 1 and batch_group_count == 1
    spatial = list(zip(dn.lhs_spec[2:], dn.rhs_spec[2:], dn.out_spec[2:]))
    lhs_ok = {dn.lhs_spec[0]} | {l for l, _, _ in spatial} | (
        {dn.lhs_spec[1]} if ungrouped else set())
    rhs_ok = {dn.rhs_spec[0]} | ({dn.rhs_spec[1]} if ungrouped else set())
    for what, spec, aval, ok in (("lhs", ls, lhs, lhs_ok), ("rhs", rs, rhs, rhs_ok)):
        for d, p in enumerate(spec):
            if p and d not in ok:
                raise ShardingTypeError(
                    f"conv_general_dilated on sharded dims is not implemented: {what} "
                    f"dimension {d} of {aval} is sharded; only the input's batch and spatial "
                    "dimensions and (without feature or batch groups) the feature dimensions "
                    "may be")
    if ls[dn.lhs_spec[1]] and rs[dn.rhs_spec[1]] and ls[dn.lhs_spec[1]] != rs[dn.rhs_spec[1]]:
        raise ShardingTypeError(
            f"conv_general_dilated: the contracted feature dimensions are sharded differently, "
            f"{format_entry(ls[dn.lhs_spec[1]])} and {format_entry(rs[dn.rhs_spec[1]])}")
    out = [()] * len(aval_out.shape)
    out[dn.out_spec[0]] = ls[dn.lhs_spec[0]]
    out[dn.out_spec[1]] = rs[dn.rhs_spec[0]]
    for l, _, o in spatial:
        out[o] = ls[l]
    _check_out_divisible("conv_general_dilated", avals_in, aval_out.shape, out)
    return tuple(out)


# ---- linear algebra: batch dimensions may be split, the matrix dimensions may not ----

def matrix_rule(name):
    def rule(avals_in, avals_out, **_):
        nb = len(avals_in[0].shape) - 2
        batch = _spec(avals_in[0])[:max(nb, 0)]
        for i, a in enumerate(avals_in):
            s = _spec(a)
            if any(s[nb:]) or (s[:nb] and s[:nb] != batch):
                raise ShardingTypeError(
                    f"Input {i} to {name} must be unsharded on non-batch dimensions, but got "
                    f"P{format_spec(s)}.")
        outs = avals_out if isinstance(avals_out, (list, tuple)) else [avals_out]
        specs = [batch[:len(o.shape)] + ((),) * (len(o.shape) - len(batch[:len(o.shape)]))
                 for o in outs]
        return specs if isinstance(avals_out, (list, tuple)) else specs[0]
    return rule


def batch_rule(name, core_ndims):
    """Structured linear algebra (``tridiagonal_solve``, ``lu_pivots_to_permutation``):
    operand ``i`` has ``core_ndims[i]`` trailing core dimensions, which stay unsplit; the
    leading batch dimensions may be split (all alike) and are the results'."""
    def rule(avals_in, avals_out, **_):
        batch = None
        for i, (a, k) in enumerate(zip(avals_in, core_ndims)):
            s = _spec(a)
            nb = len(s) - k
            if any(s[nb:]) or (batch is not None and s[:nb] != batch):
                raise ShardingTypeError(
                    f"Input {i} to {name} must be unsharded on non-batch dimensions, but got "
                    f"P{format_spec(s)}.")
            batch = s[:nb] if batch is None else batch
        outs = avals_out if isinstance(avals_out, (list, tuple)) else [avals_out]
        specs = [batch + ((),) * (len(o.shape) - len(batch)) for o in outs]
        return specs if isinstance(avals_out, (list, tuple)) else specs[0]
    return rule


def _rng_bit_generator_rule(avals_in, avals_out, **_):
    # the new key keeps the key's sharding, the bits are replicated (JAX 0.10.2)
    return [_spec(avals_in[0]), ((),) * len(avals_out[1].shape)]


def _fft_rule(avals_in, aval_out, *, fft_lengths, **_):
    spec = _spec(avals_in[0])
    n = len(fft_lengths)
    if aval_out.shape[-n:] != avals_in[0].shape[-n:] and any(spec[-n:]):
        raise ShardingTypeError(f"fft changes the size of its transformed dimensions, which "
                                f"must then be unsharded; got {avals_in[0]}")
    return spec


def _sharding_constraint_rule(avals_in, aval_out, *, sharding):
    from pyjax._src.core.sharding_rules import spec_of_sharding
    return spec_of_sharding(sharding, len(aval_out.shape))


def _device_put_rule(avals_in, avals_out, *, devices, srcs, copy_semantics):
    from pyjax._src.core.sharding import NamedSharding
    from pyjax._src.core.sharding_rules import spec_of_sharding
    return [spec_of_sharding(d, len(a.shape)) if isinstance(d, NamedSharding) else _spec(a)
            for a, d in zip(avals_in, devices)]


def _barrier_rule(avals_in, avals_out):
    return [_spec(a) for a in avals_in]


def _install():
    for name in elementwise.__all__:
        p = getattr(elementwise, name + "_p", None)
        if p is not None and p.sharding_rule is None:
            p.def_rule("sharding_rule", nary_rule(p.name))
    from pyjax._src.core.primitive import registry
    for name, p in registry.items():  # the elementwise table declares more than __all__ names
        if p.sharding_rule is None and p.abstract_eval.__module__ == elementwise.__name__:
            p.def_rule("sharding_rule", nary_rule(p.name))
    for p in (reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p,
              reductions.reduce_min_p, reductions.reduce_and_p, reductions.reduce_or_p,
              reductions.reduce_xor_p, reductions.argmax_p, reductions.argmin_p):
        p.def_rule("sharding_rule", _reduce_rule)
    for p in (reductions.cumsum_p, reductions.cumprod_p, reductions.cummax_p,
              reductions.cummin_p, reductions.cumlogsumexp_p):
        p.def_rule("sharding_rule", _cumulative_rule)
    s = shape_ops
    for p, rule in ((s.broadcast_in_dim_p, _broadcast_in_dim_rule),
                    (s.reshape_p, _reshape_rule), (s.squeeze_p, _squeeze_rule),
                    (s.transpose_p, _transpose_rule), (s.rev_p, _same_rule),
                    (s.slice_p, _slice_rule), (s.dynamic_slice_p, _dynamic_slice_rule),
                    (s.dynamic_update_slice_p, _dynamic_update_slice_rule),
                    (s.concatenate_p, _concatenate_rule), (s.pad_p, _pad_rule),
                    (s.iota_p, _iota_rule), (dot.dot_general_p, _dot_general_rule),
                    (sorting.sort_p, _sort_rule), (sorting.top_k_p, _top_k_rule),
                    (fft.fft_p, _fft_rule), (stop_gradient.stop_gradient_p, _same_rule),
                    (slicing.gather_p, _gather_rule), (slicing.scatter_p, _scatter_rule),
                    (slicing.scatter_add_p, _scatter_rule), (slicing.scatter_sub_p, _scatter_rule),
                    (slicing.scatter_mul_p, _scatter_rule), (slicing.scatter_min_p, _scatter_rule),
                    (slicing.scatter_max_p, _scatter_rule),
                    (barrier.optimization_barrier_p, _barrier_rule),
                    (sharding_constraint.sharding_constraint_p, _sharding_constraint_rule),
                    (sharding_constraint.device_put_p, _device_put_rule)):
        p.def_rule("sharding_rule", rule)
    from pyjax._src.lax import (convolution, leftovers, linalg, linalg_eig, linalg_factor,
                                linalg_structured, parallel, rng, user_reductions,
                                windowed_reductions)
    for p in (linalg.cholesky_p, linalg.triangular_solve_p, linalg_factor.lu_p,
              linalg_factor.geqrf_p, linalg_factor.householder_product_p, linalg_factor.qr_p,
              linalg_factor.eigh_p, linalg_factor.svd_p, linalg_eig.eig_p,
              linalg_structured.hessenberg_p, linalg_structured.tridiagonal_p,
              linalg_structured.schur_p, linalg_structured.cholesky_update_p):
        p.def_rule("sharding_rule", matrix_rule(p.name))
    # No rule written yet: an operand split over an Explicit axis raises, naming the primitive.
    w = windowed_reductions
    for p in (w.reduce_window_sum_p, w.reduce_window_max_p, w.reduce_window_min_p,
              w.select_and_gather_add_p, w.select_and_scatter_add_p, w.reduce_window_p):
        p.def_rule("sharding_rule", window_rule(p.name))
    convolution.conv_general_dilated_p.def_rule("sharding_rule", _conv_rule)
    from pyjax._src.lax import split_stack_tile
    split_stack_tile.mulhi_p.def_rule("sharding_rule", nary_rule("mulhi"))
    from pyjax._src.lax import composite_ops
    for p, rule in ((split_stack_tile.split_p, _split_rule),
                    (split_stack_tile.stack_p, _stack_rule),
                    (split_stack_tile.unstack_p, _unstack_rule),
                    (split_stack_tile.tile_p, _tile_rule),
                    (user_reductions.reduce_p, _user_reduce_rule),
                    (composite_ops.approx_top_k_p, _approx_top_k_rule),
                    (rng.rng_bit_generator_p, _rng_bit_generator_rule),
                    (linalg_structured.tridiagonal_solve_p,
                     batch_rule("tridiagonal_solve", (1, 1, 1, 2))),
                    (linalg_factor.lu_pivots_to_permutation_p,
                     batch_rule("lu_pivots_to_permutation", (1,)))):
        p.def_rule("sharding_rule", rule)
    # rng_uniform's operands are scalars (JAX 0.10.2 itself fails on its Explicit sharding)
    for p in (leftovers.rng_uniform_p,
              # collectives name manual axes (shard_map, pmap), whose values are untyped
              parallel.psum_p, parallel.pmax_p, parallel.pmin_p, parallel.axis_index_p,
              parallel.all_gather_p, parallel.ppermute_p, parallel.reduce_scatter_p,
              parallel.all_to_all_p):
        p.def_rule("sharding_rule", UNSHARDED_ONLY)


_install()
