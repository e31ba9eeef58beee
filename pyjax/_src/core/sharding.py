"""Shardings: how an array's data is laid out over devices.

Only ``SingleDeviceSharding`` exists so far (every pyjax array lives on one device); meshes,
``NamedSharding`` and ``PartitionSpec`` come with multi-device arrays.
"""
from __future__ import annotations

# Memory kinds the CPU plugin reports for its devices; pyjax places arrays in "device" only.
_DEFAULT_MEMORY_KIND = "device"
_KNOWN_MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


class Sharding:
    """Base class of all shardings (``pyjax.sharding.Sharding``)."""

    __slots__ = ()

    @property
    def device_set(self):
        raise NotImplementedError

    @property
    def is_fully_replicated(self):
        raise NotImplementedError

    @property
    def is_fully_addressable(self):
        raise NotImplementedError

    @property
    def memory_kind(self):
        raise NotImplementedError

    @property
    def num_devices(self):
        return len(self.device_set)

    @property
    def addressable_devices(self):
        return {d for d in self.device_set if d.process_index == 0}

    def shard_shape(self, global_shape):
        raise NotImplementedError

    def devices_indices_map(self, global_shape):
        raise NotImplementedError

    def addressable_devices_indices_map(self, global_shape):
        m = self.devices_indices_map(global_shape)
        return {d: idx for d, idx in m.items() if d in self.addressable_devices}

    def is_equivalent_to(self, other, ndim):
        return self == other


def _check_memory_kind(device, memory_kind):
    if memory_kind is None or memory_kind == _DEFAULT_MEMORY_KIND:
        return _DEFAULT_MEMORY_KIND
    if not isinstance(memory_kind, str):
        raise TypeError(f"memory_kind must be a str or None, got {memory_kind!r}")
    if memory_kind in _KNOWN_MEMORY_KINDS:
        raise NotImplementedError(
            f"SingleDeviceSharding(memory_kind={memory_kind!r}): pyjax places arrays in "
            f"the {_DEFAULT_MEMORY_KIND!r} memory only")
    raise ValueError(
        f"Could not find memory addressable by device {device.device_kind}. Device "
        f"{device.device_kind} can address the following memory kinds: "
        f"{', '.join(_KNOWN_MEMORY_KINDS)}. Got memory kind: {memory_kind}")


class SingleDeviceSharding(Sharding):
    """All of an array's data on one device: ``SingleDeviceSharding(device)``."""

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device, *, memory_kind=None):
        if not (hasattr(device, "platform") and hasattr(device, "id")
                and hasattr(device, "client")):
            raise TypeError(f"SingleDeviceSharding expects a Device, got {device!r}")
        self._device = device
        self._memory_kind = _check_memory_kind(device, memory_kind)

    def __repr__(self):
        return (f"SingleDeviceSharding(device={self._device!r}, "
                f"memory_kind={self._memory_kind})")

    def __eq__(self, other):
        if self is other:
            return True
        return (isinstance(other, SingleDeviceSharding) and other._device == self._device
                and other._memory_kind == self._memory_kind)

    def __hash__(self):
        return hash((SingleDeviceSharding, self._device, self._memory_kind))

    def __reduce__(self):
        return (SingleDeviceSharding, (self._device,), None)

    @property
    def device_set(self):
        return {self._device}

    @property
    def _device_assignment(self):
        return (self._device,)

    @property
    def is_fully_replicated(self):
        return True

    @property
    def is_fully_addressable(self):
        return True

    @property
    def memory_kind(self):
        return self._memory_kind

    @property
    def num_devices(self):
        return 1

    @property
    def addressable_devices(self):
        return {self._device}

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def devices_indices_map(self, global_shape):
        return {self._device: (slice(None),) * len(global_shape)}

    def with_memory_kind(self, kind):
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def _device_for_put(self):
        # what device_put needs from a sharding (dispatch.device_put asks for it)
        return self._device
