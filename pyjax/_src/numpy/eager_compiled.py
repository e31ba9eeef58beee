"""Eager calls of ``jnp`` functions made of several primitives, as one compiled executable.

A reduction or a matrix product binds several primitives (promotion, converts, the reduction,
reshapes), each an eager dispatch of its own. JAX's ``jnp`` functions are jitted, so eagerly
they cost one cached call; ``compiled_when_eager`` does the same here: called outside any
transformation with plain operands, the function runs through ``jit`` with its
configuration parameters static. Under a trace (``jit``, ``grad``, ``vmap``) it is the function
itself, so Jaxprs show its primitives, not a nested call. A list or tuple of arrays
(``jnp.stack([x, y])``) is an operand too; static integer parameters (``axis``, ``k``,
``num``...) given a float or a bool run the function itself, whose check refuses them.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.dispatch.cache import Cache
from pyjax._src.transformations.jit import Jitted

_OPERAND_TYPES = (ArrayImpl, bool, int, float, complex, type(None))


def _integral(a):
    return type(a) is int or isinstance(a, np.integer)


# Parameters that take integers (or tuples of them): 1.0 and True equal 1 as keys, so only
# integers (or None) may key the compiled call, and anything else goes through the
# function's own check (its TypeError for a float axis, say).
_INTEGER_STATICS = frozenset({
    "axis", "axis1", "axis2", "axisa", "axisb", "axisc", "axes", "offset", "k", "num",
    "shift", "new_shape", "decimals", "bins", "size", "m", "N"})


def _plain_integers(value):
    if value is None or _integral(value):
        return True
    return type(value) is tuple and all(_plain_integers(a) for a in value)


def _kind(value, static):
    """False for a value ready for the compiled call, True for a NumPy array to transfer (or
    a list or tuple holding one), None for anything else (a TypeError for an unhashable
    static value)."""
    if static:
        hash(value)
        if type(value) is float and value != value:  # a NaN (a new one misses every key)
            return None
        return None if static in _INTEGER_STATICS and not _plain_integers(value) else False
    t = type(value)
    if t in _OPERAND_TYPES:
        return False
    if t is np.ndarray:
        return True
    if (t is list or t is tuple) and value:
        return _sequence_kind(value)
    return None


def _sequence_kind(seq):
    """A non-empty list or tuple of arrays (``jnp.stack([x, y])``) is a pytree operand;
    one holding Python scalars or nested sequences is not (as an operand each scalar would
    be traced on its own, where the function makes one array of them)."""
    host = False
    for a in seq:
        t = type(a)
        if t is np.ndarray:
            host = True
        elif t is not ArrayImpl:
            return None
    return host


def _to_device(a):
    t = type(a)
    if t is np.ndarray:
        return dispatch.to_array(a)
    if t is list or t is tuple:
        return t(dispatch.to_array(e) if type(e) is np.ndarray else e for e in a)
    return a


def _operands_for_compiled(args, kwargs, static_pos, static_names):
    """``(args, kwargs)`` for the compiled call, with NumPy arrays put on the device (as jit
    would transfer them); None when an operand is of another type. A TypeError: an
    unhashable configuration value or an unsupported NumPy dtype."""
    host = False
    for i, a in enumerate(args):
        h = _kind(a, static_pos.get(i, False))
        if h is None:
            return None
        host |= h
    for k, v in kwargs.items():
        h = _kind(v, k if k in static_names else False)
        if h is None:
            return None
        host |= h
    if host:
        args = tuple(_to_device(a) for a in args)
        kwargs = {k: _to_device(v) for k, v in kwargs.items()}
    return args, kwargs


def compiled_when_eager(*static_argnames):
    """Decorator: eager calls whose operands are all Arrays, NumPy arrays, Python scalars,
    None or non-empty lists/tuples of (NumPy) arrays (and whose ``static_argnames`` values are
    hashable) run as one compiled call per signature. Any other call (under a trace, a list
    of scalars, an unhashable configuration value) runs the function itself, so its
    behaviour and errors are its own."""
    def wrap(fn):
        sig = inspect.signature(fn)
        params = list(sig.parameters)
        static_pos = {i: p for i, p in enumerate(params) if p in static_argnames}
        # keywords passed at their default are left out, so that a call of Arrays alone
        # takes jit's positional hot path
        defaults = {n: p.default for n, p in sig.parameters.items()
                    if p.default is not p.empty}
        static_names = frozenset(static_argnames)
        # (its cache is the "eager jnp" one: fewer signatures kept per function than jit's,
        # as eager code over ever new shapes must not keep an executable for each)
        compiled = Jitted(fn, static_argnames=static_argnames, _cache_name="eager jnp")
        state = trace_mod._state

        # positions before the first configuration parameter: Arrays there go straight on
        first_static = min(static_pos, default=len(params))
        # ``jnp.sum(x, axis=0)``: one jit of ``fn`` per set of configuration keywords, with
        # them bound, so that the call takes jit's positional hot path (keyed by type and
        # value: 1 and True, 0 and 0.0 are equal keys that must not share a program)
        by_keywords = Cache("eager jnp keywords")

        def bound_call(args, kwargs):
            key = tuple([(k, type(v), v) for k, v in kwargs.items()])
            try:
                hash(key)
            except TypeError:  # an unhashable value: the function itself says why
                return None
            jitted = by_keywords.get(key)
            if jitted is None:
                for k, v in kwargs.items():
                    if k not in static_names or _kind(v, k) is not False:
                        return None  # an operand, or a value its own check must see
                kw = dict(kwargs)

                @functools.wraps(fn)
                def bound(*a):
                    return fn(*a, **kw)
                jitted = by_keywords.put(key, Jitted(bound, _cache_name="eager jnp"))
            return jitted(*args)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if state.trace is not None:
                return fn(*args, **kwargs)
            if len(args) <= first_static:
                for a in args:
                    if type(a) is not ArrayImpl:
                        break
                else:  # (the common eager calls: Arrays alone, or with keywords)
                    if kwargs:  # keywords at their defaults (axis=None) are the plain call's
                        kwargs = {k: v for k, v in kwargs.items()
                                  if k not in defaults or v is not defaults[k]}
                    if not kwargs:
                        return compiled(*args)
                    out = bound_call(args, kwargs)
                    if out is not None:
                        return out
            try:
                ready = _operands_for_compiled(args, kwargs, static_pos, static_names)
            except TypeError:  # the function itself says why
                ready = None
            if ready is None:
                return fn(*args, **kwargs)
            args, kwargs = ready
            if kwargs:
                kwargs = {k: v for k, v in kwargs.items()
                          if k not in defaults or v is not defaults[k]}
            # (calls of the leading operands alone, ``jnp.stack([x, y])`` too, take jit's
            # positional hot path: it covers calls that stop before a static position)
            return compiled(*args, **kwargs)
        wrapper.uncompiled = fn
        wrapper.compiled = compiled
        return wrapper
    return wrap
