"""The public autodiff transformations: ``jvp``, ``linearize``, ``vjp``, ``grad``,
``value_and_grad``, ``jacfwd``, ``jacrev``, ``hessian`` and ``linear_transpose``, over pytrees.

They are thin layers over ``interpreters/ad.py``: forward mode is the JVP trace, reverse mode is
linearize (JVP + partial evaluation) followed by transposition of the linear Jaxpr.
"""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core import pytree
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.abstract import ShapeDtypeStruct, ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.rules import UndefinedPrimal, Zero
from pyjax._src.core.trace import Tracer, get_aval
from pyjax._src.interpreters import ad, dispatch, staging

float0 = dtypes.float0


# ---- argument plumbing ----

def _as_value(x):
    """A leaf as something primitives take: tracers and Arrays as they are, the rest uploaded
    (so that Python scalars become weakly typed arrays, as in JAX)."""
    if type(x) is ArrayImpl or isinstance(x, Tracer):
        return x
    if trace_mod.is_eager():
        return dispatch.to_array(x)
    get_aval(x)  # raises JAX's error for non-array values
    return x


def _as_output(x):
    if type(x) is ArrayImpl or isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray) and x.dtype == float0:
        return x
    return dispatch.to_array(x) if trace_mod.is_eager() else x


def _instantiate_out(t):
    return _as_output(ad.instantiate(t))


def _argnums(argnums, nargs, fun_name):
    single = isinstance(argnums, (int, np.integer))
    nums = (int(argnums),) if single else tuple(argnums)
    if not single:
        for a in nums:
            if not isinstance(a, (int, np.integer)):
                raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    if not nums:
        raise ValueError(f"{fun_name}: argnums must not be empty")
    for a in nums:
        if a >= nargs or a < -nargs:
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{max(nums) + 1} positional arguments to be passed by the caller, but got "
                f"only {nargs} positional arguments.")
    return tuple(a % nargs for a in nums), single


def _flat_fun(fun, args, kwargs, argnums, in_tree, has_aux, out_store):
    """``fun`` as a function of the flat leaves of ``args[argnums]`` (the other arguments fixed)
    returning flat outputs (and flat aux with ``has_aux``)."""
    def flat(*leaves):
        dyn = pytree.tree_unflatten(in_tree, leaves)
        full = list(args)
        for i, a in zip(argnums, dyn):
            full[i] = a
        out = fun(*full, **kwargs)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("has_aux=True requires the function to return a pair (a tuple "
                                f"of length 2) of (output, auxiliary data), got {_desc(out)}.")
            out, aux = out
            out_leaves, out_tree = pytree.tree_flatten(out)
            aux_leaves, aux_tree = pytree.tree_flatten(aux)
            out_store[:] = [out_tree, aux_tree]
            return out_leaves, aux_leaves
        out_leaves, out_tree = pytree.tree_flatten(out)
        out_store[:] = [out_tree]
        return out_leaves
    return flat


def _desc(x):
    return f"{type(x).__name__} {x!r}" if not isinstance(x, (tuple, list)) else \
        f"a {type(x).__name__} of length {len(x)}"


def _aux_out(store, aux):
    return pytree.tree_unflatten(store[1], [_as_output(a) for a in aux])


# ---- dtype checks, worded as JAX words them ----

def _check_input_dtype_revderiv(name, holomorphic, allow_int, x):
    aval = get_aval(x)
    dt = aval.dtype
    if holomorphic and not dtypes.is_complex(dt):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {dt.name}.")
    if dtypes.is_integer(dt) or dtypes.is_bool(dt):
        if not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {dt.name}. If you want to use Boolean- or "
                "integer-valued inputs, use vjp or set allow_int to True.")
    elif not dtypes.is_inexact(dt):
        raise TypeError(f"{name} requires numerical-valued inputs (input dtype that is a "
                        f"sub-dtype of np.bool_ or np.number), but got {dt.name}.")


def _check_output_dtype_revderiv(name, holomorphic, x):
    dt = get_aval(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dt.name}.")
    elif dtypes.is_complex(dt):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiating non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly.")
    elif not dtypes.is_floating(dt):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For differentiating non-holomorphic functions "
            "involving complex outputs, or function with integer outputs, use jax.vjp "
            "directly.")


def _check_input_dtype_jac(name, holomorphic, x):
    dt = get_aval(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dt.name}.")
    elif not dtypes.is_floating(dt):
        raise TypeError(
            f"{name} requires real-valued inputs (input dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiating non-holomorphic functions involving "
            "complex inputs or integer inputs, use jax.jvp directly.")


def _check_scalar(x):
    msg = "Gradient only defined for scalar-output functions. Output {}.".format
    try:
        aval = get_aval(x)
    except TypeError as e:
        raise TypeError(msg(f"was {x}")) from e
    if aval.shape != ():
        raise TypeError(msg(f"had shape: {aval.shape}"))


# ---- forward mode ----

def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode Jacobian-vector product of ``fun`` at ``primals`` along ``tangents``.

    Returns ``(fun(*primals), tangents_out)`` (and the aux data with ``has_aux``). ``primals``
    and ``tangents`` are tuples or lists with the same tree structure; integer and boolean
    primals take ``float0`` tangents."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = pytree.tree_flatten(tuple(primals))
    t_leaves, t_tree = pytree.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    p_leaves = [_as_value(p) for p in p_leaves]
    ts = []
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = get_aval(p), _tangent_arg_aval(t)
        expected = ad.tangent_aval(pa).dtype
        if pa.shape != ta.shape:
            raise ValueError("jvp called with different primal and tangent shapes;Got primal "
                             f"shape {pa.shape} and tangent shape as {ta.shape}")
        if ta.dtype != expected:
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
                "or in case of int/bool primal dtype the tangent dtype must be float0.Got "
                f"primal dtype {pa.dtype.name} and so expected tangent dtype {expected.name}, "
                f"but got tangent dtype {ta.dtype.name} instead.")
        ts.append(Zero(ad.tangent_aval(pa)) if expected == float0 else _as_value(t))
    store = []
    flat = _flat_fun(lambda *a: fun(*a), tuple(pytree.tree_unflatten(p_tree, p_leaves)), {},
                     tuple(range(len(primals))), p_tree, has_aux, store)
    res = ad.jvp_flat(flat, p_leaves, ts, has_aux=has_aux)
    out = pytree.tree_unflatten(store[0], [_as_output(o) for o in res[0]])
    t_out = pytree.tree_unflatten(store[0], [_instantiate_out(t) for t in res[1]])
    if has_aux:
        return out, t_out, _aux_out(store, res[2])
    return out, t_out


def _tangent_arg_aval(t):
    if isinstance(t, np.ndarray) and t.dtype == float0:
        return ShapedArray(t.shape, float0, False)
    return get_aval(t)


def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the JVP at ``primals``
    without re-running ``fun``: primal work is done once, the linear part is a staged Jaxpr."""
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [_as_value(x) for x in leaves]
    store = []
    flat = _flat_fun(fun, primals, {}, tuple(range(len(primals))), in_tree, has_aux, store)
    res = ad.linearize_flat(flat, leaves, has_aux=has_aux)
    lin = res[1]
    out = pytree.tree_unflatten(store[0], [_as_output(o) for o in res[0]])
    out_tree = store[0]

    def f_jvp(*tangents):
        t_leaves, t_tree = pytree.tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"linearized function called on tangent values inconsistent with "
                            f"the original primal values: expected tree structure {in_tree}, "
                            f"got {t_tree}.")
        for t, a in zip(t_leaves, lin.in_avals):
            ta = _tangent_arg_aval(t)
            if ta.shape != a.shape or (a.dtype != float0 and ta.dtype != a.dtype):
                raise ValueError(f"linearized function called on tangent values inconsistent "
                                 f"with the original primal values: got tangent "
                                 f"{ta.str_short()} for primal {a.str_short()}.")
        outs = lin.jvp(t_leaves)
        return pytree.tree_unflatten(out_tree, [_instantiate_out(t) for t in outs])

    if has_aux:
        return out, f_jvp, _aux_out(store, res[2])
    return out, f_jvp


# ---- reverse mode ----

def _check_cotangents(ct_leaves, lin, fun_name):
    out = []
    for c, a in zip(ct_leaves, lin.out_avals):
        ca = _tangent_arg_aval(c)
        if a.dtype == float0:
            out.append(Zero(a))
            continue
        if ca.shape != a.shape or (ca.dtype != a.dtype and not ca.weak_type):
            raise ValueError(
                "unexpected JAX type (e.g. shape/dtype) for argument to vjp function: got "
                f"{ca.str_short()}, but expected {a.str_short()} because the corresponding "
                f"output of the function {fun_name} had JAX type {a.str_short()}")
        if ca.dtype != a.dtype:
            from pyjax._src.lax.elementwise import convert_element_type
            c = convert_element_type(c, a.dtype)
        out.append(c)
    return out


def _fun_name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` returns the cotangents of
    ``primals`` (a tuple) for the output cotangent ``ct`` (same structure as the output)."""
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [_as_value(x) for x in leaves]
    store = []
    flat = _flat_fun(fun, primals, {}, tuple(range(len(primals))), in_tree, has_aux, store)
    res = ad.linearize_flat(flat, leaves, has_aux=has_aux)
    lin = res[1]
    out_tree = store[0]
    out = pytree.tree_unflatten(out_tree, [_as_output(o) for o in res[0]])
    name = _fun_name(fun)

    def vjp_fun(ct):
        ct_leaves, ct_tree = pytree.tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"Tree structure of cotangent input {ct_tree}, does not match "
                            f"structure of primal output {out_tree}.")
        cts = lin.vjp(_check_cotangents(ct_leaves, lin, name))
        return pytree.tree_unflatten(in_tree, [_instantiate_out(c) for c in cts])

    if has_aux:
        return out, vjp_fun, _aux_out(store, res[2])
    return out, vjp_fun


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function returning ``(fun(*args), gradient)``; see ``grad``."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")

    argnums_cache = {}

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        hit = argnums_cache.get(len(args))
        if hit is None:
            hit = argnums_cache[len(args)] = _argnums(argnums, len(args), "value_and_grad")
        nums, single = hit
        dyn = tuple(args[i] for i in nums)
        leaves, in_tree = pytree.tree_flatten(dyn)
        for x in leaves:
            _check_input_dtype_revderiv("grad", holomorphic, allow_int, x)
        leaves = [_as_value(x) for x in leaves]
        store = []
        flat = _flat_fun(fun, args, kwargs, nums, in_tree, has_aux, store)
        res = ad.linearize_flat(flat, leaves, has_aux=has_aux)
        outs, lin = res[0], res[1]
        if len(outs) != 1 or store[0] != pytree.tree_structure(0):
            ans = pytree.tree_unflatten(store[0], outs)
            raise TypeError("Gradient only defined for scalar-output functions. Output was "
                            f"{ans}.")
        ans = outs[0]
        _check_scalar(ans)
        _check_output_dtype_revderiv("grad", holomorphic, ans)
        cts = lin.vjp([_one(get_aval(ans).dtype)])
        g = pytree.tree_unflatten(in_tree, [_instantiate_out(c) for c in cts])
        if single:
            g = g[0]
        ans = _as_output(ans)
        if has_aux:
            return (ans, _aux_out(store, res[2])), g
        return ans, g

    return value_and_grad_f


_ones: dict = {}


def _one(dtype):
    one = _ones.get(dtype)
    if one is None:
        one = _ones[dtype] = np.ones((), dtype)[()]
    return one


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of the scalar-valued ``fun`` with respect to the arguments ``argnums``
    (an int, or a tuple of ints giving a tuple of gradients), by reverse mode.

    ``has_aux``: ``fun`` returns ``(output, aux)`` and the result is ``(gradient, aux)``.
    ``holomorphic``: ``fun`` is holomorphic on complex inputs. ``allow_int``: integer inputs get
    ``float0`` zero gradients instead of raising."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        ans, g = vg(*args, **kwargs)
        if has_aux:
            return g, ans[1]
        return g

    return grad_f


# ---- Jacobians ----

def _basis(aval, k):
    """The k-th standard basis vector of ``aval`` (a NumPy constant)."""
    e = np.zeros(aval.size, aval.dtype)
    e[k] = 1
    return e.reshape(aval.shape)


def _stack(cols, lead_shape, trail_shape, dtype, cols_last):
    """Assemble a Jacobian block of shape ``lead_shape + trail_shape`` from columns (each of
    ``lead_shape``, ``cols_last``) or rows (each of ``trail_shape``)."""
    from pyjax._src.lax.shape_ops import concatenate, reshape
    size_lead = int(np.prod(lead_shape, dtype=np.int64))
    size_trail = int(np.prod(trail_shape, dtype=np.int64))
    if not cols:
        return _as_output(ad.zeros_like_aval(ShapedArray(lead_shape + trail_shape, dtype)))
    if cols_last:
        parts = [reshape(c, (size_lead, 1)) for c in cols]
        m = concatenate(parts, 1) if len(parts) > 1 else parts[0]
    else:
        parts = [reshape(c, (1, size_trail)) for c in cols]
        m = concatenate(parts, 0) if len(parts) > 1 else parts[0]
    return reshape(m, tuple(lead_shape) + tuple(trail_shape))


def push_basis(lin, in_avals):
    """For each input leaf, the JVPs of all its basis vectors: ``[leaf][k] -> out tangents``.
    (A loop over the basis; vmap can replace it.)"""
    result = []
    for i, a in enumerate(in_avals):
        cols = []
        for k in range(a.size):
            ts = [Zero(b) for b in in_avals]
            ts[i] = _basis(a, k)
            cols.append(lin.jvp(ts))
        result.append(cols)
    return result


def pull_basis(lin, out_avals):
    """For each output leaf, the VJPs of all its basis vectors: ``[leaf][k] -> in cts``."""
    result = []
    for o, a in enumerate(out_avals):
        rows = []
        for k in range(a.size):
            cts = [Zero(b) for b in out_avals]
            cts[o] = _basis(a, k)
            rows.append(lin.vjp(cts))
        result.append(rows)
    return result


def _jac_setup(fun, argnums, has_aux, holomorphic, name, args, kwargs):
    nums, single = _argnums(argnums, len(args), name)
    dyn = tuple(args[i] for i in nums)
    leaves, in_tree = pytree.tree_flatten(dyn)
    for x in leaves:
        _check_input_dtype_jac(name, holomorphic, x)
    leaves = [_as_value(x) for x in leaves]
    store = []
    flat = _flat_fun(fun, args, kwargs, nums, in_tree, has_aux, store)
    res = ad.linearize_flat(flat, leaves, has_aux=has_aux)
    return res, leaves, in_tree, single, store


def _jac_tree(blocks, store, in_tree, single):
    per_out = [pytree.tree_unflatten(in_tree, row) for row in blocks]
    if single:
        per_out = [p[0] for p in per_out]
    return pytree.tree_unflatten(store[0], per_out)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode: for each output leaf of shape S and input leaf
    of shape T, a block of shape S + T (pytrees: outputs outside, inputs inside)."""
    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        res, leaves, in_tree, single, store = _jac_setup(fun, argnums, has_aux, holomorphic,
                                                         "jacfwd", args, kwargs)
        outs, lin = res[0], res[1]
        if holomorphic:
            for o in outs:
                if not dtypes.is_complex(get_aval(o).dtype):
                    raise TypeError("jacfwd with holomorphic=True requires outputs with "
                                    f"complex dtype, but got {get_aval(o).dtype.name}.")
        in_avals = [get_aval(x) for x in leaves]
        cols = push_basis(lin, in_avals)
        blocks = [[_stack([_instantiate_out(c[o]) for c in cols[i]], get_aval(y).shape,
                          in_avals[i].shape, lin.out_avals[o].dtype, True)
                   for i in range(len(leaves))] for o, y in enumerate(outs)]
        jac = _jac_tree(blocks, store, in_tree, single)
        if has_aux:
            return jac, _aux_out(store, res[2])
        return jac
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` by reverse mode (same layout as ``jacfwd``)."""
    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        res, leaves, in_tree, single, store = _jac_setup(fun, argnums, has_aux, holomorphic,
                                                         "jacrev", args, kwargs)
        outs, lin = res[0], res[1]
        for o in outs:
            _check_output_dtype_revderiv("jacrev", holomorphic, o)
        in_avals = [get_aval(x) for x in leaves]
        rows = pull_basis(lin, lin.out_avals)
        blocks = [[_stack([_instantiate_out(r[i]) for r in rows[o]], get_aval(y).shape,
                          in_avals[i].shape, lin.in_avals[i].dtype, False)
                   for i in range(len(leaves))] for o, y in enumerate(outs)]
        jac = _jac_tree(blocks, store, in_tree, single)
        if has_aux:
            return jac, _aux_out(store, res[2])
        return jac
    return jacfun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of the scalar ``fun``: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


# ---- transposition ----

def _spec_aval(x):
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return get_aval(x)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun`` at inputs shaped like ``primals`` (values
    or ``ShapeDtypeStruct``s). The result takes a cotangent shaped like ``fun``'s output and
    returns a tuple of cotangents shaped like ``primals``."""
    leaves, in_tree = pytree.tree_flatten(primals)
    in_avals = [_spec_aval(x) for x in leaves]
    store = []
    flat = _flat_fun(fun, primals, {}, tuple(range(len(primals))), in_tree, False, store)
    closed = staging.trace_to_jaxpr(flat, in_avals, staging.DebugInfo(
        _fun_name(fun), None, "linear_transpose"))
    out_tree = store[0]
    out_avals = closed.out_avals
    in_dts = {dtypes.is_inexact(a.dtype) for a in in_avals}
    out_dts = {dtypes.is_inexact(a.dtype) for a in out_avals}
    if in_dts | out_dts not in ({True}, {False}, set()):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{[a.dtype.name for a in in_avals]} -> "
                        f"{[a.dtype.name for a in out_avals]}.")

    def transposed_fun(out_cotangent):
        ct_leaves, ct_tree = pytree.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output")
        for c, a in zip(ct_leaves, out_avals):
            ca = get_aval(c)
            if ca.shape != a.shape or ca.dtype != a.dtype:
                raise TypeError("cotangent type does not match function output")
        cts = ad.backward_pass(closed.jaxpr, closed.consts,
                               [UndefinedPrimal(a) for a in in_avals], ct_leaves)
        return pytree.tree_unflatten(in_tree, [_instantiate_out(c) for c in cts])

    return transposed_fun
