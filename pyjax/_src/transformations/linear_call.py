"""``jax.custom_derivatives.linear_call``: call a function linear in some of its arguments
together with its own transpose.

``linear_call(fun, fun_transpose, residual_args, linear_args)`` is the ``linear_call``
primitive, whose params hold both functions as Jaxprs (their constants are leading operands).
Its transpose is another ``linear_call`` with the two swapped, so reverse mode uses
``fun_transpose`` instead of transposing ``fun``. As in JAX, the JVP is linear in
``linear_args`` only: the tangents of ``residual_args`` are not propagated. Under ``vmap`` it
runs once per batch element (a ``lax.map``)."""
from __future__ import annotations

from pyjax._src.callback import batch_by_loop
from pyjax._src.control_flow.common import trace_fun
from pyjax._src.core import pytree
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, is_undefined_primal
from pyjax._src.core.trace import aval_of
from pyjax._src.lax.ad_util import instantiate, zero_cts, zero_tangent
from pyjax._src.core.sharding_rules import FROM_BODY

__all__ = ["linear_call", "linear_call_p"]


def _split(args, num_callee_consts, num_transpose_consts, num_res):
    a, b = num_callee_consts, num_callee_consts + num_transpose_consts
    return args[:a], args[a:b], args[b:b + num_res], args[b + num_res:]


def _abstract_eval(*avals, callee, **_):
    return list(callee.out_avals)


def _lower(ctx, *args, callee, num_callee_consts, num_transpose_consts, num_res, **_):
    cc, _tc, res, lin = _split(list(args), num_callee_consts, num_transpose_consts, num_res)
    return ctx.lower_sub_jaxpr(ctx.block, callee.jaxpr, [], [*cc, *res, *lin])


def _jvp(primals, tangents, **params):
    out = linear_call_p.bind(*primals, **params)
    n_lin = len(primals) - params["num_callee_consts"] - params["num_transpose_consts"] - \
        params["num_res"]
    lin_t = tangents[len(primals) - n_lin:]
    if all(type(t) is Zero for t in lin_t):
        return out, [zero_tangent(aval_of(o)) for o in out]
    known = primals[:len(primals) - n_lin]
    return out, linear_call_p.bind(*known, *[instantiate(t) for t in lin_t], **params)


def _transpose(cts, *args, callee, transpose, num_callee_consts, num_transpose_consts,
               num_res):
    if any(is_undefined_primal(a) for a in args[:num_callee_consts + num_transpose_consts
                                                  + num_res]):
        raise ValueError("linear_call: only the linear arguments may be transposed, not the "
                         "residuals")
    if all(type(c) is Zero for c in cts):
        return zero_cts(args)
    cc, tc, res, lin = _split(list(args), num_callee_consts, num_transpose_consts, num_res)
    cts = [instantiate(c) for c in cts]
    lin_cts = linear_call_p.bind(*tc, *cc, *res, *cts, callee=transpose, transpose=callee,
                                 num_callee_consts=num_transpose_consts,
                                 num_transpose_consts=num_callee_consts, num_res=num_res)
    return [None] * (len(args) - len(lin)) + list(lin_cts)


def _batch(args, dims, **params):
    return batch_by_loop(linear_call_p, args, dims, params)


linear_call_p = Primitive("linear_call", abstract_eval=_abstract_eval, lower=_lower,
                          multiple_results=True, linear=True, jvp=_jvp,
                          transpose=_transpose, batch=_batch,
                          sharding_rule=FROM_BODY)  # the callee's typed results, as JAX


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """``fun(residual_args, linear_args)``, where ``fun`` is linear in ``linear_args`` and
    ``fun_transpose(residual_args, cotangents)`` is its transpose: reverse-mode
    differentiation and ``linear_transpose`` use ``fun_transpose``."""
    if not (callable(fun) and callable(fun_transpose)):
        raise TypeError("linear_call: fun and fun_transpose must be callable")
    res_leaves, res_tree = pytree.tree_flatten(residual_args)
    lin_leaves, lin_tree = pytree.tree_flatten(linear_args)
    res_avals = [aval_of(x) for x in res_leaves]
    lin_avals = [aval_of(x) for x in lin_leaves]
    in_tree = pytree.tree_structure((residual_args, linear_args))
    callee, callee_consts, out_tree = trace_fun(fun, in_tree,
                                                res_avals + lin_avals, "linear_call fun",
                                                "linear_call")
    out_avals = list(callee.out_avals)
    ct_example = pytree.tree_unflatten(out_tree, out_avals)
    t_tree = pytree.tree_structure((residual_args, ct_example))
    transpose, t_consts, t_out_tree = trace_fun(fun_transpose, t_tree,
                                                res_avals + out_avals,
                                                "linear_call fun_transpose", "linear_call")
    if t_out_tree != lin_tree or [a.strip_weak_type() for a in transpose.out_avals] != \
            [a.strip_weak_type() for a in lin_avals]:
        raise TypeError(f"linear_call: fun_transpose must return cotangents shaped like "
                        f"linear_args ({lin_tree}, {[a.str_short() for a in lin_avals]}), got "
                        f"{t_out_tree}, {[a.str_short() for a in transpose.out_avals]}")
    outs = linear_call_p.bind(*callee_consts, *t_consts, *res_leaves, *lin_leaves,
                              callee=callee, transpose=transpose,
                              num_callee_consts=len(callee_consts),
                              num_transpose_consts=len(t_consts), num_res=len(res_leaves))
    return pytree.tree_unflatten(out_tree, list(outs))
