"""The lax primitives JAX applies to PRNG key arrays (dtype ``key<fry>``), on their key data.

A key array (``random/prng.PRNGKeyArray``, layer 5) holds ``uint32[*shape, w]`` key data
(``w`` = 2 for threefry, 4 for rbg). The shape primitives JAX allows on keys (select_n,
concatenate, reshape, transpose, broadcast_in_dim, squeeze, rev, slice, dynamic_slice,
dynamic_update_slice, gather, scatter) and the comparisons eq / ne are applied here as JAX's
"physical" rules do: the params are checked against the key arrays' own (logical) shapes by
the primitive's abstract evaluation, then the primitive is bound on the key data with one
trailing dimension added to its params, and the result is a key array again. Everything else
that reaches a primitive with a key array operand is refused (``trace.aval_handlers``).

The lax wrappers test ``is_key`` (one class attribute lookup) where a key array may come in;
this layer cannot import the key array class, so the test is by its ``_pyjax_key_array``
marker, and results are made with the operand's ``_rewrap``.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.trace import get_aval

_U32 = np.dtype(np.uint32)


def is_key(x):
    return getattr(type(x), "_pyjax_key_array", False)


def logical_aval(x):
    """What the primitive's checks see for a key array: its own shape (uint32 stands in for the
    key dtype, which the key-position check below has already settled)."""
    return ShapedArray(tuple(x.shape), _U32) if is_key(x) else get_aval(x)


def _describe(x):
    if is_key(x):
        return f"a key array of dtype {x.dtype} and shape {tuple(x.shape)}"
    av = get_aval(x)
    return f"an array of dtype {av.dtype.name} and shape {tuple(av.shape)}"


def _check_keys(name, keys):
    """Every operand in a key position is a key array of one key dtype."""
    first = next(k for k in keys if is_key(k))
    for k in keys:
        if not is_key(k):
            raise TypeError(f"{name}: key arrays combine only with key arrays of the same key "
                            f"dtype ({first.dtype}), got {_describe(k)}")
        if k.dtype != first.dtype:
            raise TypeError(f"{name}: key arrays combine only with key arrays of the same key "
                            f"dtype, got key dtypes {first.dtype} and {k.dtype}")
    return first


def _trailing(start, key_shape):
    return tuple(range(start, start + len(key_shape)))


def _bind(prim, args, key_pos, params, physical):
    """``prim`` on ``args`` whose operands at ``key_pos`` are key arrays: checked on the
    logical avals, bound on the key data with ``physical(params, ks, in_avals, out_aval)``'s
    params, wrapped as a key array of the first key operand's dtype."""
    first = _check_keys(prim.name, [args[i] for i in key_pos])
    in_avals = [logical_aval(a) for a in args]
    if any(is_key(a) for i, a in enumerate(args) if i not in key_pos):
        raise TypeError(f"{prim.name}: a key array cannot be used as operand "
                        f"{[i for i, a in enumerate(args) if is_key(a)][0]}")
    out_aval = prim.abstract_eval(*in_avals, **params)  # JAX's checks, on the keys' shapes
    ks = first.dtype.key_shape
    data = [a._base_array if i in key_pos else a for i, a in enumerate(args)]
    data, new_params = physical(data, dict(params), ks, in_avals, out_aval)
    return first._rewrap(prim.bind(*data, **new_params))


def _unsharded(params, name):
    if params.get("sharding") is not None:
        raise NotImplementedError(f"{name} of a key array with out_sharding=")


def _broadcast_in_dim(data, p, ks, in_avals, out):
    _unsharded(p, "broadcast_in_dim")
    p["broadcast_dimensions"] = p["broadcast_dimensions"] + _trailing(len(p["shape"]), ks)
    p["shape"] = p["shape"] + ks
    return data, p


def _reshape(data, p, ks, in_avals, out):
    _unsharded(p, "reshape")
    p["new_sizes"] = p["new_sizes"] + ks
    if p.get("dimensions") is not None:
        p["dimensions"] = p["dimensions"] + _trailing(in_avals[0].ndim, ks)
    return data, p


def _same(data, p, ks, in_avals, out):  # squeeze, rev, concatenate: params count key dims
    return data, p


def _transpose(data, p, ks, in_avals, out):
    p["permutation"] = p["permutation"] + _trailing(in_avals[0].ndim, ks)
    return data, p


def _slice(data, p, ks, in_avals, out):
    p["start_indices"] = p["start_indices"] + (0,) * len(ks)
    p["limit_indices"] = p["limit_indices"] + ks
    if p.get("strides") is not None:
        p["strides"] = p["strides"] + (1,) * len(ks)
    return data, p


def _zero_index(indices):
    dt = get_aval(indices[0]).dtype if indices else np.dtype(np.int32)
    return np.zeros((), dt)[()]


def _dynamic_slice(data, p, ks, in_avals, out):
    p["slice_sizes"] = p["slice_sizes"] + ks
    return data + [_zero_index(data[1:])] * len(ks), p


def _dynamic_update_slice(data, p, ks, in_avals, out):
    return data + [_zero_index(data[2:])] * len(ks), p


def _select_n(data, p, ks, in_avals, out):
    which = data[0]
    if in_avals[0].ndim:  # a per-element predicate covers each key's data
        from pyjax._src.lax import shape_ops
        nd = in_avals[0].ndim
        which = shape_ops.broadcast_in_dim(which, tuple(in_avals[0].shape) + ks,
                                           tuple(range(nd)))
    return [which] + data[1:], p


def _tile(data, p, ks, in_avals, out):
    p["reps"] = p["reps"] + (1,) * len(ks)
    return data, p


def _gather(data, p, ks, in_avals, out):
    from pyjax._src.lax.slicing import GatherScatterMode
    dn = p["dimension_numbers"]
    p["dimension_numbers"] = dn._replace(offset_dims=dn.offset_dims + _trailing(out.ndim, ks))
    p["slice_sizes"] = p["slice_sizes"] + ks
    if p["mode"] == GatherScatterMode.FILL_OR_DROP and p.get("fill_value") is not None:
        raise NotImplementedError("gather of a key array with fill_value=")
    return data, p


def _scatter(data, p, ks, in_avals, out):
    if p.get("update_fn") is not None:
        raise NotImplementedError("scatter_apply (x.at[...].apply) of a key array")
    dn = p["dimension_numbers"]
    p["dimension_numbers"] = dn._replace(
        update_window_dims=dn.update_window_dims + _trailing(in_avals[2].ndim, ks))
    return data, p


_PHYSICAL = {  # primitive name -> (operand positions that are keys (-1: all), param rule)
    "broadcast_in_dim": ((0,), _broadcast_in_dim), "reshape": ((0,), _reshape),
    "squeeze": ((0,), _same), "rev": ((0,), _same), "transpose": ((0,), _transpose),
    "slice": ((0,), _slice), "dynamic_slice": ((0,), _dynamic_slice),
    "dynamic_update_slice": ((0, 1), _dynamic_update_slice),
    "concatenate": (-1, _same), "select_n": ("cases", _select_n),
    "gather": ((0,), _gather), "scatter": ((0, 2), _scatter), "tile": ((0,), _tile),
}


def bind(prim, *args, **params):
    """``prim.bind(*args, **params)``, or its form on key data when an operand is a key array
    (primitives JAX allows on keys; any other refuses the key array)."""
    for a in args:
        if is_key(a):
            break
    else:
        return prim.bind(*args, **params)
    rule = _PHYSICAL.get(prim.name)
    if rule is None:
        raise TypeError(f"{prim.name} does not accept key arrays (got {_describe(a)}); use "
                        "random.key_data(keys) for their uint32 key data")
    pos, physical = rule
    if pos == -1:
        pos = tuple(range(len(args)))
    elif pos == "cases":
        pos = tuple(range(1, len(args)))
    return _bind(prim, args, pos, params, physical)


def compare(name, prim, x, y):
    """``lax.eq`` / ``lax.ne`` of key arrays: keys are equal when all their key data words
    are (JAX's rule); shapes as the comparison allows them."""
    if not (is_key(x) and is_key(y)) or x.dtype != y.dtype:
        dts = [str(v.dtype) if is_key(v) else get_aval(v).dtype.name for v in (x, y)]
        raise TypeError(f"{name} does not accept dtypes {', '.join(dts)}: key arrays compare "
                        "only with key arrays of the same key dtype")
    out = prim.abstract_eval(logical_aval(x), logical_aval(y))
    from pyjax._src.lax import reductions, shape_ops
    ks = x.dtype.key_shape
    full = tuple(out.shape) + ks
    xd, yd = (shape_ops.broadcast_in_dim(v._base_array, full,
                                         tuple(range(len(full) - v.ndim - len(ks), len(full))))
              for v in (x, y))
    words = prim.bind(xd, yd)
    reduce = reductions.reduce_and if name == "eq" else reductions.reduce_or
    return reduce(words, _trailing(len(out.shape), ks))


def full_like(x, fill_value, shape):
    """Keys like the key array ``x`` (its dtype, ``shape``) filled with the scalar key
    ``fill_value``, or whose key data words all are the integer ``fill_value`` (as JAX's
    ``full_like(keys, 0)`` / ``ones_like(keys)``)."""
    from pyjax._src.lax import shape_ops
    ks = x.dtype.key_shape
    shape = tuple(shape)
    if is_key(fill_value):
        if fill_value.dtype != x.dtype or fill_value.ndim:
            raise TypeError(f"full_like: a key array of dtype {x.dtype} is filled with a scalar "
                            f"key of the same dtype, got {_describe(fill_value)}")
        data = shape_ops.broadcast_in_dim(fill_value._base_array, shape + ks,
                                          _trailing(len(shape), ks))
    else:
        data = shape_ops.full(shape + ks, fill_value, _U32)
    return x._rewrap(data)
