"""`jax.ad_checkpoint`: `checkpoint_name` (the `name` primitive, an identity that tags a value
for checkpoint policies) and the policies that choose by name, added to
`checkpoint_policies` beside the ones `checkpoint.py` defines."""
import inspect

from pyjax._src.core import pytree
from pyjax._src.core.jaxpr import Literal
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


# Memory kinds JAX's offloading policies name. On the CPU "device" memory is host memory, so
# a residual offloaded to the host is the residual saved: the offloading policies save there.
# On other backends the placement would matter and is not built: they refuse.
_MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


def _check_offload(what, offload_src, offload_dst):
    for arg, kind in (("offload_src", offload_src), ("offload_dst", offload_dst)):
        if kind not in _MEMORY_KINDS:
            raise ValueError(f"checkpoint_policies.{what}: {arg} must be one of "
                             f"{_MEMORY_KINDS}, got {kind!r}")
    from pyjax._src import runtime
    backend = runtime.get_client().platform
    if backend != "cpu":
        raise NotImplementedError(
            f"checkpoint_policies.{what} on the {backend!r} backend: pyjax does not move "
            "residuals between memory kinds (on the CPU they are host memory already)")


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src, offload_dst):
    """Save the values named in ``names_which_can_be_saved``, offload (on the CPU: save) those
    in ``names_which_can_be_offloaded``, recompute the rest."""
    _check_offload("save_and_offload_only_these_names", offload_src, offload_dst)
    names = frozenset(names_which_can_be_saved) | frozenset(names_which_can_be_offloaded)

    def policy(prim, *avals, **params):
        return _named(prim, params) and params["name"] in names
    return policy


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Offload (on the CPU: save) the results of dots without batch dimensions."""
    _check_offload("offload_dot_with_no_batch_dims", offload_src, offload_dst)
    return checkpoint_mod.dots_with_no_batch_dims_saveable


for _f in (save_only_these_names, save_any_names_but_these, save_anything_except_these_names,
           save_from_both_policies, save_and_offload_only_these_names,
           offload_dot_with_no_batch_dims):
    setattr(checkpoint_mod.checkpoint_policies, _f.__name__, _f)


def saved_residuals(f, *args, **kwargs):
    """What reverse-mode differentiation of ``f`` at ``args`` keeps from the forward pass, as
    ``[(aval, description)]``: the residuals of its linearization (what ``vjp``/``linearize``
    store), after ``jax.checkpoint`` policies chose what to save. Literals and constants come
    first, then arguments in order, then the values that equations compute, in program order."""
    from pyjax._src.interpreters import ad, staging
    from pyjax._src.transformations.jit import _spec_aval
    if not callable(f):
        raise TypeError(f"print_saved_residuals: expected a callable, got {f!r}")
    paths, in_tree = pytree.tree_flatten_with_path((args, kwargs))
    names = _argument_names(f, args, kwargs, [p for p, _ in paths])
    leaves = [x for _, x in paths]

    def outputs(*ys):
        a, k = pytree.tree_unflatten(in_tree, ys)
        return pytree.tree_leaves(f(*a, **k))

    def residuals(*xs):
        _, lin = ad.linearize_flat(outputs, list(xs))
        return list(lin.jaxpr.consts)

    jaxpr = staging.trace_to_jaxpr(
        residuals, [_spec_aval(x) for x in leaves],
        staging.DebugInfo(getattr(f, "__name__", "<fun>"), names, "saved_residuals")).jaxpr
    saved, literals = set(), []
    for v in jaxpr.outvars:
        if type(v) is Literal:
            literals.append((v.aval, "from a literal"))
        else:
            saved.add(v)
    out = literals + [(v.aval, "from a constant") for v in jaxpr.constvars if v in saved]
    out += [(v.aval, f"from the argument {n}") for v, n in zip(jaxpr.invars, names)
            if v in saved]
    for eqn in jaxpr.eqns:
        src = "" if eqn.source_info is None else str(eqn.source_info)
        for v in eqn.outvars:
            if v not in saved:
                continue
            if eqn.primitive is name_p:
                out.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
            elif eqn.primitive.name == "jit":
                out.append((v.aval, f"output of jitted function '{eqn.params.get('name')}' "
                                    f"from {src}"))
            else:
                out.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return out


def _argument_names(f, args, kwargs, paths):
    """One name per argument leaf, as JAX writes them: the parameter's name, then the leaf's
    path inside it (``p['w']``); ``args[i]`` where the signature cannot say."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
        pos = []
        for name, param in inspect.signature(f).parameters.items():
            if param.kind is param.VAR_POSITIONAL:
                pos += [f"{name}[{i}]" for i in range(len(bound.arguments.get(name, ())))]
            elif param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                pos.append(name)
    except (TypeError, ValueError):  # no signature (a builtin) or one that does not bind
        pos = []
    names = []
    for path in paths:
        (which, *rest) = path
        if which.idx == 0:  # positional: path = (0, i, ...)
            i = rest[0].idx
            head, rest = (pos[i] if i < len(pos) else f"args[{i}]"), rest[1:]
        else:  # keyword: path = (1, key, ...)
            head, rest = str(rest[0].key), rest[1:]
        names.append(head + pytree.keystr(tuple(rest)))
    return names


def print_saved_residuals(f, *args, **kwargs):
    """Print what reverse-mode differentiation of ``f`` at ``args`` saves from the forward
    pass, one residual a line (``f32[5] output of sin from file.py:3 (g)``): what
    ``jax.checkpoint`` and its policies leave to be stored."""
    for aval, what in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {what}")
