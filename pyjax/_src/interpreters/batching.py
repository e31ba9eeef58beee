"""Batching: the trace behind ``vmap``.

A ``BatchTracer`` stands for one example of a batch: it holds the whole batched value and the
axis of it that is mapped (its ``aval`` is the per-example one). Values that are not this trace's
tracers (arrays, NumPy data, tracers of other transformations) are unbatched: ``not_mapped``.
A primitive whose operands are all unbatched is bound unbatched on the parent trace, so
unbatched work stays unbatched; otherwise its batching rule (declared with the primitive, see
``core/rules.py``) runs with the parent trace current and says where the output's batch axis is.

Collectives over named axes (``lax.psum`` and friends) and calls whose bodies use them are
declared with an ``axis_aware`` rule ((params, axis_name) -> bool): the trace that binds the
name handles them even when no operand is batched, and their batch rules get ``axis_data``.

A higher-order primitive whose params hold a Jaxpr (``jit``, and later checkpoint, custom
derivatives, control flow) batches its body with ``batch_jaxpr`` and rebinds itself on the
batched values (see ``_jit_batch`` in jit.py); it is declared with
``axis_aware=parallel.params_use_axis`` so that its rule receives ``axis_data`` and so that a body
using a named axis is batched even when no operand is.
"""
from __future__ import annotations

import weakref
from typing import Any, NamedTuple

from pyjax._src.core import trace as trace_mod
from pyjax._src.core.jaxpr import cache_for, eval_jaxpr
from pyjax._src.core.rules import not_mapped
from pyjax._src.core.trace import Trace, Tracer, get_aval
from pyjax._src.core.sharded_array import ShardedShapedArray
from pyjax._src.interpreters import staging
from pyjax._src.lax import batch_util

__all__ = ["AxisData", "BatchTrace", "BatchTracer", "not_mapped", "batch_jaxpr", "move_axis",
           "broadcast_batched"]

_state = trace_mod._state
move_axis = batch_util.move_axis
broadcast_batched = batch_util.broadcast_batched


class AxisData(NamedTuple):
    """The mapped axis of one ``vmap``: its name (or None), size and ``spmd_axis_name``."""
    name: Any
    size: int
    spmd_name: Any = None


def _aval(x):
    a = getattr(x, "aval", None)
    return a if a is not None and not isinstance(x, type) else get_aval(x)


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim", "_aval")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        a = _aval(val)
        if batch_dim is not_mapped:
            self._aval = a
        else:
            s = a.shape
            self._aval = a.update(shape=s[:batch_dim] + s[batch_dim + 1:])

    @property
    def aval(self):
        return self._aval

    def __repr__(self):
        return (f"Traced<{self._aval.str_short()}>with<BatchTrace> with val = {self.val!r}, "
                f"batch_dim = {self.batch_dim}")


class BatchTrace(Trace):
    """The trace of one ``vmap``; ``parent`` is the trace that was current when it began
    (``None`` for eager evaluation)."""

    def __init__(self, parent, axis_data: AxisData):
        super().__init__(parent)
        self.axis_data = axis_data

    def unwrap(self, x):
        """``(value, batch_dim)`` of anything: ``not_mapped`` unless it is our tracer."""
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped

    def wrap(self, val, dim):
        return val if dim is not_mapped else BatchTracer(self, val, dim)

    def process_primitive(self, primitive, args, params):
        vals, dims = [], []
        mapped = False
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                vals.append(x.val)
                dims.append(x.batch_dim)
                mapped = mapped or x.batch_dim is not not_mapped
            else:
                if isinstance(x, Tracer):
                    trace_mod.check_tracer_live(x)
                vals.append(x)
                dims.append(not_mapped)
        uses_axis = primitive.axis_aware
        name = self.axis_data.name
        aware = uses_axis is not None
        prev = _state.trace
        _state.trace = self.parent
        try:
            if not mapped and not (aware and name is not None and uses_axis(params, name)):
                return primitive.bind(*vals, **params)
            rule = primitive.batch
            if rule is None:
                raise NotImplementedError(
                    f"Batching rule for '{primitive.name}' not implemented: vmap of a function "
                    f"that applies {primitive.name} to a batched value is not supported yet.")
            if aware:
                out, out_dim = rule(vals, dims, axis_data=self.axis_data, **params)
            else:
                out, out_dim = rule(vals, dims, **params)
        finally:
            _state.trace = prev
        if primitive.multiple_results:
            return [self.wrap(o, d) for o, d in zip(out, out_dim)]
        return self.wrap(out, out_dim)


# ---- batching a Jaxpr (for call primitives such as jit) ----

_jaxpr_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _batched_aval(aval, dim, size):
    if dim is not_mapped:
        return aval
    s = aval.shape
    return aval.update(shape=s[:dim] + (size,) + s[dim:])


def typed_avals_of(args):
    """The avals of a call's batched operands when some are split over Explicit mesh axes
    (``batch_jaxpr``'s ``typed_avals``), else None (the common case, unchanged)."""
    avals = [_aval(x) for x in args]
    return avals if any(type(a) is ShardedShapedArray for a in avals) else None


def batch_jaxpr(closed, dims, axis_data: AxisData, force=None, typed_avals=None):
    """The Jaxpr that computes ``closed`` on a batch: its inputs are batched at ``dims``
    (``not_mapped`` for unbatched ones) and its batched outputs are batched at axis 0. Output
    ``j`` is batched even when it need not be if ``force[j]`` (loops force their carries).

    Returns ``(batched ClosedJaxpr without consts, its leading const values, out_dims)``; the
    const values must be passed (unbatched) before the inputs. Cached per ``closed``.
    ``typed_avals``: the batched inputs' own avals when some are split over Explicit mesh axes
    (sharding in types: the body is traced on them, so its results keep their shardings)."""
    if force is not None:
        force = tuple(force) if any(force) else None
    key = (tuple(dims), axis_data, force)
    if typed_avals is not None:
        key = key + (tuple(typed_avals),)
    per = cache_for(_jaxpr_cache, closed)
    hit = per.get(key)
    if hit is not None:
        return hit
    in_avals = list(typed_avals) if typed_avals is not None else \
        [_batched_aval(a, d, axis_data.size) for a, d in zip(closed.in_avals, dims)]
    out_dims = []

    def fun(*xs):
        trace = BatchTrace(_state.trace, axis_data)
        args = [trace.wrap(x, d) for x, d in zip(xs, dims)]
        try:
            with trace_mod.set_current_trace(trace):
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        finally:
            trace.finish()
        res = []
        for j, o in enumerate(outs):
            v, d = trace.unwrap(o)
            if d is not not_mapped:
                v = move_axis(v, d, 0)
                d = 0
            elif force is not None and force[j]:
                v = broadcast_batched(v, axis_data.size, 0)
                d = 0
            res.append(v)
            out_dims.append(d)
        return res

    name = getattr(closed.jaxpr.debug_info, "fun_name", "fun")
    traced = staging.trace_to_jaxpr(fun, in_avals, staging.DebugInfo(name, None, "vmap"))
    new, consts = staging.convert_constvars_jaxpr(traced)
    hit = (new, consts, out_dims)
    if not any(isinstance(c, Tracer) for c in consts):
        per[key] = hit
    return hit
