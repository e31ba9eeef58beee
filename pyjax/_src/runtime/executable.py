"""Compiled programs (``PJRT_LoadedExecutable``) and their execution."""

import ctypes
import threading
from ctypes import addressof, byref, c_void_p

import numpy as np

from . import capi
from .buffer import Buffer, pjrt_type_to_dtype, _Result, aval_str, deleted_or
from .errors import DeletedBufferError, XlaRuntimeError

# jax_no_execution (set by dispatch/eager.py when the flag changes): every execution refuses.
# One global read per execution; the runners below check it before filling their structs.
_no_execution = False


def set_no_execution(on):
    global _no_execution
    _no_execution = bool(on)


def _refuse(executable):
    raise RuntimeError(f"JAX tried to execute function {executable.name}, but the "
                       "no_execution config option is set")


def _normalize_types(types, what):
    if types is None:
        return None
    out = []
    for i, t in enumerate(types):
        try:
            dtype, shape = t
            out.append((np.dtype(dtype), tuple(int(d) for d in shape)))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}[{i}] must be a (dtype, shape) pair, got {t!r}") from e
    return out


def new_result(ptr, client, shape, dtype, device):
    """The Buffer owning a fresh result ``ptr`` (not yet computed), made without __init__."""
    b = _Result()
    b._ptr = ptr
    b._client = client
    b.shape = shape
    b.dtype = dtype
    b.device = device
    b._ready = False
    return b


class Executable:
    """A compiled program, loaded on its devices.

    Attributes
    ----------
    in_types, out_types : list of (np.dtype, tuple)
        Per-device argument and result types.
    num_outputs : int
    devices : list of Device
        The addressable devices, in the order ``execute_sharded`` expects its
        argument lists. For a portable executable: ``[client.devices[0]]`` (it runs
        on whichever device ``execute`` is given).
    portable : bool
    """

    def __init__(self, client, loaded_ptr, in_types, out_types, *, portable,
                 num_replicas=1, num_partitions=1, portable_source=None):
        """``loaded_ptr``: a PJRT_LoadedExecutable pointer, or the ``LoadedOwner`` a
        compile returned (taken over here, interrupt-safely: see LoadedOwner)."""
        self._api = api = client._api
        self._ptr = self._exe_ptr = self._portable_ptr = None  # _free() reads them on failure
        self._client = client
        # Tiered compilation (runtime/tiered.py): "full", or "low" until ``install`` swaps
        # in the fully optimised build. ``_retired`` keeps the replaced builds alive until
        # this object is freed: executions launched with them may still be running.
        self.tier = "full"
        self._retired = []
        if type(loaded_ptr) is not int:  # a LoadedOwner: take the pointer over
            owner = loaded_ptr
            self._ptr = getattr(owner.args, owner.field)  # these two statements run no
            setattr(owner.args, owner.field, None)        # signal handler in between
            loaded_ptr = self._ptr
        else:
            self._ptr = loaded_ptr
        self.portable = bool(portable)
        self.num_replicas = int(num_replicas)
        self.num_partitions = int(num_partitions)
        # A portable program compiled by Client.compile comes specialised to the default
        # device (``loaded_ptr`` is a non-portable build for it): PJRT executes such a
        # build without re-reading the compile options on every call, which saves about
        # 0.3 us per call. ``portable_source`` = (code, options) compiles the portable
        # build on demand, the first time the program runs on another device.
        self._portable_source = portable_source
        self._specialized = portable_source is not None
        try:
            self._exe_ptr = api.call(
                "LoadedExecutable_GetExecutable",
                capi.LoadedExecutable_GetExecutable_Args(loaded_executable=loaded_ptr)
            ).executable
            self.num_outputs = api.call(
                "Executable_NumOutputs",
                capi.Executable_NumOutputs_Args(executable=self._exe_ptr)).num_outputs
            plugin_out_types = self._plugin_output_types()
            devs = api.call("LoadedExecutable_AddressableDevices",
                            capi.LoadedExecutable_AddressableDevices_Args(executable=loaded_ptr))
            self.devices = [client._device_by_ptr[devs.addressable_devices[i]]
                            for i in range(devs.num_addressable_devices)]
            if self.portable or not self.devices:
                self.devices = [client._default_device]
            self.in_types = _normalize_types(in_types, "in_types")
            self.out_types = self._check_out_types(
                _normalize_types(out_types, "out_types"), plugin_out_types)
        except BaseException:
            self._free()
            raise
        if self.portable and not self._specialized:
            self._portable_ptr = loaded_ptr
        self._num_args = None if self.in_types is None else len(self.in_types)
        self._out_meta = [(shape, dtype) for dtype, shape in self.out_types]
        self._single_out = self._out_meta[0] if len(self._out_meta) == 1 else None
        self._options = capi.ExecuteOptions()  # NULL options would crash Execute
        self._options_ptr = ctypes.pointer(self._options)
        self._execute_fn = api.LoadedExecutable_Execute
        self._device0 = self.devices[0]
        # The device the prepared structs of _pool name in execute_device: NULL for a
        # non-portable build (it runs where it was compiled for).
        self._pool_device = (self._device0 if self.portable and not self._specialized
                             else None)
        # Prepared Execute argument structs, in pools (see Client.__init__ for why).
        self._pool = [] if self._num_args is None else [self._new_pool_structs()]
        self._other_pool = []  # for other devices (portable build, execute_device set)
        self._sharded_pool = []
        # Set for programs with ordered host callbacks: each execution is awaited before it
        # returns, so the next one cannot overtake it.
        self.synchronous = False

    # --- setup -----------------------------------------------------------------------
    def _plugin_output_types(self):
        """[(dtype or None, shape)] from the plugin, or None if it cannot tell."""
        api, n = self._api, self.num_outputs
        try:
            t = api.call("Executable_OutputElementTypes",
                         capi.Executable_OutputElementTypes_Args(executable=self._exe_ptr))
            d = api.call("Executable_OutputDimensions",
                         capi.Executable_OutputDimensions_Args(executable=self._exe_ptr))
        except XlaRuntimeError:
            return None
        if t.num_output_types != n or d.num_outputs != n:
            return None
        out, pos = [], 0
        for i in range(n):
            rank = d.dim_sizes[i]
            out.append((pjrt_type_to_dtype(t.output_types[i]),
                        tuple(d.dims[pos + k] for k in range(rank))))
            pos += rank
        return out

    def _check_out_types(self, given, plugin):
        if given is None:
            if plugin is None:
                raise XlaRuntimeError("out_types=None, and the plugin cannot report the "
                                      "output types", 12)
            return plugin
        if len(given) != self.num_outputs:
            raise ValueError(f"out_types lists {len(given)} results, but the compiled "
                             f"program has {self.num_outputs}")
        if plugin is not None:
            for i, ((gd, gs), (pd, ps)) in enumerate(zip(given, plugin)):
                if (pd is not None and gd != pd) or gs != ps:
                    raise ValueError(
                        f"out_types[{i}] is {aval_str(gd, gs)}, but the compiled program "
                        f"returns {aval_str(pd or gd, ps)}")
        return given

    def _new_execute_structs(self, num_devices, num_args, loaded_ptr=None):
        """Fresh argument structs: (args, byref(args), argv, outv, keepalive)."""
        argv = (c_void_p * max(1, num_devices * num_args))()
        outv = (c_void_p * max(1, num_devices * self.num_outputs))()
        arg_lists = (c_void_p * num_devices)(
            *[addressof(argv) + 8 * num_args * i for i in range(num_devices)])
        out_lists = (c_void_p * num_devices)(
            *[addressof(outv) + 8 * self.num_outputs * i for i in range(num_devices)])
        if loaded_ptr is None and self.tier != "full":
            with self._tier_lock:  # not interleaved with ``install``'s swap
                args = self._execute_args(self._ptr, num_devices, num_args, argv, arg_lists,
                                          out_lists)
                self._tier_structs.append(args)  # ``install`` repoints it
        else:
            args = self._execute_args(self._ptr if loaded_ptr is None else loaded_ptr,
                                      num_devices, num_args, argv, arg_lists, out_lists)
        return args, byref(args), argv, outv, (arg_lists, out_lists)

    def _execute_args(self, loaded_ptr, num_devices, num_args, argv, arg_lists, out_lists):
        return capi.LoadedExecutable_Execute_Args(
            executable=loaded_ptr, options=self._options_ptr,
            argument_lists=addressof(arg_lists), num_devices=num_devices, num_args=num_args,
            output_lists=addressof(out_lists))

    def _new_pool_structs(self):
        scratch = self._new_execute_structs(1, self._num_args)
        if self._pool_device is not None:
            scratch[0].execute_device = self._pool_device._ptr
        return scratch

    def _portable_build(self):
        """The loaded portable build (compiled on first use for a specialised program)."""
        ptr = self._portable_ptr
        if ptr is None:
            code, options = self._portable_source
            owner = self._client._compile_or_load(code, options)
            if self._portable_ptr is None:  # another thread may have compiled it meanwhile
                self._portable_ptr = getattr(owner.args, owner.field)  # no signal handler
                setattr(owner.args, owner.field, None)                # runs in between
            ptr = self._portable_ptr  # else the owner frees the duplicate when collected
        return ptr

    # --- tiers (runtime/tiered.py) ----------------------------------------------------
    def mark_low_tier(self):
        """Marks this as a quickly compiled build that ``install`` will replace; from now
        on every prepared argument struct naming it is recorded so that it can be
        repointed."""
        self._tier_lock = threading.Lock()
        self._tier_structs = [scratch[0] for scratch in self._pool]
        self.tier = "low"

    def install(self, loaded):
        """Swaps in another build of the same program (a LoadedOwner or pointer of the same
        signature) for all later executions; the replaced build stays alive until this
        object is freed. Safe while other threads execute: a prepared struct in use keeps
        whichever build it names at the moment Execute reads it, and both are alive."""
        if type(loaded) is not int:
            loaded = loaded.take()
        api = self._api
        try:
            exe_ptr = api.call(
                "LoadedExecutable_GetExecutable",
                capi.LoadedExecutable_GetExecutable_Args(loaded_executable=loaded)).executable
        except BaseException:
            self._client._destroy_loaded(loaded)
            raise
        with self._tier_lock:
            self._retired.append((self._ptr, self._exe_ptr))
            self._ptr, self._exe_ptr = loaded, exe_ptr
            for args in self._tier_structs:
                args.executable = loaded  # a pointer store, atomic under the GIL
            self._tier_structs = []
            self.tier = "full"

    # --- execution -------------------------------------------------------------------
    def execute(self, args, device=None):
        """Runs a single-device program; returns its results (not yet computed).

        Checks the number, dtype, shape and device of ``args`` (PJRT itself only
        checks byte sizes). ``device=None``: the device of ``args[0]`` (or
        ``devices[0]``). Errors of the computation surface when a result is read.
        """
        if len(self.devices) != 1 or self.num_replicas * self.num_partitions != 1:
            raise ValueError(f"this executable runs on {len(self.devices)} devices; use "
                             "execute_sharded")
        if self.in_types is not None:
            self._check_args(args, self.in_types, "")
        if device is None:
            device = args[0].device if args else self._device0
        elif device.client is not self._client:
            raise ValueError(f"{device!r} belongs to another client")
        if not self.portable and device is not self._device0:
            raise ValueError(f"this executable was compiled for {self._device0!r}, not "
                             f"{device!r}")
        for i, a in enumerate(args):
            if a.device is not device:
                raise ValueError(f"argument {i} is on {a.device!r}, but the computation "
                                 f"runs on {device!r}")
        return self.execute_unchecked(args, device)

    def execute_unchecked(self, args, device=None):
        """``execute`` without the type checks: the hot path of cached calls.

        ``device=None``: the device of ``args[0]`` (or ``devices[0]``).
        """
        if _no_execution:
            _refuse(self)
        n = len(args)
        if n != self._num_args:
            return self._execute_fresh(args, device)
        if device is None:
            device = args[0].device if n else self._device0
        if device is not self._device0:
            if self.portable:
                return self._execute_elsewhere(args, device)
            device = self._device0  # PJRT checks that the arguments are there
        pool = self._pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = self._new_pool_structs()
        argv = scratch[2]
        i = 0
        for a in args:
            argv[i] = a._ptr
            i += 1
        err = self._execute_fn(scratch[1])
        if err:
            pool.append(scratch)
            raise deleted_or(self._api.error_to_exception(err), args)
        meta = self._single_out
        if meta is not None and not self.synchronous:  # the common case, without the loop
            ptr = scratch[3][0]
            pool.append(scratch)
            return [new_result(ptr, self._client, meta[0], meta[1], device)]
        outs = scratch[3][0:self.num_outputs]
        pool.append(scratch)
        return self._wrap(outs, device)

    def single_result_runner(self):
        """``run(*bufs, device)`` -> the one result Buffer: ``execute_unchecked`` for a
        program of one result and one or two arguments, as a closure over its state (the
        eager hot path: locals instead of attribute loads, no argument tuple, no result list).
        """
        if self._single_out is None or self._num_args not in (1, 2):
            raise ValueError("single_result_runner needs one result and one or two arguments")
        pool, new_structs, execute = self._pool, self._new_pool_structs, self._execute_fn
        device0, client, api = self._device0, self._client, self._api
        shape, dtype = self._single_out
        slow = self.execute_unchecked

        def launch(scratch, device):  # argv filled: run, and wrap the one result
            if _no_execution:
                pool.append(scratch)
                _refuse(self)
            err = execute(scratch[1])
            ptr = scratch[3][0]
            pool.append(scratch)
            if err:
                raise api.error_to_exception(err)
            return new_result(ptr, client, shape, dtype, device)

        if self._num_args == 1:
            def run(x, device):
                if device is not device0:
                    return slow((x,), device)[0]
                try:
                    scratch = pool.pop()
                except IndexError:
                    scratch = new_structs()
                scratch[2][0] = x._ptr
                try:
                    return launch(scratch, device)
                except XlaRuntimeError as e:
                    raise deleted_or(e, (x,)) from None
        else:
            def run(x, y, device):
                if device is not device0:
                    return slow((x, y), device)[0]
                try:
                    scratch = pool.pop()
                except IndexError:
                    scratch = new_structs()
                argv = scratch[2]
                argv[0] = x._ptr
                argv[1] = y._ptr
                try:
                    return launch(scratch, device)
                except XlaRuntimeError as e:
                    raise deleted_or(e, (x, y)) from None
        if self.synchronous:
            unordered = run

            def run(*args):
                out = unordered(*args)
                out.block_until_ready()
                return out
        return run

    def _wrap(self, ptrs, device):
        client = self._client
        outs = [new_result(p, client, shape, dtype, device)
                for p, (shape, dtype) in zip(ptrs, self._out_meta)]
        if self.synchronous:
            for b in outs:
                b.block_until_ready()
        return outs

    def _execute_elsewhere(self, args, device):
        """A portable program on a device other than devices[0]."""
        if _no_execution:
            _refuse(self)
        if device.client is not self._client:
            raise ValueError(f"{device!r} belongs to another client")
        ptr = self._portable_build()
        pool = self._other_pool
        try:
            scratch = pool.pop()
        except IndexError:
            scratch = self._new_execute_structs(1, len(args), ptr)
        eargs, eref, argv, outv, _ = scratch
        i = 0
        for a in args:
            argv[i] = a._ptr
            i += 1
        eargs.execute_device = device._ptr
        err = self._execute_fn(eref)
        outs = outv[0:self.num_outputs] if not err else None
        pool.append(scratch)
        if err:
            raise deleted_or(self._api.error_to_exception(err), args)
        return self._wrap(outs, device)

    def _execute_fresh(self, args, device):
        if _no_execution:
            _refuse(self)
        n = len(args)
        if self._num_args is not None and n != self._num_args:
            raise TypeError(f"the program takes {self._num_args} arguments, got {n}")
        if device is None:
            device = args[0].device if n else self._device0
        for i, a in enumerate(args):
            if not isinstance(a, Buffer):
                raise TypeError(f"argument {i} must be a Buffer, got {type(a).__name__}")
        if self.portable and device is not self._device0:
            eargs, _, argv, outv, _ = self._new_execute_structs(1, n, self._portable_build())
            eargs.execute_device = device._ptr
        else:
            eargs, _, argv, outv, _ = self._new_execute_structs(1, n)
            if self._pool_device is not None:
                eargs.execute_device = self._pool_device._ptr
            device = self._device0
        argv[0:n] = [a._ptr for a in args]
        try:
            self._api.call("LoadedExecutable_Execute", eargs)
        except XlaRuntimeError as e:
            raise deleted_or(e, args) from None
        return self._wrap(outv[0:self.num_outputs], device)

    def execute_sharded(self, per_device_args):
        """Runs a multi-device program (replicas and/or partitions).

        ``per_device_args[i]`` holds the arguments for ``self.devices[i]``.
        Returns ``outputs[i][j]``: result j on ``self.devices[i]``.
        """
        if _no_execution:
            _refuse(self)
        devices = self.devices
        nd = len(devices)
        if len(per_device_args) != nd:
            raise ValueError(f"expected argument lists for {nd} devices "
                             f"{devices}, got {len(per_device_args)}")
        if self.portable:
            return [self.execute(per_device_args[0])]
        n = len(per_device_args[0]) if nd else 0
        for i, (dev_args, dev) in enumerate(zip(per_device_args, devices)):
            where = f"device {i} ({dev!r}) "
            if self.in_types is not None:
                self._check_args(dev_args, self.in_types, where)
            elif len(dev_args) != n:
                raise TypeError(f"{where}got {len(dev_args)} arguments, device 0 got {n}")
            for j, a in enumerate(dev_args):
                if a.device is not dev:
                    raise ValueError(f"{where}argument {j} is on {a.device!r}, expected "
                                     f"{dev!r}")
                if a.is_deleted():
                    # Checked before Execute: a multi-device Execute given a deleted buffer
                    # fails on that device only, and later multi-device programs on this
                    # client then never complete (measured: the next one hangs).
                    raise DeletedBufferError(aval_str(a.dtype, a.shape))
        pool = self._sharded_pool
        try:
            scratch = pool.pop()
            if scratch[0].num_args != n:
                scratch = self._new_execute_structs(nd, n)
        except IndexError:
            scratch = self._new_execute_structs(nd, n)
        eargs, eref, argv, outv, _ = scratch
        if n:
            argv[0:nd * n] = [a._ptr for dev_args in per_device_args for a in dev_args]
        err = self._execute_fn(eref)
        nout = self.num_outputs
        flat = outv[0:nd * nout] if nout and not err else []
        pool.append(scratch)
        if err:
            raise deleted_or(self._api.error_to_exception(err),
                             [a for dev_args in per_device_args for a in dev_args])
        return [self._wrap(flat[i * nout:(i + 1) * nout], dev)
                for i, dev in enumerate(devices)]

    def _check_args(self, args, types, where):
        if len(args) != len(types):
            raise TypeError(f"{where}the program takes {len(types)} arguments "
                            f"({', '.join(aval_str(d, s) for d, s in types)}), "
                            f"got {len(args)}")
        for i, (a, (dtype, shape)) in enumerate(zip(args, types)):
            if not isinstance(a, Buffer):
                raise TypeError(f"{where}argument {i} must be a Buffer, got "
                                f"{type(a).__name__}")
            if a.dtype != dtype:
                raise TypeError(f"{where}argument {i}: expected {aval_str(dtype, shape)}, "
                                f"got {aval_str(a.dtype, a.shape)}")
            if a.shape != shape:
                raise ValueError(f"{where}argument {i}: expected {aval_str(dtype, shape)}, "
                                 f"got {aval_str(a.dtype, a.shape)}")

    # --- misc ------------------------------------------------------------------------
    @property
    def name(self):
        args = capi.Executable_Name_Args(executable=self._exe_ptr)
        self._api.call("Executable_Name", args)
        return capi.string_out(args.executable_name, args.executable_name_size)

    def optimized_program(self):
        """``(format, bytes)`` of the program XLA optimized (on CPU a serialized HloModuleProto,
        format "hlo"; its instructions carry the ``op_name`` metadata of named scopes)."""
        prog = capi.Program(code=None, code_size=0, format=b"hlo", format_size=3)
        args = capi.Executable_OptimizedProgram_Args(executable=self._exe_ptr,
                                                     program=ctypes.pointer(prog))
        self._api.call("Executable_OptimizedProgram", args)
        buf = ctypes.create_string_buffer(prog.code_size)
        prog.code = ctypes.cast(buf, ctypes.c_char_p)
        self._api.call("Executable_OptimizedProgram", args)
        fmt = ctypes.string_at(prog.format, prog.format_size).decode()
        return fmt, buf.raw[:prog.code_size]

    def cost_analysis(self):
        """XLA's cost estimates of the program (``{"flops": ..., "bytes accessed": ...}``)."""
        args = capi.Executable_GetCostAnalysis_Args(executable=self._exe_ptr)
        self._api.call("Executable_GetCostAnalysis", args)
        return self._api.read_named_values(args.properties, args.num_properties)

    def memory_stats(self):
        """XLA's compiled memory statistics: ``{field: bytes}`` (argument, output, alias,
        temp, generated code, host variants, peak)."""
        args = capi.Executable_GetCompiledMemoryStats_Args(executable=self._exe_ptr)
        self._api.call("Executable_GetCompiledMemoryStats", args)
        return {name: getattr(args, name) for name in capi.MEMORY_STATS_FIELDS}

    def serialize(self):
        """The compiled executable as bytes (see ``Client.deserialize_executable``)."""
        api = self._api
        exe_ptr = self._exe_ptr
        if self._specialized:  # serialize the portable build, which runs anywhere
            exe_ptr = api.call("LoadedExecutable_GetExecutable",
                               capi.LoadedExecutable_GetExecutable_Args(
                                   loaded_executable=self._portable_build())).executable
        try:
            return self._client._serialize_executable(exe_ptr)
        finally:
            if exe_ptr != self._exe_ptr:
                self._client._destroy_executable(exe_ptr)

    def __repr__(self):
        ins = "?" if self.in_types is None else ", ".join(aval_str(d, s) for d, s in self.in_types)
        outs = ", ".join(aval_str(d, s) for d, s in self.out_types)
        return f"Executable(({ins}) -> ({outs}), devices={self.devices})"

    def _free(self):
        api = self._api
        retired, self._retired = getattr(self, "_retired", []), []
        for loaded, exe in retired:
            if exe:
                self._client._destroy_executable(exe)
            if loaded:
                self._client._destroy_loaded(loaded)
        other, self._portable_ptr = self._portable_ptr, None
        if other and other != self._ptr:
            err = api.LoadedExecutable_Destroy(
                byref(capi.LoadedExecutable_Destroy_Args(executable=other)))
            if err:
                api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))
        exe, self._exe_ptr = self._exe_ptr, None
        if exe:
            err = api.Executable_Destroy(byref(capi.Executable_Destroy_Args(executable=exe)))
            if err:
                api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))
        loaded, self._ptr = self._ptr, None
        if loaded:
            err = api.LoadedExecutable_Destroy(
                byref(capi.LoadedExecutable_Destroy_Args(executable=loaded)))
            if err:
                api.Error_Destroy(byref(capi.Error_Destroy_Args(error=err)))

    def __del__(self):
        client = getattr(self, "_client", None)
        if client is None or client._closed:  # interpreter shutdown: leak
            return
        self._free()
