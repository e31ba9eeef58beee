"""``lax.with_sharding_constraint``: ask XLA's partitioner to lay a value out as a
NamedSharding says, inside an SPMD program (``custom_call @Sharding`` with an
``mhlo.sharding`` attribute). Outside SPMD programs (one device) it is the identity; eagerly
it is ``device_put``."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, not_mapped
from pyjax._src.core.sharded_array import shard_host_value
from pyjax._src.core.sharding import NamedSharding, PartitionSpec, current_mesh
from pyjax._src.lax import collective_lowering as cl
from pyjax._src.lax.base import aval_of

__all__ = ["with_sharding_constraint", "sharding_constraint_p"]


def _abstract_eval(x, *, sharding):
    sharding.shard_shape(x.shape)  # a dimension the mesh axes do not divide raises here
    return x


def _lower(ctx, x, *, sharding):
    if not cl.in_spmd_lowering():
        return x
    attr = f'"{sharding._hlo_sharding(x.aval.ndim)}"'
    return ctx.op("stablehlo.custom_call", [x], ctx.avals_out[0],
                  attrs={"call_target_name": '"Sharding"', "mhlo.sharding": attr})


def _jvp(primals, tangents, *, sharding):
    (x,), (t,) = primals, tangents
    out = sharding_constraint_p.bind(x, sharding=sharding)
    return out, (t if type(t) is Zero else sharding_constraint_p.bind(t, sharding=sharding))


def _transpose(ct, x, *, sharding):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [sharding_constraint_p.bind(ct, sharding=sharding)]


def _batch(args, dims, *, sharding):
    (x,), (d,) = args, dims
    if d is not_mapped:
        return sharding_constraint_p.bind(x, sharding=sharding), d
    spec = list(sharding.spec._normalized(aval_of(x).ndim - 1))
    spec.insert(d, ())
    spec = PartitionSpec(*[None if not p else (p[0] if len(p) == 1 else p) for p in spec])
    return sharding_constraint_p.bind(x, sharding=NamedSharding(sharding.mesh, spec)), d


sharding_constraint_p = Primitive("sharding_constraint", abstract_eval=_abstract_eval,
                                  lower=_lower, linear=True, jvp=_jvp, transpose=_transpose,
                                  batch=_batch)


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
    return s


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
            value = np.asarray(leaf)
            s.shard_shape(value.shape)
            out.append(shard_host_value(value, s, aval_of(leaf).weak_type))
        else:
            out.append(sharding_constraint_p.bind(leaf, sharding=s))
    return pytree.tree_unflatten(tree, out)
