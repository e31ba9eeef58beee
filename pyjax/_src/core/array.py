"""``Array``: an immutable array backed by one PJRT device buffer.

Operators and NumPy-style methods are attached by ``pyjax/_src/numpy/array_methods.py``
(they are written in terms of ``pyjax.numpy``, a layer above this one).
"""
from __future__ import annotations

import abc

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import profiling
from pyjax._src.core import transfer_guard
from pyjax._src.core import dtypes
from pyjax._src.core.config import config
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.sharding import SingleDeviceSharding

_SMALL = 64  # arrays with at most this many elements keep a host copy when made from host data


class Array(abc.ABC):
    """The public array type: ``isinstance(x, pyjax.Array)`` holds for arrays and tracers."""

    __slots__ = ()


def default_device():
    """Where uncommitted values go: the ``jax_default_device`` config, else device 0."""
    d = config.jax_default_device
    if d is None or d == "cpu":
        return runtime.get_client().devices[0]
    return d


class ArrayImpl(Array):
    __slots__ = ("aval", "_buf", "_npy", "_committed", "__weakref__")
    __array_priority__ = 100

    def __init__(self, aval: ShapedArray, buf, committed=False, npy=None):
        self.aval = aval
        self._buf = buf
        self._committed = committed
        self._npy = npy

    # -- metadata --
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)

    @property
    def device(self):
        return self._buf.device

    def devices(self):
        return {self._buf.device}

    @property
    def committed(self):
        return self._committed

    @property
    def is_fully_addressable(self):
        return True

    @property
    def is_fully_replicated(self):
        return True  # one device holds all of it

    @property
    def sharding(self):
        return SingleDeviceSharding(self._buf.device)

    # -- host access --
    @property
    def _value(self) -> np.ndarray:
        v = self._npy
        if v is None:
            if transfer_guard.active[0]:
                transfer_guard.check("device_to_host", lambda: (
                    f"aval={self.aval!r}, src_sharding={SingleDeviceSharding(self._buf.device)!r}"))
            if profiling.active[0]:  # (the span's arguments cost nothing when not tracing)
                with profiling.span("device to host", "transfer",
                                    bytes=self.aval.size * self.aval.dtype.itemsize):
                    v = self._buf.to_numpy()
            else:
                v = self._buf.to_numpy()
            v.flags.writeable = False
            self._npy = v
        return v

    def __array__(self, dtype=None, copy=None):
        v = self._value
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        if copy:
            return v.copy()
        return v

    def block_until_ready(self):
        self._buf.block_until_ready()
        return self

    def copy_to_host_async(self):
        pass

    def is_ready(self):
        return self._buf.is_ready()

    def delete(self):
        self._buf.delete()
        self._npy = None

    def is_deleted(self):
        return self._buf.is_deleted()

    def tolist(self):
        return self._value.tolist()

    def item(self, *args):
        return self._value.item(*args)

    def __bool__(self):
        if self.aval.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if not (dtypes.is_integer(self.dtype) or dtypes.is_bool(self.dtype)):
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index, "
                            f"got dtype {self.dtype}")
        return int(self._value)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        v = self._value
        aval = self.aval.update(shape=self.aval.shape[1:])
        dev = self._buf.device
        return (from_numpy(np.asarray(row), dev, aval.weak_type, self._committed)
                for row in v)

    def __hash__(self):
        raise TypeError("unhashable type: 'pyjax.Array'. Arrays are mutable-looking buffers and "
                        "are not hashable; use a tuple or `x.item()` for a dictionary key.")

    def __setitem__(self, idx, value):
        raise TypeError(
            "'pyjax.Array' object does not support item assignment. pyjax arrays are immutable. "
            "Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] method: "
            "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    def __repr__(self):
        v = self._value
        if v.size == 0 and v.ndim > 0:
            body = f"[], shape={v.shape}"
        else:
            body = np.array2string(v, separator=", ", prefix="Array(",
                                   formatter=_bf16_formatter(v.dtype))
        weak = ", weak_type=True" if self.aval.weak_type else ""
        return f"Array({body}, dtype={self.dtype.name}{weak})"

    def __str__(self):
        return str(self._value)

    def __format__(self, spec):
        if self.aval.ndim == 0:
            return format(self._value[()], spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (_reconstruct, (self._value.copy(), self.aval.weak_type))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __dlpack__(self, *a, **k):
        raise NotImplementedError("DLPack export is not supported yet")

    def addressable_data(self, index):
        if index != 0:
            raise IndexError(index)
        return self

    @property
    def addressable_shards(self):
        """One `Shard` (device, index, data, replica_id), as JAX's single-device arrays give
        (orbax reads `shard.data` / `shard.index`)."""
        from pyjax._src.core.sharded_array import Shard
        return [Shard(self._buf.device, (slice(None),) * self.ndim, self, 0)]

    @property
    def global_shards(self):
        return self.addressable_shards

    def on_device_size_in_bytes(self):
        return self.nbytes


def _bf16_formatter(dtype):
    if dtype.name == "bfloat16":   # (not dtypes.bfloat16: that would import ml_dtypes)
        return {"all": lambda x: str(float(x))}
    return None


def _reconstruct(value, weak_type):
    return from_numpy(value, None, weak_type)


def array_from_buffer(aval: ShapedArray, buf, committed: bool) -> ArrayImpl:
    """``ArrayImpl(aval, buf, committed)`` without running ``__init__`` (a Python call less;
    the two hottest paths, eager operators and one-array jit calls, inline these lines)."""
    r = ArrayImpl.__new__(ArrayImpl)
    r.aval = aval
    r._buf = buf
    r._committed = committed
    r._npy = None
    return r


def from_numpy(x: np.ndarray, device=None, weak_type=False, committed=False) -> ArrayImpl:
    """Upload a NumPy array (already of a canonical dtype) to ``device``."""
    if device is None:
        device = default_device()
    if transfer_guard.active[0]:
        transfer_guard.check_upload(ShapedArray.interned(x.shape, x.dtype, bool(weak_type)),
                                    device)
    buf = device.client.buffer_from_pyval(x, device)
    npy = None
    if x.size <= _SMALL:
        npy = np.array(x, copy=True)
        npy.flags.writeable = False
    return ArrayImpl(ShapedArray.interned(x.shape, x.dtype, bool(weak_type)), buf, committed, npy)


def canonical_numpy(x, dtype=None) -> np.ndarray:
    """A NumPy array of the canonical (x64-aware) dtype for ``x``."""
    if dtype is None:
        if isinstance(x, (np.ndarray, np.generic)):
            dtype = x.dtype
        else:
            dtype = dtypes.dtype_of(x)
    dt = dtypes.canonicalize_dtype(dtype)
    return np.asarray(x, dtype=dt)


trace_mod.aval_handlers[ArrayImpl] = lambda x: x.aval
Array.register(trace_mod.Tracer)
