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
from pyjax._src.core import pytree_data
from pyjax._src.core import trace as trace_mod
from pyjax._src.core.config import config
from pyjax._src.core.traceback_util import api_boundary
from pyjax._src.core.abstract import ShapeDtypeStruct, ShapedArray
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.jaxpr import ClosedJaxpr
from pyjax._src.core.rules import UndefinedPrimal, Zero
from pyjax._src.core.refs import Ref
from pyjax._src.core.trace import Tracer, get_aval
from pyjax._src.interpreters import ad, staging
from pyjax._src.dispatch import eager as dispatch
from pyjax._src.dispatch import eager_backward  # noqa: F401 - installs ad.eager_backward
from pyjax._src.dispatch import eager_grad
from pyjax._src.dispatch.cache import Cache

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
    try:
        nums = (int(argnums),) if single else tuple(argnums)
    except TypeError:  # not iterable (argnums=1.5)
        raise TypeError(f"{fun_name}: argnums must be an int or a tuple of ints, got "
                        f"{argnums!r}") from None
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
    one = len(argnums) == 1 and in_tree == _ONE_LEAF  # f(x) for an array x: no unflattening

    def flat(*leaves):
        full = list(args)
        if one:
            full[argnums[0]] = leaves[0]
        else:
            for i, a in zip(argnums, pytree.tree_unflatten(in_tree, leaves)):
                full[i] = a
        out = fun(*full, **kwargs)
        if not has_aux and (type(out) is ArrayImpl or isinstance(out, Tracer)):
            out_store[:] = [_SCALAR_TREE]
            return [out]
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

def _check_complex(name, what, dt):
    """With holomorphic=True every input and output must be complex."""
    if not dtypes.is_complex(dt):
        raise TypeError(f"{name} with holomorphic=True requires {what} with complex dtype, "
                        f"but got {dt.name}.")


def _check_input_dtype_revderiv(name, holomorphic, allow_int, x):
    if type(x) is float and not holomorphic:
        return
    if type(x) is Ref:  # JAX's error: the cotangent of a ref would have to be a ref
        inner = x.aval.inner_aval
        raise ValueError(f"Expected cotangent type {x.aval} but got {inner.dtype.name}"
                         f"[{','.join(map(str, inner.shape))}]")
    dt = x.aval.dtype if type(x) is ArrayImpl else getattr(x, "dtype", None)
    is_key = dtypes.issubdtype(dt, dtypes.prng_key) if dt is not None else False
    if not is_key:
        dt = get_aval(x).dtype
    if holomorphic:
        _check_complex(name, "inputs", dt)
    if is_key or dtypes.is_integer(dt) or dtypes.is_bool(dt):
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
        _check_complex(name, "outputs", dt)
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


def _check_input_dtype_jacrev(holomorphic, allow_int, x):
    """As grad's check (complex inputs are fine); integer and bool inputs with ``allow_int``
    get Jacobian blocks of zeros of their dtype (JAX 0.10.2)."""
    _check_input_dtype_revderiv("jacrev", holomorphic, allow_int, x)


def _is_key_array(x):
    dt = getattr(x, "dtype", None)
    return dt is not None and not isinstance(x, type) and dtypes.issubdtype(dt, dtypes.prng_key)


def _check_input_dtype_jac(name, holomorphic, x):
    dt = get_aval(x).dtype
    if holomorphic:
        _check_complex(name, "inputs", dt)
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

@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode Jacobian-vector product of ``fun`` at ``primals`` along ``tangents``.

    Returns ``(fun(*primals), tangents_out)`` (and the aux data with ``has_aux``). ``primals``
    and ``tangents`` are tuples or lists with the same tree structure; integer and boolean
    primals take ``float0`` tangents."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = pytree.tree_flatten(tuple(primals))
    t_leaves, t_tree = ad.tangent_leaves(p_tree, tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        "structure; primals have tree structure "
                        f"{pytree_data.user_treedef(p_tree)} whereas tangents have tree structure "
                        f"{pytree_data.user_treedef(t_tree)}.")
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
    t_out = ad.tangent_tree(store[0], [_instantiate_out(t) for t in res[1]])
    if has_aux:
        return out, t_out, _aux_out(store, res[2])
    return out, t_out


def _tangent_arg_aval(t):
    if isinstance(t, np.ndarray) and t.dtype == float0:
        return ShapedArray(t.shape, float0, False)
    return get_aval(t)


def _linearize_tree(fun, primals, has_aux):
    """``fun`` linearized at the pytree ``primals``: ``(out, linearized, out_tree, in_tree,
    aux)`` with ``out`` the output pytree and ``aux`` the auxiliary one (None without
    ``has_aux``)."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    leaves, in_tree = pytree.tree_flatten(primals)
    leaves = [_as_value(x) for x in leaves]
    store = []
    flat = _flat_fun(fun, primals, {}, tuple(range(len(primals))), in_tree, has_aux, store)
    res = ad.linearize_flat(flat, leaves, has_aux=has_aux)
    out_tree = store[0]
    out = pytree.tree_unflatten(out_tree, [_as_output(o) for o in res[0]])
    aux = _aux_out(store, res[2]) if has_aux else None
    return out, res[1], out_tree, in_tree, aux


@api_boundary
def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the JVP at ``primals``
    without re-running ``fun``: primal work is done once, the linear part is a staged Jaxpr."""
    out, lin0, out_tree, in_tree, aux = _linearize_tree(fun, primals, has_aux)

    n_res = len(lin0.jaxpr.consts)

    def f_jvp(*res_and_tangents):
        res, tangents = res_and_tangents[:n_res], res_and_tangents[n_res:]
        lin = _with_residuals(lin0, res)
        t_leaves, t_tree = ad.tangent_leaves(in_tree, tangents)
        if t_tree != in_tree:
            raise TypeError(f"linearized function called on tangent values inconsistent with "
                            f"the original primal values: expected tree structure "
                            f"{pytree_data.user_treedef(in_tree)}, got "
                            f"{pytree_data.user_treedef(t_tree)}.")
        for t, a in zip(t_leaves, lin.in_avals):
            ta = _tangent_arg_aval(t)
            if ta.shape != a.shape or (a.dtype != float0 and ta.dtype != a.dtype):
                raise ValueError(f"linearized function called on tangent values inconsistent "
                                 f"with the original primal values: got tangent "
                                 f"{ta.str_short()} for primal {a.str_short()}.")
        outs = lin.jvp(t_leaves)
        return ad.tangent_tree(out_tree, [_instantiate_out(t) for t in outs])

    # a pytree (as JAX's): the residuals are its leaves, so it can leave jit or go to tree_map
    f_jvp = pytree.Partial(f_jvp, *lin0.jaxpr.consts)
    if has_aux:
        return out, f_jvp, aux
    return out, f_jvp


def _with_residuals(lin, res):
    """``lin`` with its residuals (the linear Jaxpr's consts) replaced by ``res``."""
    if all(a is b for a, b in zip(res, lin.jaxpr.consts)):
        return lin
    return ad.Linearized(ClosedJaxpr(lin.jaxpr.jaxpr, list(res)), lin.in_linear,
                         lin.out_nonzero, lin.in_avals, lin.out_avals)


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


@api_boundary
def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` returns the cotangents of
    ``primals`` (a tuple) for the output cotangent ``ct`` (same structure as the output)."""
    out, lin0, out_tree, in_tree, aux = _linearize_tree(fun, primals, has_aux)
    name = _fun_name(fun)
    n_res = len(lin0.jaxpr.consts)

    def vjp_fun(*res_and_ct):
        if len(res_and_ct) != n_res + 1:
            raise TypeError(f"vjp function of {name} takes one cotangent argument, got "
                            f"{len(res_and_ct) - n_res}")
        lin, ct = _with_residuals(lin0, res_and_ct[:n_res]), res_and_ct[n_res]
        ct_leaves, ct_tree = ad.tangent_leaves(out_tree, ct)
        if ct_tree != out_tree:
            raise TypeError(f"Tree structure of cotangent input {pytree_data.user_treedef(ct_tree)}"
                            ", does not match structure of primal output "
                            f"{pytree_data.user_treedef(out_tree)}.")
        cts = lin.vjp(_check_cotangents(ct_leaves, lin, name))
        return ad.tangent_tree(in_tree, [_instantiate_out(c) for c in cts])

    vjp_fun = pytree.Partial(vjp_fun, *lin0.jaxpr.consts)  # a pytree, as linearize's
    if has_aux:
        return out, vjp_fun, aux
    return out, vjp_fun


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function returning ``(fun(*args), gradient)``; see ``grad``."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if reduce_axes:  # as JAX, which dropped it
        raise NotImplementedError("reduce_axes argument to grad is deprecated")

    argnums_cache = {}
    # eager calls: recorded primal programs, per call signature (eager_grad.grad_eager)
    records = Cache("eager grad")
    code = _code_key(fun)
    flags = (has_aux, holomorphic, allow_int)

    def make_cts(outs, store):
        if len(outs) != 1 or store[0] != _SCALAR_TREE:
            ans = pytree.tree_unflatten(store[0], outs)
            raise TypeError("Gradient only defined for scalar-output functions. Output was "
                            f"{ans}.")
        ans = outs[0]
        _check_scalar(ans)
        _check_output_dtype_revderiv("grad", holomorphic, ans)
        return [_one(get_aval(ans).dtype)]

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        hit = argnums_cache.get(len(args))
        if hit is None:
            hit = argnums_cache[len(args)] = _argnums(argnums, len(args), "value_and_grad")
        nums, single = hit
        dyn = (args[nums[0]],) if len(nums) == 1 else tuple(args[i] for i in nums)
        leaves, in_tree = pytree.tree_flatten(dyn)
        # key arrays are checked as the user sees them (dtype key<fry>)
        for x in (pytree.user_tree_leaves(dyn) if pytree_data.has_data_nodes(in_tree) else leaves):
            _check_input_dtype_revderiv("grad", holomorphic, allow_int, x)
        leaves = [_as_value(x) for x in leaves]
        store = []
        flat = _flat_fun(fun, args, kwargs, nums, in_tree, has_aux, store)
        if (trace_mod._state.trace is None and all(type(x) is ArrayImpl for x in leaves)
                and not config.jax_check_tracer_leaks):  # leak checks need the traced path
            key = (in_tree, nums, flags, dtypes.x64_enabled(), *[x.aval for x in leaves])
            outs, cts, aux = eager_grad.grad_eager(records, code, key, flat, leaves, has_aux,
                                           lambda outs: make_cts(outs, store),
                                           lambda: tuple(store))
        else:
            res = ad.linearize_flat(flat, leaves, has_aux=has_aux)
            outs = res[0]
            cts = res[1].vjp(make_cts(outs, store))
            aux = res[2] if has_aux else None
        g = ad.tangent_tree(in_tree, [_instantiate_out(c) for c in cts])
        if single:
            g = g[0]
        ans = _as_output(outs[0])
        if has_aux:
            return (ans, _aux_out(store, aux)), g
        return ans, g

    return api_boundary(value_and_grad_f)


_SCALAR_TREE = pytree.tree_structure(0)


def _code_key(fun):
    """What names ``fun`` across grad objects (for ``eager_grad.grad_eager``'s shared records): its
    code object, or for a wrapper (such as a jitted function) its type and the wrapped code."""
    code = getattr(fun, "__code__", None)
    if code is None:
        inner = getattr(getattr(fun, "__wrapped__", None), "__code__", None)
        if inner is not None:
            return (type(fun), inner)
    return code


_ONE_LEAF = pytree.tree_structure((0,))


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
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        ans, g = vg(*args, **kwargs)
        if has_aux:
            return g, ans[1]
        return g

    return api_boundary(grad_f)


# ---- Jacobians ----
# As in JAX: jacfwd is vmap of jvp over the standard basis of the inputs, jacrev is one vjp
# (linearize) and vmap of its pullback over the standard basis of the outputs.

def _std_basis(avals):
    """The standard basis of the inputs ``avals`` (flattened together), one NumPy array per
    leaf of shape ``(n,) + aval.shape`` where ``n`` is the total size: row ``k`` is the k-th
    basis vector."""
    n = sum(a.size for a in avals)
    out, off = [], 0
    for a in avals:
        e = np.zeros((n, a.size), a.dtype)
        e[off:off + a.size] = np.eye(a.size, dtype=a.dtype)
        out.append(e.reshape((n,) + tuple(a.shape)))
        off += a.size
    return out, n


def _jac_block(m, axis, off, size, lead_shape, trail_shape):
    """The part ``[off, off + size)`` of axis ``axis`` (0 or last) of the batched Jacobian
    ``m``, reshaped to ``lead_shape + trail_shape``."""
    from pyjax._src.lax.shape_ops import reshape, slice as lax_slice
    shape = tuple(get_aval(m).shape)
    nd = len(shape)
    if not (off == 0 and size == shape[axis]):
        start = [0] * nd
        limit = list(shape)
        start[axis] = off
        limit[axis] = off + size
        m = lax_slice(m, start, limit)
    return reshape(m, tuple(lead_shape) + tuple(trail_shape))


def _jac_zeros(lead_shape, trail_shape, dtype):
    return _as_output(ad.zeros_like_aval(ShapedArray(tuple(lead_shape) + tuple(trail_shape),
                                                     dtype)))


def _jac_setup(fun, argnums, has_aux, holomorphic, name, args, kwargs, allow_int=False):
    nums, single = _argnums(argnums, len(args), name)
    dyn = tuple(args[i] for i in nums)
    if allow_int and any(map(_is_key_array, pytree.user_tree_leaves(dyn))):
        raise NotImplementedError("jacrev with respect to a PRNG key array is not supported "
                                  "(JAX 0.10.2 refuses it too)")
    leaves, in_tree = pytree.tree_flatten(dyn)
    for x in leaves:
        if name == "jacrev":
            _check_input_dtype_jacrev(holomorphic, allow_int, x)
        else:
            _check_input_dtype_jac(name, holomorphic, x)
    leaves = [_as_value(x) for x in leaves]
    store = []
    flat = _flat_fun(fun, args, kwargs, nums, in_tree, has_aux, store)
    return flat, leaves, in_tree, single, store


def _jac_tree(blocks, store, in_tree, single):
    per_out = [pytree.tree_unflatten(in_tree, row) for row in blocks]
    if single:
        per_out = [p[0] for p in per_out]
    return pytree.tree_unflatten(store[0], per_out)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode: for each output leaf of shape S and input leaf
    of shape T, a block of shape S + T (pytrees: outputs outside, inputs inside).

    Computed as ``vmap`` of ``jvp`` over the standard basis of the inputs: the primal work is
    done once and every tangent operation once, batched over the basis."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    from pyjax._src.transformations.vmap import vmap

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        flat, leaves, in_tree, single, store = _jac_setup(fun, argnums, has_aux, holomorphic,
                                                          "jacfwd", args, kwargs)
        in_avals = [get_aval(x) for x in leaves]
        basis, n = _std_basis(in_avals)

        def pushfwd(*tangents):
            res = ad.jvp_flat(flat, leaves, list(tangents), has_aux=has_aux)
            # integer outputs have float0 tangents: no batched value, zeros below
            t_out = [None if type(t) is Zero and t.aval.dtype == float0 else
                     _instantiate_out(t) for t in res[1]]
            return (res[0], t_out, res[2]) if has_aux else (res[0], t_out)

        out_axes = (None, -1, None) if has_aux else (None, -1)
        res = vmap(pushfwd, out_axes=out_axes, axis_size=n)(*basis)
        outs, jacs = res[0], res[1]
        if holomorphic:
            for o in outs:
                if not dtypes.is_complex(get_aval(o).dtype):
                    raise TypeError("jacfwd with holomorphic=True requires outputs with "
                                    f"complex dtype, but got {get_aval(o).dtype.name}.")
        blocks = []
        for y, jac in zip(outs, jacs):
            y_shape = get_aval(y).shape
            row, off = [], 0
            for a in in_avals:
                if jac is None:
                    row.append(np.zeros(tuple(y_shape) + tuple(a.shape), float0))
                elif a.size == 0:
                    row.append(_jac_zeros(y_shape, a.shape, get_aval(jac).dtype))
                else:
                    row.append(_jac_block(jac, -1 % (len(y_shape) + 1), off, a.size, y_shape,
                                          a.shape))
                off += a.size
            blocks.append(row)
        jac = _jac_tree(blocks, store, in_tree, single)
        if has_aux:
            return jac, _aux_out(store, res[2])
        return jac
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` by reverse mode (same layout as ``jacfwd``).

    Computed as one ``vjp`` and ``vmap`` of its pullback over the standard basis of the
    outputs."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    from pyjax._src.transformations.vmap import vmap

    @functools.wraps(fun)
    def jacfun(*args, **kwargs):
        flat, leaves, in_tree, single, store = _jac_setup(fun, argnums, has_aux, holomorphic,
                                                          "jacrev", args, kwargs, allow_int)
        res = ad.linearize_flat(flat, leaves, has_aux=has_aux)
        outs, lin = res[0], res[1]
        for o in outs:
            _check_output_dtype_revderiv("jacrev", holomorphic, o)
        in_avals = [get_aval(x) for x in leaves]
        out_avals = lin.out_avals
        basis, m = _std_basis(out_avals)
        # integer/bool inputs (allow_int): as JAX 0.10.2, blocks of zeros of their dtype
        exact = [not dtypes.is_inexact(a.dtype) for a in in_avals]

        def pullback(*cts):
            return [_instantiate_out(c) for c, e in zip(lin.vjp(list(cts)), exact) if not e]

        inexact_rows = iter(vmap(pullback, axis_size=m)(*basis) if not all(exact) else [])
        rows = [None if e else next(inexact_rows) for e in exact]
        blocks = []
        off = 0
        for y, oa in zip(outs, out_avals):
            y_shape = get_aval(y).shape
            row = []
            for a, r in zip(in_avals, rows):
                if r is None:
                    row.append(_jac_zeros(y_shape, a.shape, a.dtype))
                elif oa.size == 0 or a.size == 0:
                    row.append(_jac_zeros(y_shape, a.shape, lin.in_avals[len(row)].dtype))
                else:
                    row.append(_jac_block(r, 0, off, oa.size, y_shape, a.shape))
            blocks.append(row)
            off += oa.size
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
    if reduce_axes:  # as JAX, which dropped it
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
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
