"""``pmap``: run a function on several devices at once, one slice of the mapped axis each.

A top-level call traces the function once per signature on one slice's avals (the axis name
bound), lowers it with the collectives as cross-replica XLA collectives
(``lax/collective_lowering``), compiles it once with ``num_replicas = N`` and runs it with one
``execute_sharded``. Results are Arrays split over the devices along axis 0 (a NamedSharding
over a one-axis mesh, as JAX 0.10.2's: see ``pmap_result_sharding``).

Under another transformation (``jit``, ``grad``, ``vmap`` of a pmapped function, or a pmap
inside a pmap) the call is the same function under ``vmap`` with the axis name: the values
and derivatives are the same (JAX's collectives have the same meaning on a batch axis as on
devices), computed by the enclosing program on its devices.
"""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import pytree
from pyjax._src.core import pytree_data
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.config import config
from pyjax._src.core.sharded_array import ShardedArray, shard_host_value
from pyjax._src.core.sharding import AxisType, Mesh, NamedSharding, PartitionSpec
from pyjax._src.core.trace import Tracer, aval_of
from pyjax._src.dispatch import compiler
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.interpreters import staging
from pyjax._src.lax import collective_lowering as cl
from pyjax._src.lax import parallel
from pyjax._src.transformations import vmap as vmap_mod

__all__ = ["pmap"]

_is_none = lambda x: x is None  # noqa: E731


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """Map ``fun`` over axis ``in_axes`` of its arguments, one slice per device, as JAX's
    ``pmap``; collectives over ``axis_name`` reduce across the devices."""
    if fun is None:
        return lambda f: pmap(f, axis_name, in_axes=in_axes, out_axes=out_axes,
                              static_broadcasted_argnums=static_broadcasted_argnums,
                              devices=devices, backend=backend, axis_size=axis_size,
                              donate_argnums=donate_argnums,
                              global_arg_shapes=global_arg_shapes)
    if not callable(fun):
        raise TypeError(f"pmap expects a callable, got {fun!r}")
    if global_arg_shapes is not None:
        raise NotImplementedError("pmap(global_arg_shapes=...) is not supported by pyjax")
    runtime.check_backend(backend)
    return PmapFunction(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums,
                        devices, axis_size, donate_argnums)


def _argnums(x, what):
    if isinstance(x, int):
        x = (x,)
    x = tuple(x)
    if not all(isinstance(i, int) for i in x):
        raise TypeError(f"pmap {what} must be an int or a tuple of ints, got {x!r}")
    return x


class _Entry:
    __slots__ = ("exe", "const_bufs", "out_avals", "out_tree", "out_axes", "devices",
                 "out_layouts")


class PmapFunction:
    def __init__(self, fun, axis_name, in_axes, out_axes, static, devices, axis_size,
                 donate):
        self.fun = fun
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.static = _argnums(static, "static_broadcasted_argnums")
        self.donate = _argnums(donate, "donate_argnums")
        if devices is not None:
            devices = list(devices)
            if not devices or not all(isinstance(d, runtime.Device) for d in devices):
                raise TypeError(f"pmap devices= must be a non-empty sequence of Devices, got "
                                f"{devices!r}")
        self.devices = devices
        self.axis_size = axis_size
        self._cache = {}
        functools.update_wrapper(self, fun, updated=())

    def __repr__(self):
        return f"<pmap({getattr(self.fun, '__name__', 'fun')})>"

    def _split(self, args):
        n = len(args)
        static = {i % n for i in self.static if -n <= i < n}
        for i in self.static:
            if not -n <= i < n:
                raise ValueError(f"pmap static_broadcasted_argnums {self.static} refers to "
                                 f"argument {i}, but the function got {n} arguments")
        statics = tuple((i, args[i]) for i in sorted(static))
        dyn = [args[i] for i in range(n) if i not in static]
        dyn_pos = [i for i in range(n) if i not in static]
        return statics, dyn, dyn_pos

    def _dyn_fun(self, statics, dyn_pos, n, kw_keys):
        fun = self.fun

        def call(*dyn, **kw):
            args = [None] * n
            for i, v in statics:
                args[i] = v
            for i, v in zip(dyn_pos, dyn):
                args[i] = v
            return fun(*args, **kw)
        return call

    def _flat_in_axes(self, dyn, dyn_pos, kwargs):
        in_axes = self.in_axes
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if isinstance(in_axes, tuple) and len(self.static):
            in_axes = tuple(in_axes[i] for i in dyn_pos) if len(in_axes) > max(dyn_pos or [0]) \
                else in_axes
        axes = vmap_mod._broadcast_prefix(
            in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(dyn),
            tuple(dyn), "in_axes", "positional arguments")
        axes += [0] * len(pytree.tree_leaves(kwargs))
        return axes

    def __call__(self, *args, **kwargs):
        statics, dyn, dyn_pos = self._split(args)
        for _, v in statics:
            try:
                hash(v)
            except TypeError:
                raise ValueError(f"Non-hashable static arguments are not supported. An error "
                                 f"occurred while trying to hash an object of type "
                                 f"{type(v)}, {v!r}.") from None
        call = self._dyn_fun(statics, dyn_pos, len(args), tuple(kwargs))
        leaves, in_tree = pytree.tree_flatten((tuple(dyn), kwargs))
        if any(isinstance(x, Tracer) for x in leaves) or (
                trace_mod.current_trace() not in (None, dispatch.eval_trace)):
            return self._as_vmap(call, dyn, kwargs)
        axes = self._flat_in_axes(dyn, dyn_pos, kwargs)
        return self._run(call, leaves, in_tree, axes, statics)

    def _as_vmap(self, call, dyn, kwargs):
        in_axes = self.in_axes
        if self.static and isinstance(in_axes, (tuple, list)):
            raise NotImplementedError("pmap with static_broadcasted_argnums and a tuple of "
                                      "in_axes under another transformation")
        f = vmap_mod.vmap(lambda *a: call(*a, **kwargs), in_axes=in_axes,
                          out_axes=self.out_axes, axis_name=self.axis_name,
                          axis_size=self.axis_size)
        return f(*dyn)

    def _size(self, leaves, axes):
        sizes = set()
        for x, a in zip(leaves, axes):
            if a is None:
                continue
            av = aval_of(x)
            if not isinstance(a, int) or isinstance(a, bool):
                raise TypeError(f"pmap in_axes must be an int, None, or (nested) container "
                                f"with those types as leaves, but got {self.in_axes!r}")
            if not -av.ndim <= a < max(av.ndim, 1) or av.ndim == 0:
                raise ValueError(f"pmap was requested to map its argument along axis {a}, "
                                 f"which implies that its rank should be at least {a + 1}, "
                                 f"but is only {av.ndim} (its shape is {av.shape})")
            sizes.add(av.shape[a % av.ndim])
        if len(sizes) > 1:
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: "
                             f"{sorted(sizes)}")
        if sizes:
            n = sizes.pop()
            if self.axis_size is not None and self.axis_size != n:
                raise ValueError(f"pmap got axis_size={self.axis_size} but the mapped axes "
                                 f"have size {n}")
            return n
        if self.axis_size is None:
            raise ValueError("pmap requires at least one argument with a mapped axis, or "
                             "axis_size=")
        return int(self.axis_size)

    def _devices(self, n):
        devs = self.devices if self.devices is not None else runtime.get_client().devices
        if self.devices is not None and len(devs) != n:
            raise ValueError(f"Leading axis size of input to pmapped function must equal the "
                             f"number of local devices passed to pmap. Got axis_size={n}, "
                             f"num_local_devices={len(devs)}.")
        if n > len(devs):
            raise ValueError(f"compiling computation that requires {n} logical devices, but "
                             f"only {len(devs)} XLA devices are available (num_replicas={n})")
        return list(devs[:n])

    def _run(self, call, leaves, in_tree, axes, statics):
        arrays = [x if isinstance(x, ArrayImpl) else dispatch.to_array(x) for x in leaves]
        # a key array's axes count its own dims, not its key data's trailing ones
        trailing = pytree_data.data_trailing_shapes(in_tree) or [()] * len(arrays)
        axes = [None if a is None else a % max(x.ndim - len(t), 1)
                for x, a, t in zip(arrays, axes, trailing)]
        n = self._size(arrays, axes)
        devs = self._devices(n)
        avals = tuple(x.aval if a is None else
                      x.aval.update(shape=x.shape[:a] + x.shape[a + 1:])
                      for x, a in zip(arrays, axes))
        key = (in_tree, tuple(axes), avals, statics, tuple(d.id for d in devs),
               config.jax_enable_x64)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._compile(call, in_tree, avals, n, devs, len(arrays))
            self._cache[key] = entry
        per_device = [list(bufs) for bufs in entry.const_bufs]
        for x, a in zip(arrays, axes):
            for i, b in enumerate(_slices(x, a, devs, entry.devices)):
                per_device[i].append(b)
        outs = entry.exe.execute_sharded(per_device)
        results = [_output(entry.out_avals[j], [outs[i][j] for i in range(n)], ax, devs,
                           entry.out_layouts[j])
                   for j, ax in enumerate(entry.out_axes)]
        return pytree.tree_unflatten(entry.out_tree, results)

    def _compile(self, call, in_tree, avals, n, devs, nargs):
        name = self.axis_name if self.axis_name is not None else object()
        out_store = []

        def flat(*xs):
            dyn, kw = pytree.tree_unflatten(in_tree, list(xs))
            out = call(*dyn, **kw)
            leaves, tree = pytree.tree_flatten(out)
            out_store.append((out, tree))
            return leaves

        with parallel.bind_axis(name, n):
            closed = staging.trace_to_jaxpr(
                flat, list(avals), staging.DebugInfo(getattr(self.fun, "__name__", "fun"),
                                                     None, "pmap"))
        out_value, out_tree = out_store[-1]
        out_axes = vmap_mod._broadcast_prefix(
            self.out_axes, out_value, "out_axes", "the function's outputs")
        for a in out_axes:
            if a is not None and (not isinstance(a, int) or isinstance(a, bool)):
                raise TypeError(f"pmap out_axes must be an int, None, or (nested) container "
                                f"with those types as leaves, but got {self.out_axes!r}")
        call_closed, consts = staging.convert_constvars_jaxpr(closed)
        donated = [False] * len(consts)
        n_dyn = len(pytree.tree_leaves(pytree.tree_unflatten(in_tree, list(range(nargs)))[0]))
        leaf_pos = _leaf_argnums(in_tree, nargs)
        donated += [i < n_dyn and leaf_pos[i] in self.donate for i in range(nargs)]
        with cl.lowering_axes((name,), (n,), manual=False):
            exe = compiler.compile_jaxpr(
                call_closed.jaxpr, f"pmap_{getattr(self.fun, '__name__', 'fun')}",
                donated_invars=tuple(donated) if any(donated) else (), num_replicas=n,
                device_assignment=[d.id for d in devs])
        e = _Entry()
        e.exe = exe
        host_consts = [np.asarray(c) for c in consts]
        e.const_bufs = [[d.client.buffer_from_pyval(np.array(c, order="C"), d)
                         for c in host_consts] for d in devs]
        e.out_avals = call_closed.jaxpr.out_avals
        e.out_tree = out_tree
        trailing = pytree_data.data_trailing_shapes(out_tree) or [()] * len(out_axes)
        e.out_axes = [None if a is None else a % (av.ndim - len(t) + 1)
                      for a, av, t in zip(out_axes, e.out_avals, trailing)]
        e.devices = tuple(devs)
        # Made once: the stacked aval and sharding of each result (out_axes 0): JAX 0.10.2's,
        # dimension 0 split over a one-axis mesh of the devices
        e.out_layouts = []
        sharding = pmap_result_sharding(devs, self.axis_name)
        for av in e.out_avals:
            stacked = ShapedArray.interned((n,) + av.shape, av.dtype, av.weak_type)
            e.out_layouts.append((stacked, sharding))
        return e


def _leaf_argnums(in_tree, nargs):
    """For each flat leaf, the index of the positional argument it belongs to (or -1)."""
    dyn, kw = pytree.tree_unflatten(in_tree, list(range(nargs)))
    pos = [-1] * nargs
    for i, a in enumerate(dyn):
        for leaf in pytree.tree_leaves(a):
            pos[leaf] = i
    return pos


def _slices(x, axis, devs, dev_tuple):
    """The per-device buffers of argument ``x`` mapped along ``axis`` (None: broadcast)."""
    if (axis == 0 and type(x) is ShardedArray and x._pmapped
            and x.sharding._device_assignment == dev_tuple):   # (devices are unique objects)
        return x._shards  # a pmap result on these devices: use its pieces
    if axis is None:
        if type(x) is ArrayImpl:
            b = x._buf
            return [b if b.device is d else b.copy_to_device(d) for d in devs]
        v = np.array(x._value, order="C")
        return [d.client.buffer_from_pyval(v, d) for d in devs]
    v = x._value
    return [d.client.buffer_from_pyval(np.array(np.take(v, i, axis=axis), order="C"), d)
            for i, d in enumerate(devs)]


PMAP_AXIS_NAME = "_internal_pmap_axis_name"  # JAX 0.10.2's name for the results' mesh axis


def pmap_result_sharding(devs, axis_name=None):
    """A pmap result's sharding, as JAX 0.10.2 reports it: dimension 0 split over a one-axis
    (Auto) mesh of the devices the pmap ran on, named by the pmap's axis_name."""
    name = axis_name if isinstance(axis_name, str) else PMAP_AXIS_NAME
    mesh = Mesh(np.array(devs, dtype=object), (name,), axis_types=(AxisType.Auto,))
    return NamedSharding(mesh, PartitionSpec(name))


def _output(aval, bufs, axis, devs, layout):
    if axis is None:
        return ArrayImpl(aval, bufs[0], True)
    stacked, sharding = layout
    out = ShardedArray(stacked, sharding, bufs, True, pmapped=True)
    if axis == 0:
        return out
    # another out_axes: laid out afresh over the same mesh, split along that axis (JAX's)
    mesh = sharding.mesh
    return shard_host_value(np.moveaxis(np.asarray(out), 0, axis),
                            NamedSharding(mesh, PartitionSpec(*[None] * axis,
                                                              mesh.axis_names[0])),
                            aval.weak_type)

