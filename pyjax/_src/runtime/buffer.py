"""Device buffers (``PJRT_Buffer``) and the numpy dtype <-> PJRT type mapping."""

import ctypes
import threading
from ctypes import byref

import numpy as np

from . import capi, ml_dtypes_loader
from .errors import DeletedBufferError, XlaRuntimeError

# PJRT_Buffer_Type values (pjrt_c_api.h enum order).
_PJRT_TYPES = [
    (np.bool_, 1), (np.int8, 2), (np.int16, 3), (np.int32, 4), (np.int64, 5),
    (np.uint8, 6), (np.uint16, 7), (np.uint32, 8), (np.uint64, 9),
    (np.float16, 10), (np.float32, 11), (np.float64, 12),
    (np.complex64, 14), (np.complex128, 15),
]
# The ml_dtypes types, added once ml_dtypes is imported (runtime/ml_dtypes_loader.py).
# 21-25: S4, U4, TOKEN, S2, U2. float8_e8m0fnu (28) and float4_e2m1fn (29) are left out:
# e8m0fnu has no zero (sums start at 0), and the plugin reads float4 host data packed
# two to a byte where ml_dtypes stores one per byte (1 + 1 came back as -2).
_ML_PJRT_TYPES = [
    ("bfloat16", 13), ("float8_e5m2", 16), ("float8_e4m3fn", 17),
    ("float8_e4m3b11fnuz", 18), ("float8_e5m2fnuz", 19), ("float8_e4m3fnuz", 20),
    ("float8_e4m3", 26), ("float8_e3m4", 27),
]
DTYPE_TO_PJRT = {np.dtype(t): v for t, v in _PJRT_TYPES}
PJRT_TO_DTYPE = {v: d for d, v in DTYPE_TO_PJRT.items()}


def _add_ml_dtypes(ml_dtypes):
    for name, v in _ML_PJRT_TYPES:   # the dicts are updated in place: others hold them
        DTYPE_TO_PJRT[np.dtype(getattr(ml_dtypes, name))] = v
        PJRT_TO_DTYPE[v] = np.dtype(getattr(ml_dtypes, name))


ml_dtypes_loader.on_load(_add_ml_dtypes)


def pjrt_type_to_dtype(pjrt_type):
    """The numpy dtype of a ``PJRT_Buffer_Type`` value (None if pyjax has none for it);
    an ml_dtypes type imports ml_dtypes."""
    dt = PJRT_TO_DTYPE.get(pjrt_type)
    if dt is None and any(v == pjrt_type for _, v in _ML_PJRT_TYPES):
        ml_dtypes_loader.load()
        dt = PJRT_TO_DTYPE.get(pjrt_type)
    return dt


def dtype_to_pjrt_type(dtype):
    """Returns the ``PJRT_Buffer_Type`` enum value of a numpy dtype.

    Raises
    ------
    TypeError
        If pyjax cannot put arrays of this dtype on a device.
    """
    dt = np.dtype(dtype)
    try:
        return DTYPE_TO_PJRT[dt]
    except KeyError:
        raise TypeError(
            f"dtype {dt} is not supported by the XLA runtime; supported dtypes: "
            + ", ".join(str(d) for d in DTYPE_TO_PJRT)) from None


def aval_str(dtype, shape):
    """``float32[4,3]``: how errors name a type."""
    return f"{np.dtype(dtype).name}[{','.join(str(d) for d in shape)}]"


def deleted_or(error, buffers):
    """``error`` (raised by the plugin for a call on ``buffers``), or a DeletedBufferError
    naming the first of them that was deleted or donated: the plugin's own messages for that
    differ per call ("GetReadyFuture() called on deleted ...", "Invalid buffer passed ...")."""
    for b in buffers:
        if b._ptr and b.is_deleted():
            return DeletedBufferError(aval_str(b.dtype, b.shape))
    return error


# Reads of a buffer's memory and ``delete()`` exclude each other through one of these locks
# (picked by the Buffer's id: striped, so no lock is made per buffer and reads of different
# buffers rarely wait for each other). Two reasons, both seen as crashes:
# * PJRT_Buffer_Delete frees the memory even while an external reference is held, so a
#   concurrent read would copy freed memory;
# * the C API keeps a buffer's external references in an unsynchronised std::vector, so two
#   threads pinning the same buffer at once lose a hold, and destroying the buffer then
#   aborts ("Non-zero type 1 hold on destruction").
# Cost: about 0.1 us per read, measured on a 3.3 us f32[4] read.
_LOCK_STRIPES = 64
_buffer_locks = tuple(threading.Lock() for _ in range(_LOCK_STRIPES))


def buffer_lock(buf):
    """The lock that serialises reads of ``buf``'s memory with its deletion."""
    return _buffer_locks[(id(buf) >> 4) % _LOCK_STRIPES]


_c_char = ctypes.c_char
_char_array_types = {}  # nbytes -> c_char * nbytes (ctypes' own cache is slower)


def _char_array(nbytes):
    if len(_char_array_types) > 1024:
        _char_array_types.clear()
    t = _char_array_types[nbytes] = _c_char * nbytes
    return t


class Buffer:
    """An immutable array in device memory (one ``PJRT_Buffer``).

    Created by ``Client.buffer_from_pyval``, ``Executable.execute*`` and
    ``Buffer.copy_to_device``; freed when the Python object is collected.
    Results of an execution are returned before they are computed: reading them
    (``to_numpy``) or ``block_until_ready`` waits, and raises XlaRuntimeError if
    the computation failed.
    """

    __slots__ = ("_ptr", "_client", "shape", "dtype", "device", "_ready", "__weakref__")

    def __init__(self, client, ptr, shape, dtype, device):
        self._ptr = ptr
        self._client = client
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self._ready = False

    # --- metadata --------------------------------------------------------------------
    @property
    def nbytes(self):
        n = self.dtype.itemsize
        for d in self.shape:
            n *= d
        return n

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"Buffer({aval_str(self.dtype, self.shape)}, device={self.device!r})"

    # --- readiness -------------------------------------------------------------------
    def block_until_ready(self):
        """Waits until the buffer's value is computed; returns self.

        Raises XlaRuntimeError if the computation producing it failed, or if the
        buffer was deleted or donated.
        """
        if self._ready:  # computed before: only deletion/donation can have happened since
            if self.is_deleted():
                raise DeletedBufferError(aval_str(self.dtype, self.shape))
            return self
        try:
            self._client._await_ready(self._ptr)
        except XlaRuntimeError as e:
            raise deleted_or(e, (self,)) from None
        self._ready = True
        return self

    def is_ready(self):
        """True once the value is computed (or its computation failed)."""
        if self._ready:
            return True
        return self._client._is_ready(self._ptr)

    # --- host transfer ---------------------------------------------------------------
    def to_numpy(self):
        """Copies the value to a fresh numpy array (waiting for it if needed)."""
        client = self._client
        ptr = self._ptr
        if not self._ready:
            try:
                client._await_ready(ptr)
            except XlaRuntimeError as e:
                raise deleted_or(e, (self,)) from None
            self._ready = True
        shape, dtype = self.shape, self.dtype
        if not client._host_pointer_ok:
            return client._to_host_buffer(ptr, shape, dtype)
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        if not nbytes:
            if self.is_deleted():
                raise DeletedBufferError(aval_str(dtype, shape))
            return np.empty(shape, dtype)
        # CPU fast path: pin (external reference, so the memory cannot be donated
        # meanwhile), read the host pointer, copy with numpy, unpin.
        api = client._api
        pool = client._read_pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = client._new_read_scratch()
        r, r_ref, p, p_ref = scratch
        r.buffer = p.buffer = ptr
        array_type = _char_array_types.get(nbytes) or _char_array(nbytes)
        with _buffer_locks[(id(self) >> 4) % _LOCK_STRIPES]:  # see buffer_lock
            err = api.Buffer_IncreaseExternalReferenceCount(r_ref)
            if err:
                pool.append(scratch)
                raise deleted_or(api.error_to_exception(err), (self,))
            err = api.Buffer_UnsafePointer(p_ref)
            if err:
                err2 = api.Buffer_DecreaseExternalReferenceCount(r_ref)
                pool.append(scratch)
                if err2:
                    api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err2)))
                raise api.error_to_exception(err)
            try:
                out = np.ndarray(shape, dtype, array_type.from_address(p.buffer_pointer)).copy()
            finally:  # the hold must go even if the copy fails (MemoryError, interrupt)
                err = api.Buffer_DecreaseExternalReferenceCount(r_ref)
        pool.append(scratch)
        if err:
            raise api.error_to_exception(err)
        return out

    def __array__(self, dtype=None, copy=None):
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def copy_to_device(self, device):
        """Returns a copy of this buffer on ``device``."""
        client = self._client
        if device.client is not client:
            raise ValueError(f"{device!r} belongs to another client")
        args = capi.Buffer_CopyToDevice_Args(buffer=self._ptr, dst_device=device._ptr)
        try:
            client._api.call("Buffer_CopyToDevice", args)
        except XlaRuntimeError as e:
            raise deleted_or(e, (self,)) from None
        return Buffer(client, args.dst_buffer, self.shape, self.dtype, device)

    # --- lifetime --------------------------------------------------------------------
    def delete(self):
        """Frees the device memory now; later uses raise XlaRuntimeError. Waits for reads of
        this buffer running in other threads to finish (see buffer_lock)."""
        args = capi.Buffer_Delete_Args(buffer=self._ptr)
        with buffer_lock(self):
            self._client._api.call("Buffer_Delete", args)

    def is_deleted(self):
        """True after ``delete()`` or after the buffer was donated to a computation."""
        args = capi.Buffer_IsDeleted_Args(buffer=self._ptr)
        self._client._api.call("Buffer_IsDeleted", args)
        return bool(args.is_deleted)

    def unsafe_buffer_pointer(self):
        """The device address of the data (CPU: a host address). For debugging."""
        args = capi.Buffer_UnsafePointer_Args(buffer=self._ptr)
        self._client._api.call("Buffer_UnsafePointer", args)
        return args.buffer_pointer or 0

    def __del__(self):
        try:
            ptr = self._ptr
        except AttributeError:  # an interrupt landed before the maker set the slots
            return
        if not ptr:  # already destroyed (an explicit second __del__ call)
            return
        self._ptr = None
        client = self._client
        if client._closed:  # interpreter shutdown: leak rather than call into the plugin
            return
        # Inlined Client._destroy_buffer (this runs for every buffer).
        pool = client._destroy_pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = client._new_destroy_scratch()
        scratch[0].buffer = ptr
        err = client._buffer_destroy(scratch[1])
        pool.append(scratch)
        if err:
            client._api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))


class _Result(Buffer):
    """A Buffer made by the runtime's hot paths, which set the slots themselves: creating
    it runs no Python ``__init__`` (that call is a sizeable part of an eager op's cost)."""

    __slots__ = ()
    __init__ = object.__init__
