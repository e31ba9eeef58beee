"""`jax.custom_batching`: `custom_vmap` (a function with its own rule for `vmap`) and
`sequential_vmap` (a function batched as a loop over the batch).

A `custom_vmap` function, called under a transformation, is traced to a Jaxpr and bound as
the `custom_vmap_call` primitive, which keeps the user's rule in its params; its `batch` rule
calls that rule, so the rule is used wherever the call is batched (also inside `jit`).
Differentiation goes through the traced function: the JVP is that of its Jaxpr, inlined."""
import functools
import inspect

from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.jaxpr import eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, not_mapped
from pyjax._src.core.trace import get_aval
from pyjax._src.interpreters import ad, staging
from pyjax._src.lax import batch_util

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:  # noqa: N801 - JAX's name
    """`f = custom_vmap(fun)`, then `@f.def_vmap` a rule
    `rule(axis_size, in_batched, *args) -> (out, out_batched)`: `in_batched` has the structure
    of `args` with a bool per leaf (mapped or not), the mapped leaves have the batch axis first,
    and `out_batched` says which output leaves the rule returns with a leading batch axis."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "fun")
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        if kwargs:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            if bound.kwargs:
                raise TypeError(f"custom_vmap function {name}: keyword-only arguments "
                                f"{sorted(bound.kwargs)} are not supported")
            args = bound.args
        if trace_mod.is_eager():
            return self.fun(*args)
        leaves, in_tree = pytree.tree_flatten(args)
        out_trees = []

        def flat_fun(*xs):
            out = self.fun(*pytree.tree_unflatten(in_tree, xs))
            out_leaves, out_tree = pytree.tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        closed = staging.trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves],
                                        staging.DebugInfo(name, None, "custom_vmap"))
        jaxpr, consts = staging.convert_constvars_jaxpr(closed)
        outs = custom_vmap_call_p.bind(*consts, *leaves, jaxpr=jaxpr, rule=self.vmap_rule,
                                       num_consts=len(consts), in_tree=in_tree,
                                       out_tree=out_trees[0])
        return pytree.tree_unflatten(out_trees[0], outs)


def _abstract_eval(*avals, jaxpr, **_):
    return list(jaxpr.out_avals)


def _impl(*args, jaxpr, **_):
    return eval_jaxpr(jaxpr.jaxpr, [], *args)


def _lower(ctx, *args, jaxpr, **_):
    return ctx.lower_sub_jaxpr(ctx.block, jaxpr.jaxpr, [], list(args))


def _jvp(primals, tangents, *, jaxpr, **_):
    nonzero = [type(t) is not Zero for t in tangents]
    jvp_closed, consts, out_nz = ad.jvp_jaxpr(jaxpr, nonzero)
    outs = eval_jaxpr(jvp_closed.jaxpr, [], *consts, *primals,
                      *[t for t, nz in zip(tangents, nonzero) if nz])
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else Zero(ad.tangent_aval(a))
                      for a, nz in zip(jaxpr.out_avals, out_nz)]


def _batch(args, dims, *, jaxpr, rule, num_consts, in_tree, out_tree):
    if any(d is not not_mapped for d in dims[:num_consts]):
        raise NotImplementedError(
            "custom_vmap: the function closes over a value batched by an enclosing vmap; "
            "pass that value as an argument instead")
    size = batch_util.batch_size(args, dims)
    leaves = [x if d is not_mapped else batch_util.move_axis(x, d, 0)
              for x, d in zip(args[num_consts:], dims[num_consts:])]
    # a list, one entry per argument, as JAX 0.10.2 passes it
    in_batched = list(pytree.tree_unflatten(in_tree,
                                            [d is not not_mapped for d in dims[num_consts:]]))
    out, out_batched = rule(size, in_batched, *pytree.tree_unflatten(in_tree, leaves))
    out_leaves, tree = pytree.tree_flatten(out)
    if tree != out_tree:
        raise ValueError(f"custom_vmap rule returned an output of structure {tree}, but the "
                         f"function returns {out_tree}")
    flags, flags_tree = pytree.tree_flatten(out_batched)
    if flags_tree != out_tree:
        raise ValueError(f"custom_vmap rule's out_batched has structure {flags_tree}, expected "
                         f"that of the output, {out_tree}")
    return out_leaves, [0 if b else not_mapped for b in flags]


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
custom_vmap_call_p = Primitive("custom_vmap_call", abstract_eval=_abstract_eval, lower=_lower,
                               sharding_rule=FROM_BODY,
                               multiple_results=True, impl=_impl, jvp=_jvp, batch=_batch)


def sequential_vmap(f):
    """`f` batched by applying it to one element of the batch at a time (`lax.map`)."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        from pyjax._src.control_flow.loops import map as lax_map
        flags, tree = pytree.tree_flatten(in_batched)
        leaves = pytree.tree_leaves(args)
        batched = [x for x, b in zip(leaves, flags) if b]

        def one(xs):
            it = iter(xs)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return f.fun(*pytree.tree_unflatten(tree, full))
        out = lax_map(one, batched)
        return out, pytree.tree_map(lambda _: True, out)
    return f
