"""``checkpoint`` / ``remat``: trade memory for recomputation in reverse mode.

A checkpointed function is bound as the ``checkpoint`` primitive holding its Jaxpr. Its JVP is
the JVP of that Jaxpr (still a ``checkpoint``). Partial evaluation (the linearize half of
reverse mode) splits it with the ``policy``: the known part (primal outputs and the values the
policy lets us save) runs now, inline; every other value the tangent computation needs is
*recomputed* inside a new ``checkpoint`` equation in the linear Jaxpr, from the saved values.
Transposition keeps that equation a ``checkpoint``, so the recomputation happens in the backward
pass, where ``make_jaxpr(grad(...))`` shows it. ``prevent_cse`` puts an optimization barrier on
its inputs when lowered, so XLA does not merge the recomputation with the forward pass.
"""
from __future__ import annotations

import functools
import types

from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.jaxpr import Eqn, Var, eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.core.trace import get_aval
from pyjax._src.interpreters import ad, batching, staging
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import parallel

__all__ = ["checkpoint", "remat", "checkpoint_policies"]

_state = trace_mod._state


# ---- policies: policy(prim, *avals, **params) -> whether the output may be saved ----

def nothing_saveable(prim, *avals, **params):
    return False


def everything_saveable(prim, *avals, **params):
    return True


def dots_saveable(prim, *avals, **params):
    return prim.name == "dot_general"


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    if prim.name != "dot_general":
        return False
    (_, _), (lb, rb) = params["dimension_numbers"]
    return not lb and not rb


checkpoint_dots = dots_saveable
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

checkpoint_policies = types.SimpleNamespace(
    nothing_saveable=nothing_saveable, everything_saveable=everything_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims)


# ---- the API ----

def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """Make ``fun`` recompute its intermediate values in the backward pass instead of storing
    them (except those ``policy`` saves; by default only the inputs are saved).

    ``static_argnums``: arguments passed as Python values (so that Python control flow may
    depend on them); the function is traced again for each call."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint policy must be None or a callable (see "
                        f"checkpoint_policies), got {policy!r}")
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        if trace_mod.is_eager():  # nothing to differentiate: just run it
            return fun(*args, **kwargs)
        n = len(args)
        bad = [i for i in static_argnums if not -n <= i < n]
        if bad:  # else silently not static
            raise ValueError(f"checkpoint static_argnums={static_argnums} out of range for "
                             f"{n} positional arguments: {bad}")
        statics = {i % n for i in static_argnums}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)
        leaves, in_tree = pytree.tree_flatten((dyn_args, kwargs))
        store = []

        def flat_fun(*xs):
            d_args, d_kwargs = pytree.tree_unflatten(in_tree, xs)
            it = iter(d_args)
            full = [args[i] if i in statics else next(it) for i in range(n)]
            out = fun(*full, **d_kwargs)
            out_leaves, out_tree = pytree.tree_flatten(out)
            store.append(out_tree)
            return out_leaves

        avals = [get_aval(x) for x in leaves]
        dbg = staging.DebugInfo(getattr(fun, "__name__", "fun"), None, "checkpoint")
        closed = staging.trace_to_jaxpr(flat_fun, avals, dbg)
        jaxpr, consts = staging.convert_constvars_jaxpr(closed)
        outs = checkpoint_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=bool(prevent_cse),
                                 differentiated=False, policy=policy)
        return pytree.tree_unflatten(store[0], outs)

    return fun_remat


remat = checkpoint


# ---- the primitive ----

def _abstract_eval(*avals, jaxpr, **_):
    return list(jaxpr.out_avals)


def _impl(*args, jaxpr, **_):
    return eval_jaxpr(jaxpr.jaxpr, [], *args)


def _lower(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
    args = list(args)
    if prevent_cse and differentiated and args:
        # keep XLA from merging the recomputation with the forward computation
        args = ctx.op("stablehlo.optimization_barrier", args, [a.aval for a in args])
    return ctx.lower_sub_jaxpr(ctx.block, jaxpr.jaxpr, [], args)


def _jvp(primals, tangents, *, jaxpr, **params):
    nonzero = [type(t) is not Zero for t in tangents]
    jvp_closed, consts, out_nz = ad.jvp_jaxpr(jaxpr, nonzero)
    outs = checkpoint_p.bind(*consts, *primals, *[t for t, nz in zip(tangents, nonzero) if nz],
                             jaxpr=jvp_closed, **params)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else Zero(ad.tangent_aval(a))
                      for a, nz in zip(jaxpr.out_avals, out_nz)]


def _saveable(policy):
    if policy is None:
        policy = nothing_saveable

    def saveable(eqn):
        return policy(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params)
    return saveable


_saveables: dict = {}


def _partial_eval(trace, args, params):
    policy = params["policy"]
    saveable = _saveables.get(policy)
    if saveable is None:
        saveable = _saveables[policy] = _saveable(policy)
    unknowns = [trace.is_unknown(x) for x in args]
    split = pe.partial_eval_jaxpr(params["jaxpr"], unknowns, saveable)
    known_args = [x for x, u in zip(args, unknowns) if not u]
    # the known part runs inline on the parent trace (nothing to recompute there)
    prev = _state.trace
    _state.trace = trace.parent_state
    try:
        known_outs = eval_jaxpr(split.known.jaxpr, [], *known_args)
    finally:
        _state.trace = prev
    n_known = len(known_outs) - split.num_res
    res = [args[i] for i in split.fwd_res] + list(known_outs[n_known:])
    staged = iter(trace.stage(checkpoint_p, res + [x for x, u in zip(args, unknowns) if u],
                              dict(params, jaxpr=split.staged, differentiated=True))
                  if split.staged.jaxpr.outvars else [])
    known = iter(known_outs[:n_known])
    return [next(staged) if u else next(known) for u in split.out_unknowns]


def _partial_eval_jaxpr(eqn, in_unknowns):
    # The same split on an equation (a checkpoint inside a jitted function being differentiated):
    # the known part is an inline call, the staged part recomputes what the policy didn't save.
    params = eqn.params
    policy = params["policy"]
    saveable = _saveables.get(policy)
    if saveable is None:
        saveable = _saveables[policy] = _saveable(policy)
    split = pe.partial_eval_jaxpr(params["jaxpr"], in_unknowns, saveable)
    n_known = len(split.known.out_avals) - split.num_res
    res = [Var(a) for a in split.known.out_avals[n_known:]]
    known = Eqn(checkpoint_p, [v for v, u in zip(eqn.invars, in_unknowns) if not u],
                [v for v, u in zip(eqn.outvars, split.out_unknowns) if not u] + res,
                dict(params, jaxpr=split.known, prevent_cse=False))
    staged = None
    if any(split.out_unknowns):
        staged = Eqn(checkpoint_p, [eqn.invars[i] for i in split.fwd_res] + res
                     + [v for v, u in zip(eqn.invars, in_unknowns) if u],
                     [v for v, u in zip(eqn.outvars, split.out_unknowns) if u],
                     dict(params, jaxpr=split.staged, differentiated=True))
    return known, staged, list(split.out_unknowns)


def _transpose(cts, *args, jaxpr, **params):
    linear = [ad.is_undefined_primal(a) for a in args]
    ct_nz = [type(c) is not Zero for c in cts]
    t_closed, consts, in_nz = ad.transpose_jaxpr(jaxpr, linear, ct_nz)
    outs = iter(checkpoint_p.bind(*consts, *[a for a, lin in zip(args, linear) if not lin],
                                  *[c for c, nz in zip(cts, ct_nz) if nz], jaxpr=t_closed,
                                  **dict(params, differentiated=True)))
    nz = iter(in_nz)
    return [None if not lin else (next(outs) if next(nz) else Zero(a.aval))
            for a, lin in zip(args, linear)]


def _batch(args, dims, *, jaxpr, axis_data, **params):
    batched, consts, out_dims = batching.batch_jaxpr(
        jaxpr, dims, axis_data, typed_avals=batching.typed_avals_of(args))
    return checkpoint_p.bind(*consts, *args, jaxpr=batched, **params), out_dims


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
checkpoint_p = Primitive("checkpoint", abstract_eval=_abstract_eval, lower=_lower,
                         sharding_rule=FROM_BODY,
                         multiple_results=True, impl=_impl, jvp=_jvp, transpose=_transpose,
                         batch=_batch, partial_eval=_partial_eval,
                         partial_eval_jaxpr=_partial_eval_jaxpr,
                         axis_aware=parallel.params_use_axis)
