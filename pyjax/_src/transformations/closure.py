"""`closure_convert` (a function's closed-over traced values made explicit arguments) and
`custom_gradient` (a function that returns its value and its VJP), built on `custom_vjp`."""
from pyjax._src.core import pytree
from pyjax._src.core.jaxpr import eval_jaxpr
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import staging
from pyjax._src.transformations.custom_derivatives import custom_vjp

__all__ = ["closure_convert", "custom_gradient"]


def closure_convert(fun, *example_args):
    """Trace `fun` at `example_args` and return `(converted, consts)`: `consts` are the traced
    values (of outer transformations) that `fun` closes over, and `converted(*args, *consts)`
    computes `fun(*args)`. Other closed-over values stay closed over."""
    leaves, in_tree = pytree.tree_flatten(example_args)
    avals = [staging.abstractify(x) for x in leaves]
    out_trees = []

    def flat_fun(*flat):
        out = fun(*pytree.tree_unflatten(in_tree, flat))
        out_leaves, out_tree = pytree.tree_flatten(out)
        out_trees.append(out_tree)
        return out_leaves

    dbg = staging.DebugInfo(getattr(fun, "__name__", "fun"), None, "closure_convert")
    closed = staging.trace_to_jaxpr(flat_fun, avals, dbg)
    all_consts = list(closed.consts)
    hoist = [isinstance(c, Tracer) for c in all_consts]
    hoisted = [c for c, h in zip(all_consts, hoist) if h]
    kept = [None if h else c for c, h in zip(all_consts, hoist)]
    out_tree = out_trees[0]

    def converted(*args_and_consts):
        n = len(args_and_consts) - len(hoisted)
        args, consts = args_and_consts[:n], iter(args_and_consts[n:])
        flat_args, tree = pytree.tree_flatten(args)
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function was traced for arguments "
                            f"of structure {in_tree}, called with {tree}")
        full = [next(consts) if h else c for c, h in zip(kept, hoist)]
        return pytree.tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, full, *flat_args))

    return converted, hoisted


def custom_gradient(fun):
    """Define a function's gradient inline: `fun(*args)` returns `(value, vjp)` where `vjp(ct)`
    returns the cotangents of the arguments (a tuple, or one value for a single argument)."""

    @custom_vjp
    def wrapped(*args):
        value, _ = fun(*args)
        return value

    def fwd(*args):
        value, rule = fun(*args)
        converted, consts = closure_convert(rule, value)

        def call(*consts_and_ct):  # the residual: a pytree whose leaves are the consts
            *cs, ct = consts_and_ct
            return converted(ct, *cs)
        return value, pytree.Partial(call, *consts)

    def bwd(res, ct):
        cts = res(ct)
        return cts if isinstance(cts, tuple) else (cts,)

    wrapped.defvjp(fwd, bwd)
    return wrapped

