"""SPMD ``jit``: a jitted function of arrays laid out over a mesh runs as one program for the
whole mesh, partitioned by XLA (Shardy: ``sdy.sharding`` annotations on ``@main``'s
arguments and results over an ``sdy.mesh``, ``use_shardy_partitioner``), with one Execute
over all its devices.

Input layouts come from ``in_shardings`` or the arguments' own shardings (single-device
arrays are replicated). Result layouts come from ``out_shardings``; without them a result
takes its constraint's layout, else the layout a split input or constraint carries to it
through transposes and shape-keeping operations (``_followed_layouts``), else that of the
first sharded input of its shape, else it is replicated. The
results are always annotated, so XLA inserts whatever collectives make them so: the layout
choice can cost speed, never correctness. On Explicit mesh axes the results' layouts are
their types' (sharding in types, core/sharding_rules.py).
"""
from __future__ import annotations

import logging
import weakref

import numpy as np

from pyjax._src import runtime
from pyjax._src.core import pytree
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.config import config
from pyjax._src.core.jaxpr import Var, eqn_has_effects
from pyjax._src.core.sharded_array import ShardedArray, ShardedShapedArray, shard_host_value
from pyjax._src.core.sharding import (AxisType, Mesh, NamedSharding, PartitionSpec, Sharding,
                                     current_mesh)
from pyjax._src.dispatch import compiler
from pyjax._src.interpreters import lowering
from pyjax._src.lax import collective_lowering as cl
from pyjax._src.lax.sharding_constraint import device_put_p, sharding_constraint_p
from pyjax._src.lax.shape_ops import transpose_p

_log = logging.getLogger("pyjax")


def _is_leaf(s):
    return s is None or isinstance(s, (Sharding, PartitionSpec))


def _broadcast(spec_tree, value_tree, what):
    """One sharding (or None) per leaf of ``value_tree`` from the prefix ``spec_tree``."""
    if spec_tree is None or isinstance(spec_tree, (Sharding, PartitionSpec)):
        return [spec_tree] * len(pytree.tree_leaves(value_tree))
    leaves, treedef = pytree.tree_flatten(spec_tree, is_leaf=_is_leaf)
    try:
        subtrees = treedef.flatten_up_to(value_tree)
    except ValueError as e:
        raise ValueError(f"jit {what} must be a tree prefix of the arguments/results: {e}") \
            from None
    out = []
    for s, sub in zip(leaves, subtrees):
        out += [s] * len(pytree.tree_leaves(sub))
    return out


def _bind(s, mesh, what):
    if isinstance(s, PartitionSpec):
        if mesh is None:
            raise ValueError(f"jit {what} got the PartitionSpec {s!r} but no mesh is set: use "
                             "pyjax.sharding.set_mesh(mesh) or a NamedSharding")
        return NamedSharding(mesh, s)
    return s


def _on_mesh(sharding, mesh):
    """A result type's sharding on the program's (concrete) mesh."""
    if sharding.mesh == mesh or sharding.mesh.abstract_mesh != mesh.abstract_mesh:
        return sharding
    return NamedSharding(mesh, sharding.spec)


def typed_by_in_shardings(jitted, in_avals, leaves, in_tree):
    """Sharding in types: an argument that ``in_shardings`` splits over Explicit mesh axes
    is traced with that sharding in its type (as JAX's)."""
    from pyjax._src.core.sharding_rules import spec_of_sharding, with_spec
    specs = jitted._split_dyn_for_shardings(jitted.in_shardings, leaves, (in_tree,))
    out = list(in_avals)
    for i, (a, s) in enumerate(zip(in_avals, specs)):
        if isinstance(s, PartitionSpec):
            s = _bind(s, current_mesh(), "in_shardings")
        if isinstance(s, NamedSharding) and s.mesh.explicit_axes and hasattr(a, "shape"):
            out[i] = with_spec(a, s.mesh, spec_of_sharding(s, len(a.shape)))
    return tuple(out)


class _Program:
    __slots__ = ("exe", "mesh", "in_shardings", "out_shardings", "const_shards", "out_avals",
                 "out_tree", "text")


def _layout_sharding(e):
    """The mesh layout an equation asks for: a sharding constraint's, or an ``out_sharding``
    (``sharding``) param's; else None."""
    if e.primitive is device_put_p:
        return next((s for s in _device_put_targets(e).values()), None)
    s = e.params.get("sharding") if e.primitive is sharding_constraint_p else \
        (e.params.get("out_sharding") or e.params.get("sharding")) if e.params else None
    if isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) and s.mesh.axis_names:
        return s
    return None


def _device_put_targets(e):
    """A ``device_put`` equation's results that it lays out over a mesh, with their shardings."""
    return {v: d for v, d in zip(e.outvars, e.params["devices"])
            if isinstance(d, NamedSharding) and isinstance(d.mesh, Mesh) and d.mesh.axis_names}


def _constraint_meshes(closed):
    meshes = [s.mesh for s in map(_layout_sharding, closed.jaxpr.eqns) if s is not None]
    return meshes + [a.sharding.mesh for a in closed.out_avals
                     if type(a) is ShardedShapedArray and isinstance(a.sharding.mesh, Mesh)]


def constrains_layout(closed):
    """Does the traced function lay a value out over a mesh (``with_sharding_constraint``,
    an ``out_sharding=``, or a result whose type is split over Explicit axes, at its top
    level)? Then it is an SPMD program even on single-device arguments."""
    return bool(_constraint_meshes(closed))


def call(jitted, key, closed, out_tree, leaves, donated):
    """Run the traced ``closed`` (signature ``key``) on ``leaves`` as one SPMD program."""
    arrays = [x if isinstance(x, ArrayImpl) else jitted_to_array(x) for x in leaves]
    prog = compiled_program(jitted, key, closed, out_tree,
                            plan(jitted, key, closed, out_tree, arrays), donated)
    return run(prog, arrays)


def compiled_program(jitted, key, closed, out_tree, planned, donated):
    """The compiled SPMD program of ``planned`` (``plan``'s mesh and layouts), cached."""
    mesh, in_sh, out_sh = planned
    pkey = (key, tuple(in_sh), tuple(out_sh))
    if donated:
        pkey = pkey + (tuple(donated),)
    prog = jitted._spmd_cache.get(pkey)
    if prog is None:
        prog = _compile(jitted, closed, mesh, in_sh, out_sh, out_tree, donated)
        jitted._spmd_cache[pkey] = prog
    return prog


def leaf_sharding(x):
    """The mesh layout an argument brings: a laid-out array's, or a ShapeDtypeStruct's (the
    ahead-of-time ``jit(f).lower(ShapeDtypeStruct(..., sharding=...))``)."""
    s = x._sharding if type(x) is ShardedArray else getattr(x, "sharding", None) \
        if not isinstance(x, ArrayImpl) else None
    return s if isinstance(s, NamedSharding) else None


def is_spmd_call(jitted, closed, leaves):
    """Would a call with these arguments (arrays or ShapeDtypeStructs) run as an SPMD
    program? (What ``Jitted.__call__`` decides, for the ahead-of-time stages.)"""
    return (jitted._spmd or any(leaf_sharding(x) is not None for x in leaves)
            or constrains_layout(closed))


def _followed_layouts(jaxpr, in_sh, constrained):
    """The split layouts that follow from the inputs' and the constraints' through transposes
    (permuting the spec) and operations that keep an operand's shape (vmap's ``moveaxis`` of
    a constrained value: JAX 0.10.2's propagation gives the result the permuted layout)."""
    known = {v: s for v, s in zip(jaxpr.invars, in_sh) if not s.is_fully_replicated}
    for e in jaxpr.eqns:
        if len(e.outvars) != 1:
            continue
        out = e.outvars[0]
        if out in constrained:
            known[out] = constrained[out]
            continue
        ins = [(v, known[v]) for v in e.invars if isinstance(v, Var) and v in known]
        if not ins:
            continue
        if e.primitive is transpose_p:
            v, s = ins[0]
            spec = s.spec._normalized(len(v.aval.shape))
            spec = [spec[p] for p in e.params["permutation"]]
            while spec and not spec[-1]:
                spec.pop()
            known[out] = NamedSharding(s.mesh, PartitionSpec(
                *[None if not p else (p[0] if len(p) == 1 else p) for p in spec]))
        else:
            same = [s for v, s in ins if v.aval.shape == out.aval.shape]
            if same:
                known[out] = same[0]
    return known


def plan(jitted, key, closed, out_tree, leaves):
    """(mesh, input shardings, result shardings) of the SPMD program for ``leaves`` (arrays,
    or ShapeDtypeStructs when lowering ahead of time)."""
    dyn = jitted._split_dyn_for_shardings
    in_specs = dyn(jitted.in_shardings, leaves, key) if jitted.in_shardings is not None \
        else [None] * len(leaves)
    mesh = None
    for s in list(in_specs) + [leaf_sharding(x) for x in leaves]:
        if isinstance(s, NamedSharding):
            if mesh is None:
                mesh = s.mesh
            elif s.mesh != mesh:
                raise ValueError(f"Received incompatible devices for jitted computation: "
                                 f"arguments laid out over {mesh!r} and over {s.mesh!r}")
    if mesh is None:
        mesh = current_mesh()
    if mesh is None and _constraint_meshes(closed):
        mesh = _constraint_meshes(closed)[0]
    if mesh is None:
        raise ValueError("jit with PartitionSpec shardings but no mesh is set: use "
                         "pyjax.sharding.set_mesh(mesh)")
    in_sh = []
    for x, s in zip(leaves, in_specs):
        s = _bind(s, mesh, "in_shardings")
        if s is None:
            s = leaf_sharding(x) or NamedSharding(mesh, PartitionSpec())
        s.shard_shape(x.shape)  # raises when a dimension does not divide
        in_sh.append(s)
    out_avals = closed.out_avals
    if jitted.out_shardings is not None:
        out_specs = _broadcast(jitted.out_shardings,
                               pytree.tree_unflatten(out_tree, list(range(len(out_avals)))),
                               "out_shardings")
    else:
        out_specs = [None] * len(out_avals)
    constrained = {}
    for e in closed.jaxpr.eqns:
        if e.primitive is sharding_constraint_p:
            constrained[e.outvars[0]] = e.params["sharding"]
        elif e.primitive is device_put_p:
            constrained.update(_device_put_targets(e))
    followed = _followed_layouts(closed.jaxpr, in_sh, constrained)
    out_sh = []
    for v, av, s in zip(closed.jaxpr.outvars, out_avals, out_specs):
        s = _bind(s, mesh, "out_shardings")
        if s is None and type(av) is ShardedShapedArray:
            s = _on_mesh(av.sharding, mesh)  # sharding in types: the result's own
        if s is None and v in constrained and constrained[v].mesh == mesh:
            s = constrained[v]  # the function's last word on this result's layout
        if s is None and all(t is AxisType.Explicit for t in mesh.axis_types):
            s = NamedSharding(mesh, PartitionSpec())  # untyped on Explicit axes: replicated
        if s is None and v in followed and followed[v].mesh == mesh:
            s = followed[v]  # a split input's or constraint's layout, carried to the result
        if s is None:
            s = next((si for x, si in zip(leaves, in_sh) if x.shape == av.shape
                      and not si.is_fully_replicated), NamedSharding(mesh, PartitionSpec()))
        s.shard_shape(av.shape)
        out_sh.append(s)
    return mesh, in_sh, out_sh


def jitted_to_array(x):
    from pyjax._src.dispatch import eager
    return eager.to_array(x)


def lower_text(jitted, closed, mesh, in_sh, out_sh, donated=()):
    """The SPMD program's StableHLO (Shardy's annotations: ``sdy.mesh``, ``sdy.sharding`` on
    ``@main``'s arguments and results), with what compiling and running it need."""
    from pyjax._src.interpreters import staging
    call_closed, consts = staging.convert_constvars_jaxpr(closed)
    jaxpr = call_closed.jaxpr
    consts = [np.asarray(c) for c in consts]
    const_sh = [NamedSharding(mesh, PartitionSpec()) for _ in consts]
    all_in = const_sh + list(in_sh)
    in_avals = [v.aval for v in jaxpr.constvars] + list(jaxpr.in_avals)
    with cl.spmd_lowering(mesh):  # sharding constraints become annotations
        arg_attrs = {i: f"sdy.sharding = {cl.sdy_sharding(s, a.ndim)}"
                     for i, (s, a) in enumerate(zip(all_in, in_avals))}
        res_attrs = {i: f"sdy.sharding = {cl.sdy_sharding(s, a.ndim)}"
                     for i, (s, a) in enumerate(zip(out_sh, jaxpr.out_avals))}
        # a donated input aliases a result of its type and layout (per-shard buffers)
        alias = tuple(bool(d) and any(s == o and a == v.aval for o, v in
                                      zip(out_sh, jaxpr.outvars))
                      for d, s, a in zip(donated, in_sh, jaxpr.in_avals[len(consts):]))
        text = lowering.lower_module(
            jaxpr, jitted.__name__, num_partitions=mesh.size, arg_shardings=arg_attrs,
            result_shardings=res_attrs,
            donated_invars=((False,) * len(consts) + alias) if any(alias) else ())
    return text, jaxpr, consts, const_sh, in_avals


def compile_options(mesh):
    """The build options of an SPMD program over ``mesh`` (client.compile's keywords)."""
    return dict(num_partitions=mesh.size, use_spmd_partitioning=True,
                use_shardy_partitioner=True, device_assignment=[d.id for d in mesh._flat_devices])


def _compile(jitted, closed, mesh, in_sh, out_sh, out_tree, donated=()):
    text, jaxpr, consts, const_sh, in_avals = lower_text(jitted, closed, mesh, in_sh, out_sh,
                                                         donated)
    all_in = const_sh + list(in_sh)
    compiler.compile_count[0] += 1
    if config.jax_log_compiles:
        _log.warning("Compiling %s for a mesh of %d devices with global shapes and types %s.",
                     jitted.__name__, mesh.size, [a.str_short() for a in in_avals])
    in_types = [(a.dtype, s.shard_shape(a.shape)) for a, s in zip(in_avals, all_in)]
    out_types = [(a.dtype, s.shard_shape(a.shape)) for a, s in zip(jaxpr.out_avals, out_sh)]
    client = runtime.get_client()
    exe = client.compile(text, in_types, out_types, **compile_options(mesh),
                         env_option_overrides=jitted._option_overrides)
    if any(eqn_has_effects(e) for e in jaxpr.eqns):
        exe.synchronous = True  # host callbacks have run when the call returns (as compiler.py)
    prog = _Program()
    prog.exe, prog.mesh = exe, mesh
    prog.in_shardings, prog.out_shardings = tuple(in_sh), tuple(out_sh)
    prog.const_shards = [shard_host_value(c, s)._shards for c, s in zip(consts, const_sh)]
    prog.out_avals = tuple(jaxpr.out_avals)
    prog.out_tree = out_tree
    prog.text = text
    return prog


# id(single-device array) -> (weakref, device ids, its copies on those devices): a replicated
# argument (the parameters of a data-parallel step) is copied to the mesh once, not per call.
# Arrays are immutable; a deleted or donated one is caught by its own buffer's state.
_replicas: dict = {}


def _replicated(x, devices):
    ids = tuple(d.id for d in devices)
    hit = _replicas.get(id(x))
    b = x._buf
    if hit is not None and hit[0]() is x and hit[1] == ids and not b.is_deleted():
        return hit[2]
    bufs = [b if b.device is d else b.copy_to_device(d) for d in devices]
    key = id(x)
    _replicas[key] = (weakref.ref(x, lambda _, k=key: _replicas.pop(k, None)), ids, bufs)
    return bufs


def shards_for(x, s, devices):
    """The buffers of ``x`` laid out as ``s``, one per device of the mesh."""
    if type(x) is ShardedArray and x._sharding == s and not x._pmapped:
        # (a pmap result's buffers lack the mapped dimension: laid out afresh below)
        return x._shards
    if type(x) is ArrayImpl and s.is_fully_replicated:
        return _replicated(x, devices)
    return shard_host_value(np.asarray(x._value), s, x.aval.weak_type)._shards


def run(prog, arrays):
    devices = prog.mesh._flat_devices
    per_arg = [shards_for(x, s, devices) for x, s in zip(arrays, prog.in_shardings)]
    per_arg = prog.const_shards + per_arg
    per_device = [[bufs[i] for bufs in per_arg] for i in range(len(devices))]
    outs = prog.exe.execute_sharded(per_device)
    results = [ShardedArray(av, s, [outs[i][j] for i in range(len(devices))], True)
               for j, (av, s) in enumerate(zip(prog.out_avals, prog.out_shardings))]
    return pytree.tree_unflatten(prog.out_tree, results)


# ---- eager primitives on sharded arrays ----

_eager_programs = {}  # (primitive, params) -> Jitted


def apply_sharded(primitive, args, params):
    """An eager primitive with a mesh-laid-out operand: one SPMD program (a ``jit`` of the
    primitive), so the result stays laid out over the mesh. Pmap results and other
    non-mesh layouts take the single-device path."""
    if not any(type(x) is ShardedArray and isinstance(x._sharding, NamedSharding)
               for x in args):
        return _single_device(primitive, args, params)
    key = (primitive, tuple(sorted(params.items())))
    try:
        f = _eager_programs.get(key)
    except TypeError:  # unhashable params
        key, f = None, None
    if f is None:
        from pyjax._src.transformations.jit import Jitted
        f = Jitted(lambda *a: primitive.bind(*a, **params), _cache_name="eager jnp")
        f.__name__ = primitive.name
        if key is not None:
            if len(_eager_programs) > 256:
                _eager_programs.clear()
            _eager_programs[key] = f
    return f(*args)


def _single_device(primitive, args, params):
    from pyjax._src.dispatch import eager
    hook = eager.sharded_apply[:]
    del eager.sharded_apply[:]
    try:
        return eager.apply_primitive(primitive, args, params)
    finally:
        eager.sharded_apply[:] = hook


def _install():
    from pyjax._src.dispatch import eager
    if not eager.sharded_apply:
        eager.sharded_apply.append(apply_sharded)


_install()
