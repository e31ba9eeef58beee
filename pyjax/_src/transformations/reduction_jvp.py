"""Forward mode of the generic ``reduce`` and ``reduce_window`` primitives (a user computation
as the body), installed on them from here because it needs ``jvp`` of a Python function.

As JAX: the reduction runs over (primal, tangent) pairs with the JVP of the user's computation
as its body, so the tangent of each result is the tangent of the element(s) the computation
combined. Only forward mode: reverse mode would need a transpose of a general reduction, which
JAX does not have either. Init values must not carry tangents (JAX's rule)."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.rules import Zero
from pyjax._src.lax import user_reductions as uc
from pyjax._src.lax import windowed_reductions as wr
from pyjax._src.lax.ad_util import instantiate, zero_tangent
from pyjax._src.lax.base import aval_of
from pyjax._src.transformations.grad import jvp


class _JvpComputation:
    """The body over ``(primals..., float tangents...)``: ``computation``'s JVP. ``floats``
    are the operands with inexact dtypes (the others have float0 tangents, carried as none)."""

    __slots__ = ("computation", "n", "floats")

    def __init__(self, computation, n, floats):
        self.computation, self.n, self.floats = computation, n, floats

    def __call__(self, left, right):
        n, floats = self.n, self.floats

        def tangents(ts):
            full = [np.zeros((), dtypes.float0)] * n
            for i, t in zip(floats, ts):
                full[i] = t
            return full
        primals = list(left[:n]) + list(right[:n])
        tans = tangents(left[n:]) + tangents(right[n:])
        out, t_out = jvp(lambda *a: tuple(self.computation(a[:n], a[n:])), primals, tans)
        return list(out) + [t_out[i] for i in floats]

    def __eq__(self, other):
        return (type(other) is _JvpComputation and other.computation == self.computation
                and other.n == self.n and other.floats == self.floats)

    def __hash__(self):
        return hash((_JvpComputation, self.computation, self.n, self.floats))


def _make_jvp(prim, name):
    def rule(primals, tangents, *, computation, **params):
        n = len(primals) // 2
        if not all(type(t) is Zero for t in tangents[n:]):
            raise TypeError(f"{name} jvp does not support non-zero init_value_tangent.")
        xs, inits = list(primals[:n]), list(primals[n:])
        floats = tuple(i for i, x in enumerate(xs) if dtypes.is_inexact(aval_of(x).dtype))
        txs = [instantiate(tangents[i]) for i in floats]
        t_inits = [np.zeros((), aval_of(xs[i]).dtype) for i in floats]
        body = _JvpComputation(computation, n, floats)
        outs = prim.bind(*xs, *txs, *inits, *t_inits, computation=body, **params)
        # the primal results again without the tangents, so that they stay unbatched when
        # only the tangents are (jacfwd's pushforward under vmap)
        primal_out = prim.bind(*xs, *inits, computation=computation, **params)
        float_t = iter(outs[n:])
        t_out = [next(float_t) if i in floats else zero_tangent(aval_of(primal_out[i]))
                 for i in range(n)]
        return list(primal_out), t_out
    rule.__name__ = f"{prim.name}_jvp"
    return rule


uc.reduce_p.def_rule("jvp", _make_jvp(uc.reduce_p, "reduce"))
wr.reduce_window_p.def_rule("jvp", _make_jvp(wr.reduce_window_p, "reduce_window"))
