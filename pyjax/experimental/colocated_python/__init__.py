"""``jax.experimental.colocated_python``: Python run on CPU devices colocated with accelerators
under Pathways. pyjax has no such runtime: the functions raise NotImplementedError when
called; the module exists because libraries (orbax-checkpoint) import it."""
from pyjax._src.multihost import (  # noqa: F401
    colocated_cpu_devices as colocated_cpu_devices, colocated_python as colocated_python,
    colocated_python_class as colocated_python_class)
from pyjax.experimental.colocated_python import func as func, serialization as serialization  # noqa: F401,E501
