"""Moving between Explicit and Auto mesh axes (``jax.sharding.auto_axes`` /
``explicit_axes``), and the small names of ``jax.sharding`` that go with sharding in types.

``auto_axes(f, axes=..., out_sharding=...)`` runs ``f`` on a mesh whose ``axes`` are Auto:
its arguments' types forget those axes (the data stays where it is: a sharding constraint
with the same tiling), and its results are laid out as ``out_sharding`` says on the original
mesh, so they have that sharding in their types again. ``explicit_axes`` is the converse.
"""
from __future__ import annotations

import dataclasses
import functools

from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.sharded_array import ShardedArray, ShardedShapedArray
from pyjax._src.core.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,
                                      SingleDeviceSharding, current_mesh, use_mesh)
from pyjax._src.lax.sharding_constraint import with_sharding_constraint


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
    """A device described without being one (``jax.sharding.AbstractDevice``)."""
    device_kind: str
    num_cores: int | None
    platform: str


def make_single_device_sharding(device, *, memory_kind=None):
    """``SingleDeviceSharding(device)`` (``jax.sharding.make_single_device_sharding``)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class use_abstract_mesh:
    """``with use_abstract_mesh(mesh):``. pyjax's meshes are concrete; the abstract mesh of the
    current mesh is accepted (a no-op), any other raises NotImplementedError."""

    def __init__(self, mesh):
        if not isinstance(mesh, AbstractMesh):
            raise TypeError(f"use_abstract_mesh expects an AbstractMesh, got {mesh!r}")
        cur = current_mesh()
        if not (mesh.empty and cur is None) and (cur is None or cur.abstract_mesh != mesh):
            raise NotImplementedError(
                f"use_abstract_mesh({mesh!r}): pyjax traces with concrete meshes only; set the "
                "Mesh itself with jax.sharding.set_mesh")

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _retyped_mesh(mesh, axes, to):
    names = mesh.axis_names if axes is None else ((axes,) if isinstance(axes, str)
                                                  else tuple(axes))
    for n in names:
        if n not in mesh.axis_names:
            raise ValueError(f"axis {n!r} is not an axis of the mesh {mesh!r}")
    types = tuple(to if n in names else t for n, t in zip(mesh.axis_names, mesh.axis_types))
    return Mesh(mesh.devices, mesh.axis_names, axis_types=types)


def _sharding_of(x):
    aval = trace_mod.get_aval(x) if not isinstance(x, ShardedArray) else None
    if type(aval) is ShardedShapedArray:
        return aval.sharding
    if isinstance(x, ShardedArray) and isinstance(x.sharding, NamedSharding):
        return x.sharding
    return None


def _recast(tree, mesh):
    """Each leaf laid out as before, its sharding now on ``mesh`` (same devices, other axis
    types): its type gains or loses the axes whose type changed."""
    leaves, treedef = pytree.tree_flatten(tree)
    out = []
    for x in leaves:
        s = _sharding_of(x)
        out.append(x if s is None else with_sharding_constraint(x, NamedSharding(mesh, s.spec)))
    return pytree.tree_unflatten(treedef, out)


def _resolve(s, mesh, what):
    if s is None:
        return None
    if isinstance(s, NamedSharding):
        return NamedSharding(mesh, s.spec)
    if isinstance(s, PartitionSpec):
        return NamedSharding(mesh, s)
    raise TypeError(f"{what} must be a PartitionSpec or NamedSharding, got {s!r}")


def _place_all(tree, spec_tree, mesh, what):
    leaves, treedef = pytree.tree_flatten(tree)
    if isinstance(spec_tree, (PartitionSpec, NamedSharding)) or spec_tree is None:
        specs = [spec_tree] * len(leaves)
    else:
        specs = pytree.tree_leaves(spec_tree, is_leaf=lambda s: isinstance(
            s, (PartitionSpec, NamedSharding)))
        if len(specs) != len(leaves):
            raise ValueError(f"{what} has {len(specs)} shardings for {len(leaves)} values")
    out = [x if s is None else with_sharding_constraint(x, _resolve(s, mesh, what))
           for x, s in zip(leaves, specs)]
    return pytree.tree_unflatten(treedef, out)


def _mesh_or_error(what):
    mesh = current_mesh()
    if mesh is None:
        raise ValueError(f"{what} needs a mesh: use jax.sharding.set_mesh(mesh)")
    return mesh


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """``f`` run with ``axes`` of the current mesh Auto (all of them by default); its results
    are laid out as ``out_sharding`` (required) on the current mesh."""
    if f is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)
    if out_sharding is None:
        raise TypeError("auto_axes requires out_sharding= (the results' sharding on the "
                        "Explicit mesh)")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        mesh = _mesh_or_error("auto_axes")
        auto = _retyped_mesh(mesh, axes, AxisType.Auto)
        args, kwargs = _recast((args, kwargs), auto)
        with use_mesh(auto):
            out = f(*args, **kwargs)
        return _place_all(out, out_sharding, mesh, "auto_axes out_sharding")
    return wrapped


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """``f`` run with ``axes`` of the current mesh Explicit (all of them by default), its
    arguments laid out (and typed) as ``in_sharding`` says; its results go back to the
    current mesh's axis types."""
    if f is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)
    if in_sharding is None:
        raise TypeError("explicit_axes requires in_sharding= (the arguments' sharding on the "
                        "Explicit axes)")

    @functools.wraps(f)
    def wrapped(*args):
        mesh = _mesh_or_error("explicit_axes")
        explicit = _retyped_mesh(mesh, axes, AxisType.Explicit)
        args = _place_all(args, in_sharding if len(args) != 1 else (in_sharding,)
                          if isinstance(in_sharding, (PartitionSpec, NamedSharding))
                          else in_sharding, explicit, "explicit_axes in_sharding")
        with use_mesh(explicit):
            out = f(*args)
        return _recast(out, mesh)
    return wrapped


def inspect_array_sharding(value, *, callback):
    """Call ``callback`` with each array's sharding: eagerly its layout; under a trace its
    type's sharding (values split over Explicit axes). A traced value whose layout is left
    to XLA (Auto axes, one device) raises NotImplementedError: its sharding is known only
    after compilation, which pyjax does not report back."""
    for x in pytree.tree_leaves(value):
        if not trace_mod.is_eager() and isinstance(x, trace_mod.Tracer):
            aval = x.aval
            if type(aval) is not ShardedShapedArray:
                raise NotImplementedError(
                    f"inspect_array_sharding of the traced value {aval.str_short()}: its "
                    "sharding is not part of its type (Auto axes or one device), and pyjax "
                    "does not report the compiler's choice")
            callback(aval.sharding)
        else:
            callback(x.sharding)
