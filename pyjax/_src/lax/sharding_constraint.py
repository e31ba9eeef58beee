"""``lax.with_sharding_constraint``: ask XLA's partitioner to lay a value out as a
NamedSharding says, inside an SPMD program (Shardy's ``sdy.sharding_constraint``). Outside
SPMD programs (one device) it is the identity; eagerly it is ``device_put``.

``device_put_p`` is what ``jax.device_put`` binds under a trace: to a NamedSharding it is the
same constraint; to a Device it is the identity (JAX's behaviour, checked with JAX 0.10.2:
the result of ``jit(lambda x: device_put(x, jax.devices()[3]))`` stays on the program's
device)."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, not_mapped
from pyjax._src.core.sharded_array import shard_host_value
from pyjax._src.core.sharding import (AbstractMesh, Mesh, NamedSharding, PartitionSpec,
                                     current_mesh)
from pyjax._src.runtime.client import Device
from pyjax._src.lax import collective_lowering as cl
from pyjax._src.lax.base import aval_of

__all__ = ["with_sharding_constraint", "sharding_constraint_p", "device_put_p"]


def _abstract_eval(x, *, sharding):
    _check_rank(sharding, x.ndim)
    sharding.shard_shape(x.shape)  # a dimension the mesh axes do not divide raises here
    return x


def _lower(ctx, x, *, sharding):
    return constrain(ctx, x, sharding)


def constrain(ctx, x, sharding):
    """``x`` with a sharding constraint in an SPMD program; ``x`` itself on one device."""
    if not cl.in_spmd_lowering():
        return x
    return ctx.op("sdy.sharding_constraint", [x], x.aval,
                  attrs={"sharding": cl.sdy_sharding(sharding, x.aval.ndim)})


def _jvp(primals, tangents, *, sharding):
    (x,), (t,) = primals, tangents
    out = sharding_constraint_p.bind(x, sharding=sharding)
    return out, (t if type(t) is Zero else sharding_constraint_p.bind(t, sharding=sharding))


def _transpose(ct, x, *, sharding):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [sharding_constraint_p.bind(ct, sharding=sharding)]


def _batch(args, dims, *, sharding, axis_data):
    (x,), (d,) = args, dims
    if d is not not_mapped:
        _check_rank(sharding, aval_of(x).ndim - 1)  # the rank the function sees
    return sharding_constraint_p.bind(x, sharding=_batched(sharding, x, d, axis_data)), d


def _spmd_names(axis_data):
    names = axis_data.spmd_name
    if names is None:
        return ()
    return tuple(names) if isinstance(names, (tuple, list)) else (names,)


def _batched(sharding, x, d, axis_data):
    """``sharding`` for ``x`` batched at dimension ``d``: that dimension split over vmap's
    ``spmd_axis_name`` mesh axes (JAX's), unsplit without them."""
    if d is not_mapped:
        return sharding
    spec = list(sharding.spec._normalized(aval_of(x).ndim - 1))
    spmd = _spmd_names(axis_data)
    used = {n for p in spec for n in p}
    if spmd and used & set(spmd):
        raise ValueError(f"vmap spmd_axis_name {spmd} cannot appear in "
                         f"with_sharding_constraint spec, but got spec {sharding.spec}")
    for n in spmd:
        if n not in sharding.mesh.axis_names:
            raise ValueError(f"vmap spmd_axis_name {n!r} is not an axis of the mesh "
                             f"{tuple(sharding.mesh.axis_names)}")
    spec.insert(d, spmd)
    spec = PartitionSpec(*[None if not p else (p[0] if len(p) == 1 else p) for p in spec])
    return NamedSharding(sharding.mesh, spec)


def _impl(x, *, sharding):
    """The primitive bound eagerly (by an eager ``vmap``): the value laid out now, its spec's
    trailing Nones dropped as a program's result's are (JAX 0.10.2: P(None, None) -> P())."""
    spec = tuple(sharding.spec)
    while spec and spec[-1] is None:
        spec = spec[:-1]
    if spec != tuple(sharding.spec):
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    return _lay_out(x, sharding)


def _lay_out(x, sharding):
    value = np.asarray(x)
    _check_rank(sharding, value.ndim)
    sharding.shard_shape(value.shape)
    return shard_host_value(value, sharding, aval_of(x).weak_type)


def _check_rank(sharding, ndim):
    """JAX 0.10.2's error for a spec longer than the value's rank."""
    if len(sharding.spec) > ndim:
        raise ValueError(
            f"One of with_sharding_constraint arguments is incompatible with its sharding "
            f"annotation {sharding!r}: Sharding {sharding!r} is only valid for values of rank "
            f"at least {len(sharding.spec)}, but was applied to a value of rank {ndim}.")


def _never_names(params, axis_name):
    # axis_aware only so that the batch rule gets axis_data (its spmd_axis_name)
    return False


sharding_constraint_p = Primitive("sharding_constraint", abstract_eval=_abstract_eval,
                                  lower=_lower, impl=_impl, linear=True, jvp=_jvp,
                                  transpose=_transpose, batch=_batch, axis_aware=_never_names)


# ---- device_put_p: jax.device_put under a trace ----
# params as JAX's: devices (one target per operand: a NamedSharding or a Device), srcs (None
# under a trace) and copy_semantics (one of COPY_SEMANTICS per operand; values have no
# buffers in a traced program, so they only say what the call asked for).
COPY_SEMANTICS = ("REUSE_INPUT", "ALWAYS_COPY", "DONATE_INPUT")


def _dp_check(devices, srcs, copy_semantics, n):
    if not (len(devices) == len(srcs) == len(copy_semantics) == n):
        raise ValueError(f"device_put: {n} operands but {len(devices)} devices, {len(srcs)} "
                         f"srcs and {len(copy_semantics)} copy_semantics")
    for d in devices:
        if d is not None and not isinstance(d, (NamedSharding, Device)):
            raise NotImplementedError(
                f"device_put to {d!r} under a trace (jit, vmap, grad) is not supported by "
                "pyjax: pass a NamedSharding, a PartitionSpec or a Device")
    for c in copy_semantics:
        if c not in COPY_SEMANTICS:
            raise ValueError(f"device_put: copy_semantics must be one of {COPY_SEMANTICS}, "
                             f"got {c!r}")


def _dp_abstract_eval(*avals, devices, srcs, copy_semantics):
    _dp_check(devices, srcs, copy_semantics, len(avals))
    for a, d in zip(avals, devices):
        if isinstance(d, NamedSharding):
            d.shard_shape(a.shape)  # a dimension the mesh axes do not divide raises here
    return list(avals)


def _dp_lower(ctx, *xs, devices, srcs, copy_semantics):
    return [constrain(ctx, x, d) if isinstance(d, NamedSharding) else x
            for x, d in zip(xs, devices)]


def _dp_jvp(primals, tangents, *, devices, srcs, copy_semantics):
    outs = device_put_p.bind(*primals, devices=devices, srcs=srcs,
                             copy_semantics=copy_semantics)
    nz = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    touts = list(tangents)
    if nz:
        pick = lambda seq: tuple(seq[i] for i in nz)  # noqa: E731
        moved = device_put_p.bind(*pick(tangents), devices=pick(devices), srcs=pick(srcs),
                                  copy_semantics=pick(copy_semantics))
        for i, t in zip(nz, moved):
            touts[i] = t
    return outs, touts


def _dp_transpose(cts, *xs, devices, srcs, copy_semantics):
    # as JAX: the cotangents go back to where the operands came from (srcs; None under a
    # trace is the identity), a NamedSharding target's cotangent keeping its layout
    out = []
    for ct, x, d, s in zip(cts, xs, devices, srcs):
        if type(ct) is Zero:
            out.append(Zero(x.aval))
        elif isinstance(d, NamedSharding):
            out.append(sharding_constraint_p.bind(ct, sharding=d))
        else:
            out.append(ct)
    return out


def _dp_batch(args, dims, *, devices, srcs, copy_semantics, axis_data):
    devices = tuple(_batched(d, x, b, axis_data) if isinstance(d, NamedSharding) else d
                    for d, x, b in zip(devices, args, dims))
    return device_put_p.bind(*args, devices=devices, srcs=srcs,
                             copy_semantics=copy_semantics), list(dims)


device_put_p = Primitive("device_put", abstract_eval=_dp_abstract_eval, lower=_dp_lower,
                         multiple_results=True, linear=True, jvp=_dp_jvp,
                         transpose=_dp_transpose, batch=_dp_batch, axis_aware=_never_names)


def on_concrete_mesh(s, aval=None):
    """A NamedSharding over an ``AbstractMesh`` (``NamedSharding(mesh.abstract_mesh, P(...))``
    under ``jit``) on the current concrete mesh, as JAX 0.10.2 resolves it: the current mesh
    when its abstract mesh is that one, else the current mesh's devices in the abstract
    mesh's shape (observed: an abstract ('x': 4, 'y': 2) under a ('x': 2, 'y': 4) mesh gave
    a result on Mesh('x': 4, 'y': 2)). Other shardings are returned as they are."""
    if not (isinstance(s, NamedSharding) and isinstance(s.mesh, AbstractMesh)):
        return s
    amesh, mesh = s.mesh, current_mesh()
    if mesh is None or mesh.size != amesh.size:
        what = f" of aval {aval.str_short()}" if aval is not None else ""
        raise ValueError(
            f"Length of device assignment {1 if mesh is None else mesh.size} is not equal to "
            f"the size of the mesh {amesh.size}{what} ({s!r}). Please enter your `jit` into "
            "a mesh context via `jax.set_mesh`.")
    if mesh.abstract_mesh != amesh:
        mesh = Mesh(np.array(mesh._flat_devices, dtype=object).reshape(amesh.axis_sizes),
                    amesh.axis_names, axis_types=amesh.axis_types)
    return NamedSharding(mesh, s.spec, memory_kind=s.memory_kind)


def bind_device_put(leaves, target, copy_semantics="REUSE_INPUT"):
    """``jax.device_put`` of traced ``leaves`` to one ``target`` (NamedSharding or Device)."""
    target = on_concrete_mesh(target, aval_of(leaves[0]) if leaves else None)
    n = len(leaves)
    return device_put_p.bind(*leaves, devices=(target,) * n, srcs=(None,) * n,
                             copy_semantics=(copy_semantics,) * n)


def _resolve(s):
    if isinstance(s, PartitionSpec):
        mesh = current_mesh()
        if mesh is None:
            raise ValueError(f"with_sharding_constraint got the PartitionSpec {s!r} but no "
                             "mesh is set: use pyjax.sharding.set_mesh(mesh) or a "
                             "NamedSharding")
        return NamedSharding(mesh, s)
    if not isinstance(s, NamedSharding):
        raise TypeError(f"with_sharding_constraint expects a NamedSharding or a "
                        f"PartitionSpec, got {s!r}")
    return on_concrete_mesh(s)


def with_sharding_constraint(x, shardings):
    """``x`` (a pytree) laid out as ``shardings`` (one NamedSharding/PartitionSpec, or a
    pytree prefix of ``x`` of them)."""
    is_leaf = lambda s: isinstance(s, (NamedSharding, PartitionSpec))  # noqa: E731
    if is_leaf(shardings):
        per = [_resolve(shardings)] * len(pytree.tree_leaves(x))
    else:
        s_leaves, s_def = pytree.tree_flatten(shardings, is_leaf=is_leaf)
        per = []
        for s, sub in zip(s_leaves, s_def.flatten_up_to(x)):
            per += [_resolve(s)] * len(pytree.tree_leaves(sub))
    leaves, tree = pytree.tree_flatten(x)
    eager = trace_mod.is_eager()
    out = []
    for leaf, s in zip(leaves, per):
        if eager:  # lay the value out now
            out.append(_lay_out(leaf, s))
        else:
            out.append(sharding_constraint_p.bind(leaf, sharding=s))
    return pytree.tree_unflatten(tree, out)
