"""``jax.profiler``: host-side traces (Chrome/Perfetto trace files) and annotations."""
from pyjax._src.profiler import (  # noqa: F401
    ProfileOptions as ProfileOptions, StepTraceAnnotation as StepTraceAnnotation, TraceAnnotation as TraceAnnotation,
    annotate_function as annotate_function, start_server as start_server,
    start_trace as start_trace, stop_server as stop_server, stop_trace as stop_trace,
    trace as trace)
from pyjax._src.memory_profile import (  # noqa: F401,E402
    device_memory_profile as device_memory_profile,
    save_device_memory_profile as save_device_memory_profile)
