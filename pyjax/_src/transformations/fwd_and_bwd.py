"""``jax.fwd_and_bwd``: a function's forward and backward passes as two functions, so that the
backward pass compiles once and is reused across iterations (``vjp``'s pullback is a pytree of
residuals, so it crosses ``jit`` boundaries as the "residuals")."""
from __future__ import annotations

import operator

from pyjax._src.transformations.grad import vjp
from pyjax._src.transformations.jit import jit


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """``(fwd, bwd)``: ``fwd(*primals)`` is ``(fun(*primals), residuals)`` (``+ (aux,)`` with
    ``has_aux``); ``bwd(residuals, cotangent)`` the cotangents of the arguments ``argnums``
    (one value for an int, a tuple for a sequence). ``jitted``: both are ``jax.jit``-ed."""
    if not callable(fun):
        raise TypeError(f"fwd_and_bwd: fun must be callable, got {fun!r}")
    single = not isinstance(argnums, (tuple, list))
    nums = (operator.index(argnums),) if single else tuple(map(operator.index, argnums))
    if not nums or len(set(nums)) != len(nums) or min(nums) < 0:
        raise ValueError(f"fwd_and_bwd: argnums must be distinct nonnegative ints, got "
                         f"{argnums!r}")

    def fwd(*args):
        if max(nums) >= len(args):
            raise TypeError(f"fwd_and_bwd: argnums {argnums!r} for a call with {len(args)} "
                            "positional arguments")

        def of_diff(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return fun(*full)
        out = vjp(of_diff, *[args[i] for i in nums], has_aux=has_aux)
        return out  # (primals_out, pullback) or (primals_out, pullback, aux)

    def bwd(residuals, cotangent):
        cts = residuals(cotangent)
        return cts[0] if single else tuple(cts)

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
