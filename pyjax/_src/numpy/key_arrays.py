"""``jnp`` functions applied to key arrays (dtype ``key<fry>``), as JAX allows: the shape
functions, ``stack``/``concatenate``, ``take``, ``copy``, ``zeros_like``, ``array_equal`` work
on the key data and give key arrays back (``where``: ``random/prng.where_keys``). Each jnp function tests ``is_key_array`` on its first argument (one class
attribute lookup) and hands key arrays here."""
from pyjax._src.core import axes as axes_mod
from pyjax._src.numpy import util


def is_key_array(x):
    return getattr(type(x), "_pyjax_key_array", False)


def _data(k):
    return k._base_array


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


def take(k, indices, axis, mode, fill_value):
    if mode is not None or fill_value is not None:
        raise NotImplementedError("take of a key array with mode= or fill_value=")
    return k.take(indices, axis=axis)


def zeros_like(k, dtype, shape):
    from pyjax._src.lax import shape_ops
    if dtype is not None and dtype != k.dtype:
        raise ValueError(f"zeros_like: a key array keeps its dtype {k.dtype}, got "
                         f"dtype={dtype!r}")
    shape = k.shape if shape is None else tuple(axes_mod.canonicalize_shape(
        shape, "shape", "zeros_like"))
    data = _data(k)
    return k._rewrap(shape_ops.full(shape + k.dtype.key_shape, data.dtype.type(0), data.dtype))


def array_equal(a, b):
    from pyjax._src.numpy import reductions
    if not (is_key_array(a) and is_key_array(b)) or a.dtype != b.dtype or a.shape != b.shape:
        return reductions._false()
    return reductions.all(a == b)


def join(arrays, axis, fun, new_axis):
    """``stack``/``concatenate`` of key arrays (as JAX allows): the key data joined along
    ``axis`` counted on the key arrays' own dims; every operand a key array of one dtype."""
    from pyjax._src.lax import shape_ops as lax_shape
    if not all(map(is_key_array, arrays)) or len(
            {a.dtype for a in arrays}) != 1:
        raise TypeError(f"{fun}: key arrays join only with key arrays of the same key dtype, "
                        f"got {[getattr(a, 'dtype', type(a).__name__) for a in arrays]}")
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
