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

    @property
    def _addressable_device_assignment(self):
        """This process's devices in assignment order (JAX's private name; orbax reads it)."""
        return [d for d in self._device_assignment if d.process_index == 0]

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


# ---- meshes and named shardings ----

import collections as _collections
import enum as _enum
import math as _math
import threading as _threading

import numpy as _np


class AxisType(_enum.Enum):
    """How a mesh axis is partitioned: by XLA's propagation (``Auto``), by the array's type
    (``Explicit``) or by the user inside ``shard_map`` (``Manual``)."""
    Auto = _enum.auto()
    Explicit = _enum.auto()
    Manual = _enum.auto()

    def __repr__(self):
        return self.name


class _Unconstrained:
    def __repr__(self):
        return "UNCONSTRAINED"


class PartitionSpec(tuple):
    """How each dimension of an array is split over mesh axes: an entry per leading
    dimension, each None (not split), an axis name, or a tuple of axis names."""

    UNCONSTRAINED = _Unconstrained()

    def __new__(cls, *partitions):
        for p in partitions:
            if p is None or p is cls.UNCONSTRAINED or isinstance(p, str):
                continue
            if isinstance(p, (tuple, list)) and all(isinstance(n, str) for n in p):
                continue
            raise TypeError(f"PartitionSpec entries must be None, an axis name (str) or a "
                            f"tuple of axis names, got {p!r}")
        parts = tuple(tuple(p) if isinstance(p, list) else p for p in partitions)
        return tuple.__new__(cls, parts)

    def __repr__(self):
        # JAX 0.10.2 prints the short alias: P('x', None), P()
        return f"P{tuple.__repr__(self)}"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))

    def _normalized(self, ndim):
        """One entry per dimension, each a tuple of axis names."""
        if len(self) > ndim:
            raise ValueError(f"PartitionSpec {self!r} has {len(self)} entries, more than the "
                             f"array's rank {ndim}")
        out = []
        for p in tuple(self) + (None,) * (ndim - len(self)):
            if p is None or p is self.UNCONSTRAINED:
                out.append(())
            elif isinstance(p, str):
                out.append((p,))
            else:
                out.append(tuple(p))
        return tuple(out)


class AbstractMesh:
    """A mesh's shape, names and axis types without its devices."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"axis_sizes {self.axis_sizes} and axis_names {self.axis_names} "
                             "must have the same length")
        if len(set(self.axis_names)) != len(self.axis_names):
            raise ValueError(f"mesh axis names must be unique, got {self.axis_names}")
        self.axis_types = _axis_types(axis_types, len(self.axis_names), AxisType.Auto)

    shape = property(lambda self: _collections.OrderedDict(zip(self.axis_names,
                                                               self.axis_sizes)))
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: _math.prod(self.axis_sizes))
    empty = property(lambda self: not self.axis_names)
    abstract_mesh = property(lambda self: self)

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return type(other) is AbstractMesh and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        axes = ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        return f"AbstractMesh({axes}, axis_types={self.axis_types})"

    @property
    def explicit_axes(self):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types)
                     if t is AxisType.Explicit)

    # JAX's axis-type queries (flax.core.spmd picks its sharding path by them)
    auto_axes = property(lambda self: tuple(
        n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Auto))
    manual_axes = property(lambda self: tuple(
        n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Manual))
    are_all_axes_explicit = property(
        lambda self: all(t is AxisType.Explicit for t in self.axis_types))
    are_all_axes_auto = property(lambda self: all(t is AxisType.Auto for t in self.axis_types))
    are_all_axes_manual = property(
        lambda self: all(t is AxisType.Manual for t in self.axis_types))

    def _axis_size(self, name):
        return Mesh._axis_size(self, name)


def _axis_types(axis_types, n, default):
    if axis_types is None:
        return (default,) * n
    if isinstance(axis_types, AxisType):
        axis_types = (axis_types,) * n
    axis_types = tuple(axis_types)
    if len(axis_types) != n or not all(isinstance(t, AxisType) for t in axis_types):
        raise ValueError(f"axis_types must be {n} AxisType values (one per mesh axis), got "
                         f"{axis_types!r}")
    return axis_types


class Mesh:
    """An N-dimensional array of devices with named axes: ``Mesh(devices, axis_names)``.
    Also a context manager that makes it the current mesh."""

    def __init__(self, devices, axis_names, axis_types=None):
        devs = _np.array(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if devs.ndim != len(axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to "
                             f"equal the length of its second argument (`axis_names`), but "
                             f"got devices.ndim == {devs.ndim} and len(axis_names) == "
                             f"{len(axis_names)}.")
        ids = [d.id for d in devs.flat]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Mesh devices must be unique, got ids {ids}")
        self.devices = devs
        self.axis_names = axis_names
        self.axis_types = _axis_types(axis_types, len(axis_names), AxisType.Auto)
        self.abstract_mesh = AbstractMesh(devs.shape, axis_names, self.axis_types)
        self._stack = []

    axis_sizes = property(lambda self: self.devices.shape)
    shape = property(lambda self: self.abstract_mesh.shape)
    shape_tuple = property(lambda self: self.abstract_mesh.shape_tuple)
    size = property(lambda self: self.devices.size)
    empty = property(lambda self: self.devices.size == 0)
    device_ids = property(lambda self: _np.vectorize(lambda d: d.id, otypes=[int])(
        self.devices))
    explicit_axes = property(lambda self: self.abstract_mesh.explicit_axes)

    @property
    def _flat_devices(self):
        return tuple(self.devices.flat)

    def _key(self):
        return (tuple(d.id for d in self.devices.flat), self.devices.shape, self.axis_names,
                self.axis_types)

    def __eq__(self, other):
        return self is other or (type(other) is Mesh and self._key() == other._key())

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={self.axis_types})")

    def __str__(self):  # the short form JAX prints inside a NamedSharding
        axes = ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        return f"Mesh({axes}, axis_types={self.axis_types})"

    @property
    def device_set(self):
        return set(self.devices.flat)

    def __enter__(self):
        self._stack.append(_mesh_state.push(self))
        return self

    def __exit__(self, *exc):
        _mesh_state.pop(self._stack.pop())
        return False

    def _axis_size(self, name):
        try:
            return self.axis_sizes[self.axis_names.index(name)]
        except ValueError:
            raise ValueError(f"axis name {name!r} is not in the mesh's axis names "
                             f"{self.axis_names}") from None


class _MeshState(_threading.local):
    def __init__(self):
        self.stack = []

    def push(self, mesh):
        self.stack.append(mesh)
        return len(self.stack) - 1

    def pop(self, depth):
        del self.stack[depth:]


_mesh_state = _MeshState()
_global_mesh = [None]


def current_mesh():
    """The mesh set by ``set_mesh``/``use_mesh``/``with mesh:``, or None."""
    if _mesh_state.stack:
        return _mesh_state.stack[-1]
    return _global_mesh[0]


class set_mesh:
    """Make ``mesh`` the current mesh: for the whole program (``set_mesh(mesh)``), or for a
    block (``with set_mesh(mesh):``, after which the previous one is restored)."""

    def __init__(self, mesh):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a Mesh, got {mesh!r}")
        self._prev = _global_mesh[0]
        _global_mesh[0] = mesh
        self._mesh = mesh

    def __enter__(self):
        return self._mesh

    def __exit__(self, *exc):
        _global_mesh[0] = self._prev
        return False


class use_mesh:
    """``with use_mesh(mesh):`` the current mesh for the block."""

    def __init__(self, mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"use_mesh expects a Mesh, got {mesh!r}")
        self._mesh = mesh
        self._depth = None

    def __enter__(self):
        self._depth = _mesh_state.push(self._mesh)
        return self._mesh

    def __exit__(self, *exc):
        _mesh_state.pop(self._depth)
        return False


def get_mesh():
    m = current_mesh()
    return m


_EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


def get_abstract_mesh():
    """The current mesh's AbstractMesh (an empty one when no mesh is set)."""
    m = current_mesh()
    return _EMPTY_ABSTRACT_MESH if m is None else m.abstract_mesh


class NamedSharding(Sharding):
    """An array split over a mesh's axes as ``spec`` says: ``NamedSharding(mesh, P(...))``."""

    __slots__ = ("mesh", "spec", "_memory_kind")

    def __init__(self, mesh, spec, *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding expects a Mesh as its first argument, got {mesh!r}")
        if not isinstance(spec, PartitionSpec):
            if spec is None or isinstance(spec, (tuple, list)):
                spec = PartitionSpec(*(spec or ()))
            else:
                raise TypeError(f"NamedSharding expects a PartitionSpec, got {spec!r}")
        used = []
        for p in spec:
            if p is None or p is PartitionSpec.UNCONSTRAINED:
                continue
            for n in ((p,) if isinstance(p, str) else p):
                if n not in mesh.axis_names:
                    raise ValueError(f"Resource axis: {n} of {spec} is not found in mesh: "
                                     f"{tuple(mesh.axis_names)}.")
                if n in used:
                    raise ValueError(f"A single NamedSharding spec specification can map "
                                     f"every mesh axis to at most one positional dimension, "
                                     f"but {spec} has duplicate entries for `{n}`")
                used.append(n)
        self.mesh, self.spec = mesh, spec
        if memory_kind not in (None, _DEFAULT_MEMORY_KIND):
            raise NotImplementedError(f"NamedSharding(memory_kind={memory_kind!r}): pyjax "
                                      f"places arrays in the {_DEFAULT_MEMORY_KIND!r} memory "
                                      "only")
        self._memory_kind = _DEFAULT_MEMORY_KIND

    def update(self, **kwargs):
        """A copy with some of ``mesh``, ``spec`` replaced (JAX's ``NamedSharding.update``)."""
        unknown = set(kwargs) - {"mesh", "spec", "memory_kind"}
        if unknown:
            raise TypeError(f"NamedSharding.update: unexpected arguments {sorted(unknown)}")
        return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec),
                             memory_kind=kwargs.get("memory_kind", self._memory_kind))

    def __repr__(self):
        return (f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, "
                f"memory_kind={self._memory_kind})")

    def __eq__(self, other):
        return (self is other or (isinstance(other, NamedSharding) and
                                  self.mesh == other.mesh and
                                  _strip(self.spec) == _strip(other.spec)))

    def __hash__(self):
        return hash((NamedSharding, self.mesh, _strip(self.spec)))

    @property
    def device_set(self):
        return set(self.mesh.devices.flat)

    @property
    def _device_assignment(self):
        return self.mesh._flat_devices

    @property
    def memory_kind(self):
        return self._memory_kind

    @property
    def is_fully_addressable(self):
        return True

    @property
    def is_fully_replicated(self):
        return all(self.mesh._axis_size(n) == 1 for dim in self.spec._normalized(len(self.spec))
                   for n in dim)

    @property
    def num_devices(self):
        return self.mesh.size

    @property
    def addressable_devices(self):
        return self.device_set

    def with_memory_kind(self, kind):
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def _dim_splits(self, global_shape):
        """For each dimension, the number of pieces it is cut into; checks divisibility."""
        spec = self.spec._normalized(len(global_shape))
        splits = []
        for d, (names, size) in enumerate(zip(spec, global_shape)):
            k = _math.prod(self.mesh._axis_size(n) for n in names)
            if size % k:
                raise ValueError(
                    f"One of device_put args was given the sharding of {self!r}, which "
                    f"implies that the global size of its dimension {d} should be divisible "
                    f"by {k}, but it is equal to {size} (full shape: {tuple(global_shape)})")
            splits.append(k)
        return spec, splits

    def shard_shape(self, global_shape):
        _, splits = self._dim_splits(global_shape)
        return tuple(s // k for s, k in zip(global_shape, splits))

    def devices_indices_map(self, global_shape):
        spec, splits = self._dim_splits(global_shape)
        names, sizes = self.mesh.axis_names, self.mesh.axis_sizes
        out = {}
        for pos in _np.ndindex(*sizes):
            coord = dict(zip(names, pos))
            idx = []
            for dim_names, size, k in zip(spec, global_shape, splits):
                if not dim_names:
                    idx.append(slice(None))
                    continue
                block = 0
                for n in dim_names:  # major to minor
                    block = block * self.mesh._axis_size(n) + coord[n]
                step = size // k
                idx.append(slice(block * step, (block + 1) * step))
            out[self.mesh.devices[pos]] = tuple(idx)
        return out

    def is_equivalent_to(self, other, ndim):
        if not isinstance(other, Sharding):
            return False
        if self == other:
            return True
        try:
            shape = (2 * 3 * 5 * 7 * 64,) * ndim  # divisible by any small mesh
            a = self.devices_indices_map(shape)
            b = other.devices_indices_map(shape)
        except (ValueError, NotImplementedError):
            return False
        return {d.id: _idx_key(i) for d, i in a.items()} == {d.id: _idx_key(i)
                                                                 for d, i in b.items()}

    def _sdy_sharding(self, ndim, mesh_symbol):
        """The Shardy sharding of this sharding for a rank-``ndim`` value, without the
        ``#sdy.sharding`` prefix (``<@mesh, [{"x"}, {}]>``): each dimension's axes, major
        first; a dimension no axis splits is closed (``{}``); the axes the spec leaves out
        replicate the value (GSPMD's ``last_tile_dim_replicate``); size-1 axes are dropped
        (they split nothing)."""
        dims = []
        for names in self.spec._normalized(ndim):
            names = [n for n in names if self.mesh._axis_size(n) != 1]
            dims.append("{" + ", ".join(f'"{n}"' for n in names) + "}")
        return f"<@{mesh_symbol}, [{', '.join(dims)}]>"


def sdy_mesh(mesh, symbol, device_ids=None):
    """``sdy.mesh @symbol = <["x"=2, "y"=4]>``; ``device_ids`` (the logical ids in mesh
    order) when they are not ``0..n-1``."""
    axes = ", ".join(f'"{n}"={s}' for n, s in zip(mesh.axis_names, mesh.axis_sizes))
    ids = "" if device_ids is None or list(device_ids) == list(range(len(device_ids))) \
        else ", device_ids=[" + ", ".join(map(str, device_ids)) + "]"
    return f"sdy.mesh @{symbol} = <[{axes}]{ids}>"


def on_no_mesh(sharding):
    """True for an `out_sharding=` that asks for no layout: None, or a NamedSharding on the
    empty mesh (what `jax.typeof(x).sharding` is for an array not laid out over a mesh)."""
    return sharding is None or (isinstance(sharding, NamedSharding)
                                and not sharding.mesh.axis_names)


def _idx_key(idx):
    return tuple((s.start, s.stop) for s in idx)


def _strip(spec):
    parts = list(spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


class PmapSharding(Sharding):
    """The sharding of a ``pmap`` result: dimension 0 split over ``devices``, one slice
    (without that dimension) per device."""

    __slots__ = ("devices", "_shape")

    def __init__(self, devices, shape):
        self.devices = _np.array(devices, dtype=object)
        self._shape = tuple(shape)

    def __repr__(self):
        return (f"PmapSharding(sharding_spec=ShardingSpec(sharded_dim=0, "
                f"num_shards={len(self.devices)}), device_ids={[d.id for d in self.devices.flat]}, "
                f"device_platform={self.devices.flat[0].platform.upper()}, "
                f"shape={self._shape})")

    def __eq__(self, other):
        return (isinstance(other, PmapSharding) and self._shape == other._shape and
                [d.id for d in self.devices.flat] == [d.id for d in other.devices.flat])

    def __hash__(self):
        return hash((PmapSharding, self._shape, tuple(d.id for d in self.devices.flat)))

    device_set = property(lambda self: set(self.devices.flat))
    _device_assignment = property(lambda self: tuple(self.devices.flat))
    memory_kind = property(lambda self: _DEFAULT_MEMORY_KIND)
    is_fully_addressable = property(lambda self: True)
    is_fully_replicated = property(lambda self: len(self.devices) == 1)

    def shard_shape(self, global_shape):
        return tuple(global_shape[1:])

    def devices_indices_map(self, global_shape):
        rest = (slice(None),) * (len(global_shape) - 1)
        return {d: (i,) + rest for i, d in enumerate(self.devices.flat)}
