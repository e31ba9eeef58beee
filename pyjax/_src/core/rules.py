"""The vocabulary that primitives' transformation rules share (layer 1, so lax can use it).

Rule signatures (each given in the primitive's single ``Primitive(...)`` declaration):

* ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``: ``primals`` and ``tangents``
  are tuples with one entry per operand; a tangent may be a symbolic ``Zero``; ``tangent_out``
  may be a ``Zero`` (lists of outputs for ``multiple_results`` primitives).
* ``transpose(cts, *args, **params) -> list``: for linear primitives. ``cts`` is the output
  cotangent (a list for ``multiple_results``), possibly a ``Zero``. Each of ``args`` is an
  ``UndefinedPrimal`` for the linear inputs and a value for the others. Returns one cotangent
  per argument (``None`` for the non-linear ones, or a ``Zero``).
* ``batch(args, dims, **params) -> (out, out_dim)``: ``dims`` has one entry per operand, an int
  (the batch axis) or ``not_mapped``; returns the output and its batch axis (lists of both for
  ``multiple_results``).

Primitives declared with an ``axis_aware`` rule (``(params, axis_name) -> bool``: collectives,
call primitives) receive an extra ``axis_data=`` keyword in their ``batch`` rule.

``lower_fun(fn)`` as a primitive's ``lower`` writes its lowering as a Python function of other
primitives (``fn(*operands, **params)``), traced and inlined where the primitive is lowered.

``NOT_DIFFERENTIABLE`` as a primitive's ``jvp`` marks it as having zero derivative / no JVP
(integer-valued outputs such as comparisons, argmax, iota).
"""
from __future__ import annotations

from pyjax._src.core.abstract import HoldsAval

not_mapped = None

NOT_DIFFERENTIABLE = "not differentiable"


class Zero(HoldsAval):
    """A symbolic zero tangent or cotangent of the given abstract value (no array is built)."""

    __slots__ = ()


class UndefinedPrimal(HoldsAval):
    """Stands for a linear input of a primitive being transposed."""

    __slots__ = ()


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


def lower_fun(fn, multiple_results=False):
    """A lowering rule made of ``fn(*operands, **params)``, a function of lax operations (or
    any traceable code): where the primitive is lowered, the lowering driver traces ``fn`` on
    the operands' abstract values and lowers the result inline (``ctx.lower_fun``). Use it for
    composite primitives (decompositions, loops, special functions). ``fn`` returns one array,
    or a sequence of them when ``multiple_results``; it may close over concrete values (they
    become constants), not over traced ones."""
    def lower(ctx, *operands, **params):
        out = ctx.lower_fun(fn, operands, params, multiple_results=multiple_results)
        for o, want in zip(out if multiple_results else [out], ctx.avals_out):
            if o.aval.shape != want.shape or o.aval.dtype != want.dtype:
                raise TypeError(f"lower_fun({getattr(fn, '__name__', fn)}) gave "
                                f"{o.aval.str_short()} where the primitive's abstract_eval "
                                f"says {want.str_short()}")
        return out
    lower.__name__ = f"lower_fun({getattr(fn, '__name__', 'fn')})"
    lower.fn = fn  # for introspection
    return lower
