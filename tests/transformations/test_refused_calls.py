"""Calls JAX 0.10.2 accepts that pyjax used to refuse with NotImplementedError: vmap of custom
rules that batch more than the function, ``ufunc.at`` with index tuples, ... Oracles: a Python
loop for vmap, NumPy for values."""
import warnings

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

YS = np.array([0.0, 1.0, 2.0], np.float32)
X = np.float32(0.5)


# ---- vmap of a custom rule whose output is batched where the function's is not ----

@pyjax.custom_jvp
def sin_scaled(x, y):
    return jnp.sin(x)  # does not depend on y: unbatched under vmap over y


@sin_scaled.defjvp
def _sin_scaled_jvp(primals, tangents):
    (x, y), (xd, yd) = primals, tangents
    return jnp.sin(x), jnp.cos(x) * xd * y + yd  # the tangent depends on y: batched


def _loop(fn, ys):
    return np.stack([np.asarray(fn(y)) for y in ys])


def test_custom_jvp_rule_batched_where_function_is_not():
    vf = pyjax.vmap(sin_scaled, (None, 0))
    p, t = pyjax.jvp(lambda x: vf(x, YS), (X,), (np.float32(1.0),))
    want_t = _loop(lambda y: pyjax.jvp(lambda x: sin_scaled(x, y), (X,), (np.float32(1.0),))[1],
                   YS)
    np.testing.assert_allclose(np.asarray(t), want_t, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(p), np.full(3, np.sin(X)), rtol=1e-6)
    g = pyjax.grad(lambda x: vf(x, YS).sum())(X)
    np.testing.assert_allclose(float(g), sum(_loop(lambda y: pyjax.grad(sin_scaled)(X, y), YS)),
                               rtol=1e-6)
    jac = pyjax.jacfwd(lambda x: vf(x, YS))(X)
    np.testing.assert_allclose(np.asarray(jac), want_t, rtol=1e-6)
    # vmap of vmap: the rule's batching nests
    ys2 = np.stack([YS, YS + 1.0])
    g2 = pyjax.grad(lambda x: pyjax.vmap(vf, (None, 0))(x, ys2).sum())(X)
    np.testing.assert_allclose(float(g2), np.cos(X) * ys2.sum(), rtol=1e-6)
    # the function's value alone (no derivative) stays unbatched-then-broadcast
    np.testing.assert_allclose(np.asarray(vf(X, YS)), np.full(3, np.sin(X)), rtol=1e-6)


def test_custom_jvp_rule_batched_after_jit_staging_is_a_clear_error():
    # JAX 0.10.2 fails here too (a TypeError from inside broadcast_in_dim)
    vf = pyjax.vmap(sin_scaled, (None, 0))
    with pytest.raises(NotImplementedError, match="staged"):
        pyjax.grad(lambda x: pyjax.jit(vf)(x, YS).sum())(X)


@pyjax.custom_vjp
def double(x, y):
    return x * 2.0


def _double_fwd(x, y):
    return x * 2.0 + 0.0 * y, (y,)  # the fwd output is batched where double's is not


def _double_bwd(res, g):
    (y,) = res
    return 2.0 * g * y, g


double.defvjp(_double_fwd, _double_bwd)


def test_custom_vjp_fwd_batched_where_function_is_not():
    vf = pyjax.vmap(double, (None, 0))
    want = sum(_loop(lambda y: pyjax.grad(double)(X, y), YS))
    np.testing.assert_allclose(float(pyjax.grad(lambda x: vf(x, YS).sum())(X)), want, rtol=1e-6)
    jitted = pyjax.jit(pyjax.grad(lambda x: vf(x, YS).sum()))
    np.testing.assert_allclose(float(jitted(X)), want, rtol=1e-6)
    out, pull = pyjax.vjp(lambda x: vf(x, YS), X)
    np.testing.assert_allclose(np.asarray(out), np.full(3, 2 * X), rtol=1e-6)
    ct = np.array([1.0, -1.0, 3.0], np.float32)
    np.testing.assert_allclose(float(pull(ct)[0]), float((2.0 * ct * YS).sum()), rtol=1e-6)


# ---- ufunc.at with a tuple of index arrays (generic path: a scan in NumPy's order) ----

A = np.arange(12.0, dtype=np.float32).reshape(3, 4)
I, J = np.array([0, 1, 0, 2]), np.array([1, 2, 1, -1])
V = np.array([10.0, 20.0, 30.0, 40.0], np.float32)
AFFINE = jnp.frompyfunc(lambda a, b: a * 2 + b, 2, 1)  # order-sensitive on repeats


def _np_affine_at(a, idx, b):
    """NumPy's ufunc.at loop: each selected element, in row-major order of a[idx]."""
    a = a.copy()
    positions = np.arange(a.size).reshape(a.shape)[idx].ravel()
    for pos, v in zip(positions, np.broadcast_to(b, a[idx].shape).ravel()):
        a.flat[pos] = a.flat[pos] * 2 + v
    return a


@pytest.mark.parametrize("idx, b", [
    ((I, J), V),                                        # repeated (0, 1): applied in order
    ((np.array([[0], [2]]), np.array([0, 3, 3])), 1.5),  # index arrays broadcast together
    ((1, np.array([0, 0, 3])), np.float32(-2.0)),       # an int with an array
    (np.array([[0, 2], [0, 0]]), np.ones((2, 2, 4), np.float32)),  # value of a[idx]'s shape
])
def test_generic_ufunc_at_index_tuples(idx, b):
    got = AFFINE.at(A, idx, b, inplace=False)
    np.testing.assert_allclose(np.asarray(got), _np_affine_at(A, idx, b), rtol=1e-6)


def test_builtin_ufunc_at_index_tuples_and_dtypes():
    want = A.copy()
    np.subtract.at(want, (I, J), V)
    np.testing.assert_allclose(np.asarray(jnp.subtract.at(A, (I, J), V, inplace=False)), want)
    neg = jnp.frompyfunc(lambda a: -a, 1, 1)
    want = A.copy()
    np.negative.at(want, (I, J))
    np.testing.assert_allclose(np.asarray(neg.at(A, (I, J), inplace=False)), want)
    # out-of-bounds updates are dropped (JAX 0.10.2: a unchanged at (3, 0) and (0, 9))
    got = AFFINE.at(A, (np.array([3, 0]), np.array([0, 9])), 1.0, inplace=False)
    np.testing.assert_array_equal(np.asarray(got), A)
    # JAX 0.10.2: the generic path returns the function's dtype (bool here); the scatter
    # ones (add/subtract/multiply) compute in the promoted dtype and cast back to a's
    gt = jnp.frompyfunc(lambda a, b: a > b, 2, 1).at(A, (np.array([0]), np.array([1])), 0.0,
                                                    inplace=False)
    assert gt.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(gt), A.astype(bool))
    ints = np.arange(4, dtype=np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        sub = jnp.subtract.at(ints, (np.array([0, 0]),), 0.6, inplace=False)
        add = jnp.arange(4).at[np.array([0, 0])].add(np.array([1.5, 1.5], np.float32))
    # 0 - 0.6 - 0.6 = -1.2 -> -1 and 0 + 1.5 + 1.5 = 3 (NumPy: in float, then cast)
    np.testing.assert_array_equal(np.asarray(sub), [-1, 1, 2, 3])
    np.testing.assert_array_equal(np.asarray(add), [3, 1, 2, 3])
    assert sub.dtype == add.dtype == np.int32
    mx = jnp.maximum.at(ints, np.array([0]), 0.6, inplace=False)  # JAX 0.10.2: float32 0.6
    assert mx.dtype == np.float32
    np.testing.assert_allclose(np.asarray(mx), [0.6, 1, 2, 3], rtol=1e-6)


def test_ufunc_at_under_jit_matches_eager():
    f = pyjax.jit(lambda a, i, j, v: AFFINE.at(a, (i, j), v, inplace=False))
    np.testing.assert_allclose(np.asarray(f(A, I, J, V)), _np_affine_at(A, (I, J), V),
                               rtol=1e-6)


# ---- jnp.unique with size= and axis= together ----

ROWS = np.array([[3, 1, 3], [0, 2, 0], [3, 1, 3], [1, 1, 1]], np.int32)


def _np_unique_sized(a, axis, size, fill):
    """NumPy's unique along ``axis``, truncated or padded to ``size`` (index/count pads as
    JAX 0.10.2: the first unique's index, count 0)."""
    v, i, inv, c = np.unique(a, axis=axis, return_index=True, return_inverse=True,
                             return_counts=True)
    k = v.shape[axis]
    pad = size - k
    v, i, c = np.take(v, range(min(k, size)), axis), i[:size], c[:size]
    if pad > 0:
        fill_slice = np.take(v, [0], axis) if fill is None else np.broadcast_to(
            fill, np.take(v, [0], axis).shape)
        v = np.concatenate([v] + [fill_slice] * pad, axis)
        i = np.concatenate([i, np.full(pad, i[0])])
        c = np.concatenate([c, np.zeros(pad, c.dtype)])
    return v, i, inv.ravel(), c


@pytest.mark.parametrize("axis, size, fill", [(0, 5, None), (0, 2, None), (1, 3, -1),
                                              (-1, 2, None), (0, 4, np.array([7, 8, 9]))])
def test_unique_size_and_axis(axis, size, fill):
    f = pyjax.jit(lambda a: jnp.unique(a, axis=axis, size=size, fill_value=fill,
                                       return_index=True, return_inverse=True,
                                       return_counts=True))
    for got, want in zip(f(ROWS), _np_unique_sized(ROWS, axis, size, fill)):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_unique_size_and_axis_nan_rows_and_errors():
    a = np.array([[np.nan, 1.0], [np.nan, 1.0], [0.0, 2.0]], np.float32)
    v, c = jnp.unique(a, axis=0, size=3, return_counts=True)
    # equal_nan (the default): the two NaN rows are one; JAX 0.10.2 gives counts [1, 2, 0]
    np.testing.assert_array_equal(np.asarray(v), a[[2, 0, 2]])
    np.testing.assert_array_equal(np.asarray(c), [1, 2, 0])
    _, c = jnp.unique(a, axis=0, size=3, return_counts=True, equal_nan=False)
    np.testing.assert_array_equal(np.asarray(c), [1, 1, 1])
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.zeros((0, 2)), axis=0, size=2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.unique(ROWS, axis=2, size=2)
    # the size=-only path: counts of a truncated result end at the next unique (JAX: [1])
    np.testing.assert_array_equal(
        np.asarray(jnp.unique(np.array([3, 1, 3, 2]), size=1, return_counts=True)[1]), [1])


# ---- custom_vjp.defvjp(optimize_remat=True); jacrev(allow_int=True) ----

def test_defvjp_optimize_remat_gives_the_same_values():
    f = pyjax.custom_vjp(lambda x: jnp.sin(x))
    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, g: (10.0 * r * g,),
             optimize_remat=True)
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x), rtol=1e-6)
    want = 10.0 * np.cos(x)  # the rule's (deliberately scaled) VJP, not sin's derivative
    np.testing.assert_allclose(np.asarray(pyjax.grad(lambda v: f(v).sum())(x)), want,
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.jit(pyjax.vmap(pyjax.grad(f)))(x)), want,
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="symbolic zeros"):  # JAX 0.10.2's refusal
        f.defvjp(lambda x: (x, None), lambda r, g: (g,), optimize_remat=True,
                 symbolic_zeros=True)


def test_jacrev_allow_int_and_complex_inputs():
    x, n = np.arange(3.0, dtype=np.float32), np.arange(3, dtype=np.int32)
    jx, jn = pyjax.jacrev(lambda x, n: jnp.sin(x) * n, argnums=(0, 1), allow_int=True)(x, n)
    np.testing.assert_allclose(np.asarray(jx), np.diag(np.cos(x) * n), rtol=1e-6)
    # JAX 0.10.2: integer inputs get zero blocks of their own dtype, shape out + in
    assert jn.dtype == np.int32 and jn.shape == (3, 3) and not np.asarray(jn).any()
    with pytest.raises(TypeError, match="set allow_int to True"):
        pyjax.jacrev(lambda n: n * 2.0)(n)
    with pytest.raises(NotImplementedError, match="PRNG key"):
        pyjax.jacrev(lambda k, v: v, argnums=(0, 1), allow_int=True)(pyjax.random.key(0), 1.0)
    # complex inputs with real outputs, as grad: JAX gives the conjugate-gradient convention
    z = np.array([1 + 2j, 3j], np.complex64)
    got = pyjax.jacrev(lambda z: jnp.abs(z) ** 2)(z)
    want = np.stack([np.asarray(pyjax.grad(lambda w: jnp.abs(w[i]) ** 2)(z)) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got), np.diag(2 * np.conj(z)), rtol=1e-6)


# ---- make_jaxpr(axis_env=...): collectives over names no transformation binds ----

def test_make_jaxpr_axis_env_binds_names_for_collectives():
    f = lambda x: pyjax.lax.pmean(x, "i") * pyjax.lax.axis_size(("i", "j"))  # noqa: E731
    closed = pyjax.make_jaxpr(f, axis_env=[("i", 4), ("j", 2)])(np.ones(2, np.float32))
    psums = [e for e in closed.jaxpr.eqns if e.primitive.name == "psum"]
    assert len(psums) == 1 and tuple(psums[0].params["axes"]) == ("i",)
    assert closed.out_avals[0].shape == (2,)
    # the names are bound only while tracing: pmean's 1/4 and axis_size's 8 are constants
    text = str(closed)
    assert "4.0" in text, text
    assert "8.0" in text, text
    g = pyjax.make_jaxpr(pyjax.grad(lambda x: pyjax.lax.psum(x * x, "i")),
                         axis_env=[("i", 3)])(1.0)
    assert sum(e.primitive.name == "psum" for e in g.jaxpr.eqns) >= 1
    with pytest.raises(NameError, match="unbound axis name: k"):
        pyjax.make_jaxpr(lambda x: pyjax.lax.psum(x, "k"), axis_env=[("i", 4)])(1.0)
    with pytest.raises(NameError, match="unbound axis name: i"):  # not left bound after
        pyjax.make_jaxpr(lambda x: pyjax.lax.psum(x, "i"))(1.0)
    with pytest.raises(ValueError, match="axis_env"):
        pyjax.make_jaxpr(lambda x: x, axis_env=["i"])(1.0)


# ---- vmap(spmd_axis_name=...): the mapped axis split over a mesh axis ----

def test_vmap_spmd_axis_name_splits_the_mapped_axis():
    from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = pyjax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    f = lambda v: pyjax.lax.with_sharding_constraint(v * 2, NamedSharding(mesh, P("y")))  # noqa
    x = np.arange(16.0, dtype=np.float32).reshape(2, 8)
    want = _loop(lambda v: f(v), x)
    # JAX 0.10.2: P('x', 'y') with spmd_axis_name='x', P(None, 'y') without
    out = pyjax.jit(pyjax.vmap(f, spmd_axis_name="x"))(x)
    np.testing.assert_array_equal(np.asarray(out), want)
    assert out.sharding.spec == P("x", "y")
    assert pyjax.jit(pyjax.vmap(f))(x).sharding.spec == P(None, "y")
    out = pyjax.jit(pyjax.vmap(f, in_axes=1, out_axes=1, spmd_axis_name="x"))(x.T.copy())
    assert out.sharding.spec == P("y", "x")  # JAX 0.10.2: the batch dim where it is mapped
    np.testing.assert_array_equal(np.asarray(out), want.T)
    with pytest.raises(ValueError, match="cannot appear in with_sharding_constraint"):
        pyjax.jit(pyjax.vmap(f, spmd_axis_name="y"))(x)
    with pytest.raises(TypeError, match="spmd_axis_name"):
        pyjax.vmap(f, spmd_axis_name=3)
    explicit = pyjax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    with pyjax.sharding.set_mesh(explicit):
        with pytest.raises(NotImplementedError, match="Explicit"):
            pyjax.vmap(lambda v: v * 2, spmd_axis_name="x")(x)


# ---- jnp.quantile / nanquantile(weights=...) (method="inverted_cdf", as JAX 0.10.2) ----

def test_weighted_quantiles_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 7)).astype(np.float32)
    w = rng.uniform(0.1, 2.0, size=(3, 7)).astype(np.float32)
    q = np.array([0.1, 0.5, 0.9], np.float32)
    f = pyjax.jit(lambda x, w: jnp.quantile(x, q, axis=1, weights=w, method="inverted_cdf"))
    want = np.quantile(x, q, axis=1, weights=w, method="inverted_cdf")
    np.testing.assert_array_equal(np.asarray(f(x, w)), want)
    w1 = np.array([1.0, 3.0, 0.5], np.float32)  # 1-D weights along a single axis
    np.testing.assert_array_equal(
        np.asarray(jnp.quantile(x, 0.5, axis=0, weights=w1, method="inverted_cdf")),
        np.quantile(x, 0.5, axis=0, weights=w1, method="inverted_cdf"))
    xn = x.copy()
    xn[0, 2] = np.nan
    np.testing.assert_array_equal(
        np.asarray(jnp.nanquantile(xn, q, axis=1, weights=w, method="inverted_cdf")),
        np.nanquantile(xn, q, axis=1, weights=w, method="inverted_cdf"))


def test_weighted_quantile_edge_cases_as_jax():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    ic = dict(method="inverted_cdf")
    # JAX 0.10.2 (observed): q=0 gives the smallest value even with weight 0 (NumPy: 3.0),
    # a negative weight gives NaN, all-zero weights give the smallest value
    assert float(jnp.quantile(x, 0.0, weights=np.array([0, 0, 1, 0.0]), **ic)) == 1.0
    assert float(jnp.quantile(x, 0.3, weights=np.array([0, 0, 1, 0.0]), **ic)) == 3.0
    assert np.isnan(float(jnp.quantile(x, 0.5, weights=np.array([1, -0.5, 1, 1]), **ic)))
    assert float(jnp.quantile(x, 0.5, weights=np.zeros(4), **ic)) == 1.0
    with pytest.raises(NotImplementedError, match="Only method 'inverted_cdf'"):
        jnp.quantile(x, 0.5, weights=np.ones(4))
    with pytest.raises(ValueError, match="must match reduction axes"):
        jnp.quantile(x.reshape(2, 2), 0.5, axis=1, weights=np.ones(3), **ic)


# ---- jit(donate_argnums=...) of a function using mutable array references ----

def test_jit_donation_with_refs():
    r = pyjax.new_ref(jnp.zeros(3))

    def f(x, y):
        r[...] += x
        return x * 2 + y
    g = pyjax.jit(f, donate_argnums=(0,))
    x, y = jnp.ones(3) + 0.0, jnp.ones(3) * 3
    np.testing.assert_array_equal(np.asarray(g(x, y)), np.full(3, 5.0))
    np.testing.assert_array_equal(np.asarray(r[...]), np.ones(3))
    assert x.is_deleted() and not y.is_deleted()  # as JAX 0.10.2
    np.testing.assert_array_equal(np.asarray(g(jnp.ones(3) * 2, y)), np.full(3, 7.0))
    np.testing.assert_array_equal(np.asarray(r[...]), np.full(3, 3.0))

    def h(ref, v):  # a ref argument beside a donated array
        ref[...] = ref[...] * v
        return v.sum()
    r2, v = pyjax.new_ref(jnp.ones(3)), jnp.full(3, 2.0)
    assert float(pyjax.jit(h, donate_argnums=(1,))(r2, v)) == 6.0
    np.testing.assert_array_equal(np.asarray(r2[...]), np.full(3, 2.0))
    assert v.is_deleted()


# ---- checkify.check inside custom_jvp / custom_vjp functions ----

def test_checkify_check_inside_custom_rules():
    from pyjax.experimental import checkify

    @pyjax.custom_jvp
    def f(x):
        checkify.check(x > 0, "f needs positive, got {x}", x=x)
        return jnp.sin(x)
    f.defjvp(lambda p, t: (jnp.sin(p[0]), 100.0 * jnp.cos(p[0]) * t[0]))  # 100x on purpose

    @pyjax.custom_vjp
    def g(x):
        checkify.check(x > 0, "g needs positive, got {x}", x=x)
        return jnp.sin(x)
    g.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, ct: (100.0 * r * ct,))

    for fun, name in ((f, "f"), (g, "g")):
        cf = checkify.checkify(fun)
        err, out = pyjax.jit(cf)(-2.0)
        assert err.get().startswith(f"{name} needs positive, got -2.0")
        np.testing.assert_allclose(float(out), np.sin(-2.0), rtol=1e-6)
        err, out = cf(0.5)
        assert err.get() is None
        # the user's (100x) rule, differentiating outside or inside checkify (JAX 0.10.2)
        want = 100.0 * np.cos(0.5)
        np.testing.assert_allclose(float(pyjax.grad(lambda x: cf(x)[1])(0.5)), want,
                                   rtol=1e-5)
        err, d = checkify.checkify(pyjax.grad(fun))(-2.0)
        assert err.get() is None  # the rules do not call the checked body (JAX: None too)
        np.testing.assert_allclose(float(d), 100.0 * np.cos(-2.0), rtol=1e-5)
    err, out = checkify.checkify(pyjax.vmap(f))(jnp.array([1.0, -1.0]))
    assert err.get().startswith("f needs positive, got -1.0")
    np.testing.assert_allclose(np.asarray(out), np.sin([1.0, -1.0]), rtol=1e-6)


# ---- jnp.trim_zeros of N-D arrays and with axis= (NumPy >= 2.2, JAX 0.10.2) ----

@pytest.mark.parametrize("trim, axis", [("fb", None), ("fb", 1), ("f", -1), ("b", 0),
                                        ("fb", (0, 1))])
def test_trim_zeros_axis(trim, axis):
    x = np.array([[0, 0, 1, 2, 0], [0, 3, 0, 0, 0], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(np.asarray(jnp.trim_zeros(x, trim, axis=axis)),
                                  np.trim_zeros(x, trim, axis=axis))


def test_trim_zeros_all_zero_and_bad_axis():
    assert jnp.trim_zeros(np.zeros((2, 3)), axis=1).shape == (2, 0)  # JAX 0.10.2: (2, 0)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.trim_zeros(np.zeros((2, 2)), axis=2)


def test_defvjp_optimize_remat_saves_the_arguments_and_recomputes_residuals():
    # what the option changes: reverse mode keeps the inputs, and fwd runs again in the
    # backward pass (counted while tracing), with a nondiff argument placed before x
    calls = []

    def fwd(scale, x):
        calls.append(1)
        return scale * jnp.sin(x), (jnp.cos(x), jnp.exp(x))

    def bwd(scale, res, g):
        c, e = res
        return (scale * c * g + 0.0 * e,)

    f = pyjax.custom_vjp(lambda scale, x: scale * jnp.sin(x), nondiff_argnums=(0,))
    f.defvjp(fwd, bwd, optimize_remat=True)
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(pyjax.grad(lambda v: f(2.0, v).sum())(x)),
                               2.0 * np.cos(x), rtol=1e-6)
    assert len(calls) == 2  # forward, then again for the residuals
    from pyjax._src.transformations.ad_checkpoint import saved_residuals
    saved = saved_residuals(lambda v: f(2.0, v).sum(), x)
    assert len(saved) == 1 and saved[0][0].shape == (3,)  # x alone, not (cos x, exp x)
