"""Eager ``grad``, recorded once and then replayed as one compiled executable.

An eager ``grad`` must run the user's Python on every call (its side effects and Python
control flow happen each time), but the primitives it binds are nearly always the same ones,
in the same order, wired the same way. See the comment below for how the record is made,
checked and replayed, and when a call falls back to the ordinary path of ``ad.py``.
"""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.core import config as config_mod
from pyjax._src.core import dtypes
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr
from pyjax._src.core.rules import Zero
from pyjax._src.core.trace import Trace, Tracer, get_aval
from pyjax._src.interpreters import ad, staging
from pyjax._src.dispatch import compiler, devices
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.dispatch.cache import Cache

_state = trace_mod._state


# ---- eager grad: recorded once, then replayed as one executable ----
# An eager ``grad`` must run the user's Python on every call (its side effects and Python
# control flow happen each time), but the primitives it binds are nearly always the same ones,
# in the same order, wired the same way. The first call linearizes as usual and records that
# sequence (the primal program, as seen at the top of the trace stack). Later calls *replay*:
# the function runs over placeholder tracers, each bind is only checked against the record
# (same primitive, params, operands and constants) and returns placeholders, and at the end one
# compiled executable, jit(grad) of the recorded program, returns the outputs and gradients.
# Nothing is guessed: a bind that departs from the record, or a placeholder whose concrete
# value is asked for, *catches up* by running the matched prefix through the ordinary
# JVP + partial evaluation machinery (the rules of replayable primitives are pure), and the call
# goes on as an ordinary one (and records anew). Primitives with an eager ``impl``, a partial
# evaluation rule or Jaxpr/function params (calls, control flow, custom rules) are never
# replayed; nor are programs whose untangented intermediates are integers (which Python code may
# use as static values).

_NEVER = "never"
# (code object, call signature) -> _Record or _NEVER, across call sites
_records = Cache("eager grad")
_MAX_FAILS = 3           # departures from a record before its call site stops replaying
_MAX_STEPS = 4096        # longer programs (unrolled Python loops) are not compiled whole
_MISS = object()


class _Record:
    __slots__ = ("n_in", "steps", "outs", "aux", "signature", "cts", "fused", "fails")

    def __init__(self, n_in, steps, outs, aux, signature, cts, fails):
        self.n_in = n_in
        self.steps = steps          # (primitive, params, operand refs, out avals, multiple)
        self.outs = outs            # slot of each output
        self.aux = aux              # slot of each aux leaf, None for constants (or None)
        self.signature = signature  # what else the call must reproduce (output trees)
        self.cts = cts              # the output cotangents (scalars)
        self.fused = None           # _Fused once compiled
        self.fails = fails


def _const_ref(x):
    """How a constant operand is matched from call to call: Python and NumPy scalars by value
    (they are literals of the program), arrays by abstract value (arguments of the program);
    None for anything else."""
    t = type(x)
    if t is ArrayImpl:
        return x.aval
    if t is float:
        return (float, x, math.copysign(1.0, x))
    if t is int or t is bool:
        return (t, x)
    if t is complex:
        return (complex, x.real, x.imag, math.copysign(1.0, x.real),
                math.copysign(1.0, x.imag))
    if isinstance(x, np.generic):
        return (np.generic, x.dtype, x.tobytes())
    if t is np.ndarray:
        return (np.ndarray, x.dtype, x.tobytes()) if x.ndim == 0 else get_aval(x)
    return None


def _literal(ref):
    k = ref[0]
    if k is complex:
        return complex(ref[1], ref[2])
    if k is np.generic:
        return np.frombuffer(ref[2], ref[1])[0]
    if k is np.ndarray:
        return np.frombuffer(ref[2], ref[1]).reshape(())
    return ref[1]


# Calls of an already traced Jaxpr: their rules (ad.jvp_jaxpr, partial_eval_jaxpr,
# ad.transpose_jaxpr) are pure and cached per Jaxpr, and the traced Jaxpr is the same object from
# call to call of a jitted function, so a replay can take them into the fused program.
_REPLAYABLE_CALLS = {"jit"}


def _replayable(primitive, params):
    try:
        hash(tuple(params.items()))
    except TypeError:
        return False
    if primitive.name in _REPLAYABLE_CALLS:
        return True
    if primitive.impl is not None or primitive.partial_eval is not None:
        return False
    for v in params.values():
        if isinstance(v, (Jaxpr, ClosedJaxpr)) or (callable(v) and not isinstance(v, type)):
            return False
    return True


class _Deferred(Tracer):
    """A value of a replayed eager grad call: known by its slot in the record."""

    __slots__ = ("slot", "aval")

    def __init__(self, trace, slot, aval):
        self._trace = trace
        self.slot = slot
        self.aval = aval

    def to_concrete_value(self):
        real = self._trace.real(self)
        return real.to_concrete_value() if isinstance(real, Tracer) else real

    def to_concrete_constant(self):
        real = self._trace.real(self)
        return real.to_concrete_constant() if isinstance(real, Tracer) else real

    def __repr__(self):
        if not self._trace.live:
            return f"Traced<{self.aval.str_short()}>with<ad.JVPTrace>"
        return repr(self._trace.real(self))


class _GradTrace(Trace):
    """The top trace of an eager grad call: replays a record, or forwards every bind to the
    JVP trace of an ordinary linearization while recording it."""

    def __init__(self, record, primals):
        super().__init__(trace_mod._EVAL_TRACE)
        self.record = record
        self.primals = primals
        self.replaying = record is not None
        self.pos = 0           # replay: steps matched so far
        self.log = []          # replay: the operands of each matched step
        self.consts = []       # replay: the array constants, in order
        self.n_slots = len(primals)
        self.lin = None        # forward: (pe trace, JVP trace, in_linear, in_avals)
        self.values = None     # forward: the real value of each slot
        self.ids = None        # forward: id(real value) -> slot
        self.steps = None      # forward: the steps recorded so far (None: not recording)
        if record is None:
            self._start()

    def inputs(self):
        if self.replaying:
            return [_Deferred(self, i, p.aval) for i, p in enumerate(self.primals)]
        return list(self.values)

    def _start(self):
        pe_trace, jvp, ins, in_linear, in_avals = ad._lin_begin(trace_mod._EVAL_TRACE,
                                                             self.primals)
        self.lin = (pe_trace, jvp, in_linear, in_avals)
        self.values = list(ins)
        self.ids = {id(v): i for i, v in enumerate(ins)}
        self.steps = []
        self.replaying = False

    def real(self, x):
        """The real value behind the placeholder ``x`` (catching up first if need be)."""
        if self.replaying:
            self.catch_up()
        return self.values[x.slot]

    def catch_up(self):
        """Replay -> forward: run the matched prefix through the ordinary machinery."""
        old = self.record.steps
        log, self.log = self.log, None
        self._start()
        for i, args in enumerate(log):
            step = old[i]
            self._forward(step[0], args, step[1], track=True)

    def process_primitive(self, primitive, args, params):
        if self.replaying:
            out = self._replay(primitive, args, params)
            if out is not _MISS:
                return out
            self.catch_up()
        return self._forward(primitive, args, params)

    def _replay(self, primitive, args, params):
        steps = self.record.steps
        pos = self.pos
        if pos < len(steps):
            prim, sparams, refs, out_avals, multiple = steps[pos]
            if prim is primitive and len(refs) == len(args) and (
                    sparams is params or sparams == params):
                consts = self.consts
                n = len(consts)
                for x, r in zip(args, refs):
                    t = type(x)
                    if t is _Deferred:
                        if x.slot != r or x._trace is not self:
                            break
                    elif t is ArrayImpl:
                        if type(r) is not ShapedArray or (x.aval is not r and x.aval != r):
                            break
                        consts.append(x)
                    elif t is float:
                        if (type(r) is not tuple or r[0] is not float or r[1] != x
                                or (x == 0.0 and math.copysign(1.0, x) != r[2])):
                            break
                    else:
                        c = _const_ref(x)
                        if c is None or type(r) is int or c != r:
                            break
                        if type(r) is ShapedArray:
                            consts.append(x)
                else:  # a step always has a slot operand: constants alone never match
                    self.pos = pos + 1
                    self.log.append(args)
                    s = self.n_slots
                    if multiple:
                        self.n_slots = s + len(out_avals)
                        return [_Deferred(self, s + i, a) for i, a in enumerate(out_avals)]
                    self.n_slots = s + 1
                    return _Deferred(self, s, out_avals[0])
                del consts[n:]
        for x in args:
            if type(x) is _Deferred and x._trace is self:
                return _MISS
        # constants only: evaluated now, as linearize does
        prev = _state.trace
        _state.trace = None
        try:
            return primitive.bind(*args, **params)
        finally:
            _state.trace = prev

    def _forward(self, primitive, args, params, track=False):
        values = self.values
        args = [values[x.slot] if type(x) is _Deferred and x._trace is self else x
                for x in args]
        steps = self.steps
        refs = None
        if steps is not None:
            refs = self._refs(args)
            if refs is False or (refs is not None and not _replayable(primitive, params)):
                self.steps = steps = None
                refs = None
        jvp = self.lin[1]
        out = jvp.process_primitive(primitive, args, params)
        if refs is None and not track:
            return out
        outs = out if primitive.multiple_results else [out]
        if refs is not None:
            avals = []
            for o in outs:
                t = type(o)
                if t is ad.JVPTracer and o._trace is jvp:
                    avals.append(o.aval)
                elif t is ArrayImpl and not dtypes.is_integer(o.aval.dtype):
                    avals.append(o.aval)
                else:  # an untangented integer (maybe a static value for Python code)
                    self.steps = steps = None
                    break
            else:
                steps.append((primitive, params, tuple(refs), tuple(avals),
                              primitive.multiple_results))
                if len(steps) > _MAX_STEPS:
                    self.steps = steps = None
        if steps is not None:
            ids = self.ids
            for o in outs:
                ids[id(o)] = len(values)
                values.append(o)
        elif track:
            values.extend(outs)
        return out

    def _refs(self, args):
        """The operand refs of a step: a slot, or a constant's ref. None when no operand is a
        recorded value; False when an operand cannot be recorded."""
        ids = self.ids
        refs = []
        tracked = False
        for x in args:
            s = ids.get(id(x))
            if s is not None:
                refs.append(s)
                tracked = True
                continue
            c = _const_ref(x)
            if c is None:
                return False
            refs.append(c)
        return refs if tracked else None

    def slots_of(self, xs):
        return [x.slot if type(x) is _Deferred and x._trace is self else None for x in xs]

    def end_replay(self, outs, aux, signature):
        """The results of a call that followed the record to the end, or None."""
        rec = self.record
        if (self.pos != len(rec.steps) or signature != rec.signature
                or self.slots_of(outs) != rec.outs):
            return None
        if aux is not None:
            aux_slots = self.slots_of(aux)
            if aux_slots != rec.aux:
                return None
        fused = rec.fused
        if fused is None:
            try:
                fused = rec.fused = _Fused(rec, [p.aval for p in self.primals])
            except Exception:  # noqa: BLE001 - the ordinary path reports any real error
                rec.fails = _MAX_FAILS
                return None
        outs_v, cts, aux_v = fused(self.primals, self.consts)
        if aux is not None:
            it = iter(aux_v)
            aux_v = [a if s is None else next(it) for a, s in zip(aux, aux_slots)]
        return outs_v, cts, aux_v

    def end_forward(self, outs, aux, make_cts):
        """Finish the ordinary linearization; returns (outs, cts_in, aux, new record or None)."""
        values = self.values
        real = [values[x.slot] if type(x) is _Deferred and x._trace is self else x
                for x in outs]
        if aux is not None:
            aux = [values[x.slot] if type(x) is _Deferred and x._trace is self else x
                   for x in aux]
        pe_trace, jvp, in_linear, in_avals = self.lin
        try:
            primals_out, lin = ad._lin_end(pe_trace, jvp, real, in_linear, in_avals)
            aux_p = None if aux is None else [ad._primal_of(jvp, a) for a in aux]
        finally:
            pe_trace.finish()
        cts = make_cts(primals_out)
        cts_in = lin.vjp(cts)
        rec = None
        if self.steps is not None and all(isinstance(c, _SCALAR_CTS) for c in cts):
            ids = self.ids
            out_slots = [ids.get(id(o)) for o in real]
            aux_slots = None if aux is None else [ids.get(id(a)) for a in aux]
            if None not in out_slots:
                rec = _Record(len(self.primals), self.steps, out_slots, aux_slots, None,
                              list(cts), 0)
        return primals_out, cts_in, aux_p, rec


_SCALAR_CTS = (float, complex, np.generic)


class _Fused:
    """jit(grad) of a recorded program, compiled: outputs, aux and gradients in one call."""

    __slots__ = ("exe", "const_bufs", "out_avals", "n_out", "n_aux", "cts")

    def __init__(self, rec, leaf_avals):
        n_in = rec.n_in
        has_aux = rec.aux is not None
        const_avals = [r for step in rec.steps for r in step[2] if type(r) is ShapedArray]
        box = []

        def primal(leaves, consts):
            vals = list(leaves)
            consts = iter(consts)
            for prim, params, refs, _, multiple in rec.steps:
                args = [vals[r] if type(r) is int else
                        next(consts) if type(r) is ShapedArray else _literal(r) for r in refs]
                out = prim.bind(*args, **params)
                if multiple:
                    vals.extend(out)
                else:
                    vals.append(out)
            return vals

        def fused(*ins):
            consts = ins[n_in:]

            def f(*leaves):
                vals = primal(leaves, consts)
                outs = [vals[s] for s in rec.outs]
                if has_aux:
                    return outs, [vals[s] for s in rec.aux if s is not None]
                return outs
            res = ad.linearize_flat(f, ins[:n_in], has_aux=has_aux)
            cts = res[1].vjp(list(rec.cts))
            aux = list(res[2]) if has_aux else []
            box.append(([type(c) is not Zero for c in cts], len(res[0]), len(aux)))
            return list(res[0]) + aux + [c for c in cts if type(c) is not Zero]

        dbg = staging.DebugInfo("<grad>", None, "grad")
        traced = staging.trace_to_jaxpr(fused, list(leaf_avals) + const_avals, dbg)
        call, consts = staging.convert_constvars_jaxpr(traced)
        self.exe = compiler.compile_jaxpr(call.jaxpr, "grad")
        self.const_bufs = [dispatch.to_array(c)._buf for c in consts]
        in_nz, self.n_out, self.n_aux = box[0]
        n = self.n_out + self.n_aux
        out_avals = call.out_avals
        # a gradient has its primal's weak type (as ``ad._like`` gives the op-by-op path)
        ct_avals = iter(out_avals[n:])
        cts = []
        for nz, a in zip(in_nz, leaf_avals):
            ta = ad.tangent_aval(a)
            if not nz:
                cts.append(Zero(ta))
                continue
            ca = next(ct_avals)
            if ca.dtype == ta.dtype and ca.weak_type != ta.weak_type:
                ca = ta
            cts.append(ca)
        self.out_avals = out_avals[:n] + [c for c in cts if type(c) is not Zero]
        self.cts = cts

    def __call__(self, primals, consts):
        arrays = primals + [c if type(c) is ArrayImpl else dispatch.to_array(c)
                            for c in consts] if consts else primals
        device, committed = devices.call_device(arrays)
        bufs = self.exe.execute_unchecked(self.const_bufs + [a._buf for a in arrays], device)
        outs = [ArrayImpl(a, b, committed) for a, b in zip(self.out_avals, bufs)]
        n, m = self.n_out, self.n_out + self.n_aux
        if m == len(outs):
            return outs[:n], list(self.cts), outs[n:]
        it = iter(outs[m:])
        return outs[:n], [c if type(c) is Zero else next(it) for c in self.cts], outs[n:m]


def _grad_plain(fun, primals, has_aux, make_cts):
    res = ad.linearize_flat(fun, primals, has_aux=has_aux)
    cts_in = res[1].vjp(make_cts(res[0]))
    return res[0], cts_in, (res[2] if has_aux else None)


def grad_eager(local, code, key, fun, primals, has_aux, make_cts, signature):
    """Eager reverse mode of the flat ``fun`` at the arrays ``primals``.

    ``make_cts(primal_outs)`` checks the outputs and returns their cotangents; ``signature()``
    says what else about the call a replay must reproduce (e.g. output tree structures).
    Records are kept per call site in ``local`` (a ``Cache`` the caller owns) and, by ``code`` (the
    function's code object, or None), across call sites; ``key`` is the call's signature
    (input tree, avals, flags). Returns ``(primal outs, input cotangents (Zero or value), aux or
    None)``, as linearize + vjp would."""
    try:
        entry = local.get(key)
    except TypeError:  # unhashable pytree aux data in the key
        return _grad_plain(fun, primals, has_aux, make_cts)
    gkey = None
    if entry is None and code is not None:
        gkey = (code, key)
        entry = _records.get(gkey)
    cfg = config_mod.config
    if entry is _NEVER or cfg.jax_disable_jit or cfg.jax_debug_nans or cfg.jax_debug_infs:
        # (debugging flags: every primitive runs on its own, as in JAX)
        return _grad_plain(fun, primals, has_aux, make_cts)
    trace = _GradTrace(entry, primals)
    try:
        prev = _state.trace
        _state.trace = trace
        try:
            res = fun(*trace.inputs())
        finally:
            _state.trace = prev
        outs, aux = res if has_aux else (res, None)
        if trace.replaying:
            done = trace.end_replay(outs, aux, signature())
            if done is not None:
                if gkey is not None:
                    local.put(key, entry)
                return done
            trace.catch_up()
        primals_out, cts_in, aux, rec = trace.end_forward(outs, aux, make_cts)
    finally:
        trace.live = False
        if trace.lin is not None:
            trace.lin[0].finish()
            trace.lin[1].finish()
    if gkey is not None and entry is not None:
        # another call site's record (same code, maybe other closure values) did not fit
        # this call: count it against that record, and give this call site its own
        entry.fails += 1
        if entry.fails >= _MAX_FAILS:
            _records.put(gkey, _NEVER)
        entry = None
    fails = 0 if entry is None else entry.fails + 1
    if rec is not None and fails < _MAX_FAILS:
        rec.signature = signature()
        rec.fails = fails
        new = rec
    else:
        new = _NEVER
    local.put(key, new)
    if code is not None and (gkey is None or gkey not in _records):
        _records.put((code, key), new)
    return primals_out, cts_in, aux
