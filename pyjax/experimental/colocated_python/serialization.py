"""``jax.experimental.colocated_python.serialization`` (Pathways only; see the package):
`DeviceList`, which libraries name in signatures."""
from pyjax._src.multihost import DeviceList as DeviceList  # noqa: F401
