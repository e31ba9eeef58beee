"""``jax_debug_nans`` / ``jax_debug_infs``: a NaN (or inf) made by an operation raises
``FloatingPointError`` naming the primitive and the user's line that ran it. The same hook
records eager operations as profiler spans while ``pyjax.profiler`` traces.

While a flag is on, eager primitives run through ``checked_apply`` (installed as the eager
apply hook), which reads every floating result back and checks it; the operators' fast paths
step aside (``eager.checking_values``), so every operation passes the check. A jitted call
checks its outputs and, when one is bad, runs the function again op by op (as with
``disable_jit``), so the error points at the operation; JAX does the same.
"""
from __future__ import annotations

import numpy as np

from pyjax._src.core import primitive as primitive_mod
from pyjax._src.core import profiling, source_info, transfer_guard
from pyjax._src.core.config import config
from pyjax._src.dispatch import cache as cache_mod
from pyjax._src.dispatch import eager

PYJAX_DIR = source_info.PYJAX_DIR  # frames inside it are not the user's


def bad_value(outs):
    """"nan" or "inf" when a floating array of ``outs`` has one the flags look for, else
    None."""
    nans, infs = config.jax_debug_nans, config.jax_debug_infs
    for x in outs:
        aval = getattr(x, "aval", None)
        if aval is None or aval.dtype.kind not in "fc" or not aval.size:
            continue
        v = np.asarray(x)
        if nans and np.isnan(v).any():
            return "nan"
        if infs and np.isinf(v).any():
            return "inf"
    return None


def user_frame():
    """``"file:line (function)"`` of the innermost frame outside pyjax (or of the equation
    being evaluated, when a Jaxpr is), or ""."""
    where = source_info.current(2)
    return "" if where is None else str(where)


def error(what, name):
    where = user_frame()
    return FloatingPointError(f"invalid value ({what}) encountered in {name}"
                              + (f", at {where}" if where else ""))


def checked_apply(primitive, args, params):
    """The eager apply hook while a debug flag or the profiler is on: the primitive runs in a
    profiler span and its floating results are checked."""
    with profiling.span(primitive.name, "eager"):
        out = eager.apply_primitive(primitive, args, params)
    if config.jax_debug_nans or config.jax_debug_infs:
        what = bad_value(out if primitive.multiple_results else [out])
        if what is not None:
            raise error(what, primitive.name)
    return out


def _install():
    on = bool(config.jax_debug_nans or config.jax_debug_infs or profiling.active[0]
              or transfer_guard.active[0])
    changed = on != eager.checking_values[0]
    eager.checking_values[0] = on
    primitive_mod.set_eager_apply(checked_apply if on else eager.apply_primitive)
    return changed


def _on_change(_=None):
    """(Re)installs the eager hook for the current flags and profiler state."""
    _install()
    cache_mod.clear_all()  # the operators' fast paths are made again, for the new mode


def _on_guard_change(_=None):
    """A transfer guard set or lifted: only the operators' fast paths (which skip the
    transfer of their cached scalar operands) change, so compiled programs stay."""
    if _install():
        eager.clear_fast_paths()


refresh = _on_change


for _flag in ("jax_debug_nans", "jax_debug_infs"):
    config.on_change(_flag, _on_change)
for _flag in ("jax_transfer_guard",
              *[f"jax_transfer_guard_{d}" for d in transfer_guard.DIRECTIONS]):
    config.on_change(_flag, _on_guard_change)
if config.jax_debug_nans or config.jax_debug_infs or transfer_guard.active[0]:  # environment
    _on_change(None)
