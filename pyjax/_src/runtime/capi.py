"""ctypes view of the PJRT C API (``pjrt_c_api.h``, API version 0.81).

Only the structs the runtime uses are declared. Layouts follow the header field
by field; every Args struct starts with ``struct_size`` and ``extension_start``
and its ``STRUCT_SIZE`` is ``offsetof(last) + sizeof(last)``, the value the
header's ``PJRT_STRUCT_SIZE`` macro gives (a smaller size is rejected by the
plugin; a larger one is accepted, so newer plugins work with these sizes).

Every API function is called through a ``CFUNCTYPE`` pointer (which releases
the GIL during the call) with a single ``byref(args)`` argument and returns a
``PJRT_Error*`` as an int (or None for success).
"""

import ctypes
from ctypes import (POINTER, Structure, Union, c_bool, c_char_p, c_float,
                    c_int, c_int64, c_size_t, c_void_p)

from .errors import XlaRuntimeError

# Function slots of PJRT_Api, in header order (slot i lives at offset 40 + 8*i).
FUNCTION_NAMES = (
    "Error_Destroy", "Error_Message", "Error_GetCode", "Plugin_Initialize",
    "Plugin_Attributes", "Event_Destroy", "Event_IsReady", "Event_Error", "Event_Await",
    "Event_OnReady", "Client_Create", "Client_Destroy", "Client_PlatformName",
    "Client_ProcessIndex", "Client_PlatformVersion", "Client_Devices",
    "Client_AddressableDevices", "Client_LookupDevice", "Client_LookupAddressableDevice",
    "Client_AddressableMemories", "Client_Compile", "Client_DefaultDeviceAssignment",
    "Client_BufferFromHostBuffer", "DeviceDescription_Id", "DeviceDescription_ProcessIndex",
    "DeviceDescription_Attributes", "DeviceDescription_Kind", "DeviceDescription_DebugString",
    "DeviceDescription_ToString", "Device_GetDescription", "Device_IsAddressable",
    "Device_LocalHardwareId", "Device_AddressableMemories", "Device_DefaultMemory",
    "Device_MemoryStats", "Memory_Id", "Memory_Kind", "Memory_DebugString", "Memory_ToString",
    "Memory_AddressableByDevices", "Executable_Destroy", "Executable_Name",
    "Executable_NumReplicas", "Executable_NumPartitions", "Executable_NumOutputs",
    "Executable_SizeOfGeneratedCodeInBytes", "Executable_GetCostAnalysis",
    "Executable_OutputMemoryKinds", "Executable_OptimizedProgram", "Executable_Serialize",
    "LoadedExecutable_Destroy", "LoadedExecutable_GetExecutable",
    "LoadedExecutable_AddressableDevices", "LoadedExecutable_Delete",
    "LoadedExecutable_IsDeleted", "LoadedExecutable_Execute", "Executable_DeserializeAndLoad",
    "LoadedExecutable_Fingerprint", "Buffer_Destroy", "Buffer_ElementType", "Buffer_Dimensions",
    "Buffer_UnpaddedDimensions", "Buffer_DynamicDimensionIndices", "Buffer_GetMemoryLayout",
    "Buffer_OnDeviceSizeInBytes", "Buffer_Device", "Buffer_Memory", "Buffer_Delete",
    "Buffer_IsDeleted", "Buffer_CopyToDevice", "Buffer_ToHostBuffer", "Buffer_IsOnCpu",
    "Buffer_ReadyEvent", "Buffer_UnsafePointer", "Buffer_IncreaseExternalReferenceCount",
    "Buffer_DecreaseExternalReferenceCount", "Buffer_OpaqueDeviceMemoryDataPointer",
    "CopyToDeviceStream_Destroy", "CopyToDeviceStream_AddChunk", "CopyToDeviceStream_TotalBytes",
    "CopyToDeviceStream_GranuleSize", "CopyToDeviceStream_CurrentBytes",
    "TopologyDescription_Create", "TopologyDescription_Destroy",
    "TopologyDescription_PlatformName", "TopologyDescription_PlatformVersion",
    "TopologyDescription_GetDeviceDescriptions", "TopologyDescription_Serialize",
    "TopologyDescription_Attributes", "Compile", "Executable_OutputElementTypes",
    "Executable_OutputDimensions", "Buffer_CopyToMemory", "Client_CreateViewOfDeviceBuffer",
    "Executable_Fingerprint", "Client_TopologyDescription", "Executable_GetCompiledMemoryStats",
    "Memory_Kind_Id", "ExecuteContext_Create", "ExecuteContext_Destroy", "Buffer_CopyRawToHost",
    "AsyncHostToDeviceTransferManager_Destroy", "AsyncHostToDeviceTransferManager_TransferData",
    "Client_CreateBuffersForAsyncHostToDevice",
    "AsyncHostToDeviceTransferManager_RetrieveBuffer",
    "AsyncHostToDeviceTransferManager_Device", "AsyncHostToDeviceTransferManager_BufferCount",
    "AsyncHostToDeviceTransferManager_BufferSize",
    "AsyncHostToDeviceTransferManager_SetBufferError",
    "AsyncHostToDeviceTransferManager_AddMetadata", "Client_DmaMap", "Client_DmaUnmap",
    "Client_CreateUninitializedBuffer", "Client_UpdateGlobalProcessInfo",
    "TopologyDescription_Deserialize", "Client_CreateAliasBuffer", "Client_FulfillAliasBuffer",
    "LoadedExecutable_GetDeviceAssignment",
)
API_FUNCTIONS_OFFSET = 40
HEADER_API_VERSION = (0, 81)

# PJRT_NamedValue_Type
NAMED_STRING, NAMED_INT64, NAMED_INT64_LIST, NAMED_FLOAT, NAMED_BOOL = range(5)
# PJRT_HostBufferSemantics
HOST_BUFFER_IMMUTABLE_ONLY_DURING_CALL = 0


class _Args(Structure):
    """Base of every PJRT Args struct: sets ``struct_size`` on construction."""
    STRUCT_SIZE = 0

    def __init__(self, **kwargs):
        super().__init__(struct_size=self.STRUCT_SIZE, **kwargs)


def _args(name, *fields, base=_Args):
    cls = type(name, (base,), {
        "_fields_": [("struct_size", c_size_t), ("extension_start", c_void_p)] + list(fields)})
    last = getattr(cls, cls._fields_[-1][0])
    cls.STRUCT_SIZE = last.offset + last.size
    return cls


# --- errors, events ------------------------------------------------------------------
Error_Destroy_Args = _args("Error_Destroy_Args", ("error", c_void_p))
Error_Message_Args = _args("Error_Message_Args", ("error", c_void_p), ("message", c_void_p),
                           ("message_size", c_size_t))
Error_GetCode_Args = _args("Error_GetCode_Args", ("error", c_void_p), ("code", c_int))
Event_Destroy_Args = _args("Event_Destroy_Args", ("event", c_void_p))
Event_IsReady_Args = _args("Event_IsReady_Args", ("event", c_void_p), ("is_ready", c_bool))
Event_Await_Args = _args("Event_Await_Args", ("event", c_void_p))


class _NamedValueUnion(Union):
    _fields_ = [("string_value", c_void_p), ("int64_value", c_int64),
                ("int64_array_value", c_void_p), ("float_value", c_float),
                ("bool_value", c_bool)]


NamedValue = type("NamedValue", (_Args,), {
    "_anonymous_": ("u",),
    "_fields_": [("struct_size", c_size_t), ("extension_start", c_void_p),
                 ("name", c_void_p), ("name_size", c_size_t), ("type", c_int),
                 ("u", _NamedValueUnion), ("value_size", c_size_t)]})
NamedValue.STRUCT_SIZE = NamedValue.value_size.offset + NamedValue.value_size.size

# --- plugin, client ------------------------------------------------------------------
Plugin_Initialize_Args = _args("Plugin_Initialize_Args")  # size 16: extension_start is last
Plugin_Attributes_Args = _args("Plugin_Attributes_Args", ("attributes", c_void_p),
                               ("num_attributes", c_size_t))
Client_Create_Args = _args(
    "Client_Create_Args", ("create_options", c_void_p), ("num_options", c_size_t),
    ("kv_get_callback", c_void_p), ("kv_get_user_arg", c_void_p),
    ("kv_put_callback", c_void_p), ("kv_put_user_arg", c_void_p), ("client", c_void_p),
    ("kv_try_get_callback", c_void_p), ("kv_try_get_user_arg", c_void_p))
Client_Destroy_Args = _args("Client_Destroy_Args", ("client", c_void_p))
Client_PlatformName_Args = _args("Client_PlatformName_Args", ("client", c_void_p),
                                 ("platform_name", c_void_p), ("platform_name_size", c_size_t))
Client_ProcessIndex_Args = _args("Client_ProcessIndex_Args", ("client", c_void_p),
                                 ("process_index", c_int))
Client_PlatformVersion_Args = _args(
    "Client_PlatformVersion_Args", ("client", c_void_p), ("platform_version", c_void_p),
    ("platform_version_size", c_size_t))
Client_AddressableDevices_Args = _args(
    "Client_AddressableDevices_Args", ("client", c_void_p),
    ("addressable_devices", POINTER(c_void_p)), ("num_addressable_devices", c_size_t))
Client_Devices_Args = _args(
    "Client_Devices_Args", ("client", c_void_p), ("devices", POINTER(c_void_p)),
    ("num_devices", c_size_t))
Program = _args("Program", ("code", c_char_p), ("code_size", c_size_t),
                ("format", c_char_p), ("format_size", c_size_t))
Client_Compile_Args = _args(
    "Client_Compile_Args", ("client", c_void_p), ("program", POINTER(Program)),
    ("compile_options", c_char_p), ("compile_options_size", c_size_t),
    ("executable", c_void_p))
Client_BufferFromHostBuffer_Args = _args(
    "Client_BufferFromHostBuffer_Args", ("client", c_void_p), ("data", c_void_p),
    ("type", c_int), ("dims", POINTER(c_int64)), ("num_dims", c_size_t),
    ("byte_strides", POINTER(c_int64)), ("num_byte_strides", c_size_t),
    ("host_buffer_semantics", c_int), ("device", c_void_p), ("memory", c_void_p),
    ("device_layout", c_void_p), ("done_with_host_buffer", c_void_p), ("buffer", c_void_p))

# --- devices -------------------------------------------------------------------------
DeviceDescription_Id_Args = _args("DeviceDescription_Id_Args",
                                  ("device_description", c_void_p), ("id", c_int))
DeviceDescription_ProcessIndex_Args = _args(
    "DeviceDescription_ProcessIndex_Args", ("device_description", c_void_p),
    ("process_index", c_int))
DeviceDescription_Kind_Args = _args("DeviceDescription_Kind_Args",
                                    ("device_description", c_void_p),
                                    ("device_kind", c_void_p), ("device_kind_size", c_size_t))
DeviceDescription_ToString_Args = _args(
    "DeviceDescription_ToString_Args", ("device_description", c_void_p),
    ("to_string", c_void_p), ("to_string_size", c_size_t))
DeviceDescription_DebugString_Args = _args(
    "DeviceDescription_DebugString_Args", ("device_description", c_void_p),
    ("debug_string", c_void_p), ("debug_string_size", c_size_t))
Device_GetDescription_Args = _args("Device_GetDescription_Args", ("device", c_void_p),
                                   ("device_description", c_void_p))
Device_LocalHardwareId_Args = _args("Device_LocalHardwareId_Args", ("device", c_void_p),
                                    ("local_hardware_id", c_int))

# --- executables ---------------------------------------------------------------------
Executable_Destroy_Args = _args("Executable_Destroy_Args", ("executable", c_void_p))
LoadedExecutable_Destroy_Args = _args("LoadedExecutable_Destroy_Args",
                                      ("executable", c_void_p))
LoadedExecutable_GetExecutable_Args = _args(
    "LoadedExecutable_GetExecutable_Args", ("loaded_executable", c_void_p),
    ("executable", c_void_p))
LoadedExecutable_AddressableDevices_Args = _args(
    "LoadedExecutable_AddressableDevices_Args", ("executable", c_void_p),
    ("addressable_devices", POINTER(c_void_p)), ("num_addressable_devices", c_size_t))
Executable_Name_Args = _args("Executable_Name_Args", ("executable", c_void_p),
                             ("executable_name", c_void_p), ("executable_name_size", c_size_t))
Executable_NumOutputs_Args = _args("Executable_NumOutputs_Args", ("executable", c_void_p),
                                   ("num_outputs", c_size_t))
Executable_OutputElementTypes_Args = _args(
    "Executable_OutputElementTypes_Args", ("executable", c_void_p),
    ("output_types", POINTER(c_int)), ("num_output_types", c_size_t))
Executable_OutputDimensions_Args = _args(
    "Executable_OutputDimensions_Args", ("executable", c_void_p), ("num_outputs", c_size_t),
    ("dims", POINTER(c_int64)), ("dim_sizes", POINTER(c_size_t)))
Executable_OptimizedProgram_Args = _args(
    "Executable_OptimizedProgram_Args", ("executable", c_void_p), ("program", POINTER(Program)))
Executable_GetCostAnalysis_Args = _args(
    "Executable_GetCostAnalysis_Args", ("executable", c_void_p), ("num_properties", c_size_t),
    ("properties", c_void_p))
MEMORY_STATS_FIELDS = (
    "generated_code_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
    "alias_size_in_bytes", "temp_size_in_bytes", "host_generated_code_size_in_bytes",
    "host_argument_size_in_bytes", "host_output_size_in_bytes", "host_alias_size_in_bytes",
    "host_temp_size_in_bytes", "peak_memory_in_bytes")
Executable_GetCompiledMemoryStats_Args = _args(
    "Executable_GetCompiledMemoryStats_Args", ("executable", c_void_p),
    *[(name, c_int64) for name in MEMORY_STATS_FIELDS])
Executable_Serialize_Args = _args(
    "Executable_Serialize_Args", ("executable", c_void_p), ("serialized_bytes", c_void_p),
    ("serialized_bytes_size", c_size_t), ("serialized_executable", c_void_p),
    ("serialized_executable_deleter", ctypes.CFUNCTYPE(None, c_void_p)))
Executable_DeserializeAndLoad_Args = _args(
    "Executable_DeserializeAndLoad_Args", ("client", c_void_p),
    ("serialized_executable", c_char_p), ("serialized_executable_size", c_size_t),
    ("loaded_executable", c_void_p), ("overridden_serialized_compile_options", c_char_p),
    ("overridden_serialized_compile_options_size", c_size_t))
ExecuteOptions = _args(
    "ExecuteOptions", ("send_callbacks", c_void_p), ("recv_callbacks", c_void_p),
    ("num_send_ops", c_size_t), ("num_recv_ops", c_size_t), ("launch_id", c_int),
    ("non_donatable_input_indices", POINTER(c_int64)),
    ("num_non_donatable_input_indices", c_size_t), ("context", c_void_p),
    ("call_location", c_char_p), ("num_tasks", c_size_t), ("task_ids", c_void_p),
    ("incarnation_ids", c_void_p))
LoadedExecutable_Execute_Args = _args(
    "LoadedExecutable_Execute_Args", ("executable", c_void_p),
    ("options", POINTER(ExecuteOptions)), ("argument_lists", c_void_p),
    ("num_devices", c_size_t), ("num_args", c_size_t), ("output_lists", c_void_p),
    ("device_complete_events", c_void_p), ("execute_device", c_void_p))

# --- buffers -------------------------------------------------------------------------
Buffer_Destroy_Args = _args("Buffer_Destroy_Args", ("buffer", c_void_p))
Buffer_Delete_Args = _args("Buffer_Delete_Args", ("buffer", c_void_p))
Buffer_IsDeleted_Args = _args("Buffer_IsDeleted_Args", ("buffer", c_void_p),
                              ("is_deleted", c_bool))
Buffer_CopyToDevice_Args = _args("Buffer_CopyToDevice_Args", ("buffer", c_void_p),
                                 ("dst_device", c_void_p), ("dst_buffer", c_void_p))
Buffer_ToHostBuffer_Args = _args("Buffer_ToHostBuffer_Args", ("src", c_void_p),
                                 ("host_layout", c_void_p), ("dst", c_void_p),
                                 ("dst_size", c_size_t), ("event", c_void_p))
Buffer_ReadyEvent_Args = _args("Buffer_ReadyEvent_Args", ("buffer", c_void_p),
                               ("event", c_void_p))
Buffer_UnsafePointer_Args = _args("Buffer_UnsafePointer_Args", ("buffer", c_void_p),
                                  ("buffer_pointer", c_void_p))
Buffer_ExternalReferenceCount_Args = _args("Buffer_ExternalReferenceCount_Args",
                                           ("buffer", c_void_p))
Buffer_ElementType_Args = _args("Buffer_ElementType_Args", ("buffer", c_void_p),
                                ("type", c_int))
Buffer_Dimensions_Args = _args("Buffer_Dimensions_Args", ("buffer", c_void_p),
                               ("dims", POINTER(c_int64)), ("num_dims", c_size_t))


# --- the function table --------------------------------------------------------------
_PROTOTYPE = ctypes.CFUNCTYPE(c_void_p)  # no argtypes: we always pass one byref(...)


class Api:
    """The function table of one loaded plugin.

    Each known slot becomes an attribute named after the function without the
    ``PJRT_`` prefix (``api.Buffer_Destroy(byref(args))``); slots the plugin does
    not provide (its table is shorter) are None.
    """

    def __init__(self, api_ptr, library, path):
        self.ptr = api_ptr
        self.library = library  # keeps the CDLL (and so the .so) alive
        self.path = path
        size = c_size_t.from_address(api_ptr).value
        self.struct_size = size
        self.version = (c_int.from_address(api_ptr + 32).value,
                        c_int.from_address(api_ptr + 36).value)
        available = max(0, (size - API_FUNCTIONS_OFFSET) // 8)
        for i, name in enumerate(FUNCTION_NAMES):
            addr = None
            if i < available:
                addr = c_void_p.from_address(api_ptr + API_FUNCTIONS_OFFSET + 8 * i).value
            setattr(self, name, _PROTOTYPE(addr) if addr else None)
        for required in ("Error_Destroy", "Error_Message", "Plugin_Initialize",
                         "Client_Create", "LoadedExecutable_Execute"):
            if getattr(self, required) is None:
                raise XlaRuntimeError(f"PJRT plugin {path} lacks PJRT_{required}")

    # Error_Destroy and Error_Message return void; everything else a PJRT_Error*.
    def error_to_exception(self, err):
        """Turn a non-NULL ``PJRT_Error*`` into an XlaRuntimeError and free it."""
        msg_args = Error_Message_Args(error=err)
        self.Error_Message(ctypes.byref(msg_args))
        message = ""
        if msg_args.message:
            message = ctypes.string_at(msg_args.message, msg_args.message_size).decode(
                "utf-8", "replace")
        code = 2
        if self.Error_GetCode is not None:
            code_args = Error_GetCode_Args(error=err)
            code_err = self.Error_GetCode(ctypes.byref(code_args))
            if code_err:
                self.Error_Destroy(ctypes.byref(Error_Destroy_Args(error=code_err)))
            else:
                code = code_args.code
        self.Error_Destroy(ctypes.byref(Error_Destroy_Args(error=err)))
        return XlaRuntimeError(message, code)

    def call(self, name, args):
        """Calls ``PJRT_<name>(&args)``; raises XlaRuntimeError on error. Returns args."""
        fn = getattr(self, name)
        if fn is None:
            raise XlaRuntimeError(f"PJRT_{name} is not provided by plugin {self.path}", 12)
        err = fn(ctypes.byref(args))
        if err:
            raise self.error_to_exception(err)
        return args

    def destroy_event(self, event):
        if event:
            err = self.Event_Destroy(ctypes.byref(Event_Destroy_Args(event=event)))
            if err:
                self.Error_Destroy(ctypes.byref(Error_Destroy_Args(error=err)))

    def await_event(self, event):
        """Awaits and destroys ``event``; raises XlaRuntimeError if it carries an error."""
        err = self.Event_Await(ctypes.byref(Event_Await_Args(event=event)))
        self.destroy_event(event)
        if err:
            raise self.error_to_exception(err)

    def read_named_values(self, ptr, count):
        """Decodes an array of PJRT_NamedValue into a dict."""
        out = {}
        if not ptr:
            return out
        values = (NamedValue * count).from_address(ptr)
        for nv in values:
            name = ctypes.string_at(nv.name, nv.name_size).decode()
            if nv.type == NAMED_STRING:
                value = ctypes.string_at(nv.string_value, nv.value_size).decode()
            elif nv.type == NAMED_INT64:
                value = nv.int64_value
            elif nv.type == NAMED_INT64_LIST:
                value = list((c_int64 * nv.value_size).from_address(nv.int64_array_value))
            elif nv.type == NAMED_FLOAT:
                value = nv.float_value
            elif nv.type == NAMED_BOOL:
                value = bool(nv.bool_value)
            else:
                continue
            out[name] = value
        return out


def string_out(ptr, size):
    """Decodes a (const char*, size_t) pair returned by the plugin."""
    return ctypes.string_at(ptr, size).decode("utf-8", "replace") if ptr else ""


def make_named_values(options):
    """Builds a ctypes array of PJRT_NamedValue from ``{name: value}``.

    The value's Python type picks the PJRT type: bool -> kBool, int -> kInt64,
    float -> kFloat, str -> kString, list/tuple of int -> kInt64List. (A wrongly
    typed create option aborts some plugins, so the type must be deliberate.)
    Returns (array, keepalive) -- keep both alive during the call.
    """
    arr = (NamedValue * max(1, len(options)))()
    keep = []
    for nv, (name, value) in zip(arr, options.items()):
        bname = name.encode()
        keep.append(bname)
        nv.struct_size = NamedValue.STRUCT_SIZE
        nv.name = ctypes.cast(c_char_p(bname), c_void_p)
        nv.name_size = len(bname)
        nv.value_size = 1
        if isinstance(value, bool):
            nv.type, nv.bool_value = NAMED_BOOL, value
        elif isinstance(value, int):
            nv.type, nv.int64_value = NAMED_INT64, value
        elif isinstance(value, float):
            nv.type, nv.float_value = NAMED_FLOAT, value
        elif isinstance(value, str):
            bval = value.encode()
            keep.append(bval)
            nv.type, nv.string_value = NAMED_STRING, ctypes.cast(c_char_p(bval), c_void_p)
            nv.value_size = len(bval)
        elif isinstance(value, (list, tuple)):
            ints = (c_int64 * max(1, len(value)))(*value)
            keep.append(ints)
            nv.type, nv.int64_array_value = NAMED_INT64_LIST, ctypes.addressof(ints)
            nv.value_size = len(value)
        else:
            raise TypeError(f"unsupported PJRT option type for {name!r}: {type(value)}")
    return arr, keep
