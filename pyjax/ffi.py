"""``jax.ffi``: call C functions written against XLA's FFI (``pyjax/_src/ffi.py``)."""
from pyjax._src.ffi import (  # noqa: F401
    build_ffi_lowering_function, ffi_call, ffi_lowering, include_dir, pycapsule,
    register_ffi_target, register_ffi_target_as_batch_partitionable, register_ffi_type,
    register_ffi_type_id)
