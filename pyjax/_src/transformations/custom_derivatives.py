"""``custom_jvp`` and ``custom_vjp``: functions with user-given differentiation rules.

Eagerly a decorated function just runs. Under a transformation it is traced to a Jaxpr and
bound as a primitive that carries the user's rule:

* ``custom_jvp_call`` (params ``call_jaxpr``, ``jvp``, ``num_consts``, ``symbolic_zeros``): its
  JVP rule calls the user's ``jvp`` on the primals and (instantiated) tangents.
* ``custom_vjp_call`` (params ``call_jaxpr``, ``rules`` (the user's fwd and bwd), ``num_consts``):
  its JVP rule runs ``fwd`` for the primal outputs and residuals and emits ``custom_lin``, a
  primitive linear in the tangents whose transpose calls the user's ``bwd``. So reverse mode
  (linearize + transpose) uses ``bwd``; forward mode over it is an error, as in JAX.

Both lower to their ``call_jaxpr`` inline, so under ``jit`` they cost nothing. Under ``vmap``
the call Jaxpr is batched and the user's rules run under the batching trace.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, NamedTuple

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.jaxpr import eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero
from pyjax._src.core.trace import get_aval
from pyjax._src.interpreters import ad, batching, staging
from pyjax._src.lax import ad_util, batch_util, parallel, reductions

_state = trace_mod._state

__all__ = ["custom_jvp", "custom_vjp"]


# ---- shared plumbing ----

def _resolve_args(fun, args, kwargs):
    """Keyword arguments bound to positions (custom rules take positional arguments)."""
    if not kwargs:
        return tuple(args)
    sig = inspect.signature(fun)
    ba = sig.bind(*args, **kwargs)
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError("keyword-only arguments are not supported by custom_jvp/custom_vjp "
                        f"functions, got {sorted(ba.kwargs)}")
    return tuple(ba.args)


def _split(args, nondiff_argnums):
    n = len(args)
    nondiff = {i % n for i in nondiff_argnums if -n <= i < n}
    static = [(i, args[i]) for i in sorted(nondiff)]
    dyn = tuple(a for i, a in enumerate(args) if i not in nondiff)
    return static, dyn


def _merge(static, dyn):
    out = list(dyn)
    for i, v in static:
        out.insert(i, v)
    return out



def _trace_primal(fun, args, nondiff_argnums, name):
    """Trace ``fun`` on its differentiable arguments (the nondiff ones stay static): returns
    (static args, flat leaves, their treedef, the output treedef, call Jaxpr, its consts)."""
    static, dyn = _split(args, nondiff_argnums)
    leaves, in_tree = pytree.tree_flatten(dyn)
    store = []

    def flat_fun(*xs):
        out = fun(*_merge(static, pytree.tree_unflatten(in_tree, xs)))
        out_leaves, out_tree = pytree.tree_flatten(out)
        store.append(out_tree)
        return out_leaves

    call_jaxpr, consts = _trace_call(flat_fun, leaves, name)
    return static, leaves, in_tree, store[0], call_jaxpr, consts

def _trace_call(flat_fun, leaves, name):
    avals = [get_aval(x) for x in leaves]
    closed = staging.trace_to_jaxpr(flat_fun, avals, staging.DebugInfo(name, None, name))
    return staging.convert_constvars_jaxpr(closed)


def _call_abstract_eval(*avals, call_jaxpr, **_):
    return list(call_jaxpr.out_avals)


def _call_lower(ctx, *args, call_jaxpr, **_):
    return ctx.lower_sub_jaxpr(ctx.block, call_jaxpr.jaxpr, [], args)


def _call_impl(*args, call_jaxpr, **_):
    return eval_jaxpr(call_jaxpr.jaxpr, [], *args)


class CustomJVPException(Exception):
    pass


class CustomVJPException(Exception):
    pass


def _closed_over_error(kind):
    cls = CustomJVPException if kind == "custom_jvp" else CustomVJPException
    return cls(
        f"Detected differentiation of a {kind} function with respect to a closed-over value. "
        f"That isn't supported because the custom {kind[7:].upper()} rule only specifies how "
        f"to differentiate the {kind} function with respect to explicit input parameters. Try "
        f"passing the closed-over value into the {kind} function as an argument, and adapting "
        f"the {kind} rule.")


def _check_consts(tangents, num_consts, kind):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise _closed_over_error(kind)


def _fun_name(f):
    return getattr(f, "__name__", type(f).__name__)


# ---- custom_jvp ----

class _CustomDerivativeFun:
    """What ``custom_jvp`` and ``custom_vjp`` share: they wrap ``fun`` (also as a method), run
    it as it is eagerly, and otherwise trace it and bind their primitive with the user's rule
    (``_bind``). ``_rule`` names the attribute that holds the rule once it is defined."""

    _rule: str
    _undefined: str  # the error for a call before the rule is defined
    _unset: dict  # the rule attributes before the rule is defined

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.__dict__.update(self._unset)  # after update_wrapper: not the wrapped one's rules

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        if getattr(self, self._rule) is None:
            raise AttributeError(self._undefined.format(name))
        args = _resolve_args(self.fun, args, kwargs)
        if trace_mod.is_eager():
            return self.fun(*args)
        static, leaves, in_tree, out_tree, call_jaxpr, consts = _trace_primal(
            self.fun, args, self.nondiff_argnums, name)
        outs = self._bind(static, leaves, in_tree, out_tree, call_jaxpr, consts, name)
        return pytree.tree_unflatten(out_tree, outs)


class custom_jvp(_CustomDerivativeFun):
    """Give ``fun`` a custom JVP rule with ``defjvp`` (or per-argument ones with ``defjvps``).

    ``nondiff_argnums``: positions of arguments that are not differentiated (any Python
    values); the rule receives them first: ``jvp(*nondiff_args, primals, tangents)``."""

    _rule = "jvp"
    _undefined = "No JVP defined for custom_jvp function {} using defjvp."
    _unset = dict(jvp=None, symbolic_zeros=False)

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the JVP rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """One rule per differentiable argument, ``jvp_i(g_i, primal_out, *primals)``; None for
        arguments with zero derivative. The tangent out is the sum of their results."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            parts = [rule(t, primal_out, *primals) for rule, t in zip(jvps, tangents)
                     if rule is not None]
            if not parts:
                return primal_out, pytree.tree_map(_zeros_like, primal_out)
            return primal_out, functools.reduce(
                lambda a, b: pytree.tree_map(lambda x, y: x + y, a, b), parts)

        self.defjvp(jvp)

    def _bind(self, static, leaves, in_tree, out_tree, call_jaxpr, consts, name):
        rule = _JVPRule(self.jvp, static, in_tree, out_tree, name)
        return custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=call_jaxpr, jvp=rule,
                                      num_consts=len(consts),
                                      symbolic_zeros=self.symbolic_zeros)


def _zeros_like(x):
    return ad.zeros_like_aval(ad.tangent_aval(get_aval(x)))


class _JVPRule:
    """The user's jvp on flat primals/tangents, with JAX's output checks."""

    def __init__(self, jvp, static, in_tree, out_tree, name):
        self.jvp, self.static, self.in_tree = jvp, static, in_tree
        self.out_tree, self.name = out_tree, name
        self.__name__ = _fun_name(jvp)

    def __call__(self, primals, tangents, out_avals):
        p = pytree.tree_unflatten(self.in_tree, primals)
        t = ad.tangent_tree(self.in_tree, tangents)  # key arrays: float0 of their shape
        res = self.jvp(*[v for _, v in self.static], tuple(p), tuple(t))
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(f"Custom JVP rule {self.__name__} for function {self.name} must "
                            "produce a pair (list or tuple of length two) representing primal "
                            f"and tangent outputs, but got {res!r}.")
        p_out, p_tree = pytree.tree_flatten(res[0])
        t_out, t_tree = ad.tangent_leaves(p_tree, res[1])
        if p_tree != self.out_tree:
            raise TypeError(f"Custom JVP rule {self.__name__} for function {self.name} must "
                            "produce primal outputs with the same container (pytree) "
                            f"structure as the primal function: got {p_tree}, expected "
                            f"{self.out_tree}.")
        if t_tree != p_tree:
            raise TypeError(f"Custom JVP rule {self.__name__} for function {self.name} must "
                            "produce primal and tangent outputs with equal container (pytree) "
                            f"structures, but got {p_tree} and {t_tree} respectively.")
        for x, a in zip(p_out, out_avals):
            xa = get_aval(x)
            if xa.shape != a.shape or xa.dtype != a.dtype:
                raise TypeError(f"Custom JVP rule {self.__name__} for function {self.name} "
                                "must produce primal outputs with the same shapes and dtypes "
                                f"as the function: got {xa.str_short()}, expected "
                                f"{a.str_short()}.")
        for x, t in zip(p_out, t_out):
            xa = get_aval(x)
            ta = t.aval if _is_symbolic_zero(t) else get_aval(t) if not _is_float0(t) else None
            expected = ad.tangent_aval(xa)
            if ta is not None and (ta.shape != expected.shape or ta.dtype != expected.dtype):
                raise TypeError(f"Custom JVP rule {self.__name__} for function {self.name} "
                                "must produce primal and tangent outputs with corresponding "
                                f"shapes and dtypes: got primal {xa.str_short()} and tangent "
                                f"{ta.str_short()}.")
        return p_out, [Zero(ad.tangent_aval(get_aval(x)))
                       if _is_float0(t) or _is_symbolic_zero(t) else t
                       for x, t in zip(p_out, t_out)]


def _is_float0(t):
    return getattr(t, "dtype", None) == ad.float0


def _is_symbolic_zero(t):
    # a rule with symbolic_zeros may return the SymbolicZero tangents it was given
    return isinstance(t, (Zero, SymbolicZero))


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    _check_consts(tangents, num_consts, "custom_jvp")
    args = primals[num_consts:]
    ts = [(SymbolicZero(t.aval) if type(t) is Zero else t) if symbolic_zeros
          else ad.instantiate(t) for t in tangents[num_consts:]]
    return jvp(list(args), ts, call_jaxpr.out_avals)


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, jvp, num_consts, symbolic_zeros):
    # A custom_jvp function applied to tangents (lineax's jvp rules call one on them) lands in
    # the linear part of a linearization; there its rule no longer matters (JAX inlines such a
    # call), so its transpose is its body's.
    linear = [ad.is_undefined_primal(a) for a in args]
    ct_nz = [type(c) is not Zero for c in cts]
    t_closed, consts, in_nz = ad.transpose_jaxpr(call_jaxpr, linear, ct_nz)
    outs = iter(eval_jaxpr(t_closed.jaxpr, t_closed.consts, *consts,
                           *[a for a, lin in zip(args, linear) if not lin],
                           *[c for c, nz in zip(cts, ct_nz) if nz]))
    nz = iter(in_nz)
    return [None if not lin else (next(outs) if next(nz) else Zero(a.aval))
            for a, lin in zip(args, linear)]


def _custom_jvp_call_batch(args, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros,
                           axis_data):
    batched, consts, out_dims = batching.batch_jaxpr(
        call_jaxpr, dims, axis_data, typed_avals=batching.typed_avals_of(args))
    rule = _BatchedJVPRule(jvp, dims[num_consts:], out_dims, axis_data, call_jaxpr.out_avals)
    outs = custom_jvp_call_p.bind(*consts, *args, call_jaxpr=batched, jvp=rule,
                                  num_consts=len(consts) + num_consts,
                                  symbolic_zeros=symbolic_zeros)
    return outs, rule.out.freeze()


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
custom_jvp_call_p = Primitive(
    "custom_jvp_call", abstract_eval=_call_abstract_eval, lower=_call_lower,
    multiple_results=True, impl=_call_impl, jvp=_custom_jvp_call_jvp,
    transpose=_custom_jvp_call_transpose, batch=_custom_jvp_call_batch,
    axis_aware=parallel.params_use_axis,
    sharding_rule=FROM_BODY)


# ---- custom_vjp ----

def _rematerialized_rules(fwd, bwd, nondiff_argnums):
    """fwd/bwd that keep the differentiable arguments as the residuals and recompute fwd's
    own residuals from them in the backward pass (``defvjp(optimize_remat=True)``)."""
    def positions(n):
        return sorted({i % n for i in nondiff_argnums})

    def remat_fwd(*args):
        out, _ = fwd(*args)
        fixed = positions(len(args))
        return out, tuple(a for i, a in enumerate(args) if i not in fixed)

    def remat_bwd(*rest):
        fixed, (diff_args, ct) = rest[:-2], rest[-2:]  # bwd gets nondiff args by position
        args = _merge(zip(positions(len(fixed) + len(diff_args)), fixed), diff_args)
        _, res = fwd(*args)
        return bwd(*fixed, res, ct)

    return remat_fwd, remat_bwd



class custom_vjp(_CustomDerivativeFun):
    """Give ``fun`` a custom VJP with ``defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)``
    and ``bwd(*nondiff_args, residuals, out_cotangent) -> tuple of input cotangents`` (one per
    differentiable argument; None means zero). Residuals may be any pytree of arrays."""

    _rule = "fwd"
    _undefined = "No VJP defined for custom_vjp function {} using defvjp."
    _unset = dict(fwd=None, bwd=None)

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Set ``fwd`` and ``bwd``. With ``symbolic_zeros``, ``fwd`` sees each argument leaf as
        a ``CustomVJPPrimal(value, perturbed)`` and ``bwd`` may return ``SymbolicZero``s.
        With ``optimize_remat``, reverse mode saves the differentiable arguments instead of
        fwd's residuals and reruns fwd in the backward pass to recompute them (the residuals
        depend only on the arguments); values are unchanged."""
        if optimize_remat and symbolic_zeros:  # JAX 0.10.2's refusal
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros")
        if symbolic_zeros:
            fwd, bwd = _symbolic_zeros_rules(fwd, bwd, self.nondiff_argnums)
        if optimize_remat:
            fwd, bwd = _rematerialized_rules(fwd, bwd, self.nondiff_argnums)
        self.fwd = fwd
        self.bwd = bwd

    def _bind(self, static, leaves, in_tree, out_tree, call_jaxpr, consts, name):
        rule = _VJPRules(self.fwd, self.bwd, static, in_tree, out_tree, name,
                         [get_aval(x) for x in leaves])
        return custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=call_jaxpr, rules=rule,
                                      num_consts=len(consts))


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """An argument leaf as the fwd rule of ``defvjp(..., symbolic_zeros=True)`` sees it: a
    pytree leaf, as JAX's (equinox's fwd rules tree-map over such leaves)."""
    value: Any
    perturbed: bool


class SymbolicZero:
    """A zero (co)tangent of the given abstract value, not built as an array."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"


def _symbolic_zeros_rules(fwd, bwd, nondiff_argnums):
    """fwd/bwd of the symbolic-zeros convention as plain ones. fwd sees an inexact leaf as
    perturbed when its tangent is not a symbolic zero (``perturbed``, the arguments' tree of
    flags, from the JVP); without that information (None) every inexact leaf is marked
    perturbed (bwd's extra cotangents are discarded, values are unchanged). bwd always gets
    dense cotangents (JAX too passes them wherever a cotangent is not known to be zero)."""
    def plain_fwd(*args, perturbed=None):
        n = len(args)
        static = {i % n for i in nondiff_argnums if -n <= i < n}

        def wrap(x, flag=True):
            return CustomVJPPrimal(x, bool(flag) and dtypes.is_inexact(get_aval(x).dtype))
        wrapped = [a if i in static else (
            pytree.tree_map(wrap, a) if perturbed is None else pytree.tree_map(
                wrap, a, perturbed[i])) for i, a in enumerate(args)]
        return fwd(*wrapped)
    plain_fwd.takes_perturbed = True

    def plain_bwd(*args):
        out = bwd(*args)
        if not isinstance(out, (tuple, list)):
            return out
        dense = lambda c: ad_util.zeros(c.aval) if isinstance(c, SymbolicZero) else c  # noqa: E731
        return type(out)(None if isinstance(o, SymbolicZero) else pytree.tree_map(
            dense, o, is_leaf=lambda c: isinstance(c, SymbolicZero)) for o in out)
    plain_fwd.__name__ = getattr(fwd, "__name__", "fwd")
    plain_bwd.__name__ = getattr(bwd, "__name__", "bwd")
    return plain_fwd, plain_bwd


class _VJPRules:
    """The user's fwd and bwd on flat values, with JAX's checks."""

    def __init__(self, fwd, bwd, static, in_tree, out_tree, name, in_avals):
        self.fwd, self.bwd, self.static = fwd, bwd, static
        self.in_tree, self.out_tree, self.name = in_tree, out_tree, name
        self.in_avals = in_avals
        self.__name__ = f"{_fun_name(fwd)}/{_fun_name(bwd)}"

    def run_fwd(self, args, perturbed=None):
        """fwd on the flat ``args``; ``perturbed`` (flat flags: the argument's tangent is not
        a symbolic zero) reaches a symbolic-zeros fwd."""
        merged = _merge(self.static, pytree.tree_unflatten(self.in_tree, args))
        if perturbed is not None and getattr(self.fwd, "takes_perturbed", False):
            flags = _merge(self.static, pytree.tree_unflatten(self.in_tree, perturbed))
            res = self.fwd(*merged, perturbed=flags)
        else:
            res = self.fwd(*merged)
        fwd_name = _fun_name(self.fwd)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(f"Custom VJP fwd rule {fwd_name} for function {self.name} must "
                            "produce a pair (list or tuple of length two) representing primal "
                            "outputs and residuals (values stored from the forward pass for "
                            f"use on the backward pass), got {res!r}.")
        out, out_tree = pytree.tree_flatten(res[0])
        if out_tree != self.out_tree:
            raise TypeError(f"Custom VJP fwd rule {fwd_name} for function {self.name} must "
                            "produce primal outputs with equal container (pytree) structures "
                            "to those of the primal function, but got "
                            f"{out_tree} and {self.out_tree} respectively.")
        res_leaves, res_tree = pytree.tree_flatten(res[1])
        for r in res_leaves:
            get_aval(r)  # residuals must be arrays (or scalars)
        return out, res_leaves, res_tree

    def run_bwd(self, res_tree, res, cts):
        r = pytree.tree_unflatten(res_tree, res)
        ct = ad.tangent_tree(self.out_tree, cts)
        out = self.bwd(*[v for _, v in self.static], r, ct)
        bwd_name = _fun_name(self.bwd)
        dyn = pytree.tree_unflatten(self.in_tree, [object()] * len(self.in_avals))
        if not isinstance(out, (tuple, list)) or len(out) != len(dyn):
            got = f"a {type(out).__name__} of length {len(out)}" if isinstance(
                out, (tuple, list)) else type(out).__name__
            raise TypeError(f"Custom VJP bwd rule {bwd_name} must produce a tuple of length "
                            "equal to the number of primal (differentiable) input arguments "
                            f"of {self.name} ({len(dyn)}), but got {got}.")
        flat = []
        for arg, ct_arg in zip(dyn, out):
            n = len(pytree.tree_leaves(arg))
            if ct_arg is None:
                flat += [None] * n
                continue
            leaves = pytree.tree_leaves(ct_arg)
            if len(leaves) != n:
                raise TypeError(f"Custom VJP bwd rule {bwd_name} produced a cotangent with a "
                                f"different structure from its primal input in {self.name}.")
            flat += leaves
        return [Zero(ad.tangent_aval(a)) if c is None or _is_float0(c) else c
                for c, a in zip(flat, self.in_avals)]


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, rules, num_consts):
    _check_consts(tangents, num_consts, "custom_vjp")
    args = primals[num_consts:]
    ts = tangents[num_consts:]
    outs, res, res_tree = rules.run_fwd(list(args), [type(t) is not Zero for t in ts])
    lin_mask = tuple(ad.tangent_aval(get_aval(a)).dtype != ad.float0 for a in args)
    lin_ts = [ad.instantiate(t) for t, m in zip(ts, lin_mask) if m]
    out_avals = tuple(ad.tangent_aval(get_aval(o)) for o in outs)
    t_outs = custom_lin_p.bind(*res, *lin_ts, num_res=len(res), rules=rules,
                               res_tree=res_tree, lin_mask=lin_mask, out_avals=out_avals)
    return outs, [Zero(a) if a.dtype == ad.float0 else t for t, a in zip(t_outs, out_avals)]


def _custom_vjp_call_batch(args, dims, *, call_jaxpr, rules, num_consts, axis_data):
    batched, consts, out_dims = batching.batch_jaxpr(
        call_jaxpr, dims, axis_data, typed_avals=batching.typed_avals_of(args))
    new_rules = _BatchedVJPRules(rules, dims[num_consts:], out_dims, axis_data)
    outs = custom_vjp_call_p.bind(*consts, *args, call_jaxpr=batched, rules=new_rules,
                                  num_consts=len(consts) + num_consts)
    return outs, new_rules.out.freeze()


custom_vjp_call_p = Primitive(
    "custom_vjp_call", abstract_eval=_call_abstract_eval, lower=_call_lower,
    multiple_results=True, impl=_call_impl, jvp=_custom_vjp_call_jvp,
    batch=_custom_vjp_call_batch, axis_aware=parallel.params_use_axis,
    sharding_rule=FROM_BODY)


# custom_lin: linear in its tangent inputs; only ever transposed (which calls bwd).

def _custom_lin_error(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_abstract_eval(*avals, num_res, rules, res_tree, lin_mask, out_avals):
    return list(out_avals)


def _custom_lin_transpose(cts, *args, num_res, rules, res_tree, lin_mask, out_avals):
    res = args[:num_res]
    cts = [ad.instantiate(c) if a.dtype != ad.float0 else ad.zeros_like_aval(a)
           for c, a in zip(cts, out_avals)]
    cts_in = rules.run_bwd(res_tree, list(res), cts)
    lin_cts = [c for c, m in zip(cts_in, lin_mask) if m]
    return [None] * num_res + lin_cts


custom_lin_p = Primitive(
    "custom_lin", abstract_eval=_custom_lin_abstract_eval, lower=_custom_lin_error,
    multiple_results=True, impl=_custom_lin_error, jvp=_custom_lin_error,
    transpose=_custom_lin_transpose, batch=_custom_lin_error, sharding_rule=FROM_BODY)


# ---- vmap of custom rules: the rules run under a batching trace ----

class _OutDims:
    """The batch dims of a custom call's outputs under vmap. Declared from the function's
    batched Jaxpr; a rule run during the call's own bind (an enclosing jvp/grad) may batch more
    of them (a rule closing over batched arguments), and then the call's outputs are batched
    there too (broadcast where needed), as JAX. Once the batch rule has returned, the dims are
    frozen: a rule run later (the call staged by jit, differentiated afterwards) must fit."""

    def __init__(self, declared, axis_data, what):
        self.dims, self.axis_data, self.what = list(declared), axis_data, what
        self.frozen = False

    def choose(self, batched):
        """Dims for outputs of which ``batched`` says whether the rule batched them."""
        if not self.frozen:
            self.dims = [0 if b else batching.not_mapped for b in batched]
            return self.dims
        for b, d in zip(batched, self.dims):
            if b and d is batching.not_mapped:
                raise NotImplementedError(
                    f"vmap of a {self.what} whose output is batched where the function's output "
                    "is not, when the call was staged (by jit) before being differentiated: "
                    "move the jit outside the grad/jvp, or make the function's output depend "
                    "on the batched argument too")
        return self.dims

    def freeze(self):
        self.frozen = True
        return self.dims

    def place(self, v, d, want):
        """``v`` (batched at ``d``, or a Zero) at ``want`` (0 or not_mapped)."""
        if type(v) is Zero:
            aval = v.aval if d is batching.not_mapped else _unbatched_aval(v.aval, d)
            return Zero(_batched_aval(aval, want, self.axis_data.size))
        if want is batching.not_mapped:
            return v
        return batch_util.bdim_to(v, d, want, self.axis_data.size)


def _batched_aval(aval, dim, size):
    if dim is batching.not_mapped:
        return aval
    return aval.update(shape=aval.shape[:dim] + (size,) + aval.shape[dim:])


class _BatchedJVPRule:
    def __init__(self, rule, in_dims, out_dims, axis_data, out_avals):
        self.rule, self.in_dims = rule, list(in_dims)
        self.out = _OutDims(out_dims, axis_data, "custom_jvp rule")
        self.axis_data, self.inner_out_avals = axis_data, out_avals
        self.__name__ = f"vmap({rule.__name__})"

    def __call__(self, primals, tangents, out_avals):
        n, m = len(primals), len(self.out.dims)

        # symbolic zero tangents reach the rule unbatched (the rule sees per-example avals)
        tangents = [Zero(_unbatched_aval(t.aval, d)) if type(t) is Zero else t
                    for t, d in zip(tangents, self.in_dims)]

        def fn(xs):
            p, t = self.rule(xs[:n], xs[n:], self.inner_out_avals)
            return list(p) + list(t)
        vals = _run_batched_all(fn, list(primals) + list(tangents), self.in_dims * 2,
                                self.axis_data)
        # JAX: an output is batched where the rule's primal or tangent output is
        dims = self.out.choose([(dp is not batching.not_mapped) or (dt is not batching.not_mapped)
                                for (_, dp), (_, dt) in zip(vals[:m], vals[m:])])
        outs = [self.out.place(v, d, w) for (v, d), w in zip(vals, dims * 2)]
        return outs[:m], outs[m:]


class _BatchedVJPRules:
    def __init__(self, rules, in_dims, out_dims, axis_data):
        self.rules, self.in_dims = rules, list(in_dims)
        self.out = _OutDims(out_dims, axis_data, "custom_vjp fwd rule")
        self.axis_data = axis_data
        self.__name__ = f"vmap({rules.__name__})"

    def run_fwd(self, args, perturbed=None):
        box = []

        def fn(xs):
            outs, res, res_tree = self.rules.run_fwd(xs, perturbed)
            box[:] = [len(outs), res_tree, len(res)]
            return list(outs) + list(res)
        vals = _run_batched_all(fn, args, self.in_dims, self.axis_data)
        n_out, res_tree, _ = box
        # JAX: an output is batched where fwd's primal output is
        dims = self.out.choose([d is not batching.not_mapped for _, d in vals[:n_out]])
        outs = [self.out.place(v, d, w) for (v, d), w in zip(vals[:n_out], dims)]
        res = [v for v, _ in vals[n_out:]]
        res_dims = tuple(d for _, d in vals[n_out:])
        return outs, res, (res_tree, res_dims)

    def run_bwd(self, res_tree, res, cts):
        inner_tree, res_dims = res_tree
        nr = len(res)
        ct_dims = [d if type(c) is not Zero else batching.not_mapped
                   for c, d in zip(cts, self.out.dims)]

        def fn(xs):
            cs = [Zero(_unbatched_aval(c.aval, d)) if type(c) is Zero else c
                  for c, d in zip(xs[nr:], self.out.dims)]
            return self.rules.run_bwd(inner_tree, xs[:nr], cs)
        vals = _run_batched_all(fn, list(res) + list(cts), list(res_dims) + ct_dims,
                                self.axis_data)
        out = []
        for (v, d), want, a in zip(vals, self.in_dims, self.rules.in_avals):
            if type(v) is Zero:
                out.append(Zero(_batched_aval(v.aval, want, self.axis_data.size)))
            elif want is batching.not_mapped:  # an unbatched input: sum over the batch
                out.append(v if d is batching.not_mapped else
                           reductions.reduce_sum_p.bind(v, axes=(d,)))
            else:
                out.append(batch_util.bdim_to(v, d, want, self.axis_data.size))
        return out

    @property
    def in_avals(self):
        return [_batched_aval(a, d, self.axis_data.size)
                for a, d in zip(self.rules.in_avals, self.in_dims)]


def _unbatched_aval(aval, dim):
    if dim is batching.not_mapped:
        return aval
    return aval.update(shape=aval.shape[:dim] + aval.shape[dim + 1:])


def _run_batched_all(fn, args, dims, axis_data):
    """``fn`` under a batching trace; returns ``(value, dim)`` pairs, batched dims moved to 0
    (``Zero``s pass through with dim not_mapped)."""
    trace = batching.BatchTrace(_state.trace, axis_data)
    prev = _state.trace
    _state.trace = trace
    try:
        outs = fn([trace.wrap(a, d) if type(a) is not Zero else a for a, d in zip(args, dims)])
    finally:
        _state.trace = prev
        trace.finish()
    res = []
    for o in outs:
        if type(o) is Zero:
            res.append((o, batching.not_mapped))
            continue
        v, d = trace.unwrap(o)
        if d is not batching.not_mapped:
            v, d = batch_util.move_axis(v, d, 0), 0
        res.append((v, d))
    return res


def custom_vjp_primal_tree_values(tree):
    """``tree`` with every ``CustomVJPPrimal`` leaf (what a ``symbolic_zeros`` fwd rule
    receives) replaced by the value it carries."""
    return pytree.tree_map(lambda x: x.value if isinstance(x, CustomVJPPrimal) else x, tree,
                           is_leaf=lambda x: isinstance(x, CustomVJPPrimal))


def zero_from_primal(val, symbolic_zeros=False):
    """Zero tangents for the pytree of primals ``val``: arrays of zeros of each leaf's tangent
    type (float0 for integers and bools), or ``SymbolicZero``s with ``symbolic_zeros``."""
    def zero(x):
        aval = ad_util.tangent_aval(get_aval(x).strip_weak_type())
        return SymbolicZero(aval) if symbolic_zeros else ad_util.zeros(aval)
    return pytree.tree_map(zero, val)
