"""``lax.cond`` and ``lax.switch``: the ``cond`` primitive, whose params hold the branches.

``cond_p.bind(index, *operands, branches=(b0, b1, ...))`` applies ``branches[index]`` to the
operands. ``index`` is an int32 scalar; every branch is a const-free ``ClosedJaxpr`` taking all
the operands (the values any branch closed over come first: each branch takes them all and
ignores the others') and returning outputs of the same shapes and dtypes (the weak types are
branch 0's, as JAX 0.10.2's: cond's false_fun's, switch's first branch's).

* Lowering: one ``stablehlo.case`` on the index, a region per branch.
* JVP: every branch is differentiated with the union of the branches' nonzero output tangents.
* Partial evaluation (linearize, hence reverse mode): with a known index each branch is split;
  the known ``cond`` returns the known outputs and the residuals of *all* branches (slots are
  shared between branches by type, a branch fills the others' with zeros) and the staged
  ``cond`` takes the index, the residuals and the unknown operands. An unknown index stages the
  whole ``cond``.
* Transpose: the index and the residuals are non-linear; each branch is transposed.
* Batching: an unbatched index keeps a ``cond`` of batched branches; a batched index evaluates
  every branch and selects the results with ``select_n``, as JAX does.
"""
from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core.traceback_util import api_boundary
from pyjax._src.core.config import config
from pyjax._src.core.abstract import same_type
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var, eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, not_mapped
from pyjax._src.core.trace import Tracer
from pyjax._src.control_flow import common, ref_threading
from pyjax._src.interpreters import ad, batching, staging
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax import shape_ops as lax_shape
from pyjax._src.lax import parallel
from pyjax._src.lax.stop_gradient import stop_gradient_p

__all__ = ["cond", "switch", "cond_p"]

_no_operand = object()


# ---- the user-facing functions ----

@api_boundary
def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
    """Conditionally apply ``true_fun`` or ``false_fun`` to ``operands``.

    Both branches are traced (and compiled); only the selected one runs. Equivalent to::

        def cond(pred, true_fun, false_fun, *operands):
            if pred:
                return true_fun(*operands)
            else:
                return false_fun(*operands)

    Parameters
    ----------
    pred : scalar bool (or number, compared with 0)
        Which branch to apply.
    true_fun, false_fun : callable
        Functions of ``*operands`` returning pytrees of arrays of identical structure, shapes
        and dtypes. They may close over values (including traced ones).
    *operands : pytrees of arrays
        The arguments of the branches.
    """
    if not (callable(true_fun) and callable(false_fun)):
        # JAX's older form cond(pred, true_operand, true_fun, false_operand, false_fun), which
        # JAX still accepts (numpyro's NUTS uses it)
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can "
                            "be passed")
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of "
                        + (f"type {type(pred)}" if isinstance(pred, Sequence)
                           else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = common.aval_of(pred).dtype
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred!r}.") from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = _not_zero(pred, pred_dtype)
    if config.jax_disable_jit and not isinstance(pred, Tracer):  # run only the branch taken
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    index = lax_ew.convert_element_type(pred, np.int32)

    ops, ops_tree = pytree.tree_flatten(operands)
    avals = [common.aval_of(x) for x in ops]
    jt, ct, tree_t = common.trace_fun(true_fun, ops_tree, avals, "true_fun", "cond")
    jf, cf, tree_f = common.trace_fun(false_fun, ops_tree, avals, "false_fun", "cond")
    common.check_branches("cond", [tree_t, tree_f], [jt.out_avals, jf.out_avals])
    branches, consts = _cached((jf, jt), "join", lambda: _join_consts([(jf, cf), (jt, ct)]))
    outs = cond_p.bind(index, *consts, *ops, branches=branches)
    return pytree.tree_unflatten(tree_t, outs)


@api_boundary
def switch(index, branches, *operands, operand=_no_operand):
    """Apply ``branches[index]`` to ``operands``; ``index`` is clamped into range.

    Equivalent to::

        def switch(index, branches, *operands):
            index = clamp(0, index, len(branches) - 1)
            return branches[index](*operands)

    Parameters
    ----------
    index : scalar integer
        Which branch to apply; values below 0 select the first branch and values past the end
        the last.
    branches : sequence of callables
        Functions of ``*operands`` returning pytrees of arrays of identical structure, shapes
        and dtypes.
    *operands : pytrees of arrays
        The arguments of the branches.
    """
    if operand is not _no_operand:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can "
                            "be passed")
        operands = (operand,)
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    try:
        index_dtype = common.aval_of(index).dtype
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if not all(callable(b) for b in branches):
        raise TypeError("branches argument should be a sequence of callables.")
    if len(branches) == 1:
        return branches[0](*operands)
    index = lax_ew.convert_element_type(index, np.int32)
    hi = len(branches) - 1
    if hasattr(index, "aval"):
        index = lax_ew.clamp(np.int32(0), index, np.int32(hi))
    else:  # a host value: clamp it here
        index = np.asarray(np.clip(index, 0, hi), np.int32)
    if config.jax_disable_jit and not isinstance(index, Tracer):  # run only the branch taken
        return branches[int(index)](*operands)

    ops, ops_tree = pytree.tree_flatten(operands)
    avals = [common.aval_of(x) for x in ops]
    traced = [common.trace_fun(b, ops_tree, avals, f"branch {i}", "switch")
              for i, b in enumerate(branches)]
    common.check_branches("switch", [t[2] for t in traced], [t[0].out_avals for t in traced])
    jaxprs = tuple(t[0] for t in traced)
    joined, consts = _cached(jaxprs, "join",
                             lambda: _join_consts([(t[0], t[1]) for t in traced]))
    outs = cond_p.bind(index, *consts, *ops, branches=joined)
    return pytree.tree_unflatten(traced[0][2], outs)


def _not_zero(pred, dtype):
    if hasattr(pred, "aval"):
        return lax_ew.ne(pred, np.zeros((), dtype)[()])
    return np.asarray(pred) != 0


# ---- helpers on branch Jaxprs ----

# Derived branches (joined, differentiated, split, batched, transposed) are cached per tuple of
# branches, so that eager calls of a transformed cond reuse the compiled executable.
_rule_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _has_tracer(result):
    consts = result[1]
    return any(isinstance(c, Tracer) for c in consts)


def _cached(branches, key, make):
    """``make()`` (which returns ``(branches, consts, ...)``), cached per ``(branches, key)``
    unless its consts hold tracers."""
    try:
        per = _rule_cache.get(branches[0])
    except TypeError:
        per = None
    full = (tuple(id(b) for b in branches), key)
    if per is not None:
        hit = per.get(full)
        if hit is not None and all(r() is b for r, b in zip(hit[0], branches)):
            return hit[1]
    result = make()
    if not _has_tracer(result):
        if per is None:
            per = _rule_cache[branches[0]] = {}
        per[full] = (tuple(weakref.ref(b) for b in branches), result)
    return result


def _join_consts(parts):
    """``parts``: ``(ClosedJaxpr, consts)`` pairs whose Jaxprs take their consts first. Returns
    ``(tuple of ClosedJaxprs, all consts)`` where every Jaxpr takes all the consts first (values
    shared by several branches are passed once)."""
    slots, slot_avals, maps = [], [], []
    for closed, consts in parts:
        used, m = set(), []
        invars = closed.jaxpr.invars
        for c, v in zip(consts, invars):
            s = next((i for i, x in enumerate(slots) if x is c and i not in used), None)
            if s is None:
                s = len(slots)
                slots.append(c)
                slot_avals.append(v.aval)
            used.add(s)
            m.append(s)
        maps.append(m)
    if not slots:
        return tuple(closed for closed, _ in parts), []
    out = []
    for (closed, consts), m in zip(parts, maps):
        j = closed.jaxpr
        n = len(consts)
        if m == list(range(len(slots))):
            out.append(closed)
            continue
        mine = dict(zip(m, j.invars[:n]))
        invars = [mine.get(s) or Var(a) for s, a in enumerate(slot_avals)] + j.invars[n:]
        out.append(ClosedJaxpr(Jaxpr([], invars, j.outvars, j.eqns, j.debug_info), []))
    return tuple(out), list(slots)


def _retrace(closed, consts, in_avals, fill, name):
    """Trace ``fill(eval(closed)(*consts, *xs))`` at ``in_avals``: ``(ClosedJaxpr, consts)``."""
    def fun(*xs):
        return fill(eval_jaxpr(closed.jaxpr, [], *consts, *xs))
    traced = staging.trace_to_jaxpr(fun, list(in_avals), staging.DebugInfo(name, None, "cond"))
    return staging.convert_constvars_jaxpr(traced)


def _zeros(aval):
    return ad.zeros_like_aval(aval)


def _fun_name(closed):
    d = closed.jaxpr.debug_info
    return getattr(d, "fun_name", "branch") if d is not None else "branch"


# ---- the primitive's rules ----

def _abstract_eval(index, *avals, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    if not branches:
        raise TypeError("cond requires at least one branch")
    outs = list(branches[0].out_avals)
    for i, b in enumerate(branches[1:], 1):
        bo = b.out_avals
        if len(bo) != len(outs) or not all(same_type(a, o) for a, o in zip(bo, outs)):
            raise TypeError(
                f"cond branch {i} has output types {[a.str_short() for a in bo]} but branch 0 "
                f"has {[a.str_short() for a in outs]}")
    for i, b in enumerate(branches):
        bi = b.in_avals
        if len(bi) != len(avals) or not all(same_type(a, o) for a, o in zip(bi, avals)):
            raise TypeError(
                f"cond branch {i} takes operands {[a.str_short() for a in bi]} but is applied "
                f"to {[a.str_short() for a in avals]}")
    return outs


def _lower(ctx, index, *args, branches):
    regions = []
    for b in branches:
        r = ctx.region([])
        r.ret(ctx.lower_sub_jaxpr(r, b.jaxpr, [], list(args)))
        regions.append(r)
    return ctx.op("stablehlo.case", [index], list(ctx.avals_out), regions=regions)


def _inexact(aval):
    return dtypes.is_inexact(aval.dtype)


def _jvp(primals, tangents, *, branches):
    index, *ops = primals
    ops_nz = tuple(type(t) is not Zero for t in tangents[1:])
    out_avals = _abstract_eval(common.aval_of(index), *[common.aval_of(x) for x in ops],
                               branches=branches)
    new, consts, out_nz = _cached(branches, ("jvp", ops_nz),
                                  lambda: _jvp_branches(branches, ops_nz, out_avals))
    outs = cond_p.bind(index, *consts, *ops, *[t for t, nz in zip(tangents[1:], ops_nz) if nz],
                       branches=new)
    n = len(out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else Zero(ad.tangent_aval(a))
                      for a, nz in zip(out_avals, out_nz)]


def _jvp_branches(branches, ops_nz, out_avals):
    n = len(out_avals)
    out_nz = [False] * n
    for b in branches:
        nz = ad.jvp_jaxpr(b, ops_nz, [False] * n)[2]
        out_nz = [a or c for a, c in zip(out_nz, nz)]
    # integer outputs have float0 (symbolic zero) tangents in every branch
    out_nz = [nz and _inexact(a) for nz, a in zip(out_nz, out_avals)]
    parts = []
    for b in branches:
        j, consts, nz = ad.jvp_jaxpr(b, ops_nz, out_nz)
        if list(nz) != out_nz:
            raise NotImplementedError("cond: the branches' tangent outputs could not be made to "
                                      "agree (an integer output with a nonzero tangent)")
        parts.append((j, consts))
    new, consts = _join_consts(parts)
    return new, consts, out_nz


def _merge_residuals(res_avals_per_branch):
    """Slots for all branches' residuals, shared between branches by type (as JAX does).
    Returns ``(slot avals, per branch: the slot of each of its residuals)``."""
    all_avals, positions = [], {}
    for avals in res_avals_per_branch:
        seen = {}
        for a in avals:
            k = seen[a] = seen.get(a, 0) + 1
            pos = positions.setdefault(a, [])
            if len(pos) < k:
                pos.append(len(all_avals))
                all_avals.append(a)
    slots = []
    for avals in res_avals_per_branch:
        seen = {}
        idx = []
        for a in avals:
            k = seen.get(a, 0)
            seen[a] = k + 1
            idx.append(positions[a][k])
        slots.append(idx)
    return all_avals, slots


def _pe_branches(branches, ops_uk):
    n = len(branches[0].out_avals)
    out_uk = [False] * n
    for b in branches:
        uk = pe.partial_eval_jaxpr(b, ops_uk, instantiate=[False] * n).out_unknowns
        out_uk = [a or c for a, c in zip(out_uk, uk)]
    splits = [pe.partial_eval_jaxpr(b, ops_uk, instantiate=out_uk) for b in branches]
    n_known = n - sum(out_uk)
    res_avals = [split.known.out_avals[n_known:] for split in splits]
    all_res, slots = _merge_residuals(res_avals)
    known_parts, staged_branches = [], []
    for split, idx in zip(splits, slots):
        known, staged, num_res = split.known, split.staged, split.num_res
        assert list(split.out_unknowns) == out_uk
        # the known branch returns its known outputs and every slot (zeros in the others')
        if idx == list(range(len(all_res))):
            known_parts.append((known, []))
        else:
            def fill(outs, idx=idx):
                full = [None] * len(all_res)
                for r, s in zip(outs[n_known:], idx):
                    full[s] = r
                return list(outs[:n_known]) + [
                    _zeros(a) if f is None else f for f, a in zip(full, all_res)]
            known_parts.append(_retrace(known, [], known.in_avals, fill, _fun_name(known)))
        # the staged branch takes every slot, then the unknown operands
        sj = staged.jaxpr
        mine = dict(zip(idx, sj.invars[:num_res]))
        invars = [mine.get(s) or Var(a) for s, a in enumerate(all_res)] + sj.invars[num_res:]
        staged_branches.append(ClosedJaxpr(Jaxpr([], invars, sj.outvars, sj.eqns,
                                                 sj.debug_info), []))
    known_branches, known_consts = _join_consts(known_parts)
    return known_branches, known_consts, (tuple(staged_branches), out_uk, n_known)


def _partial_eval(trace, args, params):
    branches = params["branches"]
    index, *ops = args
    if trace.is_unknown(index):  # nothing to split: stage the whole cond
        return trace.stage(cond_p, args, params)
    ops_uk = tuple(trace.is_unknown(x) for x in ops)
    known_branches, known_consts, (staged_branches, out_uk, n_known) = _cached(
        branches, ("pe", ops_uk), lambda: _pe_branches(branches, ops_uk))
    known_ops = [x for x, u in zip(ops, ops_uk) if not u]
    known_outs = []
    if known_branches[0].out_avals:
        known_outs = trace.bind_known(cond_p, [index, *known_consts, *known_ops],
                                      dict(branches=known_branches))
    res = list(known_outs[n_known:])
    staged_outs = []
    if any(out_uk):
        staged_outs = trace.stage(cond_p, [index, *res, *[x for x, u in zip(ops, ops_uk) if u]],
                                  dict(branches=staged_branches))
    k, s = iter(known_outs[:n_known]), iter(staged_outs)
    return [next(s) if u else next(k) for u in out_uk]


def _partial_eval_jaxpr(eqn, in_unknowns):
    """The same split on an equation (for ``pe.partial_eval_jaxpr``, e.g. under ``jit``)."""
    branches = eqn.params["branches"]
    if in_unknowns[0]:
        return None
    ops_uk = tuple(in_unknowns[1:])
    known_branches, known_consts, (staged_branches, out_uk, n_known) = _cached(
        branches, ("pe", ops_uk), lambda: _pe_branches(branches, ops_uk))
    if known_consts:  # values, not variables: an equation cannot hold them
        return None
    index, *ops = eqn.invars
    res = [Var(a) for a in known_branches[0].out_avals[n_known:]]
    known = Eqn(cond_p, [index, *[v for v, u in zip(ops, ops_uk) if not u]],
                [v for v, u in zip(eqn.outvars, out_uk) if not u] + res,
                dict(branches=known_branches))
    staged = None
    if any(out_uk):
        staged = Eqn(cond_p, [index, *res, *[v for v, u in zip(ops, ops_uk) if u]],
                     [v for v, u in zip(eqn.outvars, out_uk) if u],
                     dict(branches=staged_branches))
    return known, staged, list(out_uk)


def _transpose(cts, index, *ops, branches):
    if ad.is_undefined_primal(index):
        raise TypeError("cond cannot be transposed with respect to its index")
    linear = tuple(ad.is_undefined_primal(x) for x in ops)
    ct_nz = tuple(type(c) is not Zero for c in cts)
    lin_avals = [ad.tangent_aval(x.aval) for x, lin in zip(ops, linear) if lin]
    if not any(ct_nz):
        return [None] + [Zero(ad.tangent_aval(x.aval)) if lin else None
                         for x, lin in zip(ops, linear)]
    new, consts, in_nz = _cached(branches, ("transpose", linear, ct_nz),
                                 lambda: _transpose_branches(branches, linear, ct_nz))
    outs = iter(cond_p.bind(index, *consts, *[x for x, lin in zip(ops, linear) if not lin],
                            *[c for c, nz in zip(cts, ct_nz) if nz], branches=new)
                if any(in_nz) else [])
    nz_it, aval_it = iter(in_nz), iter(lin_avals)
    res = [None]
    for x, lin in zip(ops, linear):
        if not lin:
            res.append(None)
            continue
        a = next(aval_it)
        res.append(next(outs) if next(nz_it) else Zero(a))
    return res


def _transpose_branches(branches, linear, ct_nz):
    parts = [ad.transpose_jaxpr(b, list(linear), list(ct_nz)) for b in branches]
    in_nz = [False] * sum(linear)
    for _, _, nz in parts:
        in_nz = [a or c for a, c in zip(in_nz, nz)]
    in_avals = branches[0].in_avals
    lin_avals = [ad.tangent_aval(a) for a, lin in zip(in_avals, linear) if lin]
    t_in_avals = [a for a, lin in zip(in_avals, linear) if not lin] + [
        ad.tangent_aval(a) for a, nz in zip(branches[0].out_avals, ct_nz) if nz]
    joined = []
    for b, (j, consts, nz) in zip(branches, parts):
        if list(nz) == in_nz:
            joined.append((j, consts))
            continue

        def fill(outs, nz=nz):
            it = iter(outs)
            return [next(it) if have else _zeros(a)
                    for have, want, a in zip(nz, in_nz, lin_avals) if want]
        joined.append(_retrace(j, consts, t_in_avals, fill, f"transpose({_fun_name(b)})"))
    new, consts = _join_consts(joined)
    return new, consts, in_nz


def _bcast_to(x, shape):
    """Broadcast the rank-1 (batch) ``x`` along the leading axis of ``shape``."""
    if tuple(common.aval_of(x).shape) == tuple(shape):
        return x
    return lax_shape.broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=(0,),
                                             sharding=None)


def _batch(args, dims, *, branches, axis_data):
    index, *ops = args
    index_dim, *op_dims = dims
    size = axis_data.size
    n_out = len(branches[0].out_avals)
    if index_dim is not_mapped:
        ops = [common.move_to(x, d, 0, size) if d is not not_mapped else x
               for x, d in zip(ops, op_dims)]
        in_dims = tuple(0 if d is not not_mapped else not_mapped for d in op_dims)
        new, consts, out_b = _cached(branches, ("batch", in_dims, axis_data),
                                     lambda: _batch_branches(branches, in_dims, axis_data))
        outs = cond_p.bind(index, *consts, *ops, branches=new)
        return outs, [0 if b else not_mapped for b in out_b]
    # A batched index: run every branch on the whole batch and select per example. Each branch
    # sees its operands through a stop_gradient where it is not selected, so that reverse mode
    # does not pick up (possibly NaN) derivatives of the branches not taken.
    index = common.move_to(index, index_dim, 0, size)
    ops = [common.move_to(x, d, 0, size) for x, d in zip(ops, op_dims)]
    all_dims = [0] * len(ops)
    branch_outs = []
    for i, b in enumerate(branches):
        bj, consts, _ = batching.batch_jaxpr(b, all_dims, axis_data, [True] * n_out)
        pred = lax_ew.eq(index, np.int32(i))
        ops_i = []
        for x in ops:
            a = common.aval_of(x)
            if _inexact(a):
                p = _bcast_to(pred, a.shape)
                x = lax_ew.select_n_p.bind(p, stop_gradient_p.bind(x), x)
            ops_i.append(x)
        branch_outs.append(eval_jaxpr(bj.jaxpr, [], *consts, *ops_i))
    outs = []
    for cases in zip(*branch_outs):
        shape = common.aval_of(cases[0]).shape
        outs.append(lax_ew.select_n(_bcast_to(index, shape), *cases))
    return outs, [0] * n_out


def _batch_branches(branches, in_dims, axis_data):
    n = len(branches[0].out_avals)
    out_b = [False] * n
    for b in branches:
        ob = [d is not not_mapped for d in batching.batch_jaxpr(b, list(in_dims), axis_data)[2]]
        out_b = [a or c for a, c in zip(out_b, ob)]
    parts = []
    for b in branches:
        j, consts, od = batching.batch_jaxpr(b, list(in_dims), axis_data, out_b)
        assert [d is not not_mapped for d in od] == out_b
        parts.append((j, consts))
    new, consts = _join_consts(parts)
    return new, consts, out_b


def _uses_axis(params, name):
    return any(parallel.jaxpr_uses_axis(b, name) for b in params["branches"])


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
cond_p = Primitive("cond", abstract_eval=_abstract_eval, lower=_lower, multiple_results=True,
                   sharding_rule=FROM_BODY,
                   jvp=_jvp, transpose=_transpose, batch=_batch, partial_eval=_partial_eval,
                   partial_eval_jaxpr=_partial_eval_jaxpr,
                   axis_aware=_uses_axis)  # a branch may use a named axis

# Mutable array references used in a branch become operands and results (ref_threading.py).
cond = ref_threading.cond_threading(cond, _no_operand)
switch = ref_threading.switch_threading(switch, _no_operand)
