"""Sharding in types: while tracing, a value split over Explicit mesh axes has the abstract
value ``ShardedShapedArray`` (its ``sharding`` is part of its type, ``float32[8@data,3]``),
and each primitive says, by its ``sharding_rule``, how its operands' shardings give its
results' (JAX's "explicit sharding" mode).

A rule is ``rule(avals_in, avals_out, **params) -> spec`` (a list of specs for primitives
with several results), where a spec is a tuple with one entry per dimension, each a tuple of
Explicit mesh axis names (``()``: not split). Primitives that have no rule of their own
declare one of:

- ``UNSHARDED_ONLY``: an operand split over an Explicit axis raises ``ShardingTypeError``
  naming the primitive (the sharding is never silently dropped);
- ``FROM_BODY``: the results' types are the ones ``abstract_eval`` gives (call-like
  primitives whose results are the avals of the Jaxprs they hold).

``typed_abstract_eval`` is the one place where rules run: the staging traces call it instead of
``abstract_eval``. Values with no Explicit sharding keep plain ``ShapedArray`` avals, and the
rules are not looked at unless an operand (or an ``out_sharding``) is split on an Explicit
axis, so unsharded tracing is unchanged.
"""
from __future__ import annotations

from pyjax._src.core.primitive import declare_rule_kind
from pyjax._src.core.sharded_array import ShardedShapedArray
from pyjax._src.core.sharding import (AxisType, NamedSharding, PartitionSpec, current_mesh)

declare_rule_kind("sharding_rule", "explicit sharding: rule(avals_in, avals_out, **params) -> "
                                   "spec(s) (core/sharding_rules.py), UNSHARDED_ONLY or FROM_BODY")


class ShardingTypeError(TypeError):
    """Operands whose shardings (on Explicit mesh axes) give no well-defined result sharding
    (JAX's ``ShardingTypeError``)."""


class _Declaration:
    """A declared behaviour instead of a written rule (callable like one: the dispatcher
    handles it before calling, since it needs the primitive's name)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __call__(self, avals_in, avals_out, **params):
        if self.name == "UNSHARDED_ONLY":
            check_unsharded("this primitive", avals_in)
        outs = avals_out if isinstance(avals_out, (list, tuple)) else [avals_out]
        specs = [explicit_spec(a) or ((),) * len(a.shape) for a in outs]
        return specs if isinstance(avals_out, (list, tuple)) else specs[0]


UNSHARDED_ONLY = _Declaration("UNSHARDED_ONLY")
FROM_BODY = _Declaration("FROM_BODY")


def replicated_results(avals_in, avals_out, **_):
    """A rule: operands may be split anyhow, the results are replicated (JAX 0.10.2's
    ``random_gamma`` under one key; host callbacks, ``ffi_call`` and a one-device
    ``call_exported``, which see whole operands; ``dce_sink``, which has none)."""
    outs = avals_out if isinstance(avals_out, (list, tuple)) else [avals_out]
    specs = [((),) * len(a.shape) for a in outs]
    return specs if isinstance(avals_out, (list, tuple)) else specs[0]

# params that ask for a result sharding (``lax.broadcast_in_dim(..., out_sharding=)`` binds
# ``sharding=``, ``dot_general`` binds ``out_sharding=``)
_SHARDING_PARAMS = ("out_sharding", "sharding")


# ---- specs ----

def explicit_spec(aval):
    """``aval``'s spec on Explicit axes (one tuple of axis names per dimension), or None when
    it is not split over any Explicit axis."""
    if type(aval) is not ShardedShapedArray:
        return None
    return aval._explicit


def spec_of_sharding(sharding, ndim):
    """The Explicit part of a NamedSharding's spec for a rank-``ndim`` value."""
    mesh = sharding.mesh
    explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is AxisType.Explicit}
    return tuple(tuple(n for n in names if n in explicit)
                 for names in sharding.spec._normalized(ndim))


def is_unsplit(spec):
    return spec is None or not any(spec)


def with_spec(aval, mesh, spec):
    """``aval`` with the sharding ``spec`` on ``mesh`` (the plain aval when nothing is split)."""
    base = aval if type(aval) is not ShardedShapedArray else aval.unsharded()
    if mesh is None or is_unsplit(spec):
        return base
    if len(spec) != len(base.shape):
        raise ShardingTypeError(f"sharding spec {format_spec(spec)} has {len(spec)} entries "
                                f"but the value {base.str_short()} has rank {len(base.shape)}")
    parts = [None if not p else (p[0] if len(p) == 1 else p) for p in spec]
    sharding = NamedSharding(mesh, PartitionSpec(*parts))
    sharding.shard_shape(base.shape)  # a dimension its axes do not divide raises here
    return ShardedShapedArray(base.shape, base.dtype, base.weak_type, sharding)


def format_entry(p):
    return "None" if not p else (repr(p[0]) if len(p) == 1 else repr(tuple(p)))


def format_spec(spec):
    """JAX's way of printing a spec in errors: ``('X', None)``."""
    inner = ", ".join(format_entry(p) for p in spec)
    return f"({inner},)" if len(spec) == 1 else f"({inner})"


def as_named_sharding(s, what):
    """An ``out_sharding=`` argument as a NamedSharding (a PartitionSpec resolves against the
    current mesh), or None for None / the empty mesh's sharding."""
    if s is None:
        return None
    if isinstance(s, PartitionSpec):
        mesh = current_mesh()
        if mesh is None:
            if all(p is None for p in s):
                return None
            raise ValueError(f"{what}: out_sharding={s!r} is a PartitionSpec but no mesh is set; "
                             "use pyjax.sharding.set_mesh(mesh) or pass a NamedSharding")
        return NamedSharding(mesh, s)
    if isinstance(s, NamedSharding):
        return None if not s.mesh.axis_names else s
    if hasattr(s, "_device_for_put") and getattr(s, "num_devices", 1) == 1:
        return None  # a SingleDeviceSharding: nothing to split
    raise TypeError(f"{what}: out_sharding must be None, a PartitionSpec or a NamedSharding, "
                    f"got {s!r}")


# ---- applying the rules ----

def _asked(params):
    """The NamedShardings a primitive's params ask for: an ``out_sharding``/``sharding``, or
    ``device_put``'s targets (``devices``)."""
    asked = [params.get(k) for k in _SHARDING_PARAMS]
    asked += list(params.get("devices") or ())
    return [s for s in asked if isinstance(s, NamedSharding) and s.mesh.axis_names]


def _mesh_of(avals, params):
    """The mesh of the result's type: an ``out_sharding``'s (a reshard may move a value to
    another mesh), else the typed operands' (which must agree)."""
    for s in _asked(params):
        return s.mesh
    mesh = None
    for a in avals:
        if type(a) is ShardedShapedArray:
            m = a.sharding.mesh
            if mesh is None:
                mesh = m
            elif m is not mesh and m.abstract_mesh != mesh.abstract_mesh:
                raise ValueError(f"Received incompatible devices for jitted computation: "
                                 f"operands are laid out over {mesh!r} and over {m!r}")
    return mesh


def _wants_sharding(params):
    return bool(_asked(params))


def typed_abstract_eval(primitive, avals, params):
    """``primitive.abstract_eval`` with the results' shardings from its ``sharding_rule``."""
    out = primitive.abstract_eval(*avals, **params)
    for a in avals:
        if type(a) is ShardedShapedArray:
            break
    else:  # the common case: nothing typed, nothing asked for
        if not params or (params.get("out_sharding") is None and params.get("sharding") is None
                          and params.get("devices") is None) or not _wants_sharding(params):
            return out
    rule = primitive.sharding_rule
    if rule is FROM_BODY:
        return out
    if rule is None or rule is UNSHARDED_ONLY:
        check_unsharded(primitive.name, avals)
        if primitive.multiple_results:
            return out
        if _wants_sharding(params):
            raise NotImplementedError(f"{primitive.name}: an out_sharding on Explicit mesh axes "
                                      "is not supported for this primitive")
        return out
    mesh = _mesh_of(avals, params)
    specs = rule(avals, out, **params)
    if primitive.multiple_results:
        return [_typed(primitive, avals, o, mesh, s) for o, s in zip(out, specs)]
    return _typed(primitive, avals, out, mesh, specs)


def _typed(primitive, avals, out, mesh, spec):
    used = [n for p in spec for n in p] if spec is not None else []
    if len(used) != len(set(used)):  # one mesh axis on two dimensions
        ins = ", ".join(a.str_short() for a in avals)
        raise ShardingTypeError(
            f"{primitive.name} operation with inputs: {ins} produces an illegally sharded "
            f"result: {spec_str(out, spec)}")
    return with_spec(out, mesh, spec)


def spec_str(aval, spec):
    """``aval`` printed as if it had the sharding ``spec``: ``f32[8@X,8]``."""
    from pyjax._src.core import dtypes
    dims = [str(n) if not p else f"{n}@{p[0]}" if len(p) == 1 else f"{n}@({','.join(p)})"
            for n, p in zip(aval.shape, spec)]
    return f"{dtypes.short_name(aval.dtype)}[{','.join(dims)}]"


def check_unsharded(name, avals):
    for i, a in enumerate(avals):
        if type(a) is ShardedShapedArray:
            raise ShardingTypeError(
                f"{name} has no sharding rule: its operands must not be split over Explicit "
                f"mesh axes, but operand {i} is {a.str_short()}. Reshard it first "
                f"(jax.sharding.reshard(x, P())) or use Auto axes.")


def param_spec(params, ndim):
    """The spec asked for by an ``out_sharding``/``sharding`` param, or None."""
    for k in _SHARDING_PARAMS:
        s = params.get(k)
        if isinstance(s, NamedSharding):
            return spec_of_sharding(s, ndim)
    return None


def place_if_eager(x, sharding):
    """An eager result asked for with ``out_sharding=``: laid out over the mesh now (under a
    trace the primitive's type and the lowering's constraint do it)."""
    if sharding is None:
        return x
    from pyjax._src.core import trace as trace_mod
    if not trace_mod.is_eager():
        return x
    import numpy as np
    from pyjax._src.core.sharded_array import shard_host_value
    return shard_host_value(np.asarray(x), sharding, x.aval.weak_type)
