"""Device queries and host/device movement: ``pyjax.devices``, ``device_put``, ..."""
from __future__ import annotations

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import dtypes
from pyjax._src.core import profiling, pytree, transfer_guard
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core import sharding as sharding_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.layout import Format
from pyjax._src.core.sharded_array import ShardedArray
from pyjax._src.core.sharded_array import typeof as sharded_typeof
from pyjax._src.core.sharding import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding
from pyjax._src.core.trace import Tracer
from pyjax._src.dispatch import eager as dispatch


def _client(backend=None):
    return runtime.backend_client(backend)


def devices(backend=None):
    """All devices of the backend, every process's (``PYJAX_CPU_DEVICES=N`` gives N CPU
    devices)."""
    return list(_client(backend).global_devices)


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices of process ``process_index`` (default: this one)."""
    if process_index is None:
        process_index = host_id if host_id is not None else process_index_(backend)
    return [d for d in devices(backend) if d.process_index == process_index]


def device_count(backend=None):
    return len(devices(backend))


def local_device_count(backend=None):
    return len(local_devices(backend=backend))


def default_backend():
    return _client().platform


def process_index(backend=None):
    """This process's index in a distributed run (``pyjax.distributed``; 0 otherwise)."""
    return _client(backend).process_index


process_index_ = process_index  # (local_devices has an argument of that name)


def process_count(backend=None):
    """The number of processes whose devices the backend sees (1 unless distributed)."""
    return len({d.process_index for d in _client(backend).global_devices}) or 1


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    with profiling.span("device_put", "transfer"), transfer_guard.explicit():
        return _device_put(x, device, src=src, donate=donate, may_alias=may_alias)


def _device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Put every leaf of the pytree ``x`` on ``device`` (a Device or a SingleDeviceSharding),
    committing it there.

    ``donate=True`` (or a pytree of bools like ``x``): the input arrays are deleted after the
    transfer. ``may_alias=False``: the result never shares the input's buffer (None/True: it
    may, when ``x`` is already there). ``src`` is not supported (it is for transfers between
    processes)."""
    if src is not None:
        raise NotImplementedError("device_put(src=...) is not supported by pyjax: it is for "
                                  "transfers between processes")
    device = _resolve_spec(device)
    if isinstance(device, (tuple, list, dict)) and not isinstance(device, PartitionSpec):
        # a pytree of devices / shardings / specs with the structure of x
        is_place = lambda s: isinstance(s, (runtime.Device, Sharding, PartitionSpec))  # noqa
        places = pytree.tree_map(_resolve_spec, device, is_leaf=is_place)
        return pytree.tree_map(lambda d, leaf: device_put(leaf, d, donate=donate,
                                                          may_alias=may_alias),
                               places, x, is_leaf=is_place)
    if isinstance(device, Format):  # JAX's (layout, sharding) pair
        if device.layout is not None:
            raise NotImplementedError(f"device_put to {device!r}: pyjax arrays use the "
                                      "default layout only (Format(None, sharding))")
        device = device.sharding
    if device is not None and not isinstance(device, (runtime.Device, Sharding)):
        raise TypeError(f"device_put expects a Device or a Sharding for device=, got "
                        f"{device!r} of type {type(device).__name__}")
    if may_alias not in (None, True, False):
        raise TypeError(f"may_alias must be None or a bool, got {may_alias!r}")
    if isinstance(donate, bool):
        return pytree.tree_map(lambda leaf: _put_leaf(leaf, device, donate, may_alias), x)
    return pytree.tree_map(lambda leaf, d: _put_leaf(leaf, device, bool(d), may_alias),
                           x, donate)


def _resolve_spec(s):
    """``device_put(x, P(...))``: the spec on the current mesh (``set_mesh``)."""
    if not isinstance(s, PartitionSpec):
        return s
    mesh = sharding_mod.current_mesh()
    if mesh is None:
        raise ValueError(f"device_put got the PartitionSpec {s!r} but no mesh is set: use "
                         "pyjax.sharding.set_mesh(mesh), or pass NamedSharding(mesh, spec)")
    return NamedSharding(mesh, s)


def _put_leaf(leaf, device, donate, may_alias):
    if isinstance(leaf, Tracer):  # under jit/vmap/grad: JAX's device_put_p
        from pyjax._src.lax.sharding_constraint import bind_device_put
        copy = "DONATE_INPUT" if donate else "ALWAYS_COPY" if may_alias is False else \
            "REUSE_INPUT"
        return bind_device_put([leaf], device, copy)[0]
    if isinstance(device, NamedSharding) and isinstance(device.mesh, sharding_mod.AbstractMesh):
        # JAX 0.10.2's text: an abstract mesh has no devices to put a value on
        raise ValueError("is_fully_addressable is not implemented for "
                         "`jax.sharding.AbstractMesh`.")
    if type(leaf) is ArrayImpl and leaf.is_deleted():
        # at once, as JAX: the transfer would only fail when the result is read
        leaf._buf.block_until_ready()  # raises DeletedBufferError naming the array
    if transfer_guard.active[0] and type(leaf) is ArrayImpl and device is not None:
        dst = device if isinstance(device, Sharding) else SingleDeviceSharding(device)
        if dst != leaf.sharding:
            transfer_guard.check("device_to_device", lambda: (
                f"aval={leaf.aval!r}, src_sharding={leaf.sharding!r}, dst_sharding={dst!r}"))
    out = dispatch.device_put(leaf, device)
    if type(leaf) is ArrayImpl:
        if (donate or may_alias is False) and out._buf is leaf._buf:
            # a fresh buffer, so that the result outlives the donated input (and never
            # aliases it when may_alias=False)
            out = ArrayImpl(out.aval, leaf._buf.copy_to_device(leaf._buf.device),
                            out._committed)
        if donate:
            leaf.delete()
    return out


def _device_put_impl(*xs, devices, srcs, copy_semantics):
    """``device_put_p`` on concrete values (bound by an eager ``vmap`` or ``grad``): the
    transfer itself."""
    return [dispatch.device_put(x, d) for x, d in zip(xs, devices)]


def _install_device_put_impl():
    from pyjax._src.lax.sharding_constraint import device_put_p
    device_put_p.impl = _device_put_impl


_install_device_put_impl()


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of ``devices`` (default: the first prod(axis_shapes) devices) of shape
    ``axis_shapes`` with ``axis_names``; axis types default to Explicit, as JAX 0.10's."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"Mesh axis names {axis_names} and shape {axis_shapes} must have "
                         "the same length")
    n = int(np.prod(axis_shapes, dtype=np.int64))
    if devices is None:
        devices = globals()["devices"]()
    devices = list(np.array(devices, dtype=object).flat)
    if n > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                         f"mesh_shape {axis_shapes}")
    devices = devices[:n]  # as JAX: the first prod(axis_shapes) of them
    if axis_types is None:
        axis_types = (sharding_mod.AxisType.Explicit,) * len(axis_names)
    arr = np.empty(len(devices), dtype=object)
    arr[:] = devices
    return sharding_mod.Mesh(arr.reshape(axis_shapes), axis_names, axis_types=axis_types)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of ``shape`` laid out as ``sharding``: ``data_callback(index)`` gives the
    piece of each device (``index`` a tuple of slices)."""
    shape = tuple(int(s) for s in shape)
    if isinstance(sharding, PartitionSpec):
        sharding = _resolve_spec(sharding)
    if not isinstance(sharding, Sharding):
        raise TypeError(f"make_array_from_callback expects a Sharding, got {sharding!r}")
    index = sharding.devices_indices_map(shape)
    bufs, dt = [], None
    for d in sharding._device_assignment:
        piece = np.asarray(data_callback(index[d]))
        want = dtype if dtype is not None else piece.dtype
        piece = np.array(piece, dtypes.canonicalize_dtype(want), order="C")
        expect = sharding.shard_shape(shape)
        if piece.shape != tuple(expect):
            raise ValueError(f"data_callback returned a piece of shape {piece.shape} for "
                             f"device {d} (index {index[d]}), expected {tuple(expect)}")
        dt = piece.dtype
        bufs.append(d.client.buffer_from_pyval(piece, d))
    if len(sharding._device_assignment) == 1 and not isinstance(sharding, NamedSharding):
        from pyjax._src.core.array import ArrayImpl
        return ArrayImpl(ShapedArray.interned(shape, dt, False), bufs[0], True)
    return ShardedArray(ShapedArray.interned(shape, dt, False), sharding, bufs, True)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An array of ``shape`` laid out as ``sharding`` from one single-device array per
    device of the sharding (each already on its device)."""
    shape = tuple(int(s) for s in shape)
    arrays = list(arrays)
    by_dev = {}
    for a in arrays:
        if not isinstance(a, ArrayImpl) or type(a) is ShardedArray:
            raise TypeError(f"make_array_from_single_device_arrays expects single-device "
                            f"Arrays, got {type(a).__name__}")
        by_dev[a._buf.device] = a
    devs = sharding._device_assignment
    if set(by_dev) != set(devs) or len(arrays) != len(devs):
        raise ValueError(f"make_array_from_single_device_arrays got arrays on devices "
                         f"{sorted(d.id for d in by_dev)}, expected one on each of "
                         f"{[d.id for d in devs]}")
    expect = tuple(sharding.shard_shape(shape))
    dt = arrays[0].dtype
    for a in arrays:
        if a.shape != expect or a.dtype != dt:
            raise ValueError(f"make_array_from_single_device_arrays: an array of shape "
                             f"{a.shape} and dtype {a.dtype} does not match the shard shape "
                             f"{expect} and dtype {dt}")
    return ShardedArray(ShapedArray.interned(shape, dt, False), sharding,
                        [by_dev[d]._buf for d in devs], True)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """One process holds all the data: the array of ``local_data`` laid out as
    ``sharding``."""
    value = np.asarray(local_data)
    if global_shape is not None and tuple(global_shape) != value.shape:
        raise NotImplementedError("make_array_from_process_local_data with a global_shape "
                                  "other than the local data's (several processes)")
    return dispatch.device_put(value, sharding)


def device_get(x):
    """Bring every array leaf of ``x`` to the host as a NumPy array."""
    def get(leaf):
        if isinstance(leaf, ArrayImpl):
            return np.asarray(leaf)
        return leaf
    with transfer_guard.explicit():
        return pytree.tree_map(get, x)


def block_until_ready(x):
    """Wait until every array in the pytree ``x`` is computed; returns ``x``."""
    for leaf in pytree.tree_leaves(x):
        if isinstance(leaf, ArrayImpl):
            leaf.block_until_ready()
    return x


def typeof(x):
    """The abstract value of ``x`` (with its sharding for an array laid out over a mesh)."""
    from pyjax._src.random import prng  # random sits beside api; imported late to avoid a cycle
    if isinstance(x, prng.PRNGKeyArray):
        return prng.KeyShapedArray(x.shape, x.dtype)
    if type(x) is Ref:
        return x.aval
    return sharded_typeof(x)


def reshard(x, out_shardings):
    """``x`` (a pytree) laid out as ``out_shardings`` (NamedSharding / PartitionSpec on the
    current mesh, or a pytree prefix of them): a transfer eagerly, a sharding constraint
    under ``jit``."""
    from pyjax._src.lax.sharding_constraint import with_sharding_constraint
    return with_sharding_constraint(x, out_shardings)


class ensure_compile_time_eval:
    """Evaluate eagerly inside this block even while tracing (as ``jax.ensure_compile_time_eval``):
    an operation on concrete values gives a concrete array; one on a tracer is traced as
    usual (JAX stages it too; equinox's `error_if` applies its own primitive to the traced
    predicate inside such a block)."""

    def __enter__(self):
        self._prev = trace_mod._state.compile_time_eval
        trace_mod._state.compile_time_eval = True

    def __exit__(self, *exc):
        trace_mod._state.compile_time_eval = self._prev
        return False


def process_indices(backend=None):
    """The indices of every process whose devices the backend sees (``[0]`` unless
    distributed)."""
    return sorted({d.process_index for d in _client(backend).global_devices}) or [0]


# JAX's deprecated names for the process queries
host_id = process_index
host_count = process_count
host_ids = process_indices


def default_device(device):
    """``with jax.default_device(d):`` places uncommitted values on ``d`` in the block (the
    ``jax_default_device`` flag)."""
    from pyjax._src.core.config import flag_context
    return flag_context("jax_default_device")(device)


def live_arrays(platform=None):
    """Every Array alive in this process whose buffer is not deleted (found by the garbage
    collector's walk of live objects: meant for debugging, not for hot loops)."""
    import gc
    if platform is not None and platform != default_backend():
        return []
    return [o for o in gc.get_objects() if type(o) is ArrayImpl and not o.is_deleted()]


def copy_to_host_async(x):
    """Starts copying ``x`` to the host. On the CPU the host reads device memory in place, so
    there is nothing to start; the later read waits only for the computation."""
    return None


def print_environment_info(return_string: bool = False):
    """Versions of pyjax, Python, NumPy and the PJRT plugin, and the devices."""
    import platform
    import sys
    import pyjax
    c = _client()
    lines = [f"pyjax:    {pyjax.__version__}",
             f"numpy:    {np.__version__}",
             f"python:   {sys.version.splitlines()[0]}",
             f"platform: {platform.platform()}",
             f"backend:  {c.platform} {c.platform_version} (PJRT C API "
             f"{c.api_version[0]}.{c.api_version[1]})",
             f"plugin:   {c._api.path}",
             f"devices:  {len(c.devices)} ({', '.join(str(d) for d in c.devices[:4])}"
             f"{', ...' if len(c.devices) > 4 else ''})"]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)


def named_scope(name: str):
    """``with jax.named_scope("block"):`` prefixes the names of the operations traced in the
    block: the lowered program's op locations and XLA's ``op_name`` metadata carry
    ``block/<primitive>`` (nested scopes join with "/")."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return _NamedScope(name)


class _NamedScope:
    __slots__ = ("name", "old")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        st = trace_mod._state
        self.old = st.name_stack
        st.name_stack = f"{self.old}/{self.name}" if self.old else self.name

    def __exit__(self, *exc):
        trace_mod._state.name_stack = self.old

    def __call__(self, fun):
        """As a decorator (JAX's named_scope is a context manager, so it is one too): each
        call of `fun` runs in a fresh scope of this name."""
        import functools
        name = self.name

        @functools.wraps(fun)
        def scoped(*args, **kwargs):
            with _NamedScope(name):
                return fun(*args, **kwargs)
        return scoped


def named_call(fun, *, name=None):
    """``fun`` run inside ``named_scope(name or fun.__name__)``."""
    import functools
    if not callable(fun):
        raise TypeError(f"named_call expects a callable, got {fun!r}")
    scope = name if name is not None else getattr(fun, "__name__", "named_call")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return wrapped


# Mutable array references: the box is core/refs.py, the operations state/ops.py.
from pyjax._src.core.refs import Ref  # noqa: E402
from pyjax._src.state.ops import empty_ref, free_ref, freeze, new_ref  # noqa: E402,F401


def effects_barrier():
    """Waits until the functions called so far have completed their side effects (host
    callbacks, FFI calls). pyjax runs every program with effects synchronously
    (dispatch/compiler.py), so they have all happened when their calls returned: there is
    nothing left to wait for."""
    return None
