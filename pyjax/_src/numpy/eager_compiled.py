"""Eager calls of ``jnp`` functions made of several primitives, as one compiled executable.

A reduction or a matrix product binds several primitives (promotion, converts, the reduction,
reshapes), each an eager dispatch of its own. JAX's ``jnp`` functions are jitted, so eagerly
they cost one cached call; ``compiled_when_eager`` does the same here: called outside any
transformation with plain operands, the function runs through ``jit`` with its
configuration parameters static. Under a trace (``jit``, ``grad``, ``vmap``) it is the function
itself, so Jaxprs show its primitives, not a nested call.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from pyjax._src.core import trace as trace_mod
from pyjax._src.core.array import ArrayImpl
from pyjax._src.interpreters import dispatch
from pyjax._src.interpreters.jit import jit

_OPERAND_TYPES = (ArrayImpl, bool, int, float, complex, type(None))
# Signatures kept per function: eager code over ever new shapes must not keep an executable
# for each (the oldest is dropped and compiled again if it comes back).
_MAX_SIGNATURES = 128


def _with_device_arrays(values):
    """``values`` with NumPy arrays put on the device (TypeError for unsupported dtypes)."""
    return tuple(dispatch.to_array(v) if type(v) is np.ndarray else v for v in values)


def compiled_when_eager(*static_argnames):
    """Decorator: eager calls whose operands are all Arrays, NumPy arrays, Python scalars or
    None (and whose ``static_argnames`` values are hashable) run as one compiled call per
    signature; any other
    call (under a trace, NumPy or list operands, an unhashable configuration value) runs the
    function itself, so behaviour and errors are the function's own."""
    def wrap(fn):
        params = list(inspect.signature(fn).parameters)
        static_pos = frozenset(i for i, p in enumerate(params) if p in static_argnames)
        static_names = frozenset(static_argnames)
        compiled = jit(fn, static_argnames=static_argnames)
        compiled.max_entries = _MAX_SIGNATURES
        state = trace_mod._state
        operand_types = _OPERAND_TYPES

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if state.trace is not None:
                return fn(*args, **kwargs)
            try:
                for i, a in enumerate(args):
                    if i in static_pos:
                        hash(a)
                    elif type(a) not in operand_types:
                        if type(a) is not np.ndarray:
                            return fn(*args, **kwargs)
                        args = _with_device_arrays(args)  # as jit would transfer them
                        break
                for k, v in kwargs.items():
                    if k in static_names:
                        hash(v)
                    elif type(v) not in operand_types:
                        if type(v) is not np.ndarray:
                            return fn(*args, **kwargs)
                        kwargs = dict(zip(kwargs, _with_device_arrays(kwargs.values())))
                        break
            except TypeError:  # an unhashable configuration value, an unsupported dtype:
                return fn(*args, **kwargs)  # the function says why
            return compiled(*args, **kwargs)
        wrapper.uncompiled = fn
        wrapper.compiled = compiled
        return wrapper
    return wrap
