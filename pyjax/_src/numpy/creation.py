"""Array creation: ``array``, ``asarray``, ``zeros``/``ones``/``full`` (and ``*_like``),
``arange``, ``linspace``/``logspace``/``geomspace``, ``eye``/``identity``/``tri``/``tril``/
``triu``, ``meshgrid``, ``diag``, ``copy``, ``frombuffer``, ``astype``.

Filled arrays are a scalar broadcast on the device (no host array of the full size). Python
scalars are weakly typed as in JAX: ``jnp.array(1.0)`` is a weak float32; lists are strong.
"""
from __future__ import annotations

import builtins
import math
import operator
import sys
import warnings

import numpy as np

from pyjax._src.core import axes as axes_mod
from pyjax._src.core import dtypes
from pyjax._src.core import errors
from pyjax._src.core.array import ArrayImpl, from_numpy
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.numpy import key_arrays, util
from pyjax._src.numpy.eager_compiled import compiled_when_eager

__all__ = [
    "array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "full_like", "empty_like", "arange", "linspace", "logspace", "geomspace", "eye",
    "identity", "tri", "tril", "triu", "meshgrid", "diag", "diagflat", "copy", "frombuffer",
    "astype",
]

_int, _abs, _max, _min = builtins.int, builtins.abs, builtins.max, builtins.min
_PY_SCALARS = (bool, int, float, complex)


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------

def _check_dtype(dtype, fun):
    """``dtypes.check_user_dtype`` with its x64 warning pointing at the user's line."""
    if dtype is None:
        return None
    f, level = sys._getframe(1), 3
    while f is not None and f.f_globals.get("__name__", "").startswith("pyjax."):
        f, level = f.f_back, level + 1
    return dtypes.check_user_dtype(dtype, fun, stacklevel=level)


def _is_array(x):
    return isinstance(x, (ArrayImpl, Tracer))


def _concrete_or_error(x, what):
    """A concrete value for ``x``; a tracer raises JAX's ConcretizationTypeError."""
    if isinstance(x, Tracer):
        val = x.to_concrete_value()
        if val is None:
            raise errors.ConcretizationTypeError(
                x.aval.str_short(), f"The problem arose with the {what}.\n")
        return val
    return x


def _as_py_scalar(x, what):
    x = _concrete_or_error(x, what)
    if isinstance(x, (ArrayImpl, np.ndarray, np.generic)):
        if np.ndim(x) != 0:
            raise ValueError(f"{what} must be a scalar, got an array of shape {np.shape(x)}")
        return np.asarray(x)[()].item()
    return x


def _dim(n, fun, what="N"):
    n = _as_py_scalar(n, f"argument {what} of {fun}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fun}: {what} must be an integer, got {n!r}") from None
    if n < 0:
        raise axes_mod.NegativeDimensionError(f"{fun}: negative dimensions are not allowed, got "
                                      f"{what}={n}")
    return n


def _sharding_of(a):
    """``a``'s sharding when it is split over Explicit mesh axes (a traced value's type, or
    a laid-out array's), else None."""
    from pyjax._src.core.sharded_array import ShardedArray, ShardedShapedArray, typed_aval
    if type(a) is ShardedArray:
        t = typed_aval(a)
    else:
        t = getattr(a, "aval", None)
    return t.sharding if type(t) is ShardedShapedArray else None


def _resharded(x, out_sharding):
    """``x`` with the sharding ``out_sharding`` asks for (a sharding constraint under a trace,
    a transfer eagerly)."""
    if out_sharding is None:
        return x
    from pyjax._src.core.sharding_rules import as_named_sharding
    s = as_named_sharding(out_sharding, "out_sharding")
    if s is None:
        return x
    from pyjax._src.lax.sharding_constraint import with_sharding_constraint
    return with_sharding_constraint(x, s)


def _place(x, device):
    if device is None:
        return x
    from pyjax._src import runtime
    from pyjax._src.core.sharding import Sharding
    if not isinstance(device, (runtime.Device, Sharding)):
        raise TypeError(f"device= expects a Device or a Sharding (e.g. jax.devices()[1]), got "
                        f"{device!r} of type {type(device).__name__}")
    if not isinstance(x, ArrayImpl):
        return x
    from pyjax._src.dispatch import eager as dispatch
    return dispatch.device_put(x, device)


def _valid_leaf_type(t):
    return (t in _PY_SCALARS or issubclass(t, (ArrayImpl, Tracer))
            or (issubclass(t, (np.ndarray, np.generic))))


def _flatten(obj, leaves, types):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _flatten(o, leaves, types)
    else:
        if hasattr(obj, "__jax_array__"):
            obj = obj.__jax_array__()
        leaves.append(obj)
        types.add(type(obj))


def _leaf_dtype_reps(leaves, types):
    """A few representatives of the leaves whose result_type equals that of all leaves."""
    reps = []
    seen = set()
    for leaf in leaves:
        t = type(leaf)
        if t in _PY_SCALARS:
            key = t
        elif t is np.ndarray or isinstance(leaf, np.generic):
            key = ("np", leaf.dtype)
        else:
            key = ("arr", leaf.dtype, bool(getattr(leaf, "weak_type", False)))
        if key not in seen:
            seen.add(key)
            reps.append(leaf)
    return reps


def _check_leaf_types(types, obj):
    for t in types:
        if not _valid_leaf_type(t):
            raise TypeError(f"Value {obj!r} with type {t} is not a valid JAX array type: "
                            "expected arrays, NumPy values or Python bool/int/float/complex "
                            "scalars (possibly in nested lists/tuples).")


def _check_numpy_dtype(val, obj):
    dt = val.dtype
    if dt.kind not in "biufc" and not dtypes.is_numeric(dt):
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dt} from "
                        f"{type(obj).__name__} input.")


def _stack_traced(obj, dtype):
    """Nested lists holding tracers: build the array with lax ops (stack along axis 0)."""
    if isinstance(obj, (list, tuple)):
        leaves, types = [], set()
        _flatten(obj, leaves, types)
        if not any(issubclass(t, Tracer) for t in types):
            return _host_array(obj, dtype)
        parts = [_stack_traced(o, dtype) for o in obj]
        shapes = {tuple(util.shape_of(p)) for p in parts}
        if len(shapes) != 1:
            raise ValueError("setting an array element with a sequence. The requested array "
                             f"has an inhomogeneous shape: got parts of shapes {sorted(shapes)}")
        (shp,) = shapes
        parts = [lax_shape.reshape(p, (1,) + shp) for p in parts]
        return lax_shape.concatenate(parts, 0)
    if hasattr(obj, "__jax_array__"):
        obj = obj.__jax_array__()
    return lax_ew.convert_element_type(obj, dtype)


def _host_array(obj, dtype):
    val = np.asarray(obj, dtype=dtype)
    _check_numpy_dtype(val, obj)
    return val


def _convert(x, dtype, weak=False):
    return lax_ew.convert_element_type(x, dtype, weak)


# ---------------------------------------------------------------------------------------
# array / asarray
# ---------------------------------------------------------------------------------------

def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None):  # noqa: A002
    """Convert ``object`` to a pyjax array.

    ``object`` may be a pyjax array (or tracer), a NumPy array or scalar, a Python scalar
    (giving a weakly typed array unless ``dtype`` is given), a nested list/tuple of those
    (tracers inside are stacked with lax ops), an object with ``__jax_array__`` or one
    supporting the buffer protocol. Requesting a 64-bit ``dtype`` with x64 off warns and
    truncates to 32 bits, as in JAX. ``ndmin`` prepends size-1 dimensions.
    """
    if order is not None and order not in ("K", "C", "A"):
        raise NotImplementedError(f"array: only order='K' (or 'C'/'A') is supported, got "
                                  f"order={order!r}")
    ndmin = operator.index(ndmin)
    if _is_key_array(object):
        return _key_array(object, dtype, ndmin)
    if isinstance(object, (list, tuple)) and _holds_keys(object):  # keys stacked, as in JAX
        from pyjax._src.numpy import shape as jnp_shape
        return _key_array(jnp_shape.stack([array(o) for o in object]), dtype, ndmin)
    dt = _check_dtype(dtype, "array")
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()
    t = type(object)
    if isinstance(object, (ArrayImpl, Tracer)):
        weak = dt is None and object.aval.weak_type
        out = _convert(object, object.aval.dtype if dt is None else dt, weak)
        if copy and out is object and isinstance(object, ArrayImpl):
            out = lax_ew.copy_p.bind(object)
    elif t in _PY_SCALARS:
        weak = dt is None and t is not bool
        val = np.asarray(object, dtypes.python_scalar_dtype(object) if dt is None else dt) \
            if not (t is int and dt is None) else None
        if val is None:
            util.aval_of(object)  # raises OverflowError for ints out of the default int range
            val = np.asarray(object, dtypes.python_scalar_dtype(object))
        out = from_numpy(val, None, weak)
    elif isinstance(object, (np.ndarray, np.generic)):
        _check_numpy_dtype(np.asarray(object), object)
        if dt is None:
            dt = dtypes.canonicalize_dtype(object.dtype)
        val = np.asarray(object)
        if dtypes.is_complex(val.dtype) and not dtypes.is_complex(dt):
            val = val.real
        out = from_numpy(np.asarray(val, dt), None, False)
    elif isinstance(object, (list, tuple)):
        leaves, types = [], set()
        _flatten(object, leaves, types)
        _check_leaf_types(types, object)
        if dt is None:
            reps = _leaf_dtype_reps(leaves, types)
            dt = dtypes.result_type(*reps) if reps else dtypes.default_float_dtype()
        if any(issubclass(tp, Tracer) for tp in types):
            out = _stack_traced(object, dt)
        else:
            if dtype is None:  # Python ints that do not fit the default int raise
                for leaf in leaves:
                    if type(leaf) is int:
                        util.aval_of(leaf)
            # with a dtype they convert as NumPy does: to that dtype, raising out of its range
            out = from_numpy(_host_array(object, dt), None, False)
    elif object is None or isinstance(object, (str, bytes, dict, set)):
        raise TypeError(f"Value {object!r} with type {t} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")
    else:
        try:
            val = np.asarray(memoryview(object))
        except TypeError:
            val = np.asarray(object)
        if val.dtype == object_dtype:
            raise TypeError(f"Value {object!r} with type {t} is not a valid JAX array type. "
                            "Only arrays of numeric types are supported by JAX.")
        return array(val, dtype=dtype, copy=False, ndmin=ndmin, device=device)
    nd = util.ndim_of(out)
    if ndmin > nd:
        out = lax_shape.reshape(out, (1,) * (ndmin - nd) + tuple(util.shape_of(out)))
    return _place(out, device)


object_dtype = np.dtype(object)


def _is_key_array(x):
    dt = getattr(x, "dtype", None)
    return isinstance(getattr(dt, "type", None), type) and issubclass(dt.type, dtypes.extended)


def _holds_keys(seq):
    return any(_is_key_array(o) or isinstance(o, (list, tuple)) and _holds_keys(o)
               for o in seq)


def _is_key_dtype(dtype):
    return getattr(dtype, "type", None) is dtypes.prng_key


def _keys_filled(shape, fill, dtype, device, out_sharding, fun):
    """``zeros``/``ones``/``empty`` of a key dtype: key data whose words all are ``fill``."""
    if device is not None or out_sharding is not None:
        raise NotImplementedError(f"{fun} of a key dtype with device= or out_sharding=")
    from pyjax._src.random import prng
    shape = axes_mod.canonicalize_shape(shape, "shape", fun)
    data = lax_shape.full(tuple(shape) + dtype.key_shape, fill, np.dtype(np.uint32))
    return prng.PRNGKeyArray._wrap(data, dtype)


def _key_array(keys, dtype, ndmin):
    """jnp.array/asarray of a key array: the keys themselves (key arrays are immutable, so
    a copy is indistinguishable), as in JAX; another dtype or ndmin is an error."""
    if dtype is not None and dtype != keys.dtype:
        raise TypeError(f"array: cannot convert a key array (dtype {keys.dtype}) to "
                        f"dtype={dtype!r}; use random.key_data(keys) for the raw key data")
    if ndmin > keys.ndim:
        raise NotImplementedError(f"array: ndmin={ndmin} for a key array of ndim {keys.ndim}")
    return keys


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """Convert ``a`` to a pyjax array, copying only when needed (or when ``copy=True``)."""
    if type(a) is ArrayImpl and dtype is None and not copy and device is None:
        return a
    if isinstance(a, Tracer) and dtype is None:
        return a
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=device)


def copy(a, order=None):
    """A copy of ``a`` as a new array."""
    if key_arrays.is_key_array(a):
        if order not in (None, "K"):
            raise NotImplementedError(f"copy of a key array: only implemented for order='K', "
                                      f"got order={order!r}")
        return a.copy()
    util.check_arraylike("copy", a)
    return array(a, copy=True, order=order)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An array of the values in the bytes-like ``buffer`` (read as ``dtype``)."""
    dt = _check_dtype(dtype, "frombuffer")
    return asarray(np.frombuffer(buffer, dtype=np.dtype(dtype), count=count, offset=offset),
                   dtype=dt)


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype`` (complex to real keeps the real part, with NumPy's
    ComplexWarning)."""
    if _is_key_array(x):  # a key array keeps its key dtype, as in JAX
        if dtype != x.dtype:
            try:
                name = np.dtype(dtype).name
            except TypeError:
                name = str(dtype)
            raise ValueError(f"Cannot convert_element_type from {x.dtype} to {name}")
        if device is not None:
            raise NotImplementedError("astype(device=...) of a key array: use "
                                      "jax.device_put(keys, device)")
        return x
    util.check_arraylike("astype", x)
    dt = _check_dtype(dtype, "astype")
    if dt is None:
        raise TypeError("astype requires a dtype, got None")
    src = util.dtype_of(x)
    if dtypes.is_complex(src) and not dtypes.is_complex(dt):
        warnings.warn("Casting from complex to real dtype will discard the imaginary part.",
                      np.exceptions.ComplexWarning, stacklevel=3)
    out = _convert(x, dt, False)
    if not _is_array(out):
        out = asarray(out)
    elif copy and out is x and isinstance(x, ArrayImpl):
        out = lax_ew.copy_p.bind(x)
    return _place(out, device)


# ---------------------------------------------------------------------------------------
# filled arrays
# ---------------------------------------------------------------------------------------

def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of ``shape`` filled with ``fill_value`` (broadcast when it is an array).

    With ``dtype=None`` the result takes ``fill_value``'s dtype (weakly typed for Python
    scalars, as in JAX)."""
    shape = axes_mod.canonicalize_shape(shape, "shape", "full")
    dt = _check_dtype(dtype, "full")
    util.check_arraylike("full", fill_value)
    if util.ndim_of(fill_value) == 0:
        out = lax_shape.full(shape, fill_value, dt, out_sharding=out_sharding)
    else:
        out = _resharded(util.broadcast_to(asarray(fill_value, dt), shape), out_sharding)
    return _place(out, device)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (default dtype float32, or float64 with x64)."""
    if _is_key_dtype(dtype):
        return _keys_filled(shape, 0, dtype, device, out_sharding, "zeros")
    shape = axes_mod.canonicalize_shape(shape, "shape", "zeros")
    dt = _check_dtype(dtype, "zeros") or dtypes.default_float_dtype()
    return _place(lax_shape.full(shape, 0, dt, out_sharding=out_sharding), device)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ones (default dtype float32, or float64 with x64)."""
    if _is_key_dtype(dtype):
        return _keys_filled(shape, 1, dtype, device, out_sharding, "ones")
    shape = axes_mod.canonicalize_shape(shape, "shape", "ones")
    dt = _check_dtype(dtype, "ones") or dtypes.default_float_dtype()
    return _place(lax_shape.full(shape, 1, dt, out_sharding=out_sharding), device)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Like ``zeros`` (pyjax arrays are always initialized)."""
    if _is_key_dtype(dtype):
        return _keys_filled(shape, 0, dtype, device, out_sharding, "empty")
    shape = axes_mod.canonicalize_shape(shape, "shape", "empty")
    dt = _check_dtype(dtype, "empty") or dtypes.default_float_dtype()
    return _place(lax_shape.full(shape, 0, dt, out_sharding=out_sharding), device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array with the shape and dtype of ``a`` (unless ``shape``/``dtype`` are given),
    filled with ``fill_value``; weakly typed when ``a`` is and ``dtype`` is None."""
    if (key_arrays.is_key_array(a) and dtype in (None, a.dtype)
            or key_arrays.is_key_array(fill_value)) and device is None and out_sharding is None:
        if util.ndim_of(fill_value):  # an array of keys broadcast to the result's shape
            shp = util.shape_of(a) if shape is None else shape
            return util.broadcast_to(asarray(fill_value), tuple(shp))
        return lax_shape.full_like(a, fill_value, None, shape)  # keys (lax/key_ops.py)
    if not (hasattr(a, "shape") and hasattr(a, "dtype")):
        util.check_arraylike("full_like", a)
    util.check_arraylike("full_like", fill_value)
    dt = _check_dtype(dtype, "full_like")
    shp = util.shape_of(a) if shape is None else \
        axes_mod.canonicalize_shape(shape, "shape", "full_like")
    if out_sharding is None and shape is None:
        out_sharding = _sharding_of(a)  # explicit sharding: the result has a's type
    if np.ndim(fill_value) != 0:
        out_dt = dt if dt is not None else dtypes.canonicalize_dtype(a.dtype) \
            if hasattr(a, "dtype") else util.dtype_of(a)
        return _place(_resharded(util.broadcast_to(asarray(fill_value, out_dt), shp),
                                 out_sharding), device)
    return _place(_resharded(lax_shape.full_like(a, fill_value, dt, shp), out_sharding),
                  device)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with the shape and dtype of ``a`` (unless given)."""
    return full_like(a, 0, dtype, shape, device=device, out_sharding=out_sharding)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with the shape and dtype of ``a`` (unless given)."""
    return full_like(a, 1, dtype, shape, device=device, out_sharding=out_sharding)


def empty_like(prototype, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Like ``zeros_like``."""
    return full_like(prototype, 0, dtype, shape, device=device, out_sharding=out_sharding)


# ---------------------------------------------------------------------------------------
# ranges
# ---------------------------------------------------------------------------------------

def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in ``[start, stop)`` (NumPy's ``arange``).

    The bounds must be concrete (under ``jit`` a traced bound raises a
    ConcretizationTypeError, as in JAX). Integer arguments give the default int dtype
    (int32 without x64); ``arange(n)`` is ``lax.iota``.
    """
    dt = _check_dtype(dtype, "arange")
    if start is None and stop is None:
        raise TypeError("arange: start must be a number when stop is not given, got None")
    start = _concrete_or_error(start, "jnp.arange argument 'start'")
    stop = None if stop is None else _concrete_or_error(stop, "jnp.arange argument 'stop'")
    step = None if step is None else _concrete_or_error(step, "jnp.arange argument 'step'")
    util.check_arraylike("arange", *(v for v in (start, stop, step) if v is not None))
    for v in (start, stop, step):
        if v is not None and dtypes.is_complex(util.dtype_of(v)):
            raise TypeError("arange does not support complex bounds")
    if dt is None:
        dt = dtypes.result_type(*(v for v in (start, stop, step) if v is not None))
    start = _as_py_scalar(start, "jnp.arange argument 'start'")
    stop = None if stop is None else _as_py_scalar(stop, "jnp.arange argument 'stop'")
    step = None if step is None else _as_py_scalar(step, "jnp.arange argument 'step'")
    if stop is None and step is None:
        size = _max(0, math.ceil(start))
        if dtypes.is_bool(dt):
            return _place(_resharded(from_numpy(np.arange(size, dtype=dt)), out_sharding),
                          device)
        return _place(lax_shape.iota(dt, size, out_sharding=out_sharding), device)
    if step is not None and step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    val = np.arange(start, stop, step, dtype=dt)
    return _place(_resharded(from_numpy(val), out_sharding), device)


def _computation_dtype(dt):
    return dtypes.to_inexact_dtype(dt)


def _linspace_core(start, stop, num, endpoint, cdt, axis):
    """(values, step) for linspace in the inexact dtype ``cdt``; start/stop arrays."""
    start = asarray(start, cdt)
    stop = asarray(stop, cdt)
    bshape = util.broadcast_shapes(util.shape_of(start), util.shape_of(stop))
    nd = len(bshape) + 1
    axis = axes_mod.canonicalize_axis(axis, nd, fun="linspace")  # an axis of the output
    out_shape = bshape[:axis] + (num,) + bshape[axis:]
    bdims = tuple(i for i in range(nd) if i != axis)
    start, stop = util.broadcast_to(start, bshape), util.broadcast_to(stop, bshape)
    start_b = lax_shape.broadcast_in_dim(start, out_shape, bdims)
    stop_b = lax_shape.broadcast_in_dim(stop, out_shape, bdims)
    div = num - 1 if endpoint else num
    delta = lax_ew.sub(stop, start)
    if div <= 0:  # zero or one value: the step is undefined (nan), as in NumPy
        step = lax_shape.full_like(delta, np.nan)
        return (start_b if num else lax_shape.full(out_shape, 0, cdt)), step
    step = lax_ew.div(delta, np.asarray(div, cdt)[()])
    step_b = lax_ew.div(lax_ew.sub(stop_b, start_b), np.asarray(div, cdt)[()])
    idx = lax_shape.broadcasted_iota(cdt, out_shape, axis)
    out = lax_ew.add(lax_ew.mul(idx, step_b), start_b)
    if endpoint:  # the last value is exactly ``stop``, as in NumPy
        last = lax_ew.eq(idx, np.asarray(div, cdt)[()])
        out = lax_ew.select(last, stop_b, out)
    return out, step


def _spacing_dtypes(fun, num, dtype, start, stop, *others):
    """Checked ``num``, the result dtype (by default the inexact type of ``start`` and
    ``stop``) and the dtype to compute in, for ``linspace`` and its log-scale kin."""
    num = _dim(num, fun, "num")
    util.check_arraylike(fun, start, stop, *others)
    dt = _check_dtype(dtype, fun)
    if dt is None:
        dt = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    return num, dt, _computation_dtype(dt)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (arrays broadcast; the new
    axis is ``axis``). ``retstep=True`` also returns the spacing."""
    # the dtype is checked here, so that its x64 warning comes with every call
    res = _linspace(start, stop, num, endpoint, retstep, _check_dtype(dtype, "linspace"),
                    axis)
    if device is None:
        return res
    return (_place(res[0], device), res[1]) if retstep else _place(res, device)


# (the spacing functions are jitted in JAX with these static; start, stop and base are
# operands)
@compiled_when_eager("num", "endpoint", "retstep", "dtype", "axis")
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    num, dt, cdt = _spacing_dtypes("linspace", num, dtype, start, stop)
    out, step = _linspace_core(start, stop, num, endpoint, cdt, axis)
    if dtypes.is_integer(dt) or dtypes.is_bool(dt):
        out = lax_ew.floor(out) if not dtypes.is_complex(cdt) else out
    out = _convert(out, dt)
    return (out, step) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``."""
    return _logspace(start, stop, num, endpoint, base, _check_dtype(dtype, "logspace"), axis)


@compiled_when_eager("num", "endpoint", "dtype", "axis")
def _logspace(start, stop, num, endpoint, base, dtype, axis):
    num, dt, cdt = _spacing_dtypes("logspace", num, dtype, start, stop, base)
    lin, _ = _linspace_core(start, stop, num, endpoint, cdt, axis)
    base = asarray(base, cdt)
    if util.ndim_of(base) != 0:  # broadcast base like start/stop (without the new axis)
        nd = util.ndim_of(lin)
        ax = axis % nd
        base = lax_shape.expand_dims(base, (ax,))
    shape = util.broadcast_shapes(util.shape_of(base), util.shape_of(lin))
    out = lax_ew.pow(util.broadcast_to(base, shape), util.broadcast_to(lin, shape))
    if dtypes.is_integer(dt):
        out = lax_ew.floor(out)
    return _convert(out, dt)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values spaced evenly on a log scale from ``start`` to ``stop`` (negative bounds
    of the same sign are allowed)."""
    return _geomspace(start, stop, num, endpoint, _check_dtype(dtype, "geomspace"), axis)


@compiled_when_eager("num", "endpoint", "dtype", "axis")
def _geomspace(start, stop, num, endpoint, dtype, axis):
    num, dt, cdt = _spacing_dtypes("geomspace", num, dtype, start, stop)
    start = asarray(start, cdt)
    stop = asarray(stop, cdt)
    sign = lax_ew.sign(start)
    lo = lax_ew.log(lax_ew.div(start, sign))
    hi = lax_ew.log(lax_ew.div(stop, sign))
    lin, _ = _linspace_core(lo, hi, num, endpoint, cdt, axis)
    nd = util.ndim_of(lin)
    if nd:
        sign = lax_shape.broadcast_in_dim(
            util.broadcast_to(sign, util.shape_of(lin)[:axis % nd] +
                              util.shape_of(lin)[axis % nd + 1:]),
            util.shape_of(lin), tuple(i for i in range(nd) if i != axis % nd))
    out = lax_ew.mul(lax_ew.exp(lin), sign)
    if dtypes.is_integer(dt):
        out = lax_ew.floor(lax_ew.round(out, lax_ew.RoundingMethod.TO_NEAREST_EVEN))
    return _convert(out, dt)


# ---------------------------------------------------------------------------------------
# matrices
# ---------------------------------------------------------------------------------------

def _tri_mask(n, m, k):
    """Boolean (n, m) mask of ``col <= row + k``."""
    rows = lax_shape.broadcasted_iota(np.int32, (n, m), 0)
    cols = lax_shape.broadcasted_iota(np.int32, (n, m), 1)
    return lax_ew.ge(lax_ew.add(rows, np.int32(k)), cols)


def _k(k, fun):
    k = _as_py_scalar(k, f"argument k of {fun}")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{fun}: k must be an integer, got {k!r}") from None
    # clamp so that the offset fits int32 arithmetic without changing the mask
    return _max(-(2 ** 30), _min(2 ** 30, k))


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """An ``N x M`` array with ones on the ``k``-th diagonal and zeros elsewhere."""
    n = _dim(N, "eye", "N")
    m = n if M is None else _dim(M, "eye", "M")
    k = _k(k, "eye")
    dt = _check_dtype(dtype, "eye") or dtypes.default_float_dtype()
    rows = lax_shape.broadcasted_iota(np.int32, (n, m), 0)
    cols = lax_shape.broadcasted_iota(np.int32, (n, m), 1)
    mask = lax_ew.eq(lax_ew.add(rows, np.int32(k)), cols)
    return _place(_convert(mask, dt), device)


def identity(n, dtype=None):
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """An ``N x M`` array with ones at and below the ``k``-th diagonal."""
    n = _dim(N, "tri", "N")
    m = n if M is None else _dim(M, "tri", "M")
    k = _k(k, "tri")
    dt = _check_dtype(dtype, "tri") or dtypes.default_float_dtype()
    return _convert(_tri_mask(n, m, k), dt)


def _tri_select(m, k, fun, lower):
    util.check_arraylike(fun, m)
    m = asarray(m)
    shp = tuple(util.shape_of(m))
    if len(shp) < 2:
        raise ValueError(f"Argument to jax.numpy.{fun} must be at least 2D, got shape {shp}")
    k = _k(k, fun)
    mask = _tri_mask(shp[-2], shp[-1], k if lower else k - 1)
    mask = lax_shape.broadcast_in_dim(mask, shp, (len(shp) - 2, len(shp) - 1))
    zeros_ = lax_shape.full_like(m, 0)
    return lax_ew.select(mask, m, zeros_) if lower else lax_ew.select(mask, zeros_, m)


@compiled_when_eager("k")
def tril(m, k=0):
    """Lower triangle of ``m`` (the last two axes): elements above the ``k``-th diagonal are
    zeroed."""
    return _tri_select(m, k, "tril", True)


@compiled_when_eager("k")
def triu(m, k=0):
    """Upper triangle of ``m`` (the last two axes): elements below the ``k``-th diagonal are
    zeroed."""
    return _tri_select(m, k, "triu", False)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors (``indexing`` 'xy' or 'ij'), as a
    tuple."""
    util.check_arraylike("meshgrid", *xi)
    if not copy:  # as JAX: its arrays are never views
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    args = [asarray(x) for x in xi]
    for a in args:
        if util.ndim_of(a) != 1:
            raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shape "
                             f"{util.shape_of(a)}")
    n = len(args)
    sizes = [util.shape_of(a)[0] for a in args]
    axes = list(range(n))
    if indexing == "xy" and n >= 2:
        axes[0], axes[1] = 1, 0
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for a, ax in zip(args, axes):
        if sparse:
            shp = [1] * n
            shp[ax] = util.shape_of(a)[0]
            out.append(lax_shape.reshape(a, tuple(shp)))
        else:
            out.append(lax_shape.broadcast_in_dim(a, tuple(sizes), (ax,)))
    return tuple(out)  # a tuple, as the array API standard and JAX


@compiled_when_eager("k")
def diag(v, k=0):
    """For 1-D ``v``: a 2-D array with ``v`` on the ``k``-th diagonal. For 2-D ``v``: its
    ``k``-th diagonal."""
    util.check_arraylike("diag", v)
    v = asarray(v)
    k = _k(k, "diag")
    nd = util.ndim_of(v)
    if nd == 1:
        n = util.shape_of(v)[0]
        size = n + _abs(k)
        rows = lax_shape.broadcasted_iota(np.int32, (size, size), 0)
        cols = lax_shape.broadcasted_iota(np.int32, (size, size), 1)
        mask = lax_ew.eq(lax_ew.sub(cols, rows), np.int32(k))
        vpad = v if k == 0 else lax_shape.pad(v, 0, [(0, _abs(k), 0)])  # (k=0: keys too)
        vals = lax_shape.broadcast_in_dim(vpad, (size, size), (0,) if k >= 0 else (1,))
        return lax_ew.select(mask, vals, lax_shape.full_like(vals, 0))
    if nd == 2:
        fn = _lookup("diagonal")
        return fn(v, offset=k)
    raise ValueError(f"diag input must be 1d or 2d, got shape {util.shape_of(v)}")


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on the ``k``-th diagonal."""
    util.check_arraylike("diagflat", v)
    v = asarray(v)
    return diag(lax_shape.reshape(v, (math.prod(util.shape_of(v)),)), k)


def _lookup(name):
    import importlib
    for mod in ("shape", "reductions", "products", "indexing"):
        m = importlib.import_module(f"pyjax._src.numpy.{mod}")
        fn = getattr(m, name, None)
        if fn is not None and name in getattr(m, "__all__", ()):
            return fn
    raise NotImplementedError(f"jnp.{name} is not available yet")
