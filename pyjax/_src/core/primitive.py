"""``Primitive``: an operation that every transformation knows how to handle.

A primitive is declared once with all its rules side by side (DESIGN.md):
``abstract_eval`` (avals in, aval(s) out), ``lower`` (StableHLO emission), ``jvp``,
``transpose``, ``batch``, and any rule kind a transformation declared with
``declare_rule_kind``: ``Primitive("p", abstract_eval=..., lower=..., partial_eval=...)``.
A later module adds a rule to an existing primitive with ``p.def_rule(kind, rule)``.

Rules are plain attributes (``p.jvp``), so the interpreters read them at attribute speed; a
kind a primitive has no rule for reads as ``None``.
"""
from __future__ import annotations

from pyjax._src.core import trace as trace_mod

# Every primitive ever declared, by name: for introspection and the completeness tests. Code
# that needs a primitive imports the object (``shape_ops.broadcast_in_dim_p``), never a name.
registry: dict[str, "Primitive"] = {}

from pyjax._src.core.rules import NOT_DIFFERENTIABLE  # noqa: F401,E402

_state = trace_mod._state
_Tracer = trace_mod.Tracer
_eager_apply = None  # set by dispatch.eager

# rule kind -> one line saying who reads it and what it is
_rule_kinds: dict[str, str] = {}


def set_eager_apply(fn):
    global _eager_apply
    _eager_apply = fn


def declare_rule_kind(kind: str, doc: str = "") -> None:
    """Declare a kind of rule that primitives may carry (once, by the transformation that
    reads it). Afterwards ``Primitive(..., kind=rule)`` and ``p.def_rule(kind, rule)`` accept it,
    and ``p.<kind>`` is the rule or ``None``. Declaring a kind again is a no-op."""
    if kind in _rule_kinds:
        return
    if (not kind.isidentifier() or kind.startswith("_") or hasattr(Primitive, kind)
            or kind in ("name", "multiple_results", "impl", "linear", "effectful")):
        raise ValueError(f"cannot declare rule kind {kind!r}: not a name, or taken by an "
                         "attribute of Primitive")
    _rule_kinds[kind] = doc
    setattr(Primitive, kind, None)  # the default every primitive reads until it has a rule


def rule_kinds() -> dict[str, str]:
    """The declared rule kinds, with their descriptions."""
    return dict(_rule_kinds)


class with_self:
    """A rule that needs the primitive it belongs to: ``with_self(lambda prim: rule)`` in a
    declaration (or ``def_rule``) is replaced by ``factory(prim)``. Generic rule builders use it
    (``batch_util.elementwise_rule()``), so that they bind the primitive object itself."""

    __slots__ = ("factory",)

    def __init__(self, factory):
        self.factory = factory


class Primitive:
    # No __slots__: rule kinds declared later become attributes (class default None).
    def __init__(self, name, *, abstract_eval, lower, multiple_results=False, impl=None,
                 linear=False, effectful=False, **rules):
        self.name = name
        self.multiple_results = multiple_results
        self.impl = impl  # optional eager implementation that bypasses compilation
        self.linear = linear
        # Has an effect beyond its outputs (host callbacks): never dropped as dead code.
        self.effectful = effectful
        if name in registry:
            raise ValueError(f"primitive {name!r} declared twice")
        self.def_rule("abstract_eval", abstract_eval)
        self.def_rule("lower", lower)
        for kind, rule in rules.items():
            self.def_rule(kind, rule)
        registry[name] = self

    def def_rule(self, kind: str, rule):
        """Give this primitive its rule of ``kind`` (a declared kind); returns the rule."""
        if kind not in _rule_kinds:
            raise TypeError(f"primitive {self.name!r}: unknown rule kind {kind!r}; the declared "
                            f"kinds are {sorted(_rule_kinds)} (see declare_rule_kind)")
        if type(rule) is with_self:
            rule = rule.factory(self)
        setattr(self, kind, rule)
        return rule

    def rules(self) -> dict:
        """This primitive's rules by kind (kinds without a rule are left out)."""
        return {k: getattr(self, k) for k in _rule_kinds if getattr(self, k) is not None}

    def bind(self, *args, **params):
        """Hand this primitive to the current trace (eager evaluation when none is set)."""
        t = _state.trace
        if t is None:  # eager: the hot path, without the trace object in between
            return _eager_apply(self, args, params)
        if _state.compile_time_eval and not any(isinstance(a, _Tracer) for a in args):
            return _eager_apply(self, args, params)
        return t.process_primitive(self, args, params)

    def __repr__(self):
        return self.name

    __str__ = __repr__


for _kind, _doc in [
        ("abstract_eval", "abstract_eval(*avals, **params) -> aval(s); every primitive"),
        ("lower", "lower(ctx, *operands, **params) -> mlir.Value(s); every primitive"),
        ("jvp", "forward mode (core/rules.py), or NOT_DIFFERENTIABLE"),
        ("transpose", "reverse mode of linear primitives (core/rules.py)"),
        ("batch", "vmap (core/rules.py)"),
        ("axis_aware", "vmap: uses_axis(params, axis_name) -> bool; the batch rule of such a "
                       "primitive gets axis_data= and runs when the application uses the "
                       "trace's named axis, even with no batched operand")]:
    declare_rule_kind(_kind, _doc)
