"""Eager execution: outside any transformation each primitive runs as a cached single-op
executable, asynchronously (results come back before they are computed)."""
from __future__ import annotations

import logging

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import config as config_mod
from pyjax._src.core import primitive as primitive_mod
from pyjax._src.core import trace as trace_mod
from pyjax._src.core import transfer_guard
from pyjax._src.core.array import ArrayImpl, array_from_buffer, from_numpy
from pyjax._src.core.sharded_array import ShardedArray, shard_host_value
from pyjax._src.core.sharding import Sharding
from pyjax._src.core.errors import UnexpectedTracerError
from pyjax._src.core.trace import Trace, Tracer, get_aval
from pyjax._src.dispatch import cache as cache_mod
from pyjax._src.dispatch import compiler, devices
from pyjax._src.dispatch.cache import Cache

config = config_mod.config
_log = logging.getLogger("pyjax")

# One-op executables: (primitive, params, *input avals) -> (executable, output avals). Its
# first level (``fast``) serves the hot paths by identity: (primitive, id(aval), ...) for
# calls without params, and (tag, id(aval), scalar or id(aval)) for the operator and ufunc
# runners below; each of those values holds the avals whose ids are in its key.
_primitives = Cache("eager primitives")
_fast = _primitives.fast
# Device arrays of Python and NumPy scalars, by value (the hot paths read ``entries``).
_scalars = Cache("host scalars")
_scalar_cache = _scalars.entries


def _on_x64_change(*_):
    cache_mod.clear_all()  # avals and dtypes mean other things now


config.on_change("jax_enable_x64", _on_x64_change)


def _on_default_device_change(_):
    devices._DEFAULT_DEVICE.clear()
    cache_mod.clear_all()  # cached scalar arrays live on the old default device


def _check_default_device(value):
    if value is None or value == "cpu":
        return
    if not isinstance(value, runtime.Device):
        raise TypeError(f"jax_default_device must be a device of pyjax.devices(), got {value!r}")


config.on_change("jax_default_device", _on_default_device_change)
config.add_validator("jax_default_device", _check_default_device)
# Updates of the CPU device count go to the runtime, which refuses a different count once the
# client exists (its initial value, from the environment, the runtime reads itself).
config.add_validator("jax_num_cpu_devices", runtime.set_cpu_device_count)
config.add_validator("jax_platforms", runtime.check_platforms)
config.on_change("jax_platforms", runtime.set_platforms)
# jax_no_execution: the runtime refuses every execution while it is set
from pyjax._src.runtime import executable as _executable  # noqa: E402

config.on_change("jax_no_execution", _executable.set_no_execution)
_executable.set_no_execution(config.jax_no_execution)


def scalar_to_array(x, device=None) -> ArrayImpl:
    """A device array for a Python scalar, weakly typed (bool is not weak), cached by value."""
    t = type(x)
    # 0.0 and -0.0 are equal keys (as are complex zeros): their keys carry the sign too
    key = (t, x) if x or t is int or t is bool else (t, x, repr(x))
    if device is None:
        arr = _scalar_cache.get(key)
        if arr is not None:
            if transfer_guard.active[0]:  # a transfer for the program, as in JAX
                transfer_guard.check_upload(arr.aval, device)
            return arr
    aval = get_aval(x)
    arr = from_numpy(np.asarray(x, aval.dtype), device, aval.weak_type)
    if device is None and x == x:  # NaN never finds its key again
        _scalars.put(key, arr)
    return arr


def to_array(x, device=None) -> ArrayImpl:
    """Any concrete value (Array, Python scalar, NumPy value) as a device array."""
    t = type(x)
    if t is ArrayImpl:
        return x
    if t in (bool, int, float, complex):
        return scalar_to_array(x, device)
    if isinstance(x, Tracer):
        trace_mod.check_tracer_live(x)
        raise UnexpectedTracerError(
            f"Encountered tracer {x!r} outside of the transformation that made it.")
    if t is ShardedArray:  # its _buf is the whole value on one device
        return x if device is None else from_numpy(x._value, device, x.aval.weak_type)
    if isinstance(x, np.generic) and device is None:
        key = (x.dtype, x.tobytes())  # NumPy scalars made by weak-type coercion recur often
        arr = _scalar_cache.get(key)
        if arr is None:
            aval = get_aval(x)
            arr = from_numpy(np.asarray(x, aval.dtype), None, False)
            _scalars.put(key, arr)
        elif transfer_guard.active[0]:
            transfer_guard.check_upload(arr.aval, device)
        return arr
    if isinstance(x, (np.ndarray, np.generic)):
        aval = get_aval(x)
        return from_numpy(np.asarray(x, aval.dtype), device, False)
    if isinstance(x, bool):
        return scalar_to_array(bool(x), device)
    for pytype in (int, float, complex):  # subclasses such as IntEnum
        if isinstance(x, pytype):
            return scalar_to_array(pytype(x), device)
    if hasattr(x, "__jax_array__"):
        return to_array(x.__jax_array__(), device)
    aval = get_aval(x)  # raises a TypeError that says what was passed
    return from_numpy(np.asarray(x, aval.dtype), device, aval.weak_type)


def pick_device(arrays):
    """The device to run on (see ``devices.call_device``)."""
    return devices.call_device(arrays)[0]


on_device = devices.on_device
_default_device = devices.default


_new_array = ArrayImpl.__new__  # creating without ArrayImpl.__init__ saves a Python call


def apply_primitive(primitive, args, params):
    """Runs one primitive now, as a cached single-op executable (asynchronously)."""
    if params or primitive.impl is not None:
        if len(args) == 1 and type(args[0]) is ArrayImpl and primitive.impl is None:
            # one Array and parameters (reshape, transpose, reductions...): a runner under
            # (primitive, aval id, params), one lookup instead of the general path
            x = args[0]
            try:
                key = (primitive, id(x.aval), *params.items())
                entry = _fast.get(key)
            except TypeError:  # unhashable params: the general path compiles uncached
                return _apply_general(primitive, args, params)
            if entry is None:
                entry = _param_entry(primitive, x.aval, params, key)
            run = entry[0]
            if run is None:
                return _apply_general(primitive, args, params)
            b = x._buf
            r = _new_array(ArrayImpl)
            r._buf = run(b, b.device)
            r.aval = entry[1]
            r._committed = x._committed
            r._npy = None
            return r
        return _apply_general(primitive, args, params)
    if len(args) == 1:
        x = args[0]
        if type(x) is not ArrayImpl:
            if type(x) is ShardedArray and sharded_apply:
                return sharded_apply[0](primitive, args, params)
            x = to_array(x)
        aval = x.aval
        entry = _fast.get((primitive, id(aval)))
        if entry is None:
            entry = _fast_entry(primitive, (aval,), (primitive, id(aval)))
        b = x._buf
        committed = x._committed
        outs = entry[0]((b,), b.device)
    elif len(args) == 2:
        x, y = args
        t = type(y)
        if type(x) is not ArrayImpl:
            if (type(x) is ShardedArray or t is ShardedArray) and sharded_apply:
                return sharded_apply[0](primitive, args, params)
            x = to_array(x)
        if t is not ArrayImpl:  # most often a Python scalar: its cached array, inline
            if t is ShardedArray and sharded_apply:
                return sharded_apply[0](primitive, args, params)
            c = _scalar_cache.get((t, y)) if t is int or (t is float and y) else None
            y = to_array(y) if c is None else c
        ax = x.aval
        ay = y.aval
        entry = _fast.get((primitive, id(ax), id(ay)))
        if entry is None:
            entry = _fast_entry(primitive, (ax, ay), (primitive, id(ax), id(ay)))
        b = x._buf
        c = y._buf
        device = b.device
        if c.device is not device:  # mixed devices: the general rules (or their error)
            return _apply_general(primitive, (x, y), params)
        committed = x._committed or y._committed
        outs = entry[0]((b, c), device)
    else:
        return _apply_general(primitive, args, params)
    out_aval = entry[1]
    if out_aval is not None:
        return array_from_buffer(out_aval, outs[0], committed)
    return [array_from_buffer(av, o, committed) for av, o in zip(entry[2], outs)]


_NOT_FAST = (None,)  # a first-level value: these operands take the general path
# True while jax_debug_nans/infs is on (dispatch/debug_values.py): operators take the general
# path, whose results are checked.
checking_values = [False]


def clear_fast_paths():
    """Forget the operators' runners (made again, for the current ``checking_values``)."""
    _fast.clear()


def _runner_entry(primitive, avals, *extra, params=None):
    """(run, out_aval, *extra, avals): the executable's single-result runner (the avals
    keep their ids, which key the first level, from being reused)."""
    if checking_values[0]:
        return _NOT_FAST + (*extra, avals)
    exe, out_avals = _cached_executable(primitive, params or {}, avals)
    return (exe.single_result_runner(), out_avals[0], *extra, avals)


def _param_entry(primitive, aval, params, key):
    if primitive.multiple_results:
        return _primitives.remember(key, _NOT_FAST + (aval,))
    return _primitives.remember(key, _runner_entry(primitive, (aval,), params=params))


def eager_binary(primitive, kinds, swapped=False, signed_zeros=True):
    """Fast eager ``primitive.bind(x, y)`` (``bind(y, x)`` if ``swapped``) for an ArrayImpl
    ``x`` whose jnp function is the bare primitive when the operands share a dtype of one of
    the ``kinds`` (NumPy dtype kind letters). ``signed_zeros=False`` says that the primitive
    cannot tell 0.0 from -0.0 (a comparison): a zero scalar, whose key is equal to the other
    zero's, may then take the fast path too.

    Returns ``(with_float, with_int, with_array)``: ``with_float(x, s)`` for a Python float
    ``s`` (weakly typed: it must take ``x``'s dtype as it is), ``with_int`` for a Python int and
    ``with_array(x, y)`` for an ArrayImpl ``y``. Each gives the result,
    or None when a trace is active or the operands need the general path. This is the hot
    path of eager ``x + 1.0``: one call from the operator to PJRT. Its runners live in the
    first level of the eager primitive cache, under keys that start with a tag of their own.
    """
    if primitive.multiple_results or primitive.impl is not None:
        raise ValueError(f"{primitive} has no eager single-result fast path")
    state = trace_mod._state
    new_array = _new_array
    fast = _fast
    remember = _primitives.remember

    def scalar_entry(x, s, key):
        t = type(s)
        if t is float and not s and signed_zeros:  # 0.0 and -0.0 are equal keys: leave
            return remember(key, _NOT_FAST + (x.aval,))  # zeros to the general path
        if t is int and (s or not signed_zeros) and x.aval.dtype.kind == "f":
            # a weak int takes x's float dtype
            try:
                get_aval(s)  # the general path's range check (OverflowError)
            except OverflowError:
                return _NOT_FAST
            t, s = float, float(s)
        c = _scalar_cache.get((t, s))
        if c is None:
            try:
                c = scalar_to_array(s)
            except (OverflowError, TypeError, ValueError):  # the general path says why
                return _NOT_FAST
        if (c.aval.dtype != x.aval.dtype or c.aval.weak_type is not True
                or x.aval.dtype.kind not in kinds):
            return remember(key, _NOT_FAST + (x.aval,))
        avals = (c.aval, x.aval) if swapped else (x.aval, c.aval)
        entry = _runner_entry(primitive, avals, c._buf, c)
        # NaN never finds its key again: remembering it would only fill the first level
        return remember(key, entry) if s == s else entry

    def with_scalar():
        tag = object()  # keys of this runner: (tag, id(x.aval), scalar)

        def run_scalar(x, s):
            if state.trace is not None:
                return None
            key = (tag, id(x.aval), s)
            entry = fast.get(key)
            if entry is None:
                entry = scalar_entry(x, s, key)
            run = entry[0]
            if run is None:
                return None
            b = x._buf
            c = entry[2]
            device = b.device
            if c.device is not device:
                return None
            r = new_array(ArrayImpl)
            r._buf = run(c, b, device) if swapped else run(b, c, device)
            r.aval = entry[1]
            r._committed = x._committed
            r._npy = None
            return r
        return run_scalar

    array_tag = object()

    def with_array(x, y):
        if state.trace is not None:
            return None
        ax = x.aval
        ay = y.aval
        key = (array_tag, id(ax), id(ay))
        entry = fast.get(key)
        if entry is None:
            if ax.dtype != ay.dtype or ax.shape != ay.shape or ax.dtype.kind not in kinds:
                entry = _NOT_FAST + (ax, ay)
            else:
                entry = _runner_entry(primitive, (ay, ax) if swapped else (ax, ay))
            remember(key, entry)
        if entry[0] is None:
            return None
        b = x._buf
        c = y._buf
        device = b.device
        if c.device is not device:
            return None
        r = new_array(ArrayImpl)
        r._buf = entry[0](c, b, device) if swapped else entry[0](b, c, device)
        r.aval = entry[1]
        r._committed = x._committed or y._committed
        r._npy = None
        return r
    return with_scalar(), with_scalar(), with_array


def eager_unary(primitive, kinds):
    """``f(x)``: ``primitive.bind(x)`` for an ArrayImpl ``x`` of a dtype of one of the
    ``kinds``, when no trace is active; else None (see ``eager_binary``)."""
    if primitive.multiple_results or primitive.impl is not None:
        raise ValueError(f"{primitive} has no eager single-result fast path")
    state = trace_mod._state
    new_array = _new_array
    fast = _fast
    tag = object()

    def run(x):
        if state.trace is not None:
            return None
        ax = x.aval
        key = (tag, id(ax))
        entry = fast.get(key)
        if entry is None:
            entry = _primitives.remember(key, _runner_entry(primitive, (ax,))
                                         if ax.dtype.kind in kinds else _NOT_FAST + (ax,))
        if entry[0] is None:
            return None
        b = x._buf
        r = new_array(ArrayImpl)
        r._buf = entry[0](b, b.device)
        r.aval = entry[1]
        r._committed = x._committed
        r._npy = None
        return r
    return run


def _fast_entry(primitive, avals, key):
    exe, out_avals = _cached_executable(primitive, {}, avals)
    single = None if primitive.multiple_results else out_avals[0]
    return _primitives.remember(key, (exe.execute_unchecked, single, out_avals, avals))


def _cached_executable(primitive, params, avals):
    """``(executable, out_avals)`` of ``primitive`` with ``params`` on ``avals``, compiled
    once per key (unhashable params, e.g. a fresh lambda's Jaxpr, compile uncached)."""
    key = (primitive, tuple(params.items()) if params else (), *avals)
    return _primitives.lookup(key, lambda: compiler.compile_primitive(primitive, params, avals))


# Installed by transformations/spmd.py: runs a primitive on arrays laid out over a mesh as
# one SPMD program (the single-device paths would gather them on one device).
sharded_apply = []


def _apply_general(primitive, args, params):
    if sharded_apply:
        for x in args:
            if type(x) is ShardedArray:
                return sharded_apply[0](primitive, args, params)
    if primitive.impl is not None:
        return primitive.impl(*args, **params)
    arrays = [x if type(x) is ArrayImpl else to_array(x) for x in args]
    exe, out_avals = _cached_executable(primitive, params, [x.aval for x in arrays])
    device, committed = devices.call_device(arrays)
    bufs = [x._buf for x in arrays]
    if committed:
        bufs = devices.on_device(bufs, device)
    outs = exe.execute_unchecked(bufs, device)
    if primitive.multiple_results:
        return [ArrayImpl(av, b, committed) for av, b in zip(out_avals, outs)]
    return ArrayImpl(out_avals[0], outs[0], committed)


class EvalTrace(Trace):
    """The bottom of every stack of transformations: evaluate now."""

    def process_primitive(self, primitive, args, params):
        return apply_primitive(primitive, args, params)


eval_trace = EvalTrace()
trace_mod.set_eval_trace(eval_trace)
primitive_mod.set_eager_apply(apply_primitive)


def device_put(x, device=None):
    """Place ``x`` (any pytree leaf value) on ``device`` as a committed array."""
    if device is None:
        return to_array(x)
    if isinstance(device, int):
        raise TypeError(f"device_put expects a Device, got the int {device}")
    if hasattr(device, "_device_for_put"):
        device = device._device_for_put()
    elif isinstance(device, Sharding):  # NamedSharding, PmapSharding: one buffer per device
        value = x._value if isinstance(x, ArrayImpl) else to_array(x)._value
        return shard_host_value(value, device, get_aval(x).weak_type)
    if type(x) is ArrayImpl:
        if x._buf.device == device:
            return ArrayImpl(x.aval, x._buf, True, x._npy)
        return ArrayImpl(x.aval, x._buf.copy_to_device(device), True, x._npy)
    arr = to_array(x, device)
    return ArrayImpl(arr.aval, arr._buf, True, arr._npy)

