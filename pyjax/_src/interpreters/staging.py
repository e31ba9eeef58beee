"""Staging: trace a Python function into a Jaxpr (everything inside is staged)."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import refs
from pyjax._src.core import source_info
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.config import config
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, check_jaxpr
from pyjax._src.core.sharding_rules import typed_abstract_eval
from pyjax._src.core.trace import Trace, Tracer, get_aval

trace_state = trace_mod._state

_PY_SCALARS = (bool, int, float, complex)


class StagingTracer(Tracer):
    __slots__ = ("_var",)

    def __init__(self, trace, var):
        self._trace = trace
        self._var = var

    @property
    def aval(self):
        return self._var.aval


class DebugInfo:
    __slots__ = ("fun_name", "arg_names", "transform")

    def __init__(self, fun_name="<fun>", arg_names=None, transform="jit"):
        self.fun_name = fun_name
        self.arg_names = arg_names
        self.transform = transform


def debug_info(traced_for, fun, args, kwargs, *, static_argnums=(), static_argnames=()):
    """What a traced function is, for messages (`jax.api_util.debug_info`)."""
    return DebugInfo(getattr(fun, "__name__", "<unnamed function>"), None, traced_for)


class StagingTrace(Trace):
    """Records every primitive applied to its tracers as an equation."""

    def __init__(self, parent=None, debug_info=None):
        super().__init__(parent)
        self.eqns = []
        self.invars = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}  # id(value) -> Var, so a captured value becomes one constvar
        self.debug_info = debug_info or DebugInfo()

    def new_arg(self, aval):
        v = Var(aval)
        self.invars.append(v)
        return StagingTracer(self, v)

    def to_var(self, x):
        t = type(x)
        if t is StagingTracer and x._trace is self:
            return x._var
        if t in _PY_SCALARS:
            return Literal(x, get_aval(x))
        if isinstance(x, Tracer):
            trace_mod.check_tracer_live(x)
            if x._trace is self:
                return x._var
            return self._capture(x, x.aval)   # a tracer of an outer transformation
        if isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) == 0 and t is not ArrayImpl:
            aval = get_aval(x)
            return Literal(np.asarray(x, aval.dtype)[()], aval)
        return self._capture(x, get_aval(x))

    def _capture(self, x, aval):
        v = self._const_ids.get(id(x))
        if v is None:
            v = Var(aval.strip_weak_type() if not isinstance(x, (Tracer, ArrayImpl)) else aval)
            self._const_ids[id(x)] = v
            self.constvars.append(v)
            self.consts.append(x)
        return v

    def process_primitive(self, primitive, args, params):
        invars = [self.to_var(x) for x in args]
        out = typed_abstract_eval(primitive, [v.aval for v in invars], params)
        return self.append_eqn(primitive, invars, out, params)

    def append_eqn(self, primitive, invars, out_avals, params):
        """Record ``primitive`` on ``invars`` with output avals ``out_avals`` (one aval unless
        it has multiple results); returns its output tracers."""
        names = trace_state.name_stack
        where = source_info.current(2)
        if primitive.multiple_results:
            outvars = [Var(a) for a in out_avals]
            self.eqns.append(Eqn(primitive, invars, outvars, params, names, where))
            return [StagingTracer(self, v) for v in outvars]
        v = Var(out_avals)
        self.eqns.append(Eqn(primitive, invars, [v], params, names, where))
        return StagingTracer(self, v)

    def describe_tracer(self, tracer):
        names = self.debug_info.arg_names
        deps = self._input_dependencies(tracer._var)
        fn = self.debug_info.fun_name
        how = self.debug_info.transform
        if deps and names:
            which = ", ".join(names[i] for i in deps if i < len(names))
            plural = "s" if len(deps) > 1 else ""
            return (f"While tracing the function {fn} for {how}, this concrete value was not "
                    f"available in Python because it depends on the value of the argument{plural} "
                    f"{which}.")
        return (f"While tracing the function {fn} for {how}, this value became a tracer "
                "because it was computed from traced values.")

    def _input_dependencies(self, var):
        producer = {}
        for e in self.eqns:
            for o in e.outvars:
                producer[o] = e
        index = {v: i for i, v in enumerate(self.invars)}
        seen, stack, deps = set(), [var], set()
        while stack:
            v = stack.pop()
            if v in seen or type(v) is Literal:
                continue
            seen.add(v)
            if v in index:
                deps.add(index[v])
            e = producer.get(v)
            if e is not None:
                stack.extend(e.invars)
        return sorted(deps)

    def to_jaxpr(self, outs):
        outvars = [self.to_var(x) for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns, self.debug_info)
        return ClosedJaxpr(jaxpr, self.consts)


def trace_to_jaxpr(flat_fun, in_avals, debug_info=None) -> ClosedJaxpr:
    """Trace ``flat_fun`` (positional arrays in, a list of arrays out) at ``in_avals``.

    The result's consts are the values the function closed over (arrays, NumPy data, or tracers
    of outer transformations)."""
    parent = trace_mod.current_trace()
    trace = StagingTrace(parent, debug_info)
    tracers = [trace.new_arg(a) for a in in_avals]
    frame = refs.push_frame(trace)  # mutable refs of outer frames used inside: core/refs.py
    try:
        with trace_mod.set_current_trace(trace):
            outs = flat_fun(*tracers)
            refs.check_no_refs_returned(outs, trace.debug_info)
            closed = trace.to_jaxpr(outs)
    finally:
        trace.finish()
        touched = refs.pop_frame(frame)
    if touched:
        dbg = trace.debug_info
        raise refs.RefsTouched(touched, dbg.transform, dbg.fun_name, refs.depth() + 1)
    if config.jax_check_tracer_leaks:
        del tracers, outs
        trace_mod.check_no_leaks(trace)
    if config.jax_enable_checks:
        check_jaxpr(closed.jaxpr)
    return closed


def convert_constvars_jaxpr(closed: ClosedJaxpr):
    """Move a closed Jaxpr's constvars to the front of its invars: returns (ClosedJaxpr with no
    consts, the const values)."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    new = Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns, j.debug_info)
    return ClosedJaxpr(new, []), list(closed.consts)


def abstractify(x) -> ShapedArray:
    return get_aval(x)


def stage(x):
    """``lax.stage``: the value ``x`` lifted into the active trace (the identity on its value).
    Under a staging trace a constant becomes a captured constant of the Jaxpr, as in JAX;
    other transformations take constants as they are; outside any trace it is a device
    Array."""
    trace = trace_mod.current_trace()
    if isinstance(x, Tracer):
        return x
    if not trace_mod.is_valid_jaxtype(x):
        raise TypeError(f"lax.stage: expected an array or scalar, got {type(x).__name__}")
    from pyjax._src.dispatch.eager import to_array
    arr = x if isinstance(x, ArrayImpl) else to_array(np.asarray(x))
    if isinstance(trace, StagingTrace):
        return StagingTracer(trace, trace._capture(arr, arr.aval))
    return arr
