"""``lax.scan``: a loop over the leading axis of ``xs`` carrying a state, as the ``scan``
primitive.

Operands are ``(*consts, *init, *xs)``; ``jaxpr`` (const-free) maps ``(consts, carry, x)`` to
``(carry, y)``. It lowers to one ``stablehlo.while`` (the body is emitted ``unroll`` times per
iteration) that slices ``x`` out of ``xs`` and writes ``y`` into the stacked ``ys``.

Reverse mode follows JAX: the JVP is a scan of the JVP body; partial evaluation splits it into
a known scan (primal carries, ys, and the per-iteration residuals stacked as extra ys) and a
staged scan that reads the residuals as xs (residuals that are loop constants stay consts); the
transpose of the staged scan is a scan running the other way whose carry accumulates the
cotangents of the carry and of the linear consts.
"""
from __future__ import annotations

import weakref

import numpy as np

from pyjax._src.core import pytree
from pyjax._src.core.traceback_util import api_boundary
from pyjax._src.core.config import config
from pyjax._src.core.abstract import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, cache_for, eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.rules import Zero, not_mapped
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import ad, batching, staging
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import parallel
from pyjax._src.lax import shape_ops
from pyjax._src.lowering import mlir
from pyjax._src.control_flow import common, ref_threading

__all__ = ["scan"]

_I32 = ShapedArray((), np.dtype(np.int32))


# ---- the API ----

@api_boundary
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Scan ``f`` over the leading axis of ``xs`` while carrying a state.

    Equivalent to this Python loop, but compiled into one XLA loop::

        def scan(f, init, xs, length=None):
            if xs is None:
                xs = [None] * length
            carry, ys = init, []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, np.stack(ys)

    Parameters
    ----------
    f : callable ``(carry, x) -> (carry, y)``; the output carry must have the type of the input
        carry (pytree structure, shapes and dtypes).
    init : the initial carry (a pytree of arrays).
    xs : a pytree of arrays scanned along their leading axis, or None (then ``length`` is
        required).
    length : the number of iterations; must agree with the leading axis of ``xs``.
    reverse : scan from the end of ``xs`` to its start (``ys`` keep their positions).
    unroll : how many iterations each step of the compiled loop runs (``True``: all of them).
    """
    if not callable(f):
        raise TypeError(f"scan: f argument should be callable, got {f!r}")
    if _split_transpose:
        raise NotImplementedError("scan(_split_transpose=True) is not supported by pyjax")
    xs_leaves, xs_tree = pytree.tree_flatten(xs)
    lengths = set()
    for x in xs_leaves:
        a = common.aval_of(x)
        if a.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {a.str_short()}")
        lengths.add(a.shape[0])
    if length is not None:
        try:
            length = int(length)
        except (TypeError, ValueError):
            raise TypeError(f"scan length must be a concrete int, got {length!r}") from None
        if lengths and lengths != {length}:
            raise ValueError("scan got `length` argument of "
                             f"{length} which disagrees with leading axis sizes "
                             f"{sorted(lengths)}.")
    elif len(lengths) > 1:
        shapes = [common.aval_of(x).str_short() for x in xs_leaves]
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(shapes) + ".")
    elif not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    else:
        length = lengths.pop()
    if length < 0:
        raise ValueError(f"scan length must be non-negative, got {length}")
    if config.jax_disable_jit:
        return _scan_in_python(f, init, xs_leaves, xs_tree, length, reverse)

    init_leaves, init_tree = pytree.tree_flatten(init)
    carry_avals = [common.aval_of(x) for x in init_leaves]
    x_avals = [_slice_aval(common.aval_of(x)) for x in xs_leaves]
    in_tree = pytree.treedef_tuple([init_tree, xs_tree])  # carry leaves, then xs leaves

    def traced(c_avals):
        jaxpr, consts, out_tree = common.trace_fun(f, in_tree,
                                                   c_avals + x_avals, "scan body", "scan")
        children = out_tree.children()
        if len(children) != 2:
            raise TypeError("scan body output must be a pair, got "
                            f"{pytree.tree_unflatten(out_tree, jaxpr.out_avals)}.")
        carry_tree, y_tree = children
        n = carry_tree.num_leaves
        return jaxpr, consts, carry_tree, y_tree, list(jaxpr.out_avals[:n])

    jaxpr, consts, carry_tree, y_tree, out_carry = traced(carry_avals)
    given_leaves = init_leaves
    if carry_tree == init_tree:
        promoted = common.promote_weak_carry(carry_avals, out_carry)
        if promoted is not None:
            carry_avals = promoted
            init_leaves = [common.cast_to(x, a) for x, a in zip(init_leaves, carry_avals)]
            jaxpr, consts, carry_tree, y_tree, out_carry = traced(carry_avals)
    common.check_carry("scan body", init_tree, carry_avals, carry_tree, out_carry)
    outs = scan_p.bind(*consts, *init_leaves, *xs_leaves, jaxpr=jaxpr, num_consts=len(consts),
                       num_carry=len(init_leaves), length=length, reverse=bool(reverse),
                       unroll=_unroll(unroll, length))
    n = len(init_leaves)
    outs = common.forward_unchanged_carries(jaxpr, len(consts), given_leaves, carry_avals, outs)
    return (pytree.tree_unflatten(init_tree, outs[:n]),
            pytree.tree_unflatten(y_tree, outs[n:]))


def _slice_aval(a):
    """The body's view of one ``xs`` leaf: its leading (scanned) dimension dropped, the others
    keeping their Explicit sharding (a split scanned dimension is JAX's ValueError)."""
    spec = explicit_spec(a)
    if spec is None:
        return a.update(shape=a.shape[1:])
    if spec[0]:
        raise ValueError(f"0th dimension of all xs should be replicated. Got "
                         f"P{format_spec(spec)}")
    return with_spec(a.unsharded().update(shape=a.shape[1:]), a.sharding.mesh, spec[1:])


def _scan_in_python(f, init, xs_leaves, xs_tree, length, reverse):
    """``scan`` as the Python loop it means (the ``jax_disable_jit`` config), as JAX does."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    order = range(length - 1, -1, -1) if reverse else range(length)
    carry, ys = init, [None] * length
    for i in order:
        x = [shape_ops.index_in_dim(v, i, 0, keepdims=False) for v in xs_leaves]
        carry, ys[i] = f(carry, pytree.tree_unflatten(xs_tree, x))
    stacked = pytree.tree_map(
        lambda *y: shape_ops.concatenate([shape_ops.expand_dims(v, (0,)) for v in y], 0),
        *ys)
    return carry, stacked


def _unroll(unroll, length):
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    u = int(unroll)
    if u < 0:
        raise ValueError(f"scan unroll must be a non-negative int or a bool, got {unroll!r}")
    return max(u, 1)


# ---- the primitive ----

def _split3(seq, num_consts, num_carry):
    seq = list(seq)
    return seq[:num_consts], seq[num_consts:num_consts + num_carry], seq[num_consts + num_carry:]


def _abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse, unroll):
    outs = jaxpr.out_avals
    return list(outs[:num_carry]) + [common.batched_aval(a, length) for a in outs[num_carry:]]


def _sharding_rule(avals_in, avals_out, *, jaxpr, num_carry, **_):
    """Carries have the body's types; each ys gains an unsplit leading dimension."""
    specs = []
    for i, a in enumerate(jaxpr.out_avals):
        s = explicit_spec(a) or ((),) * len(a.shape)
        specs.append(s if i < num_carry else ((),) + s)
    return specs


def _lower(ctx, *args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    consts, init, xs = _split3(args, num_consts, num_carry)
    body = jaxpr.jaxpr
    y_avals = body.out_avals[num_carry:]
    ys = [ctx.constant(np.zeros((), a.dtype), common.batched_aval(a, length).update(
        weak_type=False)) for a in y_avals]
    zero = ctx.constant(0, _I32)

    def step(block, t, carry, bufs):
        idx = t if not reverse else block.op("stablehlo.subtract", [
            block.constant(length - 1, _I32), t], _I32)
        x_t = []
        for x in xs:
            a = x.aval
            sl = block.op("stablehlo.dynamic_slice", [x, idx] + [zero] * (a.ndim - 1),
                          a.update(shape=(1,) + a.shape[1:]),
                          attrs={"slice_sizes": mlir.i64_array((1,) + a.shape[1:])})
            x_t.append(block.op("stablehlo.reshape", [sl], a.update(shape=a.shape[1:])))
        outs = ctx.lower_sub_jaxpr(block, body, [], list(consts) + list(carry) + x_t)
        new_bufs = []
        for buf, y in zip(bufs, outs[num_carry:]):
            y1 = block.op("stablehlo.reshape", [y], buf.aval.update(shape=(1,) + y.aval.shape))
            new_bufs.append(block.op("stablehlo.dynamic_update_slice",
                                     [buf, y1, idx] + [zero] * y.aval.ndim, buf.aval))
        return list(outs[:num_carry]), new_bufs

    carry, bufs = list(init), ys
    u = unroll if unroll > 1 else _auto_unroll(body, length)
    u = min(u, length) if length else 1
    n_loop = (length // u) * u
    if n_loop:
        state = [ctx.constant(0, _I32)] + carry + bufs
        avals = [v.aval for v in state]
        cond = ctx.region(avals)
        bound = cond.constant(n_loop, _I32)
        pred = cond.op("stablehlo.compare", [cond.args[0], bound], ShapedArray((), np.bool_),
                       attrs={"comparison_direction": "#stablehlo<comparison_direction LT>",
                              "compare_type": "#stablehlo<comparison_type SIGNED>"})
        cond.ret([pred])
        body_r = ctx.region(avals)
        t, c, b = body_r.args[0], body_r.args[1:1 + num_carry], body_r.args[1 + num_carry:]
        for k in range(u):
            tk = t if k == 0 else body_r.op("stablehlo.add", [t, body_r.constant(k, _I32)], _I32)
            c, b = step(body_r, tk, c, b)
        body_r.ret([body_r.op("stablehlo.add", [t, body_r.constant(u, _I32)], _I32)] + c + b)
        out = ctx.op("stablehlo.while", state, avals, regions=[cond, body_r])
        carry, bufs = out[1:1 + num_carry], out[1 + num_carry:]
    for t in range(n_loop, length):  # the remainder, straight-line
        carry, bufs = step(ctx.block, ctx.constant(t, _I32), carry, bufs)
    return list(carry) + list(bufs)


_AUTO_UNROLL = 8
# Ops cheap enough that XLA's per-trip cost dominates a body made of a few of them.
_CHEAP = frozenset("add sub mul neg max min select_n convert_element_type eq ne lt le gt ge and or "
                   "not xor abs sign broadcast_in_dim integer_pow square".split())


def _auto_unroll(body, length):
    """How many iterations to emit per loop trip when the user asked for no unrolling.

    XLA:CPU spends ~10 ns per while-loop trip; a body of a few small elementwise ops costs
    less than that, so emitting it several times per trip is a big win (measured 4-8x on the
    fori_loop benchmark). Each copy is compiled as its own kernels, so only bodies of a few
    cheap ops on small arrays qualify (unrolling a 1000-step tanh RNN 8x tripled its
    compile time for nothing)."""
    if length < 2 * _AUTO_UNROLL or len(body.eqns) > 6:
        return 1
    for e in body.eqns:
        if e.primitive.name not in _CHEAP or any(v.aval.size > 1024 for v in e.outvars):
            return 1
    return _AUTO_UNROLL


_plan_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_transpose_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _params(jaxpr, num_consts, num_carry, **rest):
    return dict(rest, jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry)


def _jvp(primals, tangents, *, jaxpr, num_consts, num_carry, **params):
    nz = [type(t) is not Zero for t in tangents]
    c_nz, k_nz, x_nz = _split3(nz, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    while True:  # fixpoint: a carry tangent is nonzero if the body makes it so
        _, _, out_nz = ad.jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + [False] * n_ys)
        new = [a or b for a, b in zip(k_nz, out_nz[:num_carry])]
        if new == k_nz:
            break
        k_nz = new
    jvp_j, jvp_consts, out_nz = ad.jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz,
                                                 k_nz + [False] * n_ys)
    y_nz = out_nz[num_carry:]
    nc, nk, nx = num_consts, num_carry, len(x_nz)
    nct, nkt, nxt = sum(c_nz), sum(k_nz), sum(x_nz)
    # jvp_j takes (consts, carry, xs, const tangents, carry tangents, xs tangents)
    p = len(jvp_consts)
    base = p + nc + nk + nx
    in_order = (list(range(p)) + list(range(p, p + nc)) + list(range(base, base + nct))
                + list(range(p + nc, p + nc + nk)) + list(range(base + nct, base + nct + nkt))
                + list(range(p + nc + nk, base)) + list(range(base + nct + nkt,
                                                              base + nct + nkt + nxt)))
    n_out = len(jaxpr.out_avals)
    out_order = (list(range(nk)) + list(range(n_out, n_out + nkt)) + list(range(nk, n_out))
                 + list(range(n_out + nkt, n_out + nkt + sum(y_nz))))
    body = common.reorder(jvp_j, in_order, out_order)
    consts, init, xs = _split3(primals, num_consts, num_carry)
    c_t, k_t, x_t = _split3(tangents, num_consts, num_carry)
    k_t = [ad.instantiate(t) for t, n in zip(k_t, k_nz) if n]
    outs = scan_p.bind(*jvp_consts, *consts, *[t for t, n in zip(c_t, c_nz) if n],
                       *init, *k_t, *xs, *[t for t, n in zip(x_t, x_nz) if n],
                       **_params(body, p + nc + nct, nk + nkt, **params))
    carry_out, k_t_out = outs[:nk], iter(outs[nk:nk + nkt])
    ys, y_t = outs[nk + nkt:nk + nkt + n_out - nk], iter(outs[nk + nkt + n_out - nk:])
    length = params["length"]
    tan_avals = [ad.tangent_aval(a) for a in jaxpr.out_avals]
    tangents_out = [next(k_t_out) if n else Zero(a) for n, a in zip(k_nz, tan_avals[:nk])]
    tangents_out += [next(y_t) if n else Zero(common.batched_aval(a, length))
                     for n, a in zip(y_nz, tan_avals[nk:])]
    return list(carry_out) + list(ys), tangents_out


def _pe_plan(params, unknowns):
    """How a scan splits when ``unknowns`` of its operands are unknown.

    Returns ``(known_in, known_params, n_known_out, residuals, staged_srcs, staged_params,
    out_uk)``: the known scan takes the operands ``known_in`` and returns its known carries and
    ys (``n_known_out``) followed by the per-iteration residuals it stacks; ``residuals[j]`` is
    ``("arg", i)`` for a residual that is operand ``i`` (a known const stays a const of the
    staged scan, a known x is read from the original xs) or ``("out", k)`` for output
    ``n_known_out + k`` of the known scan; ``staged_srcs`` lists the staged scan's operands as
    ``("arg", i)`` or ``("res", j)``."""
    key = (tuple(unknowns), params["num_consts"], params["num_carry"], params["length"],
           params["reverse"], params["unroll"])
    per = cache_for(_plan_cache, params["jaxpr"])
    hit = per.get(key)
    if hit is None:
        hit = per[key] = _make_pe_plan(params, unknowns)
    return hit


def _make_pe_plan(params, unknowns):
    jaxpr, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
    c_uk, k_uk, x_uk = _split3(unknowns, nc, nk)
    n_ys = len(jaxpr.out_avals) - nk
    while True:  # fixpoint: a carry is unknown if the body makes it so
        out_uk = pe.partial_eval_jaxpr(jaxpr, c_uk + k_uk + x_uk,
                                       instantiate=k_uk + [False] * n_ys).out_unknowns
        new = [a or b for a, b in zip(k_uk, out_uk[:nk])]
        if new == k_uk:
            break
        k_uk = new
    split = pe.partial_eval_jaxpr(jaxpr, c_uk + k_uk + x_uk, instantiate=k_uk + [False] * n_ys)
    known, staged, out_uk, num_res = split.known, split.staged, split.out_unknowns, split.num_res
    # operand indices of the known consts, carries and xs, in the known Jaxpr's input order
    uk = c_uk + k_uk + x_uk
    known_in = [i for i, u in enumerate(uk) if not u]
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - num_res
    res_vars = kj.outvars[n_known_out:]
    n_kc, n_kk = sum(not u for u in c_uk), sum(not u for u in k_uk)
    operand_of = {v: i for v, i in zip(kj.invars, known_in)}
    forwardable = set(kj.invars[:n_kc]) | set(kj.invars[n_kc + n_kk:])
    # values computed from known consts only are loop invariants: the staged body recomputes
    # them from those consts rather than having them stacked once per iteration (W.T of a
    # weight read in the body would otherwise be stored `length` times)
    invariant = set(kj.invars[:n_kc])
    for e in kj.eqns:
        if all(type(v) is Literal or v in invariant for v in e.invars):
            invariant.update(e.outvars)
    residuals, stacked, const_res, rec_res, iter_res = [], [], [], [], []
    for j, v in enumerate(res_vars):
        if v in forwardable:
            residuals.append(("arg", operand_of[v]))
            (const_res if operand_of[v] < nc else iter_res).append(j)
        elif v in invariant:
            residuals.append(("rec", None))
            rec_res.append(j)
        else:
            residuals.append(("out", len(stacked)))
            stacked.append(v)
            iter_res.append(j)
    loop = dict(length=params["length"], reverse=params["reverse"], unroll=params["unroll"])
    known_body = Jaxpr([], kj.invars, kj.outvars[:n_known_out] + stacked, kj.eqns,
                       kj.debug_info)
    known_params = _params(ClosedJaxpr(known_body, []), n_kc, n_kk, **loop)
    # staged takes (residuals, unknown consts, unknown carry, unknown xs); as a scan body:
    # (const residuals, unknown consts | unknown carry | per-iteration residuals, unknown xs)
    r, n_uc, n_uk = num_res, sum(c_uk), sum(k_uk)
    in_order = (const_res + rec_res + list(range(r, r + n_uc + n_uk)) + iter_res
                + list(range(r + n_uc + n_uk, len(staged.jaxpr.invars))))
    staged_body = common.reorder(staged, in_order)
    kc_srcs = []
    if rec_res:
        staged_body = _with_recompute(staged_body, len(const_res), kj, n_kc,
                                      [res_vars[j] for j in rec_res])
        kc_srcs = [("arg", i) for i in known_in[:n_kc]]
    # a known init that the fixpoint made unknown is fed to the staged scan
    uk_c = [("arg", i) for i in range(nc) if c_uk[i]]
    uk_k = [("arg", nc + i) for i in range(nk) if k_uk[i]]
    uk_x = [("arg", nc + nk + i) for i in range(len(x_uk)) if x_uk[i]]
    staged_srcs = ([("res", j) for j in const_res] + kc_srcs + uk_c + uk_k
                   + [("res", j) for j in iter_res] + uk_x)
    staged_params = _params(staged_body, len(const_res) + len(kc_srcs) + n_uc, n_uk, **loop)
    return known_in, known_params, n_known_out, residuals, staged_srcs, staged_params, out_uk


def _with_recompute(body, n_before, kj, n_kc, rec_vars):
    """``body`` (taking ``n_before`` inputs, then the recomputed residuals, then the rest) as a
    body that takes the known consts instead of the recomputed residuals and computes them."""
    rec = pe.dce_jaxpr(Jaxpr([], kj.invars[:n_kc], rec_vars, kj.eqns, kj.debug_info))
    n_rec = len(rec_vars)
    avals = body.in_avals
    in_avals = avals[:n_before] + [v.aval for v in kj.invars[:n_kc]] + avals[n_before + n_rec:]

    def fun(*xs):
        values = eval_jaxpr(rec, [], *xs[n_before:n_before + n_kc])
        return eval_jaxpr(body.jaxpr, [], *xs[:n_before], *values, *xs[n_before + n_kc:])

    traced = staging.trace_to_jaxpr(fun, in_avals, staging.DebugInfo(
        getattr(kj.debug_info, "fun_name", "scan body"), None, "scan"))
    new, consts = staging.convert_constvars_jaxpr(traced)
    assert not consts, "recomputing loop invariants captured values"
    return new


def _partial_eval(trace, args, params):
    known_in, known_params, n_known_out, residuals, srcs, staged_params, out_uk = _pe_plan(
        params, [trace.is_unknown(x) for x in args])
    known_outs = trace.bind_known(scan_p, [args[i] for i in known_in], known_params)
    res = [args[i] if kind == "arg" else known_outs[n_known_out + i] if kind == "out" else None
           for kind, i in residuals]
    staged_outs = iter(trace.stage(scan_p, [args[i] if kind == "arg" else res[i]
                                            for kind, i in srcs], staged_params))
    known_iter = iter(known_outs[:n_known_out])
    return [next(staged_outs) if u else next(known_iter) for u in out_uk]


def _partial_eval_jaxpr(eqn, in_unknowns):
    """The same split on an equation (for ``pe.partial_eval_jaxpr``, e.g. under ``jit``)."""
    known_in, known_params, n_known_out, residuals, srcs, staged_params, out_uk = _pe_plan(
        eqn.params, in_unknowns)
    known_outvars = [v for v, u in zip(eqn.outvars, out_uk) if not u]
    body_outs = known_params["jaxpr"].jaxpr.outvars[n_known_out:]
    length = eqn.params["length"]
    stacked = [Var(common.batched_aval(v.aval, length)) for v in body_outs]
    known = Eqn(scan_p, [eqn.invars[i] for i in known_in], known_outvars + stacked,
                known_params)
    res = [eqn.invars[i] if kind == "arg" else stacked[i] if kind == "out" else None
           for kind, i in residuals]
    staged = None
    if any(out_uk):
        staged = Eqn(scan_p, [eqn.invars[i] if kind == "arg" else res[i] for kind, i in srcs],
                     [v for v, u in zip(eqn.outvars, out_uk) if u], staged_params)
    return known, staged, out_uk


def _transpose_body(jaxpr, num_consts, num_carry, c_lin, x_lin, ys_nz):
    """The body of the transposed scan: ``(residual consts | cotangent accumulators of the
    linear consts, carry cotangents | residual xs, ys cotangents) -> (accumulators, carry
    cotangents | xs cotangents)``. Returns ``(ClosedJaxpr without consts, its consts)``."""
    body = jaxpr.jaxpr
    c_avals, k_avals, x_avals = _split3(body.in_avals, num_consts, num_carry)
    lin_c_avals = [ad.tangent_aval(a) for a, lin in zip(c_avals, c_lin) if lin]
    y_avals = [ad.tangent_aval(a) for a in body.out_avals[num_carry:]]
    res_c_avals = [a for a, lin in zip(c_avals, c_lin) if not lin]
    res_x_avals = [a for a, lin in zip(x_avals, x_lin) if not lin]
    n_rc, n_lc, n_rx = len(res_c_avals), len(lin_c_avals), len(res_x_avals)

    def t_body(*vals):
        rc = iter(vals[:n_rc])
        acc = vals[n_rc:n_rc + n_lc]
        ck = vals[n_rc + n_lc:n_rc + n_lc + num_carry]
        rest = vals[n_rc + n_lc + num_carry:]
        rx, cy = iter(rest[:n_rx]), iter(rest[n_rx:])
        prim = ([ad.UndefinedPrimal(a) if lin else next(rc) for a, lin in zip(c_avals, c_lin)]
                + [ad.UndefinedPrimal(a) for a in k_avals]
                + [ad.UndefinedPrimal(a) if lin else next(rx) for a, lin in zip(x_avals, x_lin)])
        cts_out = list(ck) + [next(cy) if nz else Zero(a) for a, nz in zip(y_avals, ys_nz)]
        cts_in = ad.backward_pass(body, [], prim, cts_out)
        cc, ckk, cx = _split3(cts_in, num_consts, num_carry)
        lin_cc = [ad.instantiate(c) if type(c) is Zero else c
                  for c, lin in zip(cc, c_lin) if lin]
        new_acc = [ad.add_tangents(a, c) for a, c in zip(acc, lin_cc)]
        new_ck = [ad.instantiate(c) for c in ckk]
        new_cx = [ad.instantiate(c) for c, lin in zip(cx, x_lin) if lin]
        return new_acc + new_ck + new_cx

    in_avals = (res_c_avals + lin_c_avals + [ad.tangent_aval(a) for a in k_avals]
                + res_x_avals + [a for a, nz in zip(y_avals, ys_nz) if nz])
    traced = staging.trace_to_jaxpr(t_body, in_avals,
                                    staging.DebugInfo("scan_transpose", None, "transpose"))
    return staging.convert_constvars_jaxpr(traced)


def _transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    consts, init, xs = _split3(args, num_consts, num_carry)
    c_lin = [ad.is_undefined_primal(x) for x in consts]
    x_lin = [ad.is_undefined_primal(x) for x in xs]
    # Every carry is treated as linear: a known init here is an instantiated zero tangent
    # (as in JAX), whose cotangent is dropped.
    k_lin = [ad.is_undefined_primal(x) for x in init]
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    ys_nz = [type(c) is not Zero for c in ct_ys]
    res_c = [x for x, lin in zip(consts, c_lin) if not lin]
    res_x = [x for x, lin in zip(xs, x_lin) if not lin]
    lin_c_avals = [ad.tangent_aval(a) for a, lin in zip(jaxpr.in_avals[:num_consts], c_lin)
                   if lin]
    n_rc, n_lc = len(res_c), len(lin_c_avals)
    key = (tuple(c_lin), tuple(x_lin), tuple(ys_nz), num_consts, num_carry)
    per = cache_for(_transpose_cache, jaxpr)
    hit = per.get(key)
    if hit is None:
        hit = _transpose_body(jaxpr, num_consts, num_carry, c_lin, x_lin, ys_nz)
        if not any(isinstance(c, Tracer) for c in hit[1]):
            per[key] = hit
    t_jaxpr, t_consts = hit
    init_acc = [ad.zeros_like_aval(a) for a in lin_c_avals]
    init_ck = [ad.instantiate(c) for c in ct_carry]
    outs = scan_p.bind(*t_consts, *res_c, *init_acc, *init_ck, *res_x,
                       *[c for c, nz in zip(ct_ys, ys_nz) if nz], jaxpr=t_jaxpr,
                       num_consts=len(t_consts) + n_rc, num_carry=n_lc + num_carry,
                       length=length, reverse=not reverse, unroll=unroll)
    ct_consts = iter(outs[:n_lc])
    ct_init = outs[n_lc:n_lc + num_carry]
    ct_xs = iter(outs[n_lc + num_carry:])
    return ([next(ct_consts) if lin else None for lin in c_lin]
            + [c if lin else None for c, lin in zip(ct_init, k_lin)]
            + [next(ct_xs) if lin else None for lin in x_lin])


def _batch(args, dims, *, jaxpr, num_consts, num_carry, length, axis_data, **params):
    size = axis_data.size
    c_d, k_d, x_d = _split3(dims, num_consts, num_carry)
    c_b = [d is not not_mapped for d in c_d]
    k_b = [d is not not_mapped for d in k_d]
    x_b = [d is not not_mapped for d in x_d]
    n_ys = len(jaxpr.out_avals) - num_carry

    def body_dims(kb):
        return [0 if b else not_mapped for b in c_b + kb + x_b]

    while True:  # fixpoint: a carry is batched if the body makes it so
        _, _, out_d = batching.batch_jaxpr(jaxpr, body_dims(k_b), axis_data,
                                           k_b + [False] * n_ys)
        out_b = [d is not not_mapped for d in out_d]
        new = [a or b for a, b in zip(k_b, out_b[:num_carry])]
        if new == k_b:
            break
        k_b = new
    body, b_consts, out_d = batching.batch_jaxpr(jaxpr, body_dims(k_b), axis_data,
                                                 k_b + [False] * n_ys)
    out_b = [d is not not_mapped for d in out_d]
    consts, init, xs = _split3(args, num_consts, num_carry)
    consts = [common.move_to(x, d, 0, size) if d is not not_mapped else x
              for x, d in zip(consts, c_d)]
    init = [common.move_to(x, d, 0, size) if b else x for x, d, b in zip(init, k_d, k_b)]
    xs = [common.move_to(x, d, 1, size) if d is not not_mapped else x for x, d in zip(xs, x_d)]
    outs = scan_p.bind(*b_consts, *consts, *init, *xs, jaxpr=body,
                       num_consts=len(b_consts) + num_consts, num_carry=num_carry,
                       length=length, **params)
    out_dims = [0 if b else not_mapped for b in k_b] + [
        1 if b else not_mapped for b in out_b[num_carry:]]
    return outs, out_dims


from pyjax._src.core.sharding_rules import (explicit_spec, format_spec,  # noqa: E402
                                            with_spec)
scan_p = Primitive("scan", abstract_eval=_abstract_eval, lower=_lower, multiple_results=True,
                   sharding_rule=_sharding_rule,
                   jvp=_jvp, transpose=_transpose, batch=_batch, partial_eval=_partial_eval,
                   partial_eval_jaxpr=_partial_eval_jaxpr, axis_aware=parallel.params_use_axis)

# Mutable array references used in the body become part of the carry (ref_threading.py).
scan = ref_threading.scan_threading(scan)
