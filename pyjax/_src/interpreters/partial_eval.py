"""Partial evaluation: split a computation into a known part (run now) and an unknown part
(staged into a Jaxpr).

Two forms, both used by reverse-mode differentiation (linearize = JVP + partial evaluation):

* ``PartialEvalTrace``, an *online* partial evaluator. Values of other traces (and concrete
  values) are known; an equation whose inputs are all known is evaluated on the parent trace
  right away (concretely when eager), and one with an unknown input (a tracer of this trace) is
  staged into a Jaxpr, with the known values it reads captured as constants: the residuals.
  Higher-order primitives (``jit``, ``checkpoint``, ...) declare a ``partial_eval`` rule that
  splits their inner Jaxpr instead of staging the whole call.
* ``partial_eval_jaxpr``, the same split done on a whole Jaxpr (for those rules), with a
  ``saveable`` policy that decides which known intermediate values may be saved as residuals
  and which must be recomputed by the unknown part (``checkpoint``'s policies).
"""
from __future__ import annotations

import weakref

from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.jaxpr import (ClosedJaxpr, Jaxpr, Literal, Var, cache_for, eqn_has_effects,
                                    eval_jaxpr)
from pyjax._src.core.primitive import declare_rule_kind
from pyjax._src.core.sharding_rules import typed_abstract_eval
from pyjax._src.core.trace import get_aval
from pyjax._src.interpreters.staging import DebugInfo, StagingTrace, StagingTracer

_state = trace_mod._state

# The two rule kinds this module reads (given in a primitive's declaration as keywords):
# ``partial_eval(trace, args, params) -> outputs`` (a list for multiple_results primitives).
declare_rule_kind("partial_eval", "linearize: split a call into a known call run now and a "
                  "staged one; rule(trace, args, params) -> outputs")
# The same split for ``partial_eval_jaxpr``: ``partial_eval_jaxpr(eqn, in_unknowns)`` -> None
# (stage the whole equation) or ``(known_eqn, staged_eqn, out_unknowns)``: ``known_eqn`` reads
# only known values and defines the equation's known outputs; ``staged_eqn`` (None when every
# output is known) defines the unknown ones and may read known values (they become residuals).
# Loops need it: staging a whole loop would make its primal outputs unknown too.
declare_rule_kind("partial_eval_jaxpr", "partial_eval_jaxpr: rule(eqn, in_unknowns) -> None "
                  "or (known_eqn, staged_eqn, out_unknowns)")
_aval_cache: dict = {}


class PartialEvalTrace(StagingTrace):
    """Known values are evaluated on the parent trace; unknown ones are staged."""

    def __init__(self, parent, debug_info=None):
        super().__init__(parent, debug_info or DebugInfo("<linearize>", None, "linearize"))
        self.parent_state = None if parent is trace_mod._EVAL_TRACE else parent

    def is_unknown(self, x):
        return type(x) is StagingTracer and x._trace is self

    def process_primitive(self, primitive, args, params):
        for x in args:
            if type(x) is StagingTracer and x._trace is self:
                break
        else:  # all inputs known: evaluate on the parent trace now
            return self.bind_known(primitive, args, params)
        rule = primitive.partial_eval
        if rule is not None:
            return rule(self, args, params)
        return self.stage(primitive, args, params)

    def stage(self, primitive, args, params):
        """Stage ``primitive`` unconditionally (also for partial-evaluation rules)."""
        invars = []
        for x in args:
            t = type(x)
            if t is StagingTracer and x._trace is self:
                invars.append(x._var)
            elif t is ArrayImpl:  # a residual
                v = self._const_ids.get(id(x))
                invars.append(self._capture(x, x.aval) if v is None else v)
            elif t is float or t is int or t is complex or t is bool:
                invars.append(Literal(x, _scalar_aval(x)))
            else:
                invars.append(self.to_var(x))
        avals = tuple([v.aval for v in invars])
        try:  # abstract evaluation is memoized: linearize stages the same few ops again and again
            key = (primitive, avals, tuple(params.items()) if params else ())
            out = _aval_cache.get(key)
        except TypeError:
            key = out = None
        if out is None:
            out = typed_abstract_eval(primitive, avals, params)
            if key is not None:
                if len(_aval_cache) > 4096:
                    _aval_cache.clear()
                _aval_cache[key] = out
        return self.append_eqn(primitive, invars, out, params)

    def bind_known(self, primitive, args, params):
        """Evaluate ``primitive`` on the parent trace (for partial-evaluation rules)."""
        prev = _state.trace
        _state.trace = self.parent_state
        try:
            return primitive.bind(*args, **params)
        finally:
            _state.trace = prev


_scalar_avals: dict = {}


def _scalar_aval(x):
    t = type(x)
    if t is int:
        return get_aval(x)  # depends on the value (overflow check)
    key = (t, trace_mod.dtypes.x64_enabled())
    a = _scalar_avals.get(key)
    if a is None:
        a = _scalar_avals[key] = get_aval(x)
    return a


# ---- Jaxpr-level partial evaluation ----

def everything_saveable(eqn):
    return True


class PartialEvalResult:
    """The split of a Jaxpr (see ``partial_eval_jaxpr``)."""

    __slots__ = ("known", "staged", "out_unknowns", "num_res", "fwd_res", "known_out_fwd")

    def __init__(self, known, staged, out_unknowns, num_res, fwd_res, known_out_fwd):
        self.known = known              # ClosedJaxpr: known ins -> known outs + computed res
        self.staged = staged            # ClosedJaxpr: fwd res + computed res + unknown ins -> ...
        self.out_unknowns = out_unknowns
        self.num_res = num_res          # number of computed residuals (outputs of ``known``)
        self.fwd_res = fwd_res          # residuals that are known inputs: their input indices
        self.known_out_fwd = known_out_fwd  # per known output: input index it forwards, or None


_pe_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def partial_eval_jaxpr(closed: ClosedJaxpr, in_unknowns, saveable=everything_saveable,
                       cache_key=None, instantiate=None) -> PartialEvalResult:
    """Split ``closed`` (a ClosedJaxpr without consts) given which inputs are unknown.

    Equations with an unknown input are staged; the others are known. A known value the staged
    part reads is a residual when it is an input or ``saveable(eqn)`` holds for the equation
    that makes it; otherwise that equation is recomputed in the staged part (recursively).

    With ``instantiate`` (one bool per output; loops force their carries), output ``j`` is
    forced to be unknown when ``instantiate[j]``: a known value forced unknown becomes a
    residual that the staged Jaxpr returns, and the ``fwd_res`` residuals are folded into the
    computed ones (``fwd_res`` is empty): the known Jaxpr returns ``known outs + residuals`` and
    the staged one takes ``residuals + unknown inputs``.
    Results are cached per (jaxpr, in_unknowns, cache_key, instantiate)."""
    if instantiate is not None:
        instantiate = tuple(instantiate)
    key = (tuple(in_unknowns), saveable if cache_key is None else cache_key, instantiate)
    per = cache_for(_pe_cache, closed)
    hit = per.get(key)
    if hit is not None:
        return hit
    if instantiate is None:
        res = _partial_eval_jaxpr(closed, in_unknowns, saveable)
    else:
        res = _instantiate_unknowns(
            closed, partial_eval_jaxpr(closed, in_unknowns, saveable, cache_key), instantiate)
    per[key] = res
    return res


def _instantiate_unknowns(closed, split, instantiate):
    known, staged = split.known.jaxpr, split.staged.jaxpr
    n_known = len(known.outvars) - split.num_res
    known_outs, comp_res = known.outvars[:n_known], known.outvars[n_known:]
    n_fwd = len(split.fwd_res)
    fwd_vars = [closed.jaxpr.invars[i] for i in split.fwd_res]
    res_out = fwd_vars + list(comp_res)       # known Jaxpr returns these as residuals
    res_in = list(staged.invars[:n_fwd + split.num_res])
    unknown_ins = staged.invars[n_fwd + split.num_res:]
    out_unknowns = list(split.out_unknowns)
    new_known_outs, known_out_fwd, staged_outs = [], [], []
    k_it, f_it, s_it = iter(known_outs), iter(split.known_out_fwd), iter(staged.outvars)
    for j, (unk, inst) in enumerate(zip(split.out_unknowns, instantiate)):
        if unk:
            staged_outs.append(next(s_it))
            continue
        v, fwd = next(k_it), next(f_it)
        if not inst:
            new_known_outs.append(v)
            known_out_fwd.append(fwd)
            continue
        out_unknowns[j] = True
        if type(v) is Literal:
            staged_outs.append(v)
        else:
            fresh = Var(v.aval)
            res_out.append(v)
            res_in.append(fresh)
            staged_outs.append(fresh)
    known_j = Jaxpr([], known.invars, new_known_outs + res_out, known.eqns, known.debug_info)
    staged_j = Jaxpr([], res_in + list(unknown_ins), staged_outs, staged.eqns,
                     staged.debug_info)
    return PartialEvalResult(ClosedJaxpr(known_j, []), ClosedJaxpr(staged_j, []), out_unknowns,
                             len(res_out), [], known_out_fwd)


def _partial_eval_jaxpr(closed, in_unknowns, saveable):
    jaxpr = closed.jaxpr
    assert not jaxpr.constvars and not closed.consts, "partial_eval_jaxpr takes no consts"
    unknown = {v for v, u in zip(jaxpr.invars, in_unknowns) if u}
    known_eqns, staged_eqns = [], []
    for e in jaxpr.eqns:
        in_uk = [type(v) is not Literal and v in unknown for v in e.invars]
        if any(in_uk):
            rule = e.primitive.partial_eval_jaxpr
            split = rule(e, in_uk) if rule is not None else None
            if split is None:
                staged_eqns.append(e)
                unknown.update(e.outvars)
            else:
                known_e, staged_e, out_uk = split
                known_eqns.append(known_e)
                if staged_e is not None:
                    staged_eqns.append(staged_e)
                unknown.update(v for v, u in zip(e.outvars, out_uk) if u)
        else:
            known_eqns.append(e)
    producer = {v: e for e in known_eqns for v in e.outvars}
    in_index = {v: i for i, v in enumerate(jaxpr.invars)}

    residuals, res_set, recompute = [], set(), set()
    stack = [v for e in staged_eqns for v in e.invars
             if type(v) is not Literal and v not in unknown]
    stack.reverse()
    while stack:
        v = stack.pop()
        if v in res_set:
            continue
        e = producer.get(v)
        if e is None or saveable(e):
            res_set.add(v)
            residuals.append(v)
        elif e not in recompute:
            recompute.add(e)
            stack.extend(u for u in e.invars if type(u) is not Literal and u not in res_set)

    fwd_res = [v for v in residuals if v in in_index]
    comp_res = [v for v in residuals if v not in in_index]
    out_unknowns = [type(v) is not Literal and v in unknown for v in jaxpr.outvars]
    known_outs = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    known_out_fwd = [in_index.get(v) if type(v) is not Literal else None for v in known_outs]
    known_invars = [v for v, u in zip(jaxpr.invars, in_unknowns) if not u]
    known = dce_jaxpr(Jaxpr([], known_invars, known_outs + comp_res, known_eqns,
                            jaxpr.debug_info))
    staged_invars = fwd_res + comp_res + [v for v, u in zip(jaxpr.invars, in_unknowns) if u]
    staged = dce_jaxpr(Jaxpr([], staged_invars,
                             [v for v, u in zip(jaxpr.outvars, out_unknowns) if u],
                             [e for e in known_eqns if e in recompute] + staged_eqns,
                             jaxpr.debug_info))
    return PartialEvalResult(ClosedJaxpr(known, []), ClosedJaxpr(staged, []), out_unknowns,
                             len(comp_res), [in_index[v] for v in fwd_res], known_out_fwd)


def dce_jaxpr(jaxpr: Jaxpr, used_outputs=None) -> Jaxpr:
    """Drop the equations no (used) output depends on and that have no effect (host
    callbacks). Inputs are kept."""
    outvars = jaxpr.outvars if used_outputs is None else [
        v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live = {v for v in outvars if type(v) is not Literal}
    kept = []
    for e in reversed(jaxpr.eqns):
        if any(v in live for v in e.outvars) or eqn_has_effects(e):
            kept.append(e)
            live.update(v for v in e.invars if type(v) is not Literal)
    kept.reverse()
    if len(kept) == len(jaxpr.eqns) and used_outputs is None:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, kept, jaxpr.debug_info)


def run_partial_eval(trace: PartialEvalTrace, primitive, args, params, split, rebuild):
    """The common shape of a partial-evaluation rule for a primitive holding a Jaxpr.

    ``split`` is the ``PartialEvalResult`` for this call's unknowns; ``rebuild(closed)`` gives
    the params for binding ``primitive`` with another Jaxpr. The known part runs on the parent
    trace now (skipped when it is pure forwarding); the staged part is one new equation."""
    unknowns = [trace.is_unknown(x) for x in args]
    known_args = [x for x, u in zip(args, unknowns) if not u]
    unknown_args = [x for x, u in zip(args, unknowns) if u]
    known = split.known
    if known.jaxpr.eqns:
        known_outs = trace.bind_known(primitive, known_args, rebuild(known))
    else:  # pure forwarding of known inputs and literals: nothing to run
        known_outs = eval_jaxpr(known.jaxpr, [], *known_args)
    n_known = len(known_outs) - split.num_res
    res = [args[i] for i in split.fwd_res] + list(known_outs[n_known:])
    known_outs = known_outs[:n_known]
    staged_outs = iter(trace.stage(primitive, res + unknown_args, rebuild(split.staged))
                       if split.staged.jaxpr.outvars else [])
    known_iter = iter(known_outs)
    return [next(staged_outs) if u else next(known_iter) for u in split.out_unknowns]


# ---- JAX's public partial-evaluation interface (`jax.interpreters.partial_eval`) ----

class PartialVal(tuple):
    """A value that is known (`PartialVal.known(value)`) or unknown (`PartialVal.unknown(aval)`);
    a pair `(aval or None, known value)` as JAX's, so `pv, const = pval` unpacks it."""

    def __new__(cls, xs):
        pv, const = xs
        return tuple.__new__(cls, (pv, const))

    @classmethod
    def known(cls, const):
        return cls((None, const))

    @classmethod
    def unknown(cls, aval):
        return cls((aval, None))

    def is_known(self):
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Run `fun` (a `linear_util.WrappedFun` over flat arguments) with the unknown `pvals` as
    tracers: work that reads only known values runs now (on the current trace), the rest is
    staged. Returns `(jaxpr, out_pvals, consts)`: `jaxpr` takes the consts then the unknown
    inputs and computes the unknown outputs; a known output is `PartialVal.known(value)`.
    `instantiate` (a bool, or one per output) makes known outputs unknown too."""
    pe_trace = PartialEvalTrace(trace_mod.current_trace(),
                                getattr(fun, "debug_info", None)
                                or DebugInfo("<partial_eval>", None, "partial_eval"))
    ins = [pv.get_known() if pv.is_known() else pe_trace.new_arg(pv.get_aval())
           for pv in map(PartialVal, pvals)]
    prev = _state.trace
    _state.trace = pe_trace
    try:
        outs = list(fun.call_wrapped(*ins))
    finally:
        _state.trace = prev
    try:
        inst = instantiate if isinstance(instantiate, (list, tuple)) else \
            [instantiate] * len(outs)
        if len(inst) != len(outs):
            raise ValueError(f"trace_to_jaxpr_nounits: instantiate has {len(inst)} entries for "
                             f"{len(outs)} outputs")
        out_pvals, staged = [], []
        for o, i in zip(outs, inst):
            if pe_trace.is_unknown(o) or i:
                var = pe_trace.to_var(o)
                out_pvals.append(PartialVal.unknown(var.aval))
                staged.append(o)
            else:
                out_pvals.append(PartialVal.known(o))
        closed = pe_trace.to_jaxpr(staged)
    finally:
        pe_trace.finish()
    jaxpr = closed.jaxpr
    return jaxpr, out_pvals, list(closed.consts)
