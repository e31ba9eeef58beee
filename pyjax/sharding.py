"""Shardings (``jax.sharding``): how an array is laid out over devices.

Only single-device shardings exist so far; meshes and ``NamedSharding`` come later.
"""
from pyjax._src.core.sharding import (
    Sharding as Sharding, SingleDeviceSharding as SingleDeviceSharding)

__all__ = ["Sharding", "SingleDeviceSharding"]
