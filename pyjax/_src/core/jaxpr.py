"""The Jaxpr IR: a small typed first-order program, with JAX's printer, a checker and an evaluator."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import source_info
from pyjax._src.core.abstract import HoldsAval, ShapedArray


class Var(HoldsAval):
    """A variable in a Jaxpr, identified by object identity."""

    __slots__ = ()


class Literal:
    """A scalar constant written inline in a Jaxpr."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val})"

    def pp(self):
        v = self.val
        if isinstance(v, (bool, np.bool_)):
            s = str(bool(v))
        elif isinstance(v, (int, float, complex)):
            s = str(np.asarray(v, self.aval.dtype)[()])
        else:
            s = str(np.asarray(v)[()])
        return f"{s}:{self.aval.str_short()}"


class Eqn:
    __slots__ = ("primitive", "invars", "outvars", "params", "name_stack", "source_info")

    def __init__(self, primitive, invars, outvars, params, name_stack="", source_info=None):
        self.primitive = primitive
        self.invars = invars
        self.outvars = outvars
        self.params = params
        self.name_stack = name_stack  # jax.named_scope names; the lowering's op locations
        # the user's frame that bound it (core/source_info.SourceInfo), or None
        self.source_info = source_info

    def __repr__(self):
        return f"Eqn({self.primitive.name})"


class Jaxpr:
    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info")

    def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.debug_info = debug_info

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A Jaxpr together with the values of its constvars. Hashed by identity."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **_):
        return str(self)


# ---- printing, in JAX's format ----

def _name(i):
    s = ""
    i += 1
    while i > 0:
        i, r = divmod(i - 1, 26)
        s = chr(ord("a") + r) + s
    return s


class _Names:
    def __init__(self):
        self.names = {}

    def __call__(self, v):
        if isinstance(v, Literal):
            return v.pp()
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = _name(len(self.names))
        return n

    def binder(self, v):
        return f"{self(v)}:{v.aval.str_short()}"


def _pp_param(value, names, indent):
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return _pp(value, names, indent + 2, force_multiline=True)
    if _is_jaxpr_tuple(value):  # e.g. cond's branches: one per line, as JAX prints them
        pad = " " * (indent + 6)
        inner = "".join(f"\n{pad}{_pp(getattr(x, 'jaxpr', x), names, indent + 4)}"
                        for x in value)
        return f"({inner}\n{' ' * (indent + 4)})"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # e.g. GatherDimensionNumbers
        fields = ", ".join(f"{k}={_pp_param(v, names, indent)}"
                           for k, v in zip(value._fields, value))
        return f"{type(value).__name__}({fields})"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_pp_param(x, names, indent) for x in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else (
            f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _pp_eqn(eqn, names, indent):
    lhs = " ".join(names.binder(v) for v in eqn.outvars)
    params = ""
    if eqn.params:
        params = "[" + " ".join(f"{k}={_pp_param(v, names, indent)}"
                               for k, v in sorted(eqn.params.items())) + "]"
    args = " ".join(names(v) for v in eqn.invars)
    head = f"{lhs} = " if lhs else ""  # an equation without results has no binders (as JAX)
    return f"{head}{eqn.primitive.name}{params} {args}".rstrip()


def _is_jaxpr_tuple(value):
    return (isinstance(value, tuple) and bool(value)
            and all(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in value))


def _has_subjaxpr(jaxpr):
    return any(isinstance(p, (Jaxpr, ClosedJaxpr)) or _is_jaxpr_tuple(p)
               for e in jaxpr.eqns for p in e.params.values())


def _eqn_or_inner(eqn, pred) -> bool:
    """``pred(eqn)``, or ``pred`` of an equation of a Jaxpr among ``eqn``'s params."""
    if pred(eqn):
        return True
    for p in eqn.params.values():
        subs = p if _is_jaxpr_tuple(p) else (p,) if isinstance(p, (Jaxpr, ClosedJaxpr)) else ()
        for sub in subs:
            j = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
            if any(_eqn_or_inner(e, pred) for e in j.eqns):
                return True
    return False


def eqn_has_effects(eqn) -> bool:
    """Whether ``eqn`` has an effect beyond its outputs: an effectful primitive (a host
    callback), or one holding a Jaxpr that has such an equation. Dead-code elimination keeps
    these."""
    return _eqn_or_inner(eqn, lambda e: e.primitive.effectful)


def has_ordered_effects(jaxpr: Jaxpr) -> bool:
    """Whether ``jaxpr`` has an effect that must keep its order across program executions
    (a host callback with ``ordered=True``)."""
    pred = lambda e: e.primitive.effectful and bool(e.params.get("ordered"))  # noqa: E731
    return any(_eqn_or_inner(e, pred) for e in jaxpr.eqns)


def _pp(jaxpr: Jaxpr, names=None, indent=0, force_multiline=False):
    names = names or _Names()
    consts = " ".join(names.binder(v) for v in jaxpr.constvars)
    ins = " ".join(names.binder(v) for v in jaxpr.invars)
    eqns = [_pp_eqn(e, names, indent) for e in jaxpr.eqns]
    outs = ", ".join(names(v) for v in jaxpr.outvars)
    outs = f"({outs},)" if len(jaxpr.outvars) == 1 else f"({outs})"
    head = f"{{ lambda {consts};{' ' + ins if ins else ''}. let"
    one_line = f"{head} {'; '.join(eqns)} in {outs} }}"
    if not force_multiline and len(one_line) + indent <= 80 and not _has_subjaxpr(jaxpr):
        return one_line
    pad = " " * indent
    body = "".join(f"\n{pad}    {e}" for e in eqns)
    return f"{head}{body}\n{pad}  in {outs} }}"


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    return _pp(jaxpr)


# ---- type checking ----

class JaxprTypeError(TypeError):
    pass


def check_jaxpr(jaxpr: Jaxpr):
    """Check that every variable is defined once before use and that each equation's output
    types are what its primitive's abstract evaluation says."""
    defined = set()

    def define(v):
        if v in defined:
            raise JaxprTypeError(f"variable {v} defined twice")
        defined.add(v)

    def read(v):
        if isinstance(v, Literal):
            return v.aval
        if v not in defined:
            raise JaxprTypeError(f"variable {v} used before it is defined")
        return v.aval

    for v in jaxpr.constvars + jaxpr.invars:
        define(v)
    from pyjax._src.core.sharding_rules import typed_abstract_eval  # it imports this module
    for i, eqn in enumerate(jaxpr.eqns):
        in_avals = [read(v) for v in eqn.invars]
        out = typed_abstract_eval(eqn.primitive, in_avals, eqn.params)
        out = list(out) if eqn.primitive.multiple_results else [out]
        got = [v.aval for v in eqn.outvars]
        if out != got:
            raise JaxprTypeError(
                f"equation {i} ({eqn.primitive.name}) declares outputs "
                f"{[a.str_short() for a in got]} but its inputs give {[a.str_short() for a in out]}")
        for v in eqn.outvars:
            define(v)
    for v in jaxpr.outvars:
        read(v)


# ---- evaluation ----

def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Run a Jaxpr by binding each equation's primitive under the current trace."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"Jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(v):
        return v.val if type(v) is Literal else env[v]

    saved = source_info.override[0]
    try:
        for eqn in jaxpr.eqns:
            source_info.override[0] = eqn.source_info or saved
            out = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
            if eqn.primitive.multiple_results:
                for v, x in zip(eqn.outvars, out):
                    env[v] = x
            else:
                env[eqn.outvars[0]] = out
    finally:
        source_info.override[0] = saved
    return [read(v) for v in jaxpr.outvars]


def cache_for(cache, closed):
    """The dict of results cached for ``closed`` in the weak-keyed ``cache`` (a
    ``WeakKeyDictionary``: derived Jaxprs live exactly as long as the Jaxpr they derive from).
    Derived Jaxprs are cached so that rebinding a primitive gives the same (identity-hashed)
    params, which keeps the eager executable cache hitting."""
    per = cache.get(closed)
    if per is None:
        per = cache[closed] = {}
    return per


def jaxpr_as_fun(closed: ClosedJaxpr):
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return fun
