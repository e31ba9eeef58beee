"""``lax.reduce`` with a user computation: the generic ``reduce`` primitive.

Its body is the user's Python function, held in the params (``Computation``: equal when the
function and the operands' tree are, so repeated calls share an executable) and traced where
the primitive is lowered, into the region of ``stablehlo.reduce`` (as ``scatter_apply``'s
update function). The function may close over concrete values, not over traced ones. The
monoids (``lax.add`` with 0, ...) bind their own differentiable primitives instead
(``lax/reductions.py``); a general computation is not differentiable here.
"""
from __future__ import annotations

from pyjax._src.core import pytree
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.errors import UnexpectedTracerError
from pyjax._src.core.primitive import Primitive
from pyjax._src.lax import batch_util as bu
from pyjax._src.lowering import mlir

__all__ = ["reduce_p"]


class Computation:
    """A reducer body as a hashable param: ``fn(xs, ys) -> leaves`` on flat lists."""

    __slots__ = ("user", "tree")

    def __init__(self, user, tree):
        self.user, self.tree = user, tree

    def __call__(self, xs, ys):
        out = self.user(pytree.tree_unflatten(self.tree, list(xs)),
                        pytree.tree_unflatten(self.tree, list(ys)))
        leaves, out_tree = pytree.tree_flatten(out)
        if out_tree != self.tree:
            raise TypeError(f"the reduction computation must return the operands' tree "
                            f"structure {self.tree}, got {out_tree}.")
        return leaves

    def __eq__(self, other):
        return (type(other) is Computation and other.user is self.user
                and other.tree == self.tree)

    def __hash__(self):
        return hash(id(self.user))

    def __repr__(self):
        return f"<computation {getattr(self.user, '__name__', self.user)}>"


def check_inits(name, xs, inits):
    for x, init in zip(xs, inits):
        if init.shape != ():
            raise TypeError(f"{name} init values must be scalars, got shape {init.shape}.")
        if init.dtype != x.dtype:
            raise TypeError(f"{name} operand dtype {x.dtype.name} does not match its init "
                            f"value dtype {init.dtype.name}.")
        if x.shape != xs[0].shape:
            raise TypeError(f"{name} operands must have equal shapes, got "
                            f"{[y.shape for y in xs]}.")


def body_region(ctx, computation, dts, name):
    """The region ``(accumulators..., elements...) -> results...`` of ``computation``."""
    n = len(dts)
    avals = [ShapedArray((), dt) for dt in dts]
    region = ctx.region(avals + avals)
    try:
        outs = ctx.lower_fun(lambda *s: computation(s[:n], s[n:]), region.args, block=region,
                             multiple_results=True)
    except UnexpectedTracerError as e:
        raise NotImplementedError(
            f"lax.{name}: the computation closes over a traced value (an argument of the "
            "function being transformed); only closures over concrete values are supported. "
            "Make the value an extra operand of the reduction instead.") from e
    for o, a in zip(outs, avals):
        if o.aval.shape != () or o.aval.dtype != a.dtype:
            raise TypeError(f"{name} computation must return {a.dtype.name} scalars like its "
                            f"operands, got {o.aval.str_short()}.")
    region.ret(list(outs))
    return region


def not_differentiable(name):
    def jvp(primals, tangents, **params):
        raise NotImplementedError(
            f"differentiation of lax.{name} with a general computation is not supported; "
            "lax.add, lax.max and lax.min with their identity as init value are "
            "differentiable")
    return jvp


def _reduce_abstract_eval(*args, computation, dimensions):
    n = len(args) // 2
    xs = args[:n]
    check_inits("reduce", xs, args[n:])
    for d in dimensions:
        if not 0 <= d < xs[0].ndim:
            raise ValueError(f"reduce: dimensions {dimensions} out of bounds for operands of "
                             f"shape {xs[0].shape}.")
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"reduce: duplicate value in dimensions: {dimensions}")
    shape = tuple(s for i, s in enumerate(xs[0].shape) if i not in dimensions)
    return [ShapedArray(shape, x.dtype) for x in xs]


def _reduce_lower(ctx, *args, computation, dimensions):
    n = len(args) // 2
    region = body_region(ctx, computation, [x.aval.dtype for x in args[:n]], "reduce")
    return ctx.op("stablehlo.reduce", list(args), list(ctx.avals_out), regions=[region],
                  attrs={"dimensions": mlir.i64_array(sorted(dimensions))})


def _reduce_batch(args, dims, *, computation, dimensions):
    n = len(args) // 2
    if any(d is not bu.not_mapped for d in dims[n:]):
        raise NotImplementedError("vmap of lax.reduce over its init values is not supported")
    size = bu.batch_size(args, dims)
    xs = [bu.bdim_to(x, d, 0, size) for x, d in zip(args[:n], dims[:n])]
    out = reduce_p.bind(*xs, *args[n:], computation=computation,
                        dimensions=tuple(d + 1 for d in dimensions))
    return out, [0] * n


reduce_p = Primitive("reduce", abstract_eval=_reduce_abstract_eval, lower=_reduce_lower,
                     multiple_results=True, jvp=not_differentiable("reduce"),
                     batch=_reduce_batch)
