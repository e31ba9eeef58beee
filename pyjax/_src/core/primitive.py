"""``Primitive``: an operation that every transformation knows how to handle.

A primitive is declared once with all its rules side by side (DESIGN.md):
``abstract_eval`` (avals in, aval(s) out), ``lower`` (StableHLO emission), and the
``jvp``/``transpose``/``batch`` rules that the autodiff and vmap work add to the same declaration.
"""
from __future__ import annotations

from pyjax._src.core import trace as trace_mod

# Every primitive ever declared, by name; the completeness tests walk this.
registry: dict[str, "Primitive"] = {}

from pyjax._src.core.rules import NOT_DIFFERENTIABLE  # noqa: F401,E402

_state = trace_mod._state
_eager_apply = None  # set by dispatch.eager


def set_eager_apply(fn):
    global _eager_apply
    _eager_apply = fn


class Primitive:
    __slots__ = ("name", "abstract_eval", "lower", "jvp", "transpose", "batch",
                 "multiple_results", "impl", "linear", "__weakref__")

    def __init__(self, name, *, abstract_eval, lower, jvp=None, transpose=None, batch=None,
                 multiple_results=False, impl=None, linear=False):
        self.name = name
        self.abstract_eval = abstract_eval
        self.lower = lower
        self.jvp = jvp
        self.transpose = transpose
        self.batch = batch
        self.multiple_results = multiple_results
        self.impl = impl  # optional eager implementation that bypasses compilation
        self.linear = linear
        if name in registry:
            raise ValueError(f"primitive {name!r} declared twice")
        registry[name] = self

    def bind(self, *args, **params):
        """Hand this primitive to the current trace (eager evaluation when none is set)."""
        t = _state.trace
        if t is None:  # eager: the hot path, without the trace object in between
            return _eager_apply(self, args, params)
        return t.process_primitive(self, args, params)

    def __repr__(self):
        return self.name

    __str__ = __repr__
