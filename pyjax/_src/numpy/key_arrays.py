"""``jnp`` functions applied to key arrays (dtype ``key<fry>``), as JAX allows: the shape
functions, ``stack``/``concatenate``, ``take``, ``copy``, ``array_equal`` work on the key data
and give key arrays back (``where``: ``random/prng.where_keys``; the lax primitives under the
other jnp functions: ``lax/key_ops.py``). Each jnp function tests ``is_key_array`` on its
first argument (one class attribute lookup) and hands key arrays here."""
import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.lax.key_ops import is_key as is_key_array
from pyjax._src.numpy import util


def _data(k):
    return k._base_array


def refuse(fun, x):
    """JAX's TypeError for a key array passed where only numeric dtypes make sense."""
    if is_key_array(x):
        raise TypeError(f"Cannot interpret '{x.dtype}' as a data type: {fun} takes numeric "
                        "arrays, got a key array (random.key_data(keys) gives its key data)")


def reshape(k, shape, order):
    return k.reshape(shape, order=order)


def ravel(k, order):
    return k.ravel(order=order)


def transpose(k, axes):
    return k.transpose(axes)


def squeeze(k, axis):
    return k.squeeze(axis)


def expand_dims(k, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_nd = k.ndim + len(axes)
    axes = axes_mod.canonicalize_axes(axes, out_nd, fun="expand_dims", allow_none=False)
    dims = iter(k.shape)
    return k.reshape(tuple(1 if i in axes else next(dims) for i in range(out_nd)))


def broadcast_to(k, shape):
    shape = axes_mod.canonicalize_shape(shape, "shape", "broadcast_to")
    return k._rewrap(util.broadcast_to(_data(k), tuple(shape) + k.dtype.key_shape))


def take(k, indices, axis, mode, fill_value, take_along=False):
    """``jnp.take`` / ``take_along_axis`` of keys: the key data taken along the same axis
    (out-of-bounds fill: key data of all ones bits, as JAX's uint32 fill)."""
    from pyjax._src.numpy import indexing
    if fill_value is not None:  # JAX 0.10.2 fails on it too (an unhashable key)
        raise TypeError(f"take: fill_value is not supported for key arrays (dtype {k.dtype})")
    if axis is None:
        k, axis = k.ravel(), 0
    axis = axes_mod.canonicalize_axis(axis, k.ndim, fun="take")
    if take_along:  # the indices' trailing unit dimension broadcasts over the key data's
        indices = indexing._int_indices(indices, "take_along_axis")
        nd = len(np.shape(indices)) if isinstance(indices, np.ndarray) else indices.ndim
        if nd != k.ndim:
            raise ValueError("indices and arr must have the same number of dimensions; "
                             f"{nd} vs. {k.ndim}")
        from pyjax._src.lax import shape_ops
        return k._rewrap(indexing.take_along_axis(
            _data(k), shape_ops.expand_dims(indices, (nd,)), axis=axis, mode=mode))
    return k._rewrap(indexing.take(_data(k), indices, axis=axis, mode=mode))


def array_equal(a, b):
    from pyjax._src.numpy import reductions
    if not (is_key_array(a) and is_key_array(b)) or a.dtype != b.dtype or a.shape != b.shape:
        return reductions._false()
    return reductions.all(a == b)


def join(arrays, axis, fun, new_axis):
    """``stack``/``concatenate`` of key arrays (as JAX allows): the key data joined along
    ``axis`` counted on the key arrays' own dims; every operand a key array of one dtype."""
    from pyjax._src.lax import shape_ops as lax_shape
    util.promote_dtypes(*arrays)  # keys join only with keys of their key dtype
    shape0 = arrays[0].shape
    nd = len(shape0) + new_axis
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = axes_mod.canonicalize_axis(axis, nd, fun=fun)
    data = [_data(a) for a in arrays]
    if new_axis:
        if any(a.shape != shape0 for a in arrays):
            raise ValueError(f"All input arrays must have the same shape, got "
                             f"{[a.shape for a in arrays]}")
        data = [lax_shape.expand_dims(d, (axis,)) for d in data]
    joined = data[0] if len(data) == 1 else lax_shape.concatenate(data, axis)
    return arrays[0]._rewrap(joined)
