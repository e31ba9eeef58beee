"""Shardings (``jax.sharding``): how an array is laid out over devices."""
from pyjax._src.core.sharding import (
    Sharding as Sharding, SingleDeviceSharding as SingleDeviceSharding,
    NamedSharding as NamedSharding, PartitionSpec as PartitionSpec, Mesh as Mesh,
    AbstractMesh as AbstractMesh, AxisType as AxisType, PmapSharding as PmapSharding,
    set_mesh as set_mesh, use_mesh as use_mesh, get_abstract_mesh as get_abstract_mesh,
    get_mesh as get_mesh)
from pyjax._src.core.sharded_array import Shard as Shard
from pyjax._src.api import reshard as reshard
from pyjax._src.sharding.explicit import (
    AbstractDevice as AbstractDevice, auto_axes as auto_axes, explicit_axes as explicit_axes,
    make_single_device_sharding as make_single_device_sharding,
    use_abstract_mesh as use_abstract_mesh)

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "PartitionSpec", "Mesh",
           "AbstractMesh", "AxisType", "PmapSharding", "set_mesh", "use_mesh",
           "get_abstract_mesh", "get_mesh", "Shard", "reshard", "AbstractDevice", "auto_axes",
           "explicit_axes", "make_single_device_sharding", "use_abstract_mesh"]
