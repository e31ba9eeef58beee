"""Arrays that span several devices: one buffer per device of their sharding.

``ShardedArray`` is an ``ArrayImpl`` whose ``_buf`` is made on demand: the single-device
paths (eager operations, single-device ``jit``) read ``_buf`` and get the assembled value on
the sharding's first device, so every operation works on a sharded array with the right
numbers. ``jit`` of sharded arrays takes the SPMD path instead (``transformations/spmd.py``),
which reads the per-device buffers ``_shards`` directly.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl, array_from_buffer
from pyjax._src.core.config import config
from pyjax._src.core.sharding import NamedSharding, PmapSharding, Sharding


class Shard:
    """One device's piece of an array (``x.addressable_shards[i]``)."""

    __slots__ = ("device", "index", "data", "replica_id")

    def __init__(self, device, index, data, replica_id=0):
        self.device, self.index, self.data, self.replica_id = device, index, data, replica_id

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data!r})")


class ShardedArray(ArrayImpl):
    """An array laid out over the devices of ``sharding`` (``_shards[i]`` is the buffer on
    ``sharding._device_assignment[i]``). ``_pmapped``: a ``pmap`` result, whose sharding is
    JAX 0.10.2's for one (dimension 0 over a one-axis mesh) but whose buffers lack that
    dimension: ``pmap`` takes its buffers, SPMD programs (``jit``, eager operations) lay its
    value out afresh."""

    __slots__ = ("_shards", "_sharding", "_full", "_pmapped")

    def __init__(self, aval: ShapedArray, sharding: Sharding, shards, committed=True,
                 pmapped=False):
        self.aval = aval
        self._sharding = sharding
        self._pmapped = pmapped
        self._shards = list(shards)
        self._committed = committed
        self._npy = None
        self._full = None

    # The single-device view: the whole value on the first device (made once).
    @property
    def _buf(self):
        full = self._full
        if full is None:
            dev = self._shards[0].device
            full = self._full = dev.client.buffer_from_pyval(
                np.array(self._value, order="C"), dev)
        return full

    @property
    def device(self):
        return self._sharding

    def devices(self):
        return set(b.device for b in self._shards)

    @property
    def sharding(self):
        return self._sharding

    @property
    def is_fully_replicated(self):
        return self._sharding.is_fully_replicated

    @property
    def _value(self) -> np.ndarray:
        v = self._npy
        if v is None:
            v = np.empty(self.aval.shape, self.aval.dtype)
            index = self._sharding.devices_indices_map(self.aval.shape)
            for b in self._shards:
                v[index[b.device]] = b.to_numpy()
            v.flags.writeable = False
            self._npy = v
        return v

    @property
    def addressable_shards(self):
        index = self._sharding.devices_indices_map(self.aval.shape)
        pmapped = self._pmapped or isinstance(self._sharding, PmapSharding)
        seen = {}
        out = []
        for b in self._shards:
            idx = index[b.device]
            key = tuple((s.start, s.stop) if isinstance(s, slice) else s for s in idx)
            rid = seen[key] = seen.get(key, -1) + 1
            if pmapped:
                # JAX 0.10.2: a pmap result's shard keeps the mapped axis (size 1), with a
                # slice index (chex's pmap variant reads `shards[0].data[0]`)
                data = np.expand_dims(b.to_numpy(), 0)
                buf = b.device.client.buffer_from_pyval(data, b.device)
                if not isinstance(idx[0], slice):
                    idx = (slice(idx[0], idx[0] + 1),) + tuple(idx[1:])
                aval = ShapedArray.interned(data.shape, b.dtype, self.aval.weak_type)
                out.append(Shard(b.device, idx, array_from_buffer(aval, buf, True), rid))
                continue
            aval = ShapedArray.interned(b.shape, b.dtype, self.aval.weak_type)
            out.append(Shard(b.device, idx, array_from_buffer(aval, b, True), rid))
        return out

    def addressable_data(self, index):
        return self.addressable_shards[index].data

    def block_until_ready(self):
        for b in self._shards:
            b.block_until_ready()
        return self

    def is_ready(self):
        return all(b.is_ready() for b in self._shards)

    def delete(self):
        for b in self._shards:
            b.delete()
        self._npy = None
        self._full = None

    def is_deleted(self):
        return any(b.is_deleted() for b in self._shards)

    def on_device_size_in_bytes(self):
        return sum(int(np.prod(b.shape)) * b.dtype.itemsize for b in self._shards)

    def __reduce__(self):
        return ArrayImpl.__reduce__(self)


def shard_host_value(value: np.ndarray, sharding: Sharding, weak_type=False):
    """Upload the NumPy array ``value`` split as ``sharding`` says."""
    index = sharding.devices_indices_map(value.shape)
    bufs = []
    for d in sharding._device_assignment:
        piece = np.array(value[index[d]], order="C")
        bufs.append(d.client.buffer_from_pyval(piece, d))
    aval = ShapedArray.interned(value.shape, value.dtype, bool(weak_type))
    # a PmapSharding's pieces lack the split dimension, as a pmap result's do
    return ShardedArray(aval, sharding, bufs, True, isinstance(sharding, PmapSharding))


def from_shard_buffers(aval, sharding, bufs, committed=True):
    return ShardedArray(aval, sharding, bufs, committed)


def is_sharded(x):
    return type(x) is ShardedArray


__all__ = ["Shard", "ShardedArray", "shard_host_value", "NamedSharding"]


class ShardedShapedArray(ShapedArray):
    """The abstract value of an array laid out over a mesh: the ShapedArray with its
    ``sharding``; dimensions split over Explicit mesh axes print as JAX prints them
    (``float32[8@data,3]``). ``typeof`` gives it for any mesh layout; while tracing, values
    split over Explicit axes have it as their aval (core/sharding_rules.py), so it compares
    and hashes with its Explicit spec."""

    __slots__ = ("sharding", "_explicit")

    def __init__(self, shape, dtype, weak_type, sharding):
        super().__init__(shape, dtype, weak_type)
        self.sharding = sharding
        from pyjax._src.core.sharding import AxisType
        mesh = sharding.mesh
        explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types)
                    if t is AxisType.Explicit}
        if config.jax_remove_size_one_mesh_axis_from_type:
            explicit = {n for n, k in zip(mesh.axis_names, mesh.axis_sizes)
                        if n in explicit and k != 1}
        self._explicit = tuple(tuple(n for n in names if n in explicit)
                               for names in sharding.spec._normalized(len(self.shape)))
        self._hash = hash((self._hash, mesh.abstract_mesh, self._explicit))

    def __eq__(self, other):
        return (type(other) is ShardedShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self._explicit == other._explicit
                and self.sharding.mesh.abstract_mesh == other.sharding.mesh.abstract_mesh)

    def __hash__(self):
        return self._hash

    def unsharded(self):
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def strip_weak_type(self):
        return self if not self.weak_type else ShardedShapedArray(
            self.shape, self.dtype, False, self.sharding)

    def _dims(self):
        dims = []
        for size, names in zip(self.shape, self._explicit):
            if not names:
                dims.append(str(size))
            elif len(names) == 1:
                dims.append(f"{size}@{names[0]}")
            else:
                dims.append(f"{size}@({','.join(names)})")
        return ",".join(dims)


def typeof(x):
    """``x``'s abstract value, with its sharding when it is laid out over a mesh."""
    if type(x) is ShardedArray and isinstance(x._sharding, NamedSharding):
        av = x.aval
        return ShardedShapedArray(av.shape, av.dtype, av.weak_type, x._sharding)
    return trace_mod.get_aval(x)


def typed_aval(x):
    """What tracing sees for a ShardedArray: a ShardedShapedArray when it is split over an
    Explicit mesh axis (sharding in types), else its plain aval."""
    s = x._sharding
    if type(s) is NamedSharding and s.mesh.explicit_axes:
        t = typeof(x)
        if any(t._explicit):
            return t
    return x.aval


trace_mod.aval_handlers[ShardedArray] = typed_aval
