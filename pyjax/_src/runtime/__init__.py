"""Layer 0: the PJRT runtime (plugin loading, client, devices, buffers, executables).

This is the only part of pyjax that touches ctypes and the PJRT C API.
"""

from . import disk_cache, ffi, tiered
from .buffer import Buffer, aval_str, dtype_to_pjrt_type
from .client import (Client, Device, backend_client, check_backend, cpu_device_count,
                     check_platforms, cpu_dots_want_row_major, default_platform, get_client,
                     set_cpu_device_count, set_platforms)
from .compile_options import build_compile_options
from .errors import PluginNotFoundError, XlaRuntimeError
from .executable import Executable
from .plugin import find_cuda_plugin_path, find_plugin_path

__all__ = [
    "Buffer", "Client", "backend_client", "check_backend", "Device", "Executable", "PluginNotFoundError", "XlaRuntimeError",
    "aval_str", "build_compile_options", "cpu_device_count", "dtype_to_pjrt_type",
    "find_plugin_path", "get_client", "set_cpu_device_count", "default_platform",
    "find_cuda_plugin_path", "set_platforms", "check_platforms", "cpu_dots_want_row_major",
]
