"""Helpers shared by pyjax's tests (as ``jax._src.test_util``): test data and dtype names."""
import numpy as np


def ids(dts):
    """Readable pytest ids for a list of dtypes."""
    return [np.dtype(d).name for d in dts]


def rand_small_ints(shape, dtype, seed=0, lo=-5, hi=6):
    """Small integers (exact in every dtype, products included) of ``dtype``; booleans are
    fair coin flips, unsigned types take ``[0, hi)``, complex ones get an imaginary part too."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind == "u":
        return rng.integers(0, hi, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.integers(lo, hi, shape) + 1j * rng.integers(lo, hi, shape)).astype(dtype)
    return rng.integers(lo, hi, shape).astype(dtype)


def check_array(got, want, dtype=None, rtol=None):
    """``got`` is a pyjax Array with ``want``'s shape (and ``dtype`` when given) and its values:
    exactly, or to ``rtol``."""
    from pyjax import Array
    assert isinstance(got, Array), type(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    if rtol is None:
        np.testing.assert_array_equal(np.asarray(got), want)
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol)


# ---- gradient checks against finite differences (``pyjax.test_util``) ----

EPS = 1e-4

# Per-dtype tolerances of the gradient checks; scalar or dict ``atol``/``rtol`` override them.
_GRADIENT_TOLERANCE = {
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _grad_tols():
    from pyjax._src.core import dtypes
    tols = dict(_GRADIENT_TOLERANCE)
    tols[np.dtype(dtypes.bfloat16)] = 1e-1
    return tols


def _tolerance(dtype, tol):
    """The tolerance for ``dtype``: ``tol`` itself when a number, else looked up in the
    gradient defaults updated with the dict ``tol``; exact for non-float dtypes."""
    from pyjax._src.core import dtypes
    if tol is not None and not isinstance(tol, dict):
        return tol
    table = _grad_tols()
    table.update({np.dtype(k): v for k, v in (tol or {}).items()})
    return table.get(dtypes.canonicalize_dtype(dtype), 0.0)


def _dtype(x):
    from pyjax._src.core import dtypes
    return dtypes.dtype_of(x)


def _host(x):
    """``x`` as a NumPy array of its canonical dtype (Python scalars included)."""
    return np.asarray(x, _dtype(x))


def _tree_map(fn, *trees):
    from pyjax import tree_util
    return tree_util.tree_map(fn, *trees)


def _rand_like(rng, x):
    dt = _dtype(x)
    shape = np.shape(x)
    out = np.asarray(rng.standard_normal(shape), dt)
    if np.issubdtype(dt, np.complexfloating):
        out = out + np.asarray(1j * rng.standard_normal(shape), dt)
    return out


def _axpy(a, t, x):
    """``x + a * t`` computed in ``x``'s dtype, as the function under test would see it."""
    x = _host(x)
    return np.asarray(x + np.asarray(t, x.dtype) * x.dtype.type(a), x.dtype)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """Central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``, leaf by leaf in the
    dtypes of the arguments and of the outputs."""
    f_pos = f(*_tree_map(lambda x, t: _axpy(eps, t, x), primals, tangents))
    f_neg = f(*_tree_map(lambda x, t: _axpy(-eps, t, x), primals, tangents))

    def diff(p, n):
        p, n = _host(p), _host(n)
        return np.asarray((p - n) * p.dtype.type(0.5 / eps), p.dtype)
    return _tree_map(diff, f_pos, f_neg)


def _leaves_of_both(xs, ys, what):
    from pyjax import tree_util
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    y_leaves, y_tree = tree_util.tree_flatten(ys)
    assert x_tree == y_tree, f"{what}: tree structures differ: {x_tree} vs {y_tree}"
    return zip(x_leaves, y_leaves)


def check_close(xs, ys, atol=None, rtol=None, err_msg=""):
    """Leafwise ``assert_allclose`` with per-dtype tolerances; as in JAX's gradient checks the
    tolerances are multiplied by each leaf's size."""
    from pyjax._src.core import dtypes
    for x, y in _leaves_of_both(xs, ys, err_msg):
        a, b = _host(x), _host(y)
        assert a.shape == b.shape, f"{err_msg}: shapes differ: {a.shape} vs {b.shape}"
        at = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol))
        rt = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol))
        # NumPy can't compare bfloat16 (or float0) arrays itself.
        if a.dtype == dtypes.bfloat16:
            a = a.astype(np.float32)
        if b.dtype == dtypes.bfloat16:
            b = b.astype(np.float32)
        if a.dtype == dtypes.float0 or b.dtype == dtypes.float0:
            assert a.dtype == b.dtype, err_msg
            continue
        np.testing.assert_allclose(a, b, atol=at * a.size, rtol=rt * b.size, err_msg=err_msg)


def _check_dtypes_match(xs, ys, err_msg):
    for x, y in _leaves_of_both(xs, ys, err_msg):
        assert _dtype(x) == _dtype(y), f"{err_msg}: dtypes differ: {_dtype(x)} vs {_dtype(y)}"


def _inner_prod(xs, ys):
    """``sum Re(<x, y>)`` over the leaves, conjugating ``x``, in the leaves' precision (which
    picks the tolerance it is compared with)."""
    from pyjax._src.core import dtypes
    terms = []
    for x, y in _leaves_of_both(xs, ys, "inner product"):
        x, y = _host(x), _host(y)
        if dtypes.float0 in (x.dtype, y.dtype):
            continue
        terms.append(np.real(np.dot(np.conj(x).reshape(-1), y.reshape(-1))))
    if not terms:
        return np.zeros((), dtypes.default_float_dtype())
    dt = np.result_type(*terms)
    return np.sum(np.asarray(terms, dt), dtype=dt)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """``f_jvp(args, tangents)`` (as ``partial(jvp, f)``) against ``f`` and against central
    differences of ``f`` along a random direction."""
    rng = np.random.RandomState(0)
    tangents = _tree_map(lambda x: _rand_like(rng, x), tuple(args))
    msg = err_msg or "JVP"
    v_out, t_out = f_jvp(tuple(args), tangents)
    _check_dtypes_match(v_out, t_out, f"{msg}: primal and tangent outputs")
    v_want = f(*args)
    _check_dtypes_match(v_out, v_want, f"{msg}: primal outputs")
    check_close(v_out, v_want, atol, rtol, f"{msg} primal")
    t_want = numerical_jvp(f, tuple(args), tangents, eps)
    check_close(t_out, t_want, atol, rtol, f"{msg} tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """``f_vjp(*args)`` (as ``partial(vjp, f)``) against ``f``, and its pullback of a random
    cotangent ``ct`` against central differences along a random tangent ``t`` through
    ``<t, vjp(ct)> == <jvp(t), ct>``."""
    rng = np.random.RandomState(0)
    msg = err_msg or "VJP"
    v_out, pullback = f_vjp(*args)
    v_want = f(*args)
    check_close(v_out, v_want, atol, rtol, f"{msg} primal")
    tangents = _tree_map(lambda x: _rand_like(rng, x), tuple(args))
    t_out = numerical_jvp(f, tuple(args), tangents, eps)
    cts = _tree_map(lambda x: _rand_like(rng, x), v_out)
    # conj(vjp(conj(ct))) is the JVP's adjoint for <a, b> = Re(vdot(a, b)), complex included
    ct_in = _tree_map(np.conj, pullback(_tree_map(np.conj, cts)))
    got, want = _inner_prod(tangents, ct_in), _inner_prod(t_out, cts)
    check_close(got, want, atol, rtol, f"{msg}: <t, vjp(ct)> vs <jvp(t), ct>")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check ``f``'s derivatives at ``args`` from automatic differentiation against finite
    differences along one random direction: JVPs for ``"fwd"`` and VJPs for ``"rev"`` in
    ``modes``, and for ``order > 1`` the derivatives of those (the JVP as a function of
    primals and tangents, the VJP pulled back at its primal output), up to ``order``.

    ``atol``/``rtol`` are numbers or ``{dtype: tolerance}`` dicts; ``eps`` is the step.
    Raises AssertionError when a derivative doesn't match."""
    from pyjax._src.transformations.grad import jvp, vjp
    args = tuple(args)
    eps = eps or EPS

    def recurse(f, args, order, what):
        if "fwd" in modes:
            msg = f"JVP of {what}" if what else "JVP"

            def f_jvp(primals, tangents):
                return jvp(f, primals, tangents)
            check_jvp(f, f_jvp, args, atol, rtol, eps, msg)
            if order > 1:
                recurse(f_jvp, (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {what}" if what else "VJP"
            check_vjp(f, lambda *a: vjp(f, *a), args, atol, rtol, eps, msg)
            if order > 1:
                def pulled_back(*a):
                    out, pullback = vjp(f, *a)
                    return pullback(out)
                recurse(pulled_back, args, order - 1, msg)

    recurse(f, args, order, "")
