"""The PJRT client (one per platform per process) and its devices."""

import atexit
import ctypes
import os
import threading
import time
import weakref
from ctypes import addressof, byref

import numpy as np

from . import capi, disk_cache
from .buffer import DTYPE_TO_PJRT, Buffer, dtype_to_pjrt_type
from .compile_options import build_compile_options
from .errors import XlaRuntimeError
from .executable import Executable
from .plugin import (CUDA_INSTALL_HINT, cuda_client_options, find_cuda_plugin_path,
                     find_plugin_path, is_ynn_plugin, load_plugin,
                     preload_cuda_libraries, set_cuda_data_dir, xla_flags_device_count)

CPU_DEVICES_ENV = "PYJAX_CPU_DEVICES"
_MAX_FAST_RANK = 64
_c_char = ctypes.c_char
xla_compile_count = [0]  # Client_Compile calls in this process (disk cache hits are not)


def _description_string(api, what, desc):
    """``PJRT_DeviceDescription_<what>`` (ToString or DebugString) of ``desc``; "" when the
    plugin does not implement it."""
    args = getattr(capi, f"DeviceDescription_{what}_Args")(device_description=desc)
    try:
        out = api.call(f"DeviceDescription_{what}", args)
    except XlaRuntimeError:
        return ""
    field = "to_string" if what == "ToString" else "debug_string"
    return capi.string_out(getattr(out, field), getattr(out, field + "_size"))


class Device:
    """One addressable PJRT device, e.g. ``CpuDevice(id=0)``.

    Devices are unique per client, so equality and hashing are by identity.
    """

    __slots__ = ("_ptr", "id", "platform", "device_kind", "client", "process_index",
                 "local_hardware_id", "_repr", "_str", "__weakref__")

    def __init__(self, client, ptr):
        api = client._api
        self._ptr = ptr
        self.client = client
        self.platform = client.platform
        desc = api.call("Device_GetDescription",
                        capi.Device_GetDescription_Args(device=ptr)).device_description
        self.id = api.call("DeviceDescription_Id",
                           capi.DeviceDescription_Id_Args(device_description=desc)).id
        self.process_index = api.call(
            "DeviceDescription_ProcessIndex",
            capi.DeviceDescription_ProcessIndex_Args(device_description=desc)).process_index
        kind = api.call("DeviceDescription_Kind",
                        capi.DeviceDescription_Kind_Args(device_description=desc))
        self.device_kind = capi.string_out(kind.device_kind, kind.device_kind_size)
        try:
            self.local_hardware_id = api.call(
                "Device_LocalHardwareId",
                capi.Device_LocalHardwareId_Args(device=ptr)).local_hardware_id
        except XlaRuntimeError:
            self.local_hardware_id = self.id
        self._repr = (_description_string(api, "ToString", desc)
                      or f"{self.platform.capitalize()}Device(id={self.id})")
        # str() is the plugin's debug string, as in JAX ('cpu:0'); the older CPU plugin
        # says 'TFRT_CPU_0' for the same device
        self._str = _description_string(api, "DebugString", desc)
        if not self._str or self._str.startswith("TFRT_CPU_"):
            self._str = f"{self.platform}:{self.id}"

    def __repr__(self):
        return self._repr

    def __str__(self):
        return self._str

    def __reduce__(self):
        raise TypeError("Device objects cannot be pickled")

    # Memory spaces: pyjax places arrays in the device's own memory only (no pinned/unpinned
    # host memories), so that is the one memory a device lists (orbax checks for
    # 'pinned_host' before choosing its transfer path).
    def default_memory(self):
        return DeviceMemory(self, "device")

    def addressable_memories(self):
        return [self.default_memory()]

    def memory(self, kind):
        if kind == "device":
            return self.default_memory()
        raise NotImplementedError(f"{self!r}.memory({kind!r}): pyjax places arrays in the "
                                  "'device' memory only")


class DeviceMemory:
    """A memory space of a device (what `device.default_memory()` gives in JAX)."""

    __slots__ = ("_device", "kind")

    def __init__(self, device, kind):
        self._device, self.kind = device, kind

    platform = property(lambda self: self._device.platform)
    process_index = property(lambda self: self._device.process_index)
    addressable_by_devices = property(lambda self: [self._device])

    def __eq__(self, other):
        return (type(other) is DeviceMemory and other._device is self._device
                and other.kind == self.kind)

    def __hash__(self):
        return hash((id(self._device), self.kind))

    def __repr__(self):
        return f"{self.platform.capitalize()}DeviceMemory(id={self._device.id}, kind={self.kind})"


class Client:
    """A PJRT client: devices, host-to-device transfers and compilation.

    Use ``get_client()`` for the process-wide CPU client.
    """

    def __init__(self, api, create_options=None, kv_callbacks=None, kv_keepalive=None):
        self._api = api
        self._closed = True  # until fully constructed, __del__ of children does nothing
        opts = dict(create_options or {})
        arr, keep = capi.make_named_values(opts)
        args = capi.Client_Create_Args(create_options=addressof(arr) if opts else None,
                                       num_options=len(opts), **(kv_callbacks or {}))
        self._kv_keepalive = kv_keepalive  # the plugin may call them as long as it lives
        api.call("Client_Create", args)
        del keep
        self._ptr = args.client
        name = api.call("Client_PlatformName",
                        capi.Client_PlatformName_Args(client=self._ptr))
        # JAX's platform names: a CUDA (or ROCm) client is the 'gpu' backend, its devices'
        # platform is 'gpu'; pjrt_platform_name keeps the plugin's own name ('cuda').
        self.pjrt_platform_name = capi.string_out(name.platform_name,
                                                  name.platform_name_size)
        self.platform = _JAX_PLATFORM_NAME.get(self.pjrt_platform_name,
                                               self.pjrt_platform_name)
        ver = api.call("Client_PlatformVersion",
                       capi.Client_PlatformVersion_Args(client=self._ptr))
        self.platform_version = capi.string_out(ver.platform_version,
                                                ver.platform_version_size)
        self.process_index = api.call(
            "Client_ProcessIndex",
            capi.Client_ProcessIndex_Args(client=self._ptr)).process_index
        self.plugin_attributes = dict(getattr(api, "attributes", {}))
        self.runtime_type = "pjrt_ifrt"  # JAX's value for a local PJRT client (not 'pathways')
        self.api_version = api.version
        devs = api.call("Client_AddressableDevices",
                        capi.Client_AddressableDevices_Args(client=self._ptr))
        ptrs = [devs.addressable_devices[i] for i in range(devs.num_addressable_devices)]
        self.devices = sorted((Device(self, p) for p in ptrs), key=lambda d: d.id)
        self._device_by_ptr = {d._ptr: d for d in self.devices}
        self._device_by_id = {d.id: d for d in self.devices}
        self._default_device = self.devices[0] if self.devices else None
        # Every process's devices (jax.devices()); others than ours only in a distributed run.
        self.global_devices = self.devices
        if kv_callbacks:
            every = api.call("Client_Devices", capi.Client_Devices_Args(client=self._ptr))
            self.global_devices = sorted(
                (self._device_by_ptr.get(every.devices[i]) or Device(self, every.devices[i])
                 for i in range(every.num_devices)), key=lambda d: d.id)
        # Reading a buffer through its host pointer is only valid on CPU.
        self._host_pointer_ok = self.platform == "cpu"

        # Argument structs prepared once for the hot paths, kept in pools: a call pops
        # a set (list.pop is atomic), uses it, and appends it back. A concurrent call
        # from another thread, or a __del__ run by the garbage collector in the middle
        # of a call, finds the pool empty and makes a fresh set instead.
        self._destroy_pool = [self._new_destroy_scratch()]
        self._read_pool = [self._new_read_scratch()]
        self._ready_pool = [self._new_ready_scratch()]
        self._h2d_pool = [self._new_h2d_scratch()]
        self._buffer_destroy = api.Buffer_Destroy
        self._closed = False
        _live_clients.add(self)

    def __repr__(self):
        return f"Client(platform={self.platform!r}, devices={len(self.devices)})"

    def device(self, device_id):
        """The Device with this id."""
        try:
            return self._device_by_id[device_id]
        except KeyError:
            raise ValueError(f"no device with id {device_id}; devices are "
                             f"{[d.id for d in self.devices]}") from None

    # --- host to device --------------------------------------------------------------
    def buffer_from_pyval(self, value, device=None):
        """Copies a numpy array (or anything np.asarray accepts) to a device.

        The data is copied during the call, so ``value`` may be changed right after.
        ``device=None`` means ``devices[0]``.
        """
        arr = value if type(value) is np.ndarray else np.asarray(value)
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        ptype = DTYPE_TO_PJRT.get(arr.dtype)
        if ptype is None:
            if not arr.dtype.isnative:
                arr = arr.astype(arr.dtype.newbyteorder("="))
            ptype = dtype_to_pjrt_type(arr.dtype)  # raises TypeError naming the dtype
        if device is None:
            device = self._default_device
        elif device.client is not self:
            raise ValueError(f"{device!r} does not belong to this client")
        shape = arr.shape
        try:  # the fastest way to an array's address; writable, non-empty arrays only
            data = addressof(_c_char.from_buffer(arr))
        except (ValueError, TypeError):  # read-only, empty, or e.g. bfloat16
            data = arr.__array_interface__["data"][0]
        ndim = len(shape)
        if ndim > _MAX_FAST_RANK:
            return self._buffer_from_pyval_slow(arr, data, ptype, device)
        pool = self._h2d_pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = self._new_h2d_scratch()
        a, ref, dims, ev, ev_ref = scratch
        a.data = data
        a.type = ptype
        if ndim:
            dims[0:ndim] = shape
        a.num_dims = ndim
        a.device = device._ptr
        api = self._api
        err = api.Client_BufferFromHostBuffer(ref)
        if err:
            pool.append(scratch)
            raise api.error_to_exception(err)
        ptr = a.buffer
        event = a.done_with_host_buffer
        if event:  # semantics 0 copied already: destroy it, never await it
            ev.event = event
            err = api.Event_Destroy(ev_ref)
            if err:
                api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))
        pool.append(scratch)
        return Buffer(self, ptr, shape, arr.dtype, device)

    def _buffer_from_pyval_slow(self, arr, data, ptype, device):
        shape = arr.shape
        dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        a = capi.Client_BufferFromHostBuffer_Args(
            client=self._ptr, data=data, type=ptype, dims=dims, num_dims=len(shape),
            host_buffer_semantics=capi.HOST_BUFFER_IMMUTABLE_ONLY_DURING_CALL,
            device=device._ptr)
        self._api.call("Client_BufferFromHostBuffer", a)
        self._api.destroy_event(a.done_with_host_buffer)
        return Buffer(self, a.buffer, shape, arr.dtype, device)

    # --- compile ---------------------------------------------------------------------
    def compile(self, mlir_text, in_types, out_types, *, num_replicas=1, num_partitions=1,
                use_spmd_partitioning=False, use_shardy_partitioner=False,
                device_assignment=None, portable=None, **extra_build_options):
        """Compiles a StableHLO module (MLIR text with ``func.func public @main``).

        Parameters
        ----------
        mlir_text : str or bytes
        in_types, out_types : list of (dtype, shape)
            Per-device (per-shard) argument and result types. ``in_types=None``
            disables argument checks; ``out_types=None`` takes them from the plugin.
        num_replicas, num_partitions : int
        use_spmd_partitioning, use_shardy_partitioner : bool
        device_assignment : list of int, optional
            Device ids, replica-major (``[r * num_partitions + p]``); default: the
            first ``num_replicas * num_partitions`` devices.
        portable : bool, optional
            Default True for single-device programs without a device_assignment:
            one executable then runs on any device (``execute(..., device=)``).
        **extra_build_options
            ``allow_spmd_sharding_propagation_to_output`` /
            ``allow_spmd_sharding_propagation_to_parameters`` (lists of bool).

        Raises
        ------
        XlaRuntimeError
            With the plugin's message, e.g. for MLIR parse errors.
        """
        n = int(num_replicas) * int(num_partitions)
        if portable is None:
            portable = n == 1 and device_assignment is None
        if portable and (n != 1 or device_assignment is not None):
            raise ValueError("portable executables must have num_replicas = "
                             "num_partitions = 1 and no device_assignment")
        if device_assignment is None and not portable and n > 1:
            if n > len(self.devices):
                raise ValueError(f"the program needs {n} devices (num_replicas="
                                 f"{num_replicas} x num_partitions={num_partitions}) "
                                 f"but only {len(self.devices)} are available")
            device_assignment = [d.id for d in self.devices[:n]]
        if device_assignment is not None:
            device_assignment = [getattr(d, "id", d) for d in device_assignment]
            for d in device_assignment:
                self.device(d)  # raises ValueError for an unknown id
        options = build_compile_options(
            num_replicas, num_partitions, use_spmd_partitioning=use_spmd_partitioning,
            use_shardy_partitioner=use_shardy_partitioner,
            device_assignment=device_assignment, portable=portable, **extra_build_options)
        code = mlir_text.encode() if isinstance(mlir_text, str) else bytes(mlir_text)
        if portable and self._default_device is not None:
            # Compiled for the default device first (cheaper to execute, see Executable);
            # the portable build follows on demand.
            fast = build_compile_options(
                1, 1, use_spmd_partitioning=use_spmd_partitioning,
                use_shardy_partitioner=use_shardy_partitioner,
                device_assignment=[self._default_device.id], portable=False,
                **extra_build_options)
            return Executable(self, self._compile_or_load(code, fast), in_types, out_types,
                              portable=True, portable_source=(code, options))
        return Executable(self, self._compile_or_load(code, options), in_types, out_types,
                          portable=portable, num_replicas=num_replicas,
                          num_partitions=num_partitions)

    def optimized_hlo(self, mlir_text, env_option_overrides=None, **build):
        """XLA's optimized HLO module, as text: PJRT hands it out only as a proto, so the
        program is compiled once more (outside the persistent cache, where a hit would dump
        nothing) with XLA's dump options into a temporary directory, and the
        after-optimizations file is read back. ``build``: ``compile``'s partitioning keywords
        for a multi-device program (its text is then one partition's program)."""
        return self._dumped_hlo(mlir_text, env_option_overrides, "after_optimizations",
                                as_proto=False, build=build)[0]

    def unoptimized_hlo(self, mlir_text, env_option_overrides=None):
        """XLA's own translation of a single-device StableHLO program into an HLO module,
        before any optimization pass (what JAX's ``compiler_ir(dialect="hlo")`` holds): the
        dump's ``before_optimizations`` text and its serialized ``HloModuleProto``. PJRT has
        no call for it, so this compiles once more with dump options, as optimized_hlo."""
        # the backend's codegen does not change the dump: its cheapest level saves time
        overrides = dict(env_option_overrides or {}, xla_backend_optimization_level=0)
        return self._dumped_hlo(mlir_text, overrides, "before_optimizations", as_proto=True)

    def _dumped_hlo(self, mlir_text, env_option_overrides, stage, as_proto, build=None):
        """(text, proto bytes or None) of the ``stage`` HLO dump of one compile."""
        import glob
        import tempfile
        with tempfile.TemporaryDirectory(prefix="pyjax-hlo-") as tmp:
            overrides = dict(env_option_overrides or {}, xla_dump_to=tmp,
                             xla_dump_hlo_as_text=True, xla_dump_hlo_module_re=".*")
            if as_proto:
                overrides["xla_dump_hlo_as_proto"] = True
            build = build or dict(device_assignment=[self.devices[0].id])
            options = build_compile_options(env_option_overrides=overrides, **build)
            code = mlir_text.encode() if isinstance(mlir_text, str) else bytes(mlir_text)
            self._compile_loaded(code, options, counted=False)  # freed when dropped
            found = [f for f in sorted(glob.glob(os.path.join(tmp, f"*{stage}.txt")))
                     if "buffer-assignment" not in f and "memory-usage" not in f]
            if not found:
                raise XlaRuntimeError(f"the plugin wrote no {stage} HLO dump "
                                      f"(files: {sorted(os.listdir(tmp))[:8]})")
            with open(found[-1]) as fh:
                text = fh.read()
            proto = None
            if as_proto:
                pb = found[-1][:-len(".txt")] + ".hlo.pb"
                if os.path.exists(pb):
                    with open(pb, "rb") as fh:
                        proto = fh.read()
            return text, proto

    def _compile_or_load(self, code, options, counted=True, kind=""):
        """``_compile_loaded``, through the persistent compilation cache when it is on: an
        entry found on disk is loaded instead of compiled; a compiled program is stored.
        ``kind``: the ``disk_cache`` kind of entry ("": a user's program)."""
        if not disk_cache.enabled():
            return self._compile_loaded(code, options, counted)
        key = disk_cache.key_of(self._api, code, options)
        owner = self._load_cached(key, kind)
        if owner is not None:
            return owner
        start = time.perf_counter()
        owner = self._compile_loaded(code, options, counted)
        seconds = time.perf_counter() - start
        try:
            loaded = getattr(owner.args, owner.field)
            exe_ptr = self._api.call(
                "LoadedExecutable_GetExecutable",
                capi.LoadedExecutable_GetExecutable_Args(loaded_executable=loaded)).executable
            try:
                payload = self._serialize_executable(exe_ptr)
            finally:
                self._destroy_executable(exe_ptr)
        except XlaRuntimeError:  # not serializable: just not cached
            return owner
        disk_cache.store(key, payload, seconds, kind)
        return owner

    def _load_cached(self, key, kind=""):
        """The LoadedOwner of the persistent cache's entry ``key`` (``disk_cache.key_of``),
        or None when there is none (or the plugin refused it)."""
        payload = disk_cache.load(key, kind)
        if payload is not None:
            try:
                return self._deserialize_loaded(payload)
            except XlaRuntimeError as e:  # e.g. written by an incompatible build
                disk_cache.discard(key, f"the plugin refused it ({e})", kind)
        return None

    def _serialize_executable(self, exe_ptr):
        """PJRT_Executable_Serialize of a PJRT_Executable pointer, as bytes."""
        args = capi.Executable_Serialize_Args(executable=exe_ptr)
        self._api.call("Executable_Serialize", args)
        try:
            return ctypes.string_at(args.serialized_bytes, args.serialized_bytes_size)
        finally:
            if args.serialized_executable_deleter and args.serialized_executable:
                args.serialized_executable_deleter(args.serialized_executable)

    def _deserialize_loaded(self, data):
        """PJRT_Executable_DeserializeAndLoad -> a LoadedOwner (as ``_compile_loaded``)."""
        data = bytes(data)
        args = capi.Executable_DeserializeAndLoad_Args(
            client=self._ptr, serialized_executable=data,
            serialized_executable_size=len(data))
        owner = LoadedOwner(self, args, "loaded_executable")
        self._api.call("Executable_DeserializeAndLoad", args)
        return owner

    def _compile_loaded(self, code, options, counted=True, program_format="mlir"):
        """PJRT_Client_Compile: MLIR bytes + CompileOptionsProto bytes -> a LoadedOwner
        of the new PJRT_LoadedExecutable (take its pointer with ``LoadedOwner.take``).
        ``counted=False``: not a user's program (not in ``xla_compile_count``).
        ``program_format="hlo"``: ``code`` is a serialized HloModuleProto instead."""
        if counted:
            xla_compile_count[0] += 1
        fmt = program_format.encode()
        program = capi.Program(code=code, code_size=len(code), format=fmt,
                               format_size=len(fmt))
        args = capi.Client_Compile_Args(client=self._ptr, program=ctypes.pointer(program),
                                        compile_options=options,
                                        compile_options_size=len(options))
        owner = LoadedOwner(self, args, "executable")  # made before the call: see LoadedOwner
        self._api.call("Client_Compile", args)
        return owner

    def _destroy_loaded(self, ptr):
        err = self._api.LoadedExecutable_Destroy(
            byref(capi.LoadedExecutable_Destroy_Args(executable=ptr)))
        if err:
            self._api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))

    def _destroy_executable(self, ptr):
        err = self._api.Executable_Destroy(byref(capi.Executable_Destroy_Args(executable=ptr)))
        if err:
            self._api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))

    def deserialize_executable(self, serialized, in_types, out_types, *, portable=False,
                               num_replicas=1, num_partitions=1):
        """Loads bytes from ``Executable.serialize()`` (a persistent compile cache).

        ``portable``, ``num_replicas`` and ``num_partitions`` must repeat what the
        executable was compiled with (they are not recorded in the bytes we read).
        """
        owner = self._deserialize_loaded(serialized)
        return Executable(self, owner, in_types, out_types,
                          portable=portable, num_replicas=num_replicas,
                          num_partitions=num_partitions)

    # --- prepared argument structs (see __init__) ------------------------------------
    def _new_destroy_scratch(self):
        a = capi.Buffer_Destroy_Args()
        return a, byref(a)

    def _new_read_scratch(self):
        r = capi.Buffer_ExternalReferenceCount_Args()
        p = capi.Buffer_UnsafePointer_Args()
        return r, byref(r), p, byref(p)

    def _new_ready_scratch(self):
        r = capi.Buffer_ReadyEvent_Args()
        w = capi.Event_Await_Args()
        d = capi.Event_Destroy_Args()
        return r, byref(r), w, byref(w), d, byref(d)

    def _new_h2d_scratch(self):
        dims = (ctypes.c_int64 * _MAX_FAST_RANK)()
        a = capi.Client_BufferFromHostBuffer_Args(
            client=self._ptr, dims=dims,
            host_buffer_semantics=capi.HOST_BUFFER_IMMUTABLE_ONLY_DURING_CALL)
        d = capi.Event_Destroy_Args()
        return a, byref(a), dims, d, byref(d)

    # --- helpers used by Buffer -------------------------------------------------------
    def _destroy_buffer(self, ptr):
        pool = self._destroy_pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = self._new_destroy_scratch()
        scratch[0].buffer = ptr
        err = self._api.Buffer_Destroy(scratch[1])
        pool.append(scratch)
        if err:
            self._api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))

    def _ready_event(self, ptr):
        args = capi.Buffer_ReadyEvent_Args(buffer=ptr)
        self._api.call("Buffer_ReadyEvent", args)
        return args.event

    def _await_ready(self, ptr):
        """Awaits a buffer's ready event; raises XlaRuntimeError if it failed."""
        api = self._api
        pool = self._ready_pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = self._new_ready_scratch()
        r, r_ref, w, w_ref, d, d_ref = scratch
        r.buffer = ptr
        err = api.Buffer_ReadyEvent(r_ref)
        if err:
            pool.append(scratch)
            raise api.error_to_exception(err)
        w.event = d.event = r.event
        err = api.Event_Await(w_ref)
        err2 = api.Event_Destroy(d_ref)
        pool.append(scratch)
        if err2:
            api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err2)))
        if err:
            raise api.error_to_exception(err)

    def _is_ready(self, ptr):
        event = self._ready_event(ptr)
        try:
            args = capi.Event_IsReady_Args(event=event)
            self._api.call("Event_IsReady", args)
            return bool(args.is_ready)
        finally:
            self._api.destroy_event(event)

    def _to_host_buffer(self, ptr, shape, dtype):
        """Generic (non-CPU) device-to-host copy through PJRT_Buffer_ToHostBuffer."""
        out = np.empty(shape, dtype)
        if out.nbytes == 0:
            return out
        args = capi.Buffer_ToHostBuffer_Args(src=ptr, dst=out.ctypes.data,
                                             dst_size=out.nbytes)
        self._api.call("Buffer_ToHostBuffer", args)
        self._api.await_event(args.event)
        return out


class LoadedOwner:
    """Owns the PJRT_LoadedExecutable that a compile (or deserialize) call writes into the
    field ``field`` of its argument struct ``args``, until an Executable takes it.

    It is made before the call, so a KeyboardInterrupt that lands anywhere after the plugin
    returned (inside ``Api.call``, between the call and the Executable taking the pointer,
    or while the Executable is being set up) cannot leak the executable: whichever of the
    owner and the Executable holds the pointer frees it when it is collected. ``take``
    moves the pointer out with an attribute load and a store, between which Python runs no
    signal handler."""

    __slots__ = ("_client", "args", "field")

    def __init__(self, client, args, field):
        self._client = client
        self.args = args
        self.field = field

    def take(self):
        args, field = self.args, self.field
        ptr = getattr(args, field)
        setattr(args, field, None)
        return ptr

    def __del__(self):
        ptr = getattr(self.args, self.field)
        if ptr and not self._client._closed:
            setattr(self.args, self.field, None)
            self._client._destroy_loaded(ptr)


# --- the process-wide client -----------------------------------------------------------
_live_clients = weakref.WeakSet()
_clients = {}
_clients_lock = threading.Lock()


_requested_cpu_devices = []  # set by set_cpu_device_count (the jax_num_cpu_devices config)


def set_cpu_device_count(n):
    """Asks for ``n`` CPU devices (-1: the default), before the CPU client is created; after
    that, a different count raises RuntimeError (as JAX's jax_num_cpu_devices)."""
    n = int(n)
    if n == 0 or n < -1:
        raise ValueError(f"jax_num_cpu_devices must be a positive integer or -1, got {n}")
    if n > _MAX_CPU_DEVICES:
        raise ValueError(f"jax_num_cpu_devices asks for {n} CPU devices; the XLA CPU plugin "
                         f"supports at most {_MAX_CPU_DEVICES}")
    client = _clients.get("cpu")
    if client is not None:
        if n != -1 and n != len(client.devices):
            raise RuntimeError(
                "jax_num_cpu_devices config should be updated before backends are "
                f"initialized: the CPU backend already has {len(client.devices)} devices")
        return
    _requested_cpu_devices[:] = [] if n == -1 else [n]


def cpu_device_count():
    """The number of CPU devices to create.

    ``set_cpu_device_count``'s if called; else ``PYJAX_CPU_DEVICES`` or JAX's
    ``JAX_NUM_CPU_DEVICES`` if set; else the N of JAX's
    ``XLA_FLAGS=--xla_force_host_platform_device_count=N``; else 1 (as JAX).
    """
    if _requested_cpu_devices:
        return _requested_cpu_devices[0]
    raw = os.environ.get(CPU_DEVICES_ENV)
    name = CPU_DEVICES_ENV
    if raw is None or raw.strip() == "":
        raw = os.environ.get("JAX_NUM_CPU_DEVICES")
        name = "JAX_NUM_CPU_DEVICES"
    if raw is None or raw.strip() == "":
        raw = xla_flags_device_count()
        name = "--xla_force_host_platform_device_count in XLA_FLAGS"
        if raw is None:
            return 1
    try:
        n = int(raw.strip())
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{name} must be a positive integer, got {raw!r}")
    if n > _MAX_CPU_DEVICES:  # the plugin reads an int32: larger counts wrap, to no devices
        raise ValueError(f"{name} asks for {n} CPU devices; the XLA CPU plugin supports at "
                         f"most {_MAX_CPU_DEVICES}")
    return n


_MAX_CPU_DEVICES = 2**31 - 1


# JAX's names for platform families (a backend name may name one of several platforms)
_PLATFORM_ALIASES = {"gpu": ("cuda", "rocm")}
_JAX_PLATFORM_NAME = {"cuda": "gpu", "rocm": "gpu"}   # plugin platform name -> JAX's
_KNOWN_PLATFORMS = ("cpu", "cuda")                     # what pyjax can load a plugin for
_platforms_setting = []   # set_platforms' value (the jax_platforms config), if called
_default_platform = []    # the platform chosen for the default backend, once chosen


def check_platforms(value):
    """Raises RuntimeError when the ``jax_platforms`` setting ``value`` ('cpu', 'cuda', 'gpu',
    'cuda,cpu', ... or None/'') comes after the default backend was chosen and names another
    first platform; stores nothing (``set_platforms`` does, once the config took the value)."""
    if _default_platform and value:
        first = value.split(",")[0].strip()
        first = "cuda" if first == "gpu" else first
        if first in _KNOWN_PLATFORMS and first != _default_platform[0]:  # (others: config)
            raise RuntimeError("jax_platforms config should be updated before backends are "
                               "initialized: the default backend is already "
                               f"'{_default_platform[0]}'")


def set_platforms(value):
    """Takes the ``jax_platforms`` setting (see ``check_platforms``) for the default backend."""
    check_platforms(value)
    _platforms_setting[:] = [value or None]


def _platforms_requested():
    if _platforms_setting:
        return _platforms_setting[0]
    return (os.environ.get("PYJAX_PLATFORMS") or os.environ.get("JAX_PLATFORMS")
            or None)


def _try_client(platform):
    """The client of ``platform`` ('cpu' or 'cuda'), or the exception that stopped it."""
    try:
        return get_client(platform)
    except Exception as e:  # noqa: BLE001 - reported by the caller, as JAX does
        return e


def default_platform():
    """The platform of the default backend, chosen once per process as JAX chooses it:
    the first platform of ``JAX_PLATFORMS`` (``jax_platforms``) that initializes ('gpu'
    names 'cuda'), else, with no setting, 'cuda' when a CUDA plugin is installed and finds
    a GPU (with a warning when it is installed and fails), else 'cpu'."""
    if _default_platform:
        return _default_platform[0]
    with _default_lock:
        if _default_platform:
            return _default_platform[0]
        requested = _platforms_requested()
        if requested:
            names = [p.strip() for p in requested.split(",") if p.strip()]
            errors = []
            for name in names:
                platform = "cuda" if name == "gpu" else name
                if platform not in _KNOWN_PLATFORMS:
                    errors.append((name, f"Backend '{name}' is not in the list of known "
                                         f"backends: {list(_KNOWN_PLATFORMS)}."))
                    continue
                got = _try_client(platform)
                if isinstance(got, Client):
                    _default_platform.append(platform)
                    return platform
                errors.append((name, str(got)))
            name, why = errors[0]
            raise RuntimeError(f"Unable to initialize backend '{name}': {why} (set "
                               "JAX_PLATFORMS='' to automatically choose an available "
                               "backend)")
        platform = "cpu"
        if find_cuda_plugin_path() is not None:
            got = _try_client("cuda")
            if isinstance(got, Client):
                platform = "cuda"
            else:
                import warnings
                warnings.warn(f"pyjax: the CUDA plugin is installed but could not start "
                              f"({got}); falling back to cpu.", RuntimeWarning, stacklevel=3)
        _default_platform.append(platform)
        return platform


_default_lock = threading.Lock()


def _canonical_backend(backend):
    """'cpu' or 'cuda' for a backend name, or None when this process cannot have it (as in
    JAX, a JAX_PLATFORMS list also leaves out the platforms it does not name)."""
    platform = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda"}.get(backend)
    requested = _platforms_requested()
    if requested:
        default_platform()   # JAX starts the listed backends first; raises if none starts
        listed = {"cuda" if p.strip() == "gpu" else p.strip() for p in requested.split(",")}
        if platform not in listed:
            return None
    if platform == "cuda" and find_cuda_plugin_path() is None:
        return None
    return platform


def backend_client(backend=None):
    """The client of ``backend`` (None: the default one); for a backend this process does not
    have, the RuntimeError JAX raises."""
    if backend is None:
        return get_client()
    check_backend(backend)
    return get_client(_canonical_backend(backend))


def check_backend(backend):
    """Raises JAX's RuntimeError unless ``backend`` is None or a backend this process has;
    creates no client unless ``backend`` names the GPU (to see whether one is there)."""
    if backend is None:
        return
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a str or None, got {backend!r}")
    platform = _canonical_backend(backend)
    if platform == "cpu":
        return
    present = "gpu" if _default_platform == ["cuda"] else "cpu"
    if platform == "cuda":
        got = _try_client("cuda")
        if isinstance(got, Client):
            return
        raise RuntimeError(f"Backend '{backend}' failed to initialize: {got}. Available "
                           f"backends are ['{present}']")
    if backend in _PLATFORM_ALIASES:
        raise RuntimeError(
            f"Unknown backend: '{backend}' requested, but no platforms that are instances "
            f"of {backend} are present. Platforms present are: {present}")
    raise RuntimeError(f"Unknown backend {backend}. Available backends are ['{present}']")


def get_client(platform=None):
    """Returns the process-wide client for ``platform`` ('cpu' or 'cuda'; None: the default
    backend's, see :func:`default_platform`), creating it on first use.

    The CPU client has ``PYJAX_CPU_DEVICES`` devices (default 1); the CUDA client the GPUs
    the plugin sees, with JAX's create options (:func:`plugin.cuda_client_options`).
    """
    if platform is None:
        platform = _default_platform[0] if _default_platform else default_platform()
    client = _clients.get(platform)
    if client is not None:
        return client
    if platform not in _KNOWN_PLATFORMS:
        raise ValueError(f"unsupported platform {platform!r}; pyjax supports "
                         f"{', '.join(map(repr, _KNOWN_PLATFORMS))}")
    with _clients_lock:
        client = _clients.get(platform)
        if client is None:
            client = _new_cpu_client() if platform == "cpu" else _new_cuda_client()
            _clients[platform] = client
            from . import tiered
            tiered.warm_up(client)  # the plugin's one-time set-up, off the first call
    return client


def _new_cpu_client():
    n = cpu_device_count()
    api = load_plugin()
    # The option must be an int64 NamedValue: other types abort some plugins.
    client = Client(api, {"cpu_device_count": int(n)})
    if len(client.devices) != n:
        raise RuntimeError(f"asked the XLA CPU plugin for {n} CPU devices "
                           f"({CPU_DEVICES_ENV}), but it created {len(client.devices)}")
    return client


def _new_cuda_client():
    path = find_cuda_plugin_path()
    if path is None:
        raise RuntimeError(f"no CUDA PJRT plugin is installed: {CUDA_INSTALL_HINT}")
    preload_cuda_libraries(path)
    set_cuda_data_dir()
    from .distributed import client_create_extras
    options, callbacks, keep = client_create_extras("cuda")
    client = Client(load_plugin(path, CUDA_INSTALL_HINT), {**cuda_client_options(), **options},
                    callbacks, keep)
    if not client.devices:
        raise RuntimeError("the CUDA PJRT plugin started but found no GPU")
    return client


def cpu_dots_want_row_major():
    """Whether the CPU plugin's matrix products run on YNNPACK (its build, runtime/plugin.py),
    which takes a 2-D left operand only when it is contracted on its minor dimension: the
    dot lowering then writes the transposes of other left operands out (lax/dot.py). The
    loaded CPU client's plugin decides, or the one it would load."""
    client = _clients.get("cpu")
    try:
        path = client._api.path if client is not None else find_plugin_path()
    except Exception:  # noqa: BLE001 - no plugin: the compile will say so
        return False
    return is_ynn_plugin(path)


@atexit.register
def _shutdown():
    # After this, Buffer/Executable __del__ do nothing: the objects that are still
    # alive at exit are leaked instead of being freed in an arbitrary order while
    # the interpreter (and maybe the plugin) is being torn down.
    for client in list(_live_clients):
        client._closed = True
