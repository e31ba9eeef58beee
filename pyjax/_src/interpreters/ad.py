"""Automatic differentiation: the JVP trace (forward mode), linearize (JVP + online partial
evaluation) and transposition of linear Jaxprs (reverse mode).

* ``JVPTrace``/``JVPTracer`` carry a (primal, tangent) pair. A primitive's ``jvp`` rule runs with
  the *parent* trace current, so primal work happens there (concretely when eager) and nested
  differentiation never confuses perturbations: values of other traces are constants.
  Tangents may be the symbolic ``Zero``: an equation whose tangents are all zero just runs its
  primal, and integer values always have ``Zero`` (``float0``) tangents.
* ``linearize_flat`` runs the JVP trace over a ``PartialEvalTrace``: primals are known (computed
  on the outer trace), tangents are unknown, so every tangent operation is staged into a linear
  Jaxpr whose constants are the residuals.
* ``backward_pass`` transposes a linear Jaxpr: equations that read only residuals are evaluated
  forward, then the linear ones are walked backwards calling each primitive's ``transpose``.

Reverse mode is linearize followed by ``backward_pass``; there are no hand-written VJP rules.

Eager ``grad`` additionally records and replays programs (``eager_grad.py``).
"""
from __future__ import annotations

import weakref

import numpy as np

from pyjax._src.core import dtypes, pytree
from pyjax._src.core import pytree_data
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.config import config
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.jaxpr import ClosedJaxpr, Literal, cache_for, eval_jaxpr
from pyjax._src.core.rules import (  # noqa: F401 - re-exported for rule writers
    NOT_DIFFERENTIABLE, UndefinedPrimal, Zero, is_undefined_primal)
from pyjax._src.core.trace import Trace, Tracer, get_aval
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.interpreters import staging
# tangent values: one definition each, in the lax layer (the rules use them too)
from pyjax._src.lax.ad_util import instantiate, tangent_aval  # noqa: F401 (re-exported)
from pyjax._src.lax.ad_util import zeros as zeros_like_aval  # noqa: F401 (re-exported)
from pyjax._src.lax import elementwise as lax_ew

_state = trace_mod._state
float0 = dtypes.float0
# Eagerly, ``eager_backward(linear closed Jaxpr, cts)`` may run a backward pass as one
# compiled call (None: transpose op by op); installed by dispatch/eager_backward.py.
eager_backward = None


# ---- tangent values ----

def add_tangents(a, b):
    """The sum of two tangents (or cotangents) of one value; ``Zero``s cost nothing."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return lax_ew.add_p.bind(a, b)


_scalar_zeros: dict = {}
_NP_SCALARS = (np.number, np.bool_)


def zero_of(x):
    """The symbolic zero tangent of the value ``x``."""
    t = type(x)
    if t is ArrayImpl:
        return Zero(tangent_aval(x.aval))
    if t is float or t is complex or t is bool or issubclass(t, _NP_SCALARS):
        # the aval of these scalars depends only on their type and the x64 flag
        key = (t, dtypes.x64_enabled())
        z = _scalar_zeros.get(key)
        if z is None:
            z = _scalar_zeros[key] = Zero(tangent_aval(get_aval(x)))
        return z
    return Zero(tangent_aval(get_aval(x)))


# ---- the JVP trace ----

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "aval")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self.aval = primal.aval if type(primal) is ArrayImpl else get_aval(primal)

    def to_concrete_value(self):
        p = self.primal
        if isinstance(p, Tracer):
            return p.to_concrete_value()
        return p

    def to_concrete_constant(self):
        if type(self.tangent) is not Zero:  # differentiated: not a constant
            return None
        p = self.primal
        if isinstance(p, Tracer):
            return p.to_concrete_constant()
        return p


def _not_implemented(primitive):
    return NotImplementedError(f"Differentiation rule for '{primitive.name}' not implemented")


class JVPTrace(Trace):
    """Forward mode: rules run on the parent trace; other traces' values are constants."""

    def __init__(self, parent):
        super().__init__(parent)
        self.parent_state = None if parent is trace_mod._EVAL_TRACE else parent

    def describe_tracer(self, tracer):
        p = tracer.primal  # the primal is what was abstract (e.g. an argument under jit)
        return p._trace.describe_tracer(p) if isinstance(p, Tracer) else super().describe_tracer(
            tracer)

    def process_primitive(self, primitive, args, params):
        primals, tangents, nonzero, missing = [], [], False, False
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                t = x.tangent
                tangents.append(t)
                if type(t) is not Zero:
                    nonzero = True
            else:
                primals.append(x)
                if nonzero:
                    tangents.append(zero_of(x))
                else:
                    tangents.append(None)
                    missing = True
        prev = _state.trace
        _state.trace = self.parent_state
        try:
            rule = primitive.jvp
            if not nonzero or rule is NOT_DIFFERENTIABLE:
                return primitive.bind(*primals, **params)
            if rule is None:
                raise _not_implemented(primitive)
            if missing:  # constants seen before the first nonzero tangent
                tangents = [zero_of(p) if t is None else t for p, t in zip(primals, tangents)]
            out, tangent_out = rule(primals, tangents, **params)
        finally:
            _state.trace = prev
        if primitive.multiple_results:
            return [o if type(t) is Zero else JVPTracer(self, o, t)
                    for o, t in zip(out, tangent_out)]
        if type(tangent_out) is Zero:
            return out
        return JVPTracer(self, out, tangent_out)


def _run(trace, fun, args):
    prev = _state.trace
    _state.trace = trace
    try:
        return fun(*args)
    finally:
        _state.trace = prev
        trace.finish()


def _unbox(trace, outs):
    primals, tangents = [], []
    for o in outs:
        if type(o) is JVPTracer and o._trace is trace:
            primals.append(o.primal)
            tangents.append(o.tangent)
        else:
            primals.append(o)
            tangents.append(zero_of(o))
    return primals, tangents


def _primal_of(trace, x):
    return x.primal if type(x) is JVPTracer and x._trace is trace else x


def jvp_flat(fun, primals, tangents, has_aux=False):
    """Forward mode on a flat function (positional values in, a list out; with ``has_aux`` it
    returns ``(outs, aux)`` and aux values come back as primals). ``tangents`` may hold
    ``Zero``s. Returns ``(primal_outs, tangent_outs[, aux])`` with ``Zero`` for zero tangents."""
    trace = JVPTrace(trace_mod.current_trace())
    ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
    outs = _run(trace, fun, ins)
    if has_aux:
        outs, aux = outs
        aux = [_primal_of(trace, a) for a in aux]
    primals_out, tangents_out = _unbox(trace, outs)
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


class Linearized:
    """The result of ``linearize_flat``: the linear Jaxpr (constants = residuals) from the
    nonzero input tangents to the nonzero output tangents."""

    __slots__ = ("jaxpr", "in_linear", "out_nonzero", "in_avals", "out_avals")

    def __init__(self, jaxpr, in_linear, out_nonzero, in_avals, out_avals):
        self.jaxpr = jaxpr              # ClosedJaxpr
        self.in_linear = in_linear      # per primal input: has a tangent input
        self.out_nonzero = out_nonzero  # per output: has a (possibly) nonzero tangent
        self.in_avals = in_avals        # tangent avals of the primal inputs
        self.out_avals = out_avals      # tangent avals of the outputs

    def jvp(self, tangents):
        """Evaluate the linear map: one tangent per input (Zero allowed); Zero-filled outs."""
        ins = [instantiate(t) for t, lin in zip(tangents, self.in_linear) if lin]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *ins))
        return [next(outs) if nz else Zero(a) for nz, a in zip(self.out_nonzero, self.out_avals)]

    def vjp(self, cts):
        """Transpose: one cotangent per output (Zero allowed) -> one per input (Zero or value)."""
        cts = [c for c, nz in zip(cts, self.out_nonzero) if nz]
        j = self.jaxpr.jaxpr
        cts_in = None
        if _state.trace is None and j.eqns and eager_backward is not None:
            cts_in = eager_backward(self.jaxpr, cts)
        if cts_in is None:
            args = [UndefinedPrimal(v.aval) for v in j.invars]
            cts_in = backward_pass(j, self.jaxpr.consts, args, cts)
        cts_in = iter(cts_in)
        return [_like(next(cts_in), a) if lin else Zero(a)
                for lin, a in zip(self.in_linear, self.in_avals)]


def _like(ct, aval):
    """A concrete cotangent with the weak type of its primal (free: same buffer)."""
    if type(ct) is ArrayImpl and ct.aval.weak_type != aval.weak_type and \
            ct.aval.dtype == aval.dtype:
        return ArrayImpl(aval, ct._buf, ct._committed, ct._npy)
    return ct


_LINEARIZE_DEBUG = staging.DebugInfo("<linearize>", None, "linearize")


def _lin_begin(parent, primals):
    """The traces of a linearization over ``parent`` and the JVP tracers of ``primals``."""
    pe_trace = pe.PartialEvalTrace(parent, _LINEARIZE_DEBUG)
    trace = JVPTrace(pe_trace)
    ins, in_linear, in_avals = [], [], []
    for p in primals:
        ta = tangent_aval(p.aval if type(p) is ArrayImpl else get_aval(p))
        lin = ta.dtype != float0
        in_linear.append(lin)
        in_avals.append(ta)
        ins.append(JVPTracer(trace, p, pe_trace.new_arg(ta) if lin else Zero(ta)))
    return pe_trace, trace, ins, in_linear, in_avals


def _lin_end(pe_trace, trace, outs, in_linear, in_avals):
    """The primal outputs and the ``Linearized`` map of a finished linearization."""
    primals_out, tangents_out = _unbox(trace, outs)
    nz_tangents = [t for t in tangents_out if type(t) is not Zero]
    out_nonzero = [type(t) is not Zero for t in tangents_out]
    closed = pe_trace.to_jaxpr(nz_tangents)
    out_avals = [t.aval if type(t) is Zero else tangent_aval(get_aval(p))
                 for p, t in zip(primals_out, tangents_out)]
    return primals_out, Linearized(closed, in_linear, out_nonzero, in_avals, out_avals)


def linearize_flat(fun, primals, has_aux=False):
    """JVP + online partial evaluation of a flat function at ``primals``.

    Returns ``(primal_outs, Linearized[, aux])``; primal outputs (and residuals) are computed on
    the current trace, every tangent operation is staged into the linear Jaxpr."""
    pe_trace, trace, ins, in_linear, in_avals = _lin_begin(trace_mod.current_trace(), primals)
    try:
        outs = _run(trace, fun, ins)
        if has_aux:
            outs, aux = outs
            aux = [_primal_of(trace, a) for a in aux]
        primals_out, lin = _lin_end(pe_trace, trace, outs, in_linear, in_avals)
    finally:
        pe_trace.finish()
    if config.jax_check_tracer_leaks:
        del ins, outs
        trace_mod.check_no_leaks(trace)
    if has_aux:
        return primals_out, lin, aux
    return primals_out, lin


# ---- transposition ----

def _transpose_error(primitive):
    return NotImplementedError(
        f"Transpose rule (for reverse-mode differentiation) for '{primitive.name}' not "
        "implemented")


def backward_pass(jaxpr, consts, args, cts_out):
    """Transpose the linear Jaxpr ``jaxpr``: ``args`` has an ``UndefinedPrimal`` for each
    linear input and a value for the others; ``cts_out`` one cotangent per output (``Zero``
    allowed). Returns one cotangent per input: a value or ``Zero`` for linear inputs, None for
    the others. Runs on the current trace."""
    env = dict(zip(jaxpr.constvars, consts))
    linear = set()
    for v, a in zip(jaxpr.invars, args):
        if type(a) is UndefinedPrimal:
            linear.add(v)
        else:
            env[v] = a

    def read(v):
        return v.val if type(v) is Literal else env[v]

    lin_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(v) is not Literal and v in linear for v in eqn.invars):
            lin_eqns.append(eqn)
            linear.update(eqn.outvars)
        else:  # reads only non-linear values (residuals): evaluate it forward
            out = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, out))
            else:
                env[eqn.outvars[0]] = out

    ct_env = {}

    def write_ct(v, ct):
        if type(ct) is Zero or ct is None:
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        if type(v) is not Literal and v in linear:
            write_ct(v, ct)

    for eqn in reversed(lin_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(c is None for c in cts):
            continue
        prim = eqn.primitive
        rule = prim.transpose
        if rule is None:
            raise _transpose_error(prim)
        cts = [Zero(tangent_aval(v.aval)) if c is None else c for c, v in zip(cts, eqn.outvars)]
        prim_args = [UndefinedPrimal(v.aval) if type(v) is not Literal and v in linear
                     else read(v) for v in eqn.invars]
        cts_in = rule(cts if prim.multiple_results else cts[0], *prim_args, **eqn.params)
        for v, a, ct in zip(eqn.invars, prim_args, cts_in):
            if type(a) is UndefinedPrimal:
                write_ct(v, ct)

    out = []
    for v, a in zip(jaxpr.invars, args):
        if type(a) is UndefinedPrimal:
            ct = ct_env.pop(v, None)
            out.append(Zero(tangent_aval(v.aval)) if ct is None else ct)
        else:
            out.append(None)
    return out


# ---- whole-Jaxpr transformations (for primitives that hold a Jaxpr) ----

_jvp_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_transpose_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _cached(cache, closed, key, make):
    per = cache_for(cache, closed)
    hit = per.get(key)
    if hit is None:
        hit = per[key] = make()
    return hit


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros, instantiate=False):
    """The JVP of ``closed`` as a Jaxpr taking ``(consts, primals, nonzero tangents)`` and
    returning ``(primal outs, nonzero tangent outs)``; tangent output ``j`` is forced to be
    nonzero when ``instantiate`` (a bool for all outputs, or one per output: loops force their
    carries) says so. Returns ``(ClosedJaxpr without consts, consts, out_nonzero)``; cached per
    (jaxpr, nonzeros, instantiate) unless the consts are tracers."""
    if type(instantiate) is not bool:
        instantiate = tuple(instantiate)
        if not any(instantiate):
            instantiate = False
        elif all(instantiate):
            instantiate = True
    key = (tuple(nonzeros), instantiate)
    per = cache_for(_jvp_cache, closed)
    hit = per.get(key)
    if hit is None:
        hit = _jvp_jaxpr(closed, nonzeros, instantiate)
        if not any(isinstance(c, Tracer) for c in hit[1]):
            per[key] = hit
    return hit


def _jvp_jaxpr(closed, nonzeros, instantiate_outs):
    avals = closed.in_avals
    n = len(avals)
    box = []

    def fun(*args):
        it = iter(args[n:])
        tangents = [next(it) if nz else Zero(tangent_aval(a)) for a, nz in zip(avals, nonzeros)]
        primals_out, tangents_out = jvp_flat(
            lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), args[:n], tangents)
        if instantiate_outs is True:
            tangents_out = [instantiate(t) for t in tangents_out]
        elif instantiate_outs is not False:
            tangents_out = [instantiate(t) if inst else t
                            for t, inst in zip(tangents_out, instantiate_outs)]
        out_nz = [type(t) is not Zero for t in tangents_out]
        box.append(out_nz)
        return list(primals_out) + [t for t in tangents_out if type(t) is not Zero]

    in_avals = list(avals) + [tangent_aval(a) for a, nz in zip(avals, nonzeros) if nz]
    dbg = staging.DebugInfo(_fun_name(closed), None, "jvp")
    traced = staging.trace_to_jaxpr(fun, in_avals, dbg)
    call, consts = staging.convert_constvars_jaxpr(traced)
    return call, consts, box[0]


def transpose_jaxpr(closed: ClosedJaxpr, linear, ct_nonzero):
    """The transpose of ``closed`` with respect to its ``linear`` inputs, as a Jaxpr taking
    ``(consts, non-linear inputs, nonzero output cotangents)`` and returning the nonzero input
    cotangents. Returns ``(ClosedJaxpr without consts, consts, in_ct_nonzero)``; cached."""
    return _cached(_transpose_cache, closed, (tuple(linear), tuple(ct_nonzero)),
                   lambda: _transpose_jaxpr(closed, linear, ct_nonzero))


def _transpose_jaxpr(closed, linear, ct_nonzero):
    in_avals, out_avals = closed.in_avals, closed.out_avals
    n_res = sum(1 for lin in linear if not lin)
    box = []

    def fun(*args):
        res = iter(args[:n_res])
        prim_args = [UndefinedPrimal(a) if lin else next(res) for a, lin in zip(in_avals, linear)]
        cts_it = iter(args[n_res:])
        cts = [next(cts_it) if nz else Zero(tangent_aval(a))
               for a, nz in zip(out_avals, ct_nonzero)]
        outs = backward_pass(closed.jaxpr, closed.consts, prim_args, cts)
        outs = [o for o, lin in zip(outs, linear) if lin]
        nz = [type(o) is not Zero for o in outs]
        box.append(nz)
        return [o for o in outs if type(o) is not Zero]

    t_avals = [a for a, lin in zip(in_avals, linear) if not lin] + [
        tangent_aval(a) for a, nz in zip(out_avals, ct_nonzero) if nz]
    dbg = staging.DebugInfo(_fun_name(closed), None, "transpose")
    traced = staging.trace_to_jaxpr(fun, t_avals, dbg)
    call, consts = staging.convert_constvars_jaxpr(traced)
    return call, consts, box[0]


def _fun_name(closed):
    d = closed.jaxpr.debug_info
    return getattr(d, "fun_name", "<fun>") if d is not None else "<fun>"


# ---------------------------------------------------------------------------------------
# Key arrays: their tangents are float0 arrays of the key array's shape
# ---------------------------------------------------------------------------------------
# The transformations see a key array as a node over its key data (core/pytree.py, "two
# views"); users see one leaf, whose tangent and cotangent is float0 of the key's own shape.

def _float0_of_key(t, trailing, _dtype):
    """A key-data leaf's tangent -> the key array's: float0 without the trailing dims."""
    if isinstance(t, np.ndarray) and t.dtype == float0:
        return np.zeros(t.shape[:t.ndim - len(trailing)], float0)
    return t


def _float0_of_key_data(t, trailing, _dtype):
    """A key array's float0 tangent -> its key data's (anything else is left for the
    dtype checks to refuse)."""
    if isinstance(t, np.ndarray) and t.dtype == float0:
        return np.zeros(t.shape + tuple(trailing), float0)
    return t


def tangent_tree(treedef, leaves):
    """The user's tree of tangents/cotangents for data-view ``leaves`` of ``treedef``."""
    if pytree_data.has_data_nodes(treedef):
        return pytree_data.collapse_data_leaves(treedef, leaves, _float0_of_key)
    return pytree.tree_unflatten(treedef, leaves)


def tangent_leaves(treedef, tangents):
    """``(leaves, tree)`` of a user's tangent tree mirroring ``treedef``: ``tree`` is
    ``treedef`` when the structures match (key arrays take float0 leaves of their shape)."""
    if pytree_data.has_data_nodes(treedef):
        got = pytree_data.expand_data_leaves(treedef, tangents, _float0_of_key_data)
        return got if got is not None else pytree.user_tree_flatten(tangents)
    return pytree.tree_flatten(tangents)
