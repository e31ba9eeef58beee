"""``lax.while_loop`` and the ``while`` primitive.

``while_loop(cond_fun, body_fun, init_val)`` traces both functions at the carry's type and binds
``while`` with params ``cond_jaxpr``, ``body_jaxpr`` (const-free ClosedJaxprs), ``cond_nconsts``
and ``body_nconsts``; its operands are ``(*cond_consts, *body_consts, *carry)`` and its results
the final carry. The rules:

* lowering: one ``stablehlo.while`` whose loop state is the consts followed by the carry (the
  consts go round unchanged), so the regions read nothing from outside;
* JVP: a fixpoint decides which carries have nonzero tangents (nonzero initially, or made
  nonzero by the body); the result is a ``while`` over the primals and those tangents, whose
  predicate sees only the primals;
* partial evaluation (linearize): a fixpoint decides which carries are unknown; the known ones
  are computed now by a ``while`` over them alone (when the predicate depends only on known
  values), and the unknown ones by a staged ``while`` that recomputes the whole carry from the
  known inputs;
* transpose: the trip count is dynamic, so reverse mode raises JAX's ValueError;
* batching: a fixpoint decides which carries are batched; a batched predicate makes every carry
  batched, the loop runs while any element's predicate holds, and the body keeps finished
  elements fixed with a select.
"""
from __future__ import annotations

import inspect
import weakref

from pyjax._src.core import config as config_mod
from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.traceback_util import api_boundary
from pyjax._src.core.errors import ConcretizationTypeError
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, cache_for, eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, not_mapped
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import ad, batching, staging
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import parallel
from pyjax._src.control_flow import common, ref_threading

__all__ = ["while_loop", "while_p"]

config = config_mod.config


# ---- the API ----

def _carry_name(body_fun):
    try:
        params = list(inspect.signature(body_fun).parameters)
    except (TypeError, ValueError):
        return "carry"
    return params[0] if params else "carry"


def _aval_repr(a):
    weak = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({a.dtype.name}[{','.join(map(str, a.shape))}]{weak})"


def _check_cond(cond_jaxpr, cond_tree):
    if cond_tree.num_leaves != 1 or cond_tree != pytree.tree_structure(True):
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
    a = cond_jaxpr.out_avals[0]
    if a.shape != () or not dtypes.is_bool(a.dtype):
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{', '.join(_aval_repr(x) for x in cond_jaxpr.out_avals)}].")


def _asarray(x):
    return x if isinstance(x, Tracer) else dispatch.to_array(x)


@api_boundary
def while_loop(cond_fun, body_fun, init_val):
    """Call ``body_fun`` repeatedly in a loop while ``cond_fun`` is True.

    The semantics are those of this Python loop, where the type of ``val`` (its pytree
    structure, and each leaf's shape and dtype) must stay the same::

        def _asarray(x):
    return x if isinstance(x, Tracer) else dispatch.to_array(x)


def while_loop(cond_fun, body_fun, init_val):
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val

    Unlike a Python loop it is staged as one ``while`` primitive (one ``stablehlo.while``), so
    the number of iterations may depend on traced values. It supports forward-mode
    differentiation (``jvp``, ``jacfwd``, ``linearize``) and ``vmap``, but not reverse mode:
    use ``lax.scan`` (or ``fori_loop`` with static bounds) for that.

    Parameters
    ----------
    cond_fun : callable
        ``cond_fun(val)`` returns a boolean scalar: whether to run the body again.
    body_fun : callable
        ``body_fun(val)`` returns the next value, of the same type as ``val``.
    init_val : pytree
        The initial loop value.

    Returns
    -------
    The final loop value, of the same type as ``init_val``.
    """
    if config.jax_disable_jit:
        try:
            val = pytree.tree_map(_asarray, init_val)
            while cond_fun(val):
                val = pytree.tree_map(_asarray, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass  # traced values decide the loop: stage it after all
    leaves, in_tree, avals = common.flatten_avals(init_val)
    args_tree = pytree.tree_structure((init_val,))  # trace_fun calls fun(*args)

    def trace_all(avals):
        cond, cond_consts, cond_tree = common.trace_fun(cond_fun, args_tree, avals, "cond_fun",
                                                        "while_loop")
        _check_cond(cond, cond_tree)
        body, body_consts, body_tree = common.trace_fun(body_fun, args_tree, avals, "body_fun",
                                                        "while_loop")
        return cond, cond_consts, body, body_consts, body_tree

    cond, cond_consts, body, body_consts, body_tree = trace_all(avals)
    given_leaves = leaves
    if body_tree == in_tree:
        new = common.promote_weak_carry(avals, body.out_avals)
        if new is not None:  # a weakly typed init came back strongly typed: retrace at that
            leaves = [common.cast_to(x, a) for x, a in zip(leaves, new)]
            avals = new
            cond, cond_consts, body, body_consts, body_tree = trace_all(avals)
    common.check_carry("while_loop body", in_tree, avals, body_tree, body.out_avals,
                       _carry_name(body_fun))
    outs = while_p.bind(*cond_consts, *body_consts, *leaves, cond_jaxpr=cond,
                        body_jaxpr=body, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    outs = common.forward_unchanged_carries(body, len(body_consts), given_leaves, avals, outs)
    return pytree.tree_unflatten(in_tree, outs)


# ---- Jaxpr surgery, cached so that rebinding gives the same (identity-hashed) params ----

_append_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _append_unused_inputs(closed, avals):
    """``closed`` taking extra inputs of ``avals`` at the end, which it ignores."""
    avals = tuple(avals)
    if not avals:
        return closed
    per = cache_for(_append_cache, closed)
    hit = per.get(avals)
    if hit is None:
        j = closed.jaxpr
        hit = per[avals] = ClosedJaxpr(
            Jaxpr([], j.invars + [Var(a) for a in avals], j.outvars, j.eqns, j.debug_info), [])
    return hit


_prune_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _prune(closed, keep_in, keep_out):
    """``closed`` restricted to the outputs ``keep_out`` and the inputs ``keep_in``; the
    dropped inputs must be unused by the kept outputs."""
    key = (tuple(keep_in), tuple(keep_out))
    per = cache_for(_prune_cache, closed)
    hit = per.get(key)
    if hit is None:
        j = pe.dce_jaxpr(closed.jaxpr, list(keep_out))
        used = {v for e in j.eqns for v in e.invars if type(v) is not Literal}
        used.update(v for v in j.outvars if type(v) is not Literal)
        dropped = [v for v, k in zip(j.invars, keep_in) if not k]
        assert not any(v in used for v in dropped), "while: pruned an input still in use"
        hit = per[key] = ClosedJaxpr(
            Jaxpr([], [v for v, k in zip(j.invars, keep_in) if k], j.outvars, j.eqns,
                  j.debug_info), [])
    return hit


def _unknown_outputs(closed, in_unknowns):
    """Which outputs of ``closed`` depend on an input marked in ``in_unknowns``."""
    j = closed.jaxpr
    dep = {v for v, u in zip(j.invars, in_unknowns) if u}
    for e in j.eqns:
        if any(type(v) is not Literal and v in dep for v in e.invars):
            dep.update(e.outvars)
    return [type(v) is not Literal and v in dep for v in j.outvars]


# ---- the primitive's rules ----

def _split(xs, cond_nconsts, body_nconsts):
    nc = cond_nconsts + body_nconsts
    return list(xs[:cond_nconsts]), list(xs[cond_nconsts:nc]), list(xs[nc:])


def _abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # the body's output types, weak types included (JAX's: a strong init whose body returns a
    # weak value of its dtype gives a weak result, and the reverse a strong one)
    return list(body_jaxpr.out_avals)


def _lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    if not args:  # no state at all: the loop can change nothing
        return []
    nc = cond_nconsts + body_nconsts
    avals = [a.aval for a in args]
    cond_r = ctx.region(avals)
    xs = cond_r.args
    pred, = ctx.lower_sub_jaxpr(cond_r, cond_jaxpr.jaxpr, [], xs[:cond_nconsts] + xs[nc:])
    cond_r.ret([pred])
    body_r = ctx.region(avals)
    xs = body_r.args
    new = ctx.lower_sub_jaxpr(body_r, body_jaxpr.jaxpr, [], xs[cond_nconsts:nc] + xs[nc:])
    body_r.ret(xs[:nc] + list(new))
    outs = ctx.op("stablehlo.while", list(args), avals, regions=[cond_r, body_r])
    return outs[nc:]


def _jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_c, body_c, carry = _split(primals, cond_nconsts, body_nconsts)
    _, body_ct, carry_t = _split(tangents, cond_nconsts, body_nconsts)
    carry_avals = body_jaxpr.in_avals[body_nconsts:]
    bconst_nz = [type(t) is not Zero for t in body_ct]
    carry_nz = [type(t) is not Zero and dtypes.is_inexact(a.dtype)
                for t, a in zip(carry_t, carry_avals)]
    while True:  # fixpoint: the carries whose tangents can become nonzero
        _, _, out_nz = ad.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    if not any(carry_nz):
        outs = while_p.bind(*primals, **params)
        return outs, [Zero(ad.tangent_aval(a)) for a in carry_avals]
    body_jvp, jvp_consts, _ = ad.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    # body_jvp takes (jvp consts, body consts, carry, body const tangents, carry tangents);
    # the loop wants its consts first: (jvp consts, body consts, body const tangents, ...)
    nj, nb, n, k1 = len(jvp_consts), len(body_c), len(carry), sum(bconst_nz)
    k2 = sum(carry_nz)
    perm = (list(range(nj + nb)) + list(range(nj + nb + n, nj + nb + n + k1))
            + list(range(nj + nb, nj + nb + n)) + list(range(nj + nb + n + k1,
                                                             nj + nb + n + k1 + k2)))
    new_body = common.reorder(body_jvp, perm)
    t_avals = [ad.tangent_aval(a) for a, nz in zip(carry_avals, carry_nz) if nz]
    new_cond = _append_unused_inputs(cond_jaxpr, t_avals)
    bct = [t for t, nz in zip(body_ct, bconst_nz) if nz]
    ct = [ad.instantiate(t) for t, nz in zip(carry_t, carry_nz) if nz]
    outs = while_p.bind(*cond_c, *jvp_consts, *body_c, *bct, *carry, *ct,
                        cond_jaxpr=new_cond, body_jaxpr=new_body, cond_nconsts=cond_nconsts,
                        body_nconsts=nj + nb + k1)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else Zero(ad.tangent_aval(a))
                      for a, nz in zip(carry_avals, carry_nz)]


def _split_known(params, unknowns):
    """How partial evaluation splits a loop given which operands are unknown: None when the
    whole loop must be staged (its predicate depends on an unknown value, or every carry is
    unknown), else ``(carry_unknowns, known operand mask, known params)``."""
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    cond_uk, body_uk, carry_uk = _split(unknowns, cn, bn)
    while True:  # fixpoint: the carries that depend on an unknown value
        out_uk = _unknown_outputs(body_jaxpr, body_uk + carry_uk)
        new = [a or b for a, b in zip(carry_uk, out_uk)]
        if new == carry_uk:
            break
        carry_uk = new
    if all(carry_uk) or _unknown_outputs(cond_jaxpr, cond_uk + carry_uk)[0]:
        return None
    # the known loop runs over the known carries alone; unknown consts it cannot read
    known_cond = _prune(cond_jaxpr, [not u for u in cond_uk + carry_uk], [True])
    known_body = _prune(body_jaxpr, [not u for u in body_uk + carry_uk],
                        [not u for u in carry_uk])
    known_params = dict(cond_jaxpr=known_cond, body_jaxpr=known_body,
                        cond_nconsts=cond_uk.count(False), body_nconsts=body_uk.count(False))
    return carry_uk, [not u for u in cond_uk + body_uk + carry_uk], known_params


def _partial_eval(trace, args, params):
    split = _split_known(params, [trace.is_unknown(x) for x in args])
    if split is None:
        return trace.stage(while_p, args, params)
    carry_uk, known_mask, known_params = split
    known_outs = trace.bind_known(while_p, [x for x, k in zip(args, known_mask) if k],
                                  known_params)
    if not any(carry_uk):
        return list(known_outs)
    # the unknown carries: the whole loop again, reading the known inputs as residuals
    staged = trace.stage(while_p, args, params)
    known_it = iter(known_outs)
    return [s if u else next(known_it) for s, u in zip(staged, carry_uk)]


def _partial_eval_jaxpr(eqn, in_unknowns):
    split = _split_known(eqn.params, in_unknowns)
    if split is None:
        return None
    carry_uk, known_mask, known_params = split
    known = Eqn(while_p, [v for v, k in zip(eqn.invars, known_mask) if k],
                [v for v, u in zip(eqn.outvars, carry_uk) if not u], known_params)
    staged = None
    if any(carry_uk):
        staged = Eqn(while_p, list(eqn.invars),
                     [v if u else Var(v.aval) for v, u in zip(eqn.outvars, carry_uk)],
                     eqn.params)
    return known, staged, carry_uk


def _transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop.")


_batched_pred_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _batched_pred_jaxprs(cond_b, body_b, ncc, nbc, size):
    """The cond and body of a loop whose predicate is batched (``cond_b``'s output is
    ``bool[size]``): the cond runs while any element's predicate holds; the body, taking
    ``(cond consts, body consts, carry)``, applies ``body_b`` and keeps the old carry where
    the element's predicate is False. Returns ``(cond, cond consts, body, body consts)``;
    the returned consts go before the ones the caller passes."""
    key = (cond_b, ncc, nbc, size)
    per = cache_for(_batched_pred_cache, body_b)
    hit = per.get(key)
    if hit is not None:
        return hit
    from pyjax._src.lax.elementwise import prims as ew
    from pyjax._src.lax.reductions import reduce_or_p
    from pyjax._src.lax.shape_ops import broadcast_in_dim_p
    cc_avals = cond_b.in_avals[:ncc]
    bc_avals = body_b.in_avals[:nbc]
    carry_avals = body_b.in_avals[nbc:]

    def cond_fun(*xs):
        pred, = eval_jaxpr(cond_b.jaxpr, [], *xs)
        return [reduce_or_p.bind(pred, axes=(0,))]

    def body_fun(*xs):
        cc, bc, carry = xs[:ncc], xs[ncc:ncc + nbc], xs[ncc + nbc:]
        pred, = eval_jaxpr(cond_b.jaxpr, [], *cc, *carry)
        new = eval_jaxpr(body_b.jaxpr, [], *bc, *carry)
        outs = []
        for old, nw, a in zip(carry, new, carry_avals):
            which = pred if a.shape == (size,) else broadcast_in_dim_p.bind(
                pred, shape=tuple(a.shape), broadcast_dimensions=(0,), sharding=None)
            outs.append(ew["select_n"].bind(which, old, nw))
        return outs

    name = getattr(body_b.jaxpr.debug_info, "fun_name", "body_fun")
    c = staging.trace_to_jaxpr(cond_fun, list(cc_avals) + list(carry_avals),
                               staging.DebugInfo("cond_fun", None, "vmap"))
    b = staging.trace_to_jaxpr(body_fun, list(cc_avals) + list(bc_avals) + list(carry_avals),
                               staging.DebugInfo(name, None, "vmap"))
    c, c_consts = staging.convert_constvars_jaxpr(c)
    b, b_consts = staging.convert_constvars_jaxpr(b)
    hit = (c, c_consts, b, b_consts)
    if not any(isinstance(x, Tracer) for x in c_consts + b_consts):
        per[key] = hit
    return hit


def _batch(args, dims, *, axis_data, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = axis_data.size
    cn, bn = cond_nconsts, body_nconsts
    args = [x if d is not_mapped or d == 0 else common.move_to(x, d, 0, size)
            for x, d in zip(args, dims)]
    dims = [not_mapped if d is not_mapped else 0 for d in dims]
    cond_c, body_c, carry = _split(args, cn, bn)
    cond_d, body_d, carry_d = _split(dims, cn, bn)
    carry_b = [d is not not_mapped for d in carry_d]

    def carry_dims(bs):
        return [0 if b else not_mapped for b in bs]

    while True:  # fixpoint: the carries that are (or become) batched
        _, _, out_d = batching.batch_jaxpr(body_jaxpr, body_d + carry_dims(carry_b), axis_data,
                                           carry_b)
        new = [a or d is not not_mapped for a, d in zip(carry_b, out_d)]
        if new == carry_b:
            break
        carry_b = new
    _, _, pred_d = batching.batch_jaxpr(cond_jaxpr, cond_d + carry_dims(carry_b), axis_data)
    pred_batched = pred_d[0] is not not_mapped
    if pred_batched:
        carry_b = [True] * len(carry)
    carry = [common.move_to(x, d, 0, size) if b and d is not_mapped else x
             for x, d, b in zip(carry, carry_d, carry_b)]
    cd = carry_dims(carry_b)
    body_b, body_bc, _ = batching.batch_jaxpr(body_jaxpr, body_d + cd, axis_data, carry_b)
    cond_b, cond_bc, _ = batching.batch_jaxpr(cond_jaxpr, cond_d + cd, axis_data)
    cc = list(cond_bc) + cond_c
    bc = list(body_bc) + body_c
    if not pred_batched:
        outs = while_p.bind(*cc, *bc, *carry, cond_jaxpr=cond_b, body_jaxpr=body_b,
                            cond_nconsts=len(cc), body_nconsts=len(bc))
        return outs, cd
    new_cond, c_consts, new_body, b_consts = _batched_pred_jaxprs(cond_b, body_b, len(cc),
                                                                  len(bc), size)
    ncc = list(c_consts) + cc
    nbc = list(b_consts) + cc + bc
    outs = while_p.bind(*ncc, *nbc, *carry, cond_jaxpr=new_cond, body_jaxpr=new_body,
                        cond_nconsts=len(ncc), body_nconsts=len(nbc))
    return outs, cd


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
while_p = Primitive("while", abstract_eval=_abstract_eval, lower=_lower,
                    sharding_rule=FROM_BODY, jvp=_jvp,
                    transpose=_transpose, batch=_batch, multiple_results=True,
                    partial_eval=_partial_eval, partial_eval_jaxpr=_partial_eval_jaxpr,
                    axis_aware=parallel.params_use_axis)  # cond or body may use a named axis

# Mutable array references used in the body become part of the carry (ref_threading.py).
while_loop = ref_threading.while_threading(while_loop)
