"""Python functions called from compiled programs, through the plugin's XLA FFI extension.

One handler, ``pyjax_host_callback``, is registered with the plugin (platform "Host") the
first time a program needs it. A program calls it with

    "stablehlo.custom_call"(%id, %x...) {call_target_name = "pyjax_host_callback",
                                         api_version = 4 : i32, has_side_effect = true}

where ``%id`` is an i64 scalar naming an entry of ``_targets`` (``register_target``): the
Python function and the types of its arguments and results. The handler copies the argument
buffers into NumPy arrays (or hands read-only views of them to a target registered with
``borrow_args``), calls the function, checks its results and copies them into the result
buffers. An exception never leaves the handler: it becomes an FFI error whose message
carries a token, and ``XlaRuntimeError`` (errors.py) chains the original exception as its
``__cause__`` when that message reaches Python.

Layouts (XLA's ffi/api/c_api.h as this plugin implements it, FFI API 0.1): ``_Frame`` and
``_Buffer`` below; the metadata extension, ``_handle``; ``XLA_FFI_Api``, ``_error``.
"""
from __future__ import annotations

import ctypes
import itertools
import math
import threading
import traceback

import numpy as np

from . import errors

TARGET = b"pyjax_host_callback"
_EXT_FFI = 5            # PJRT_Extension_Type_FFI
_EXT_METADATA = 1       # XLA_FFI_Extension_Metadata
_STAGE_EXECUTE = 3      # XLA_FFI_ExecutionStage_EXECUTE
_ERR_INTERNAL = 13

_rp = ctypes.c_void_p
_i64 = ctypes.c_int64
_i32 = ctypes.c_int32


def _ptr(addr):
    return _rp.from_address(addr).value or 0


class _RegisterArgs(ctypes.Structure):
    # PJRT_FFI_Register_Handler_Args as this plugin reads it (52 bytes: no api_version).
    _fields_ = [("struct_size", ctypes.c_size_t), ("target_name", ctypes.c_char_p),
                ("target_name_size", ctypes.c_size_t), ("handler", _rp),
                ("platform_name", ctypes.c_char_p), ("platform_name_size", ctypes.c_size_t),
                ("traits", ctypes.c_uint32)]


class _Frame(ctypes.Structure):
    # XLA_FFI_CallFrame up to the results (api version 0.1 layout, see the module doc)
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _rp), ("api", _rp),
                ("ctx", _rp), ("stage", _i32), ("pad", _i32),
                ("args_size_", ctypes.c_size_t), ("args_ext", _rp), ("nargs", _i64),
                ("arg_types", _rp), ("args", ctypes.POINTER(_rp)),
                ("rets_size_", ctypes.c_size_t), ("rets_ext", _rp), ("nrets", _i64),
                ("ret_types", _rp), ("rets", ctypes.POINTER(_rp))]


class _Buffer(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _rp),
                ("dtype", _i32), ("data", _rp), ("rank", _i64), ("dims", ctypes.POINTER(_i64))]


class _ErrorCreateArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", _rp),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


_ERROR_CREATE = ctypes.CFUNCTYPE(_rp, ctypes.POINTER(_ErrorCreateArgs))
_HANDLER = ctypes.CFUNCTYPE(_rp, _rp)

_targets: dict = {}          # id -> (fn, [(dtype, shape)] args, [(dtype, shape)] results,
#                                  borrow: the args are read-only views, not copies)
_ids = itertools.count(1)
_ids_by_key: dict = {}       # (key, arg types, result types) -> id
_registered: dict = {}       # PJRT api pointer -> True
_lock = threading.Lock()


def register_target(fn, arg_types, result_types, key=None, borrow_args=False) -> int:
    """The id of ``fn(*numpy arrays) -> sequence of arrays`` with these (dtype, shape)
    argument and result types. ``key`` (default ``fn``) names what ``fn`` computes: lowering
    the same key with the same types again gives the same id, so the registry grows with the
    distinct host functions, not with the compilations (and equal programs lower to equal
    text, which the persistent cache keys on). Keys are held strongly: an id is never
    reused. ``borrow_args``: ``fn`` gets read-only views of the argument buffers instead of
    copies, for functions that keep no reference to their arguments after they return (the
    buffers are XLA's, valid only during the call): the LAPACK kernels."""
    arg_types = tuple((np.dtype(d), tuple(s)) for d, s in arg_types)
    result_types = tuple((np.dtype(d), tuple(s)) for d, s in result_types)
    full_key = (fn if key is None else key, arg_types, result_types, bool(borrow_args))
    with _lock:
        i = _ids_by_key.get(full_key)
        if i is None:
            i = _ids_by_key[full_key] = next(_ids)
            _targets[i] = (fn, list(arg_types), list(result_types), bool(borrow_args))
    return i


def _ffi_extension(api, what):
    ext = _ptr(api.ptr + 8)
    while ext and _i32.from_address(ext + 8).value != _EXT_FFI:
        ext = _ptr(ext + 16)
    if not ext:
        raise errors.XlaRuntimeError(
            f"the PJRT plugin {api.path} has no FFI extension: {what} are not available", 12)
    return ext


def register_handler(api, name: bytes, handler_address: int, traits: int = 0,
                     what="FFI custom calls"):
    """Registers the C function at ``handler_address`` (``XLA_FFI_Error* (XLA_FFI_CallFrame*)``)
    as the FFI target ``name`` of ``api``'s plugin, platform "Host" (the CPU)."""
    ext = _ffi_extension(api, what)
    register = ctypes.CFUNCTYPE(_rp, ctypes.POINTER(_RegisterArgs))(_ptr(ext + 40))
    platform = b"Host"
    args = _RegisterArgs(52, name, len(name), handler_address, platform, len(platform),
                         traits)
    err = register(ctypes.byref(args))
    if err:
        raise api.error_to_exception(err)


def ensure_registered(api):
    """Registers the handler with ``api``'s plugin once; raises XlaRuntimeError if the plugin
    has no FFI extension."""
    if api.ptr in _registered:
        return
    with _lock:
        if api.ptr in _registered:
            return
        register_handler(api, TARGET, ctypes.cast(_handler, _rp).value,
                         what="host callbacks (pure_callback, io_callback, jax.debug)")
        _registered[api.ptr] = True


def _error(frame, message):
    """An XLA_FFI_Error* carrying ``message`` (via the call frame's XLA_FFI_Api)."""
    api = _ptr(frame + 16)
    # XLA_FFI_Api: struct_size, extension_start, api_version (24 bytes: its struct_size is
    # 24), internal_api, Error_Create, ... (older layouts lack api_version)
    create_at = api + 48 if ctypes.c_size_t.from_address(api + 16).value == 24 else api + 24
    create = _ERROR_CREATE(_ptr(create_at))
    data = message.encode("utf-8", "replace")
    return create(ctypes.byref(_ErrorCreateArgs(28, None, data, _ERR_INTERNAL)))


# XLA worker threads that have called a handler, each holding one extra PyGILState_Ensure:
# ctypes enters a callback on a thread without a Python thread state by creating one and
# deletes it on return; a kept state makes the next call on that thread skip both (the
# callbacks of programs that XLA runs on its pool: measured 10-30 % of a 128² LAPACK call).
_kept_thread_states: set = set()
_gil_ensure = ctypes.pythonapi.PyGILState_Ensure
_gil_ensure.restype = ctypes.c_int


def _keep_thread_state():
    ident = threading.get_ident()
    if ident not in _kept_thread_states:
        _kept_thread_states.add(ident)
        _gil_ensure()  # never released: the thread state lives as long as the thread


def _handle(frame):
    _keep_thread_state()
    ext = _ptr(frame + 8)
    while ext:  # the metadata query made at registration: FFI API 0.1, no traits
        if _i32.from_address(ext + 8).value == _EXT_METADATA:
            meta = _ptr(ext + 24)
            _i32.from_address(meta + 24).value = 0
            _i32.from_address(meta + 28).value = 1
            ctypes.c_uint32.from_address(meta + 32).value = 0
            return None
        ext = _ptr(ext + 16)
    f = _Frame.from_address(frame)
    if f.stage != _STAGE_EXECUTE:
        return None
    try:
        nargs, nrets = f.nargs, f.nrets
        bufs = [_Buffer.from_address(f.args[i]) for i in range(nargs)]
        ident = _i64.from_address(bufs[0].data).value
        fn, arg_types, ret_types, borrow = _targets[ident]
        if nargs - 1 != len(arg_types) or nrets != len(ret_types):
            raise RuntimeError(f"host callback {ident}: called with {nargs - 1} arguments "
                               f"and {nrets} results, expected {len(arg_types)} and "
                               f"{len(ret_types)}")
        inputs = [_read(b, dt, shape, borrow) for b, (dt, shape) in zip(bufs[1:], arg_types)]
        outs = fn(*inputs)
        outs = [] if outs is None else list(outs)
        if len(outs) != nrets:
            raise RuntimeError(f"the callback returned {len(outs)} values, expected {nrets}")
        for i, (val, (dt, shape)) in enumerate(zip(outs, ret_types)):
            _write(_Buffer.from_address(f.rets[i]), np.asarray(val), dt, shape, i)
        return None
    except BaseException as e:  # never let it leave the handler
        try:
            token = errors.stash_callback_error(e)
            return _error(frame, f"{type(e).__name__}: {e} [pyjax host callback error "
                                 f"#{token}]")
        except BaseException:  # pragma: no cover - last resort, still no exception out
            traceback.print_exc()
            return _error(frame, "pyjax host callback failed")


_handler = _HANDLER(_handle)


def _buffer_array(buf, dtype, shape):
    """The buffer's memory as a NumPy array (no copy); None when it holds no bytes."""
    n = math.prod(shape) * dtype.itemsize
    if n == 0:
        return None
    return np.frombuffer((ctypes.c_char * n).from_address(buf.data), dtype=dtype).reshape(shape)


def _read(buf, dtype, shape, borrow=False):
    dims = tuple(buf.dims[:buf.rank])
    if dims != shape:
        raise RuntimeError(f"host callback argument has shape {dims}, expected {shape}")
    x = _buffer_array(buf, dtype, shape)
    if x is None:
        return np.zeros(shape, dtype)
    if borrow:
        x.flags.writeable = False
        return x
    return x.copy()


def _write(buf, val, dtype, shape, index):
    if val.shape != shape or val.dtype != dtype:
        raise TypeError(f"the callback's result {index} is {val.dtype}{list(val.shape)}, but "
                        f"result_shape_dtypes says {dtype}{list(shape)}")
    out = _buffer_array(buf, dtype, shape)
    if out is not None:
        # a strided copy straight into XLA's buffer (a Fortran-ordered LAPACK result too)
        np.copyto(out, val, casting="no")
