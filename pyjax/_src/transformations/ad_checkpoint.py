"""`jax.ad_checkpoint`: `checkpoint_name` (the `name` primitive, an identity that tags a value
for checkpoint policies) and the policies that choose by name, added to
`checkpoint_policies` beside the ones `checkpoint.py` defines."""
from pyjax._src.core import pytree
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.transformations import checkpoint as checkpoint_mod

__all__ = ["checkpoint_name", "name_p"]


def _name_jvp(primals, tangents, *, name):
    # the tangent is not named: a policy saves primal values, as in JAX
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t


def _name_batch(args, dims, *, name):
    return name_p.bind(args[0], name=name), dims[0]


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
name_p = Primitive("name", abstract_eval=lambda x, *, name: x, sharding_rule=FROM_BODY,
                   lower=lambda ctx, x, *, name: x, jvp=_name_jvp, batch=_name_batch)


def checkpoint_name(x, name):
    """Tag every leaf of the pytree `x` with `name`, for `save_only_these_names` and the other
    name policies of `jax.checkpoint`; the identity otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {type(name).__name__}")
    return pytree.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


def _named(prim, params):
    return prim is name_p and "name" in params


def save_only_these_names(*names):
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return _named(prim, params) and params["name"] in names
    return policy


def save_any_names_but_these(*names):
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return _named(prim, params) and params["name"] not in names
    return policy


def save_anything_except_these_names(*names):
    names = frozenset(names)

    def policy(prim, *avals, **params):
        return not (_named(prim, params) and params["name"] in names)
    return policy


def save_from_both_policies(policy_1, policy_2):
    def policy(prim, *avals, **params):
        return bool(policy_1(prim, *avals, **params)) or bool(policy_2(prim, *avals, **params))
    return policy


def _offload(what):
    def make(*args, **kwargs):
        raise NotImplementedError(f"checkpoint_policies.{what}: pyjax has no host-memory "
                                  "offloading of residuals")
    make.__name__ = what
    return make


for _f in (save_only_these_names, save_any_names_but_these, save_anything_except_these_names,
           save_from_both_policies):
    setattr(checkpoint_mod.checkpoint_policies, _f.__name__, _f)
for _what in ("offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"):
    setattr(checkpoint_mod.checkpoint_policies, _what, _offload(_what))


def print_saved_residuals(f, *args, **kwargs):
    raise NotImplementedError("jax.ad_checkpoint.print_saved_residuals is not implemented in "
                              "pyjax yet")
