"""The primitives of ``lax.split``, ``lax.stack``, ``lax.unstack``, ``lax.tile`` and
``lax.mulhi``: JAX 0.10.2 has each as a primitive of its own (``split_p``, ...), so Jaxprs show
``split[axis=0 sizes=(1, 2)]`` and a Jaxpr walk can compare ``eqn.primitive is lax.split_p``.

Each lowers to the existing primitives it is made of (``lower_fun``): slices, broadcasts and
reshapes, the limb products of ``mulhi``. The first four are linear; their transposes are each
other (split <-> concatenate, stack <-> unstack) and a sum over the repeats for tile."""
from __future__ import annotations

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import NOT_DIFFERENTIABLE, Zero, is_undefined_primal, lower_fun
from pyjax._src.lax import base
from pyjax._src.lax import batch_util as bu
from pyjax._src.lax.ad_util import instantiate, linear_jvp, zero_cts, zero_tangent
from pyjax._src.lax.base import aval_of

__all__ = ["split_p", "stack_p", "unstack_p", "tile_p", "mulhi_p"]


def _aval(x):
    return x.aval if is_undefined_primal(x) else aval_of(x)


def _multi_linear_jvp(prim):
    """The JVP of a linear primitive with several operands or results: the primitive of the
    tangents (zeros instantiated), or zeros when every tangent is zero."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = out if prim.multiple_results else [out]
        if all(type(t) is Zero for t in tangents):
            zs = [zero_tangent(aval_of(o)) for o in outs]
            return out, zs if prim.multiple_results else zs[0]
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)
    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


# ---- split ---------------------------------------------------------------------------------

def _split_abstract_eval(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"split: axis {axis} is out of bounds for an operand of shape "
                         f"{x.shape}")
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
        raise ValueError(f"split: sizes must be nonnegative and sum to the size of axis "
                         f"{axis} of the operand, got sizes={sizes} for shape {x.shape}")
    return [ShapedArray(x.shape[:axis] + (s,) + x.shape[axis + 1:], x.dtype, x.weak_type)
            for s in sizes]


def _split_lowering(x, *, sizes, axis):
    out, start = [], 0
    for s in sizes:
        out.append(shape_ops.slice_in_dim(x, start, start + s, axis=axis))
        start += s
    return out


def _split_transpose(cts, x, *, sizes, axis):
    shape = x.aval.shape
    pieces = [instantiate(ct) if type(ct) is not Zero else
              instantiate(Zero(ShapedArray(shape[:axis] + (s,) + shape[axis + 1:],
                                           x.aval.dtype)))
              for ct, s in zip(cts, sizes)]
    if all(type(ct) is Zero for ct in cts):
        return [Zero(x.aval)]
    return [shape_ops.concatenate(pieces, axis)]


def _split_batch(args, dims, *, sizes, axis):
    (x,), (d,) = args, dims
    return split_p.bind(x, sizes=sizes, axis=bu.to_batched_axis(axis, d)), [d] * len(sizes)


split_p = Primitive("split", abstract_eval=_split_abstract_eval,
                    lower=lower_fun(_split_lowering, multiple_results=True),
                    multiple_results=True, linear=True, transpose=_split_transpose,
                    batch=_split_batch)
split_p.def_rule("jvp", _multi_linear_jvp(split_p))


# ---- stack / unstack ------------------------------------------------------------------------

def _stack_abstract_eval(*xs, axis):
    if not xs:
        raise ValueError("stack requires at least one operand")
    if len({x.shape for x in xs}) != 1:
        raise ValueError(f"stack: all operands must have one shape, got "
                         f"{[x.shape for x in xs]}")
    base.check_same_dtypes("stack", xs)
    if not 0 <= axis <= xs[0].ndim:
        raise ValueError(f"stack: axis {axis} is out of bounds for operands of rank "
                         f"{xs[0].ndim}")
    s = xs[0].shape
    return ShapedArray(s[:axis] + (len(xs),) + s[axis:], xs[0].dtype, base.all_weak(xs))


def _stack_lowering(*xs, axis):
    return shape_ops.concatenate([shape_ops.expand_dims(x, (axis,)) for x in xs], axis)


def _stack_transpose(ct, *xs, axis):
    if type(ct) is Zero:
        return zero_cts(xs)
    pieces = unstack_p.bind(ct, axis=axis)
    return [p if is_undefined_primal(x) else None for p, x in zip(pieces, xs)]


def _stack_batch(args, dims, *, axis):
    size = bu.batch_size(args, dims)
    xs = [bu.bdim_to(x, d, 0, size) for x, d in zip(args, dims)]
    return stack_p.bind(*xs, axis=axis + 1), 0


stack_p = Primitive("stack", abstract_eval=_stack_abstract_eval,
                    lower=lower_fun(_stack_lowering), linear=True,
                    transpose=_stack_transpose, batch=_stack_batch)
stack_p.def_rule("jvp", _multi_linear_jvp(stack_p))


def _unstack_abstract_eval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"unstack: axis {axis} is out of bounds for an operand of shape "
                         f"{x.shape}")
    piece = ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype, x.weak_type)
    return [piece] * x.shape[axis]


def _unstack_lowering(x, *, axis):
    return [shape_ops.squeeze(shape_ops.slice_in_dim(x, i, i + 1, axis=axis), (axis,))
            for i in range(aval_of(x).shape[axis])]


def _unstack_transpose(cts, x, *, axis):
    if all(type(ct) is Zero for ct in cts):
        return [Zero(x.aval)]
    piece = ShapedArray(x.aval.shape[:axis] + x.aval.shape[axis + 1:], x.aval.dtype)
    return [stack_p.bind(*[instantiate(Zero(piece)) if type(ct) is Zero else ct
                           for ct in cts], axis=axis)]


def _unstack_batch(args, dims, *, axis):
    (x,), (d,) = args, dims
    a = bu.to_batched_axis(axis, d)
    outs = unstack_p.bind(x, axis=a)
    return outs, [d if d < a else d - 1] * len(outs)


unstack_p = Primitive("unstack", abstract_eval=_unstack_abstract_eval,
                      lower=lower_fun(_unstack_lowering, multiple_results=True),
                      multiple_results=True, linear=True, transpose=_unstack_transpose,
                      batch=_unstack_batch)
unstack_p.def_rule("jvp", _multi_linear_jvp(unstack_p))


# ---- tile -----------------------------------------------------------------------------------

def _tile_abstract_eval(x, *, reps):
    if len(reps) != x.ndim or any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be {x.ndim} nonnegative ints (one per dimension "
                         f"of the operand), got reps={reps} for shape {x.shape}")
    return ShapedArray(tuple(r * d for r, d in zip(reps, x.shape)), x.dtype, x.weak_type)


def _tile_lowering(x, *, reps):
    shape = aval_of(x).shape
    inter = tuple(v for r, d in zip(reps, shape) for v in (r, d))  # (r0, d0, r1, d1, ...)
    b = shape_ops.broadcast_in_dim(x, inter, tuple(range(1, 2 * len(shape), 2)))
    return shape_ops.reshape(b, tuple(r * d for r, d in zip(reps, shape)))


def _tile_transpose(ct, x, *, reps):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    shape = x.aval.shape
    inter = tuple(v for r, d in zip(reps, shape) for v in (r, d))
    summed = reductions.reduce_sum(shape_ops.reshape(ct, inter),
                                   tuple(range(0, 2 * len(shape), 2)))
    return [summed]


def _tile_batch(args, dims, *, reps):
    (x,), (d,) = args, dims
    return tile_p.bind(x, reps=reps[:d] + (1,) + reps[d:]), d


tile_p = Primitive("tile", abstract_eval=_tile_abstract_eval, lower=lower_fun(_tile_lowering),
                   linear=True, jvp=linear_jvp(), transpose=_tile_transpose, batch=_tile_batch)


# ---- mulhi ----------------------------------------------------------------------------------

def _mulhi_abstract_eval(x, y):
    if (x.dtype != y.dtype or not dtypes.is_integer(x.dtype) or x.dtype == np.bool_):
        raise TypeError(f"mulhi requires two integer operands of the same dtype, got "
                        f"{x.dtype} and {y.dtype}")
    shape = base.broadcasting_shape("mulhi", [x, y])
    return ShapedArray(shape, x.dtype, base.all_weak([x, y]))


mulhi_p = Primitive("mulhi", abstract_eval=_mulhi_abstract_eval,
                    lower=lower_fun(lambda x, y: composite_ops.mulhi_value(x, y)),
                    jvp=NOT_DIFFERENTIABLE, batch=bu.elementwise_rule())


# Last, and read only inside rules and lowerings (these modules import this one back).
from pyjax._src.lax import composite_ops, reductions, shape_ops  # noqa: E402
