"""The lowering driver: walks a Jaxpr and asks each primitive's ``lower`` rule for StableHLO."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from pyjax._src.core.sharded_array import ShardedShapedArray
from pyjax._src.core.sharding import Mesh, NamedSharding
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import staging
from pyjax._src.lowering import mlir


class LoweringRuleContext:
    """What a ``lower(ctx, *operands, **params)`` rule sees: where to emit ops, and the
    abstract values of the equation's inputs and outputs."""

    __slots__ = ("block", "module", "avals_in", "avals_out", "platform")

    def __init__(self, block, module, avals_in, avals_out, platform="cpu"):
        self.block = block
        self.module = module
        self.avals_in = avals_in
        self.avals_out = avals_out
        self.platform = platform

    def op(self, name, operands, out_avals, attrs=None, regions=()):
        return self.block.op(name, operands, out_avals, attrs, regions)

    def constant(self, value, aval):
        return self.block.constant(value, aval)

    def region(self, arg_avals):
        return self.block.region(arg_avals)

    def lower_sub_jaxpr(self, block, jaxpr: Jaxpr, consts, args):
        """Lower ``jaxpr`` inline into ``block`` (e.g. a region body)."""
        return lower_jaxpr(block, self.module, jaxpr, consts, args, self.platform)

    def lower_fun(self, fn, operands, params=None, *, multiple_results=False, block=None):
        """Trace ``fn(*operands, **params)`` on the operands' avals and lower it inline into
        ``block`` (the current one by default; a region's for a reducer or comparator). Returns
        its result value, or the list of them when ``multiple_results``. This is what
        ``core.rules.lower_fun`` rules call."""
        # a composite lowering computes on blocks of whatever layout: its own ops are untyped
        closed = _staged(fn, tuple(_unsharded(o.aval) for o in operands), params or {},
                         multiple_results)
        block = self.block if block is None else block
        consts = [block.constant(c, v.aval) for c, v in zip(closed.consts,
                                                            closed.jaxpr.constvars)]
        outs = lower_jaxpr(block, self.module, closed.jaxpr, consts, operands, self.platform)
        return outs if multiple_results else outs[0]

    def call_function(self, closed: ClosedJaxpr, args, name="fn"):
        """Lower ``closed`` (without consts) as a private function and emit a call to it."""
        fname = private_function(self.module, closed, name, self.platform)
        out_avals = list(closed.out_avals)
        return self.block.op("func.call", args, out_avals,
                             attrs={"callee": f"@{fname}"})


def lower_fun_jaxpr(prim, avals, params):
    """The ClosedJaxpr that ``prim``'s ``core.rules.lower_fun`` rule lowers for operands of
    ``avals`` and these params (the same cached trace the lowering uses), or None when its
    rule is not a ``lower_fun``: a cost model reads a composite primitive through it."""
    fn = getattr(prim.lower, "fn", None)
    if fn is None:
        return None
    return _staged(fn, tuple(_unsharded(a) for a in avals), dict(params),
                   prim.multiple_results)


# (fn, avals, params) -> ClosedJaxpr with host consts: an executable's lowering traces each
# lower_fun once, however many times the primitive appears in it.
_staged_cache: dict = {}


def _staged(fn, avals, params, multiple_results):
    # x64 decides the dtypes of arrays that fn makes itself (iota, Python scalars)
    key = (fn, avals, tuple(params.items()), multiple_results, dtypes.x64_enabled())
    try:
        hit = _staged_cache.get(key)
    except TypeError:  # unhashable params: trace every time
        key = hit = None
    if hit is not None:
        return hit

    def flat(*xs):
        out = fn(*xs, **params)
        return list(out) if multiple_results else [out]

    name = getattr(fn, "__name__", "fn")
    closed = staging.trace_to_jaxpr(flat, list(avals),
                                    staging.DebugInfo(name, None, "lower_fun"))
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise TypeError(f"the lowering function {name} closes over a traced value; a "
                        "lower_fun function may only close over concrete values")
    closed = ClosedJaxpr(closed.jaxpr, [np.asarray(c) for c in closed.consts])
    if key is not None:
        if len(_staged_cache) > 1024:
            _staged_cache.clear()
        _staged_cache[key] = closed
    return closed


def lower_jaxpr(block, module, jaxpr: Jaxpr, const_values, arg_values, platform="cpu"):
    env = {}
    for v, x in zip(jaxpr.constvars, const_values):
        env[v] = x
    for v, x in zip(jaxpr.invars, arg_values):
        env[v] = x

    def read(v):
        if type(v) is Literal:
            return block.constant(v.val, v.aval)
        return env[v]

    for eqn in jaxpr.eqns:
        ctx = LoweringRuleContext(block, module, [v.aval for v in eqn.invars],
                                  [v.aval for v in eqn.outvars], platform)
        operands = [read(v) for v in eqn.invars]
        if eqn.name_stack or eqn.source_info is not None:
            block.loc = mlir.location(eqn.name_stack, eqn.primitive.name, eqn.source_info)
            try:
                out = eqn.primitive.lower(ctx, *operands, **eqn.params)
            finally:
                block.loc = ""
        else:
            out = eqn.primitive.lower(ctx, *operands, **eqn.params)
        if eqn.primitive.multiple_results:
            out = list(out)
            if len(out) != len(eqn.outvars):
                raise AssertionError(f"lowering of {eqn.primitive} gave {len(out)} results, "
                                     f"expected {len(eqn.outvars)}")
            for v, x in zip(eqn.outvars, out):
                env[v] = x
        else:
            if eqn.params and _asks_sharding(eqn.params):
                out = _constrain(ctx, out, eqn)
            env[eqn.outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


def _unsharded(aval):
    return aval.unsharded() if type(aval) is ShardedShapedArray else aval


def _asks_sharding(params):
    s = params.get("out_sharding", params.get("sharding"))
    return isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) and s.mesh.axis_names


def _constrain(ctx, out, eqn):
    """An ``out_sharding=`` point in an SPMD program: a sharding constraint on the result,
    so XLA's partitioner lays it out as its type says (identity on one device)."""
    from pyjax._src.lax import collective_lowering as cl
    from pyjax._src.lax.sharding_constraint import sharding_constraint_p
    if not cl.in_spmd_lowering() or eqn.primitive is sharding_constraint_p:
        return out
    params = eqn.params
    s = params.get("out_sharding", params.get("sharding"))
    return ctx.op("sdy.sharding_constraint", [out], out.aval,
                  attrs={"sharding": cl.sdy_sharding(s, out.aval.ndim)})


def private_function(module, closed: ClosedJaxpr, name, platform="cpu"):
    cache = module.fn_cache
    key = id(closed.jaxpr)
    hit = cache.get(key)
    if hit is not None and hit[0] is closed.jaxpr:
        return hit[1]
    jaxpr = closed.jaxpr
    fname = module.unique_name(mlir.sanitize_name(name))
    fn = mlir.Function(fname, [v.aval for v in jaxpr.constvars] + jaxpr.in_avals, public=False)
    nconst = len(jaxpr.constvars)
    outs = lower_jaxpr(fn.block, module, jaxpr, fn.args[:nconst], fn.args[nconst:], platform)
    fn.finish(outs)
    module.add_function(fn)
    cache[key] = (closed.jaxpr, fname)
    return fname


def lower_module(jaxpr: Jaxpr, name="main", *, donated_invars=(), platform="cpu",
                 num_replicas=1, num_partitions=1, arg_shardings=None, result_shardings=None,
                 const_values=None):
    """Lower a Jaxpr to a whole StableHLO module. ``@main`` takes the constvars first, then
    the invars; with ``const_values`` (host values of the constvars) the constants are
    written into the module instead (a self-contained program: ``jax.export``). Donated
    inputs are aliased to a result of the same type where one exists."""
    module = mlir.Module(mlir.sanitize_name(f"jit_{name}"), attrs={
        "mhlo.num_partitions": f"{num_partitions} : i32",
        "mhlo.num_replicas": f"{num_replicas} : i32"})
    module.unique_name("main")
    nconst = 0 if const_values is not None else len(jaxpr.constvars)  # constant arguments
    in_avals = [v.aval for v in jaxpr.constvars[:nconst]] + jaxpr.in_avals
    arg_attrs = {}
    if donated_invars:
        free = list(enumerate(jaxpr.out_avals))
        for i, donated in enumerate(donated_invars):
            if not donated:
                continue
            a = jaxpr.invars[i].aval
            for j, (k, oa) in enumerate(free):
                if oa.shape == a.shape and oa.dtype == a.dtype:
                    arg_attrs[nconst + i] = f"tf.aliasing_output = {k} : i32"
                    del free[j]
                    break
    if arg_shardings:
        for i, s in arg_shardings.items():
            arg_attrs[i] = ", ".join(x for x in (arg_attrs.get(i), s) if x)
    fn = mlir.Function("main", in_avals, public=True, arg_attrs=arg_attrs,
                       result_attrs=result_shardings)
    consts = fn.args[:nconst] if const_values is None else [
        fn.block.constant(np.asarray(c), v.aval) for v, c in zip(jaxpr.constvars, const_values)]
    outs = lower_jaxpr(fn.block, module, jaxpr, consts, fn.args[nconst:], platform)
    fn.finish(outs)
    module.functions.insert(0, fn)
    from pyjax._src.lax import collective_lowering as cl
    if cl.in_spmd_lowering():
        module.top_ops = cl.sdy_mesh_decls()
    return module.text()

