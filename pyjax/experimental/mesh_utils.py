"""``jax.experimental.mesh_utils``: device arrays for meshes."""
from pyjax._src.multihost import (  # noqa: F401
    create_device_mesh as create_device_mesh,
    create_hybrid_device_mesh as create_hybrid_device_mesh)
