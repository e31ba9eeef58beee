"""``lax.custom_linear_solve`` and ``lax.custom_root``: implicit differentiation.

``custom_linear_solve(matvec, b, solve, transpose_solve)`` computes ``x = solve(matvec, b)``
and is differentiated as the solution of the linear system ``matvec(x) == b``, not through the
iterations of ``solve``. It is the ``linear_solve`` primitive, linear in ``b``:

``linear_solve_p.bind(*consts, *b, const_lengths=SolveTuple, jaxprs=SolveTuple)`` where the four
slots are ``matvec``, ``vecmat`` (the transpose of ``matvec``), ``solve`` and
``transpose_solve``; each Jaxpr is const-free and takes its consts first (``None`` in a slot
without a function). Its outputs are ``solve``'s: the solution's leaves, then any aux leaves.

* Lowering: ``solve``'s Jaxpr, inline.
* JVP: ``x' = solve(b' - matvec'(x))``, where ``matvec'`` differentiates ``matvec`` in its consts
  only (``solve``'s consts get no derivative: only the system matters).
* Transpose (in ``b``): the same primitive with ``matvec``/``vecmat`` and
  ``solve``/``transpose_solve`` swapped, applied to the cotangent.
* Batching: every Jaxpr is batched with the vectors batched at axis 0.

``custom_root(f, initial_guess, solve, tangent_solve)`` is a ``custom_jvp`` function of the
values ``f`` closes over: ``x = solve(f, guess)``, with
``x' = -tangent_solve(∂f/∂x, ∂f/∂θ θ')``
by the implicit function theorem.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from pyjax._src.core import pytree
from pyjax._src.core.jaxpr import eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, is_undefined_primal, not_mapped
from pyjax._src.control_flow import common
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import ad_util, elementwise as lax_ew, parallel
from pyjax._src.lax.stop_gradient import stop_gradient

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


class SolveTuple(NamedTuple):
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self):
        return SolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split_consts(args, const_lengths):
    out, i = [], 0
    for n in const_lengths:
        out.append(list(args[i:i + n]))
        i += n
    return SolveTuple(*out), list(args[i:])


def _same_avals(xs, ys):
    return len(xs) == len(ys) and all(a.shape == b.shape and a.dtype == b.dtype
                                      for a, b in zip(xs, ys))


def _check_tree(fun_name, what, tree, avals, want_tree, want_avals):
    if tree != want_tree:
        raise TypeError(f"{fun_name}() output pytree structure must match {what}, got "
                        f"{tree} and {want_tree}.")
    if not _same_avals(avals, want_avals):
        got = [a.str_short() for a in avals]
        want = [a.str_short() for a in want_avals]
        raise TypeError(f"{fun_name}() output shapes must match {what}, got {got} and {want}.")


def _split_aux(fun_name, tree, avals, want_tree):
    """``solve`` with ``has_aux`` returns ``(solution, aux)``: the solution's leaf count and
    the aux tree, checked."""
    pair = pytree.tree_unflatten(tree, list(range(len(avals))))
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise TypeError(f"{fun_name}() with has_aux=True must return a pair (solution, aux), "
                        f"got a value of structure {tree}.")
    sol_leaves, sol_tree = pytree.tree_flatten(pair[0])
    if sol_leaves != list(range(len(sol_leaves))) or sol_tree != want_tree:
        raise TypeError(f"{fun_name}() output pytree structure must match b, got {sol_tree} "
                        f"and {want_tree}.")
    aux_tree = pytree.tree_structure(pair[1])
    return len(sol_leaves), aux_tree


# ---- custom_linear_solve ----

def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """Perform a matrix-free linear solve with implicitly defined gradients.

    Computes ``x = solve(matvec, b)``, which must solve ``matvec(x) == b`` for a linear
    ``matvec``; derivatives are those of the exact solution, computed with ``solve`` (forward
    mode) and ``transpose_solve`` (reverse mode), never by differentiating ``solve``'s steps.

    Parameters
    ----------
    matvec : callable
        The linear function ``x -> A x`` (pytrees shaped like ``b``).
    b : pytree of arrays
        The right-hand side.
    solve : callable
        ``solve(matvec, b)`` returns ``x`` with ``matvec(x) == b`` (with ``has_aux``: the pair
        ``(x, aux)``).
    transpose_solve : callable, optional
        ``transpose_solve(vecmat, b)`` solves the transposed system; needed for reverse mode
        unless ``symmetric``.
    symmetric : bool
        ``matvec`` is symmetric: ``solve`` serves as ``transpose_solve``.
    has_aux : bool
        ``solve`` (and ``transpose_solve``) return ``(solution, aux)``; aux is returned as is.
    """
    if not callable(matvec) or not callable(solve):
        raise TypeError("custom_linear_solve: matvec and solve must be callable, got "
                        f"{type(matvec).__name__} and {type(solve).__name__}")
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError("custom_linear_solve: transpose_solve must be callable or None, got "
                        f"{type(transpose_solve).__name__}")
    b_leaves, b_tree = pytree.tree_flatten(b)
    b_avals = [common.aval_of(x) for x in b_leaves]
    _, args_tree = pytree.tree_flatten((b,))
    name = "custom_linear_solve"

    mv_j, mv_c, mv_tree = common.trace_fun(matvec, args_tree, b_avals, "matvec", name)
    _check_tree("matvec", "b", mv_tree, mv_j.out_avals, b_tree, b_avals)

    def traced_solve(fun, mv, fname):
        j, c, tree = common.trace_fun(lambda x: fun(mv, x), args_tree, b_avals, fname, name)
        outs = j.out_avals
        if has_aux:
            n, aux_tree = _split_aux(fname, tree, outs, b_tree)
            _check_tree(fname, "b", b_tree, outs[:n], b_tree, b_avals)
        else:
            _check_tree(fname, "b", tree, outs, b_tree, b_avals)
            aux_tree = None
        return j, c, aux_tree

    s_j, s_c, aux_tree = traced_solve(solve, matvec, "solve")
    if symmetric:
        vm_j, vm_c, ts_j, ts_c = mv_j, mv_c, s_j, s_c
    elif transpose_solve is None:
        vm_j = vm_c = ts_j = None
        ts_c = []
        vm_c = []
    else:
        from pyjax._src.transformations.grad import linear_transpose
        structure = pytree.tree_unflatten(b_tree, [_spec(a) for a in b_avals])

        def vecmat(x):
            return linear_transpose(matvec, structure)(x)[0]
        vm_j, vm_c, vm_tree = common.trace_fun(vecmat, args_tree, b_avals, "vecmat", name)
        _check_tree("vecmat", "b", vm_tree, vm_j.out_avals, b_tree, b_avals)
        ts_j, ts_c, _ = traced_solve(transpose_solve, vecmat, "transpose_solve")
    jaxprs = SolveTuple(mv_j, vm_j, s_j, ts_j)
    consts = SolveTuple(list(mv_c), list(vm_c), list(s_c), list(ts_c))
    const_lengths = SolveTuple(*(len(c) for c in consts))
    outs = linear_solve_p.bind(*[c for cs in consts for c in cs], *b_leaves,
                               const_lengths=const_lengths, jaxprs=jaxprs)
    x = pytree.tree_unflatten(b_tree, outs[:len(b_leaves)])
    if has_aux:
        return x, pytree.tree_unflatten(aux_tree, outs[len(b_leaves):])
    return x


def _spec(aval):
    from pyjax._src.core.abstract import ShapeDtypeStruct
    return ShapeDtypeStruct(aval.shape, aval.dtype)


def _abstract_eval(*avals, const_lengths, jaxprs):
    consts, b = _split_consts(avals, const_lengths)
    s = jaxprs.solve
    if not _same_avals(s.in_avals[const_lengths.solve:], b):
        raise TypeError(f"linear_solve: solve takes {[a.str_short() for a in s.in_avals]}, "
                        f"applied to {[a.str_short() for a in b]}")
    return list(s.out_avals)


def _run(closed, consts, xs):
    return eval_jaxpr(closed.jaxpr, [], *consts, *xs)


def _lower(ctx, *args, const_lengths, jaxprs):
    def fun(*args):
        consts, b = _split_consts(args, const_lengths)
        return _run(jaxprs.solve, consts.solve, b)
    return ctx.lower_fun(fun, list(args), multiple_results=True)


def _jvp(primals, tangents, *, const_lengths, jaxprs):
    consts, b = _split_consts(primals, const_lengths)
    consts_dot, b_dot = _split_consts(tangents, const_lengths)
    outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    n = len(b)
    x = outs[:n]
    # matvec(x) == b  =>  matvec(x') + matvec_θ'(x) == b'
    mv_nz = [type(t) is not Zero for t in consts_dot.matvec]
    rhs = None
    if any(mv_nz):
        jv, jv_consts, _ = ad.jvp_jaxpr(jaxprs.matvec, mv_nz + [False] * n, instantiate=True)
        res = eval_jaxpr(jv.jaxpr, [], *jv_consts, *consts.matvec, *x,
                         *[t for t in consts_dot.matvec if type(t) is not Zero])
        rhs = res[n:]
    b_nz = any(type(t) is not Zero for t in b_dot)
    aux_dots = [Zero(ad.tangent_aval(common.aval_of(a))) for a in outs[n:]]
    if rhs is None and not b_nz:
        return outs, [Zero(ad.tangent_aval(common.aval_of(v))) for v in x] + aux_dots
    if rhs is None:
        new_b = [ad_util.instantiate(t) for t in b_dot]
    elif not b_nz:
        new_b = [lax_ew.neg(r) for r in rhs]
    else:
        new_b = [lax_ew.sub(ad_util.instantiate(t), r) for t, r in zip(b_dot, rhs)]
    x_dot = linear_solve_p.bind(*[c for cs in consts for c in cs], *new_b,
                                const_lengths=const_lengths, jaxprs=jaxprs)[:n]
    return outs, list(x_dot) + aux_dots


def _transpose(cts, *args, const_lengths, jaxprs):
    consts, b = _split_consts(args, const_lengths)
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation"
                        " of custom_linear_solve")
    if any(is_undefined_primal(c) for cs in consts for c in cs):
        raise NotImplementedError("custom_linear_solve is linear in b only: its transpose with "
                                  "respect to the values matvec or solve close over is not "
                                  "defined")
    n = len(b)
    cts_x = [ad_util.instantiate(c) if type(c) is Zero else c for c in cts[:n]]
    t_consts = consts.transpose()
    ct_b = linear_solve_p.bind(*[c for cs in t_consts for c in cs], *cts_x,
                               const_lengths=const_lengths.transpose(),
                               jaxprs=jaxprs.transpose())[:n]
    return [None] * sum(const_lengths) + list(ct_b)


def _batch(args, dims, *, const_lengths, jaxprs, axis_data):
    size = axis_data.size
    consts, b = _split_consts(args, const_lengths)
    c_dims, b_dims = _split_consts(dims, const_lengths)
    # The solution is batched whenever anything is: every vector is batched at 0.
    b = [common.move_to(x, d, 0, size) for x, d in zip(b, b_dims)]
    new_j, new_c = [], []
    for j, cs, ds in zip(jaxprs, consts, c_dims):
        if j is None:
            new_j.append(None)
            new_c.append([])
            continue
        # the consts are passed moved to axis 0 (below), so the body is batched at 0 too
        c0 = [d if d is not_mapped else 0 for d in ds]
        bj, bconsts, _ = batching.batch_jaxpr(j, c0 + [0] * len(b), axis_data,
                                              [True] * len(j.out_avals))
        new_j.append(bj)
        new_c.append(list(bconsts) + [x if d is not_mapped else common.move_to(x, d, 0, size)
                                      for x, d in zip(cs, ds)])
    outs = linear_solve_p.bind(*[c for cs in new_c for c in cs], *b,
                               const_lengths=SolveTuple(*(len(c) for c in new_c)),
                               jaxprs=SolveTuple(*new_j))
    return outs, [0] * len(outs)


def _uses_axis(params, name):
    return any(j is not None and parallel.jaxpr_uses_axis(j, name) for j in params["jaxprs"])


from pyjax._src.core.sharding_rules import FROM_BODY  # noqa: E402
linear_solve_p = Primitive("custom_linear_solve", abstract_eval=_abstract_eval, lower=_lower,
                           sharding_rule=FROM_BODY,
                           multiple_results=True, jvp=_jvp, transpose=_transpose, linear=True,
                           batch=_batch, axis_aware=_uses_axis)


# ---- custom_root ----

def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """Differentiably solve for the root of ``f``.

    Computes ``solve(f, initial_guess)``, a root of ``f``; derivatives with respect to the values
    ``f`` closes over come from the implicit function theorem, computed with ``tangent_solve``
    (never through ``solve``'s iterations); the derivative with respect to ``initial_guess`` is
    zero.

    Parameters
    ----------
    f : callable
        The function whose root is found; same pytree structure in and out.
    initial_guess : pytree of arrays
        The starting point handed to ``solve``.
    solve : callable
        ``solve(f, initial_guess)`` returns a root (with ``has_aux``: ``(root, aux)``).
    tangent_solve : callable
        ``tangent_solve(g, y)`` solves the linear system ``g(x) == y`` for ``x``, ``g`` being the
        linearization of ``f`` at the root (e.g. ``lambda g, y: y / g(1.0)`` for scalars).
    has_aux : bool
        ``solve`` returns ``(root, aux)``; aux is returned as is, with no derivative.
    """
    if not (callable(f) and callable(solve) and callable(tangent_solve)):
        raise TypeError("custom_root: f, solve and tangent_solve must be callable")
    from pyjax._src.transformations.custom_derivatives import custom_jvp
    from pyjax._src.transformations.grad import linearize
    g_leaves, g_tree = pytree.tree_flatten(initial_guess)
    g_avals = [common.aval_of(x) for x in g_leaves]
    _, args_tree = pytree.tree_flatten((initial_guess,))
    name = "custom_root"
    f_j, f_c, f_tree = common.trace_fun(f, args_tree, g_avals, "f", name)
    _check_tree("f", "initial_guess", f_tree, f_j.out_avals, g_tree, g_avals)

    def f_no_grad(x):  # solve sees f's closed-over values as constants
        leaves = pytree.tree_leaves(x)
        return pytree.tree_unflatten(g_tree, _run(f_j, [stop_gradient(c) for c in f_c], leaves))
    s_j, s_c, s_tree = common.trace_fun(lambda x: solve(f_no_grad, x), args_tree, g_avals,
                                        "solve", name)
    n = len(g_leaves)
    if has_aux:
        n_sol, aux_tree = _split_aux("solve", s_tree, s_j.out_avals, g_tree)
        _check_tree("solve", "initial_guess", g_tree, s_j.out_avals[:n_sol], g_tree, g_avals)
    else:
        _check_tree("solve", "initial_guess", s_tree, s_j.out_avals, g_tree, g_avals)

    def linearize_and_solve(x, rhs):
        _, f_lin = linearize(f, x)
        return tangent_solve(f_lin, rhs)
    _, pair_tree = pytree.tree_flatten((initial_guess, initial_guess))
    ls_j, ls_c, ls_tree = common.trace_fun(linearize_and_solve, pair_tree, g_avals * 2,
                                           "tangent_solve", name)
    _check_tree("tangent_solve", "initial_guess", ls_tree, ls_j.out_avals, g_tree, g_avals)
    lengths = (len(f_c), len(s_c), len(ls_c))

    def split(args):
        a, b, c = lengths
        return args[:a], args[a:a + b], args[a + b:a + b + c], args[a + b + c:]

    @custom_jvp
    def root(*args):
        _, sc, _, guess = split(args)
        return tuple(_run(s_j, sc, guess))

    @root.defjvp
    def root_jvp(primals, tangents):
        fc, _, lc, _ = split(primals)
        fc_dot = split(tangents)[0]
        outs = root(*primals)
        sol = list(outs[:n])
        # f(θ, x(θ)) == 0  =>  ∂f/∂x x' = -∂f/∂θ θ'
        _, rhs = ad.jvp_flat(lambda *c: _run(f_j, c, sol), list(fc), list(fc_dot))
        rhs = [ad_util.instantiate(r) for r in rhs]
        sol_dot = [lax_ew.neg(t) for t in _run(ls_j, lc, sol + rhs)]
        aux_dot = [ad_util.zeros(ad.tangent_aval(common.aval_of(a))) for a in outs[n:]]
        return outs, tuple(sol_dot + aux_dot)

    outs = root(*f_c, *s_c, *ls_c, *g_leaves)
    sol = pytree.tree_unflatten(g_tree, list(outs[:n]))
    if has_aux:
        return sol, pytree.tree_unflatten(aux_tree, list(outs[n:]))
    return sol

