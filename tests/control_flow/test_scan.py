"""lax.scan, lax.fori_loop (static bounds) and lax.map against Python loops, finite
differences (``check_grads``) for derivatives, and a Python loop over the batch for vmap."""
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax.test_util import check_grads


def _cumsum_body(c, x):
    c = c + x
    return c, c


def _rnn(w, h0, xs, reverse=False):
    def step(h, x):
        h = jnp.tanh(w @ h + x)
        return h, jnp.sum(h * h)
    return lax.scan(step, h0, xs, reverse=reverse)


def _rnn_np(w, h0, xs, reverse=False):
    h, ys = h0, []
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    out = [None] * len(xs)
    for t in order:
        h = np.tanh(w @ h + xs[t])
        out[t] = np.sum(h * h)
    ys = np.array(out)
    return h, ys


def _rnn_data(t=6, n=3, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, n)) * 0.5, rng.normal(size=n), rng.normal(size=(t, n)))


def _check_rev(f, args):
    """f's reverse mode against central differences of f (float64, tight tolerances)."""
    check_grads(f, args, order=1, modes=("rev",), rtol=1e-6, atol=1e-8, eps=1e-6)


# ---- forward values ----

@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("jit", [False, True])
def test_cumsum(reverse, jit):
    xs = np.arange(1.0, 8.0, dtype=np.float32)
    f = lambda xs: lax.scan(_cumsum_body, 0.0, xs, reverse=reverse)  # noqa: E731
    if jit:
        f = pyjax.jit(f)
    c, ys = f(xs)
    want = np.cumsum(xs[::-1])[::-1] if reverse else np.cumsum(xs)
    np.testing.assert_allclose(np.asarray(ys), want)
    assert float(c) == xs.sum()
    assert ys.dtype == np.float32 and c.dtype == np.float32


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 4, True])
def test_tanh_rnn_matches_python_loop(reverse, unroll):
    w, h0, xs = _rnn_data(t=7)
    f = pyjax.jit(lambda w, h0, xs: lax.scan(
        lambda h, x: (jnp.tanh(w @ h + x), jnp.sum(jnp.tanh(w @ h + x) ** 2)), h0, xs,
        reverse=reverse, unroll=unroll))
    h, ys = f(w.astype(np.float32), h0.astype(np.float32), xs.astype(np.float32))
    h_np, ys_np = _rnn_np(w, h0, xs, reverse)
    np.testing.assert_allclose(np.asarray(h), h_np, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), ys_np, rtol=1e-5, atol=1e-6)


def test_pytree_carry_and_xs():
    def step(carry, x):
        a, (b, n) = carry
        a = a + x["u"] * b
        return (a, (b * 2.0, n + 1)), {"s": a.sum(), "v": x["v"] + n}

    xs = {"u": np.ones((4, 2), np.float32), "v": np.arange(4, dtype=np.int32)}
    (a, (b, n)), ys = lax.scan(step, (np.zeros(2, np.float32), (1.0, 0)), xs)
    np.testing.assert_allclose(np.asarray(a), [15.0, 15.0])
    assert float(b) == 16.0 and int(n) == 4
    np.testing.assert_allclose(np.asarray(ys["s"]), [2.0, 6.0, 14.0, 30.0])
    np.testing.assert_array_equal(np.asarray(ys["v"]), [0, 2, 4, 6])


def test_xs_none_with_length_and_zero_length():
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1, None, length=5)
    assert int(c) == 32
    np.testing.assert_array_equal(np.asarray(ys), [1, 2, 4, 8, 16])
    c, ys = lax.scan(_cumsum_body, 3.0, np.zeros((0,), np.float32))
    assert float(c) == 3.0 and ys.shape == (0,)


def test_closure_over_outer_tracers_and_arrays():
    k = jnp.arange(3.0)

    @pyjax.jit
    def f(scale, xs):
        return lax.scan(lambda c, x: (c + scale * x + k, None), jnp.zeros(3), xs)[0]

    xs = np.ones((4, 3), np.float32)
    np.testing.assert_allclose(np.asarray(f(2.0, xs)), 4 * (2.0 + np.arange(3.0)))


def test_jaxpr_has_one_scan_and_lowering_one_while():
    f = lambda xs: lax.scan(_cumsum_body, 0.0, xs)  # noqa: E731
    jaxpr = pyjax.make_jaxpr(f)(np.ones(5, np.float32))
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names.count("scan") == 1
    assert "scan[" in str(jaxpr) and "length=5" in str(jaxpr)
    text = pyjax.jit(f).lower(np.ones(5, np.float32)).as_text()
    assert text.count('"stablehlo.while"') == 1


def test_fori_loop_jaxpr_has_one_loop_not_1000_bodies():
    body = lambda i, x: x * 0.999 + 0.001  # noqa: E731
    jaxpr = pyjax.make_jaxpr(lambda x: lax.fori_loop(0, 1000, body, x))(np.ones(16, np.float32))
    assert [e.primitive.name for e in jaxpr.eqns].count("scan") == 1
    inner = [e for e in jaxpr.eqns if e.primitive.name == "scan"][0].params["jaxpr"]
    assert len(inner.eqns) <= 4  # i + 1, and the body's two ops
    x = np.ones(16, np.float32)
    out = pyjax.jit(lambda x: lax.fori_loop(0, 1000, body, x))(x)
    ref = x.copy()
    for _ in range(1000):
        ref = ref * np.float32(0.999) + np.float32(0.001)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5)


def test_fori_loop_newton_iterations():
    def newton(a):
        return lax.fori_loop(0, 8, lambda i, y: y - (y * y - a) / (2 * y), a)

    for a in [2.0, 9.0, 0.5]:
        y = a
        for _ in range(8):
            y = y - (y * y - a) / (2 * y)
        np.testing.assert_allclose(float(newton(a)), y, rtol=1e-6)
        np.testing.assert_allclose(float(pyjax.jit(newton)(a)), y, rtol=1e-6)
    # the index is visible to the body, and weakly typed int when the bounds are Python ints
    assert int(lax.fori_loop(2, 6, lambda i, c: c + i, 0)) == 2 + 3 + 4 + 5
    assert lax.fori_loop(0, 3, lambda i, c: c + i, 0).dtype == np.int32
    assert int(lax.fori_loop(5, 2, lambda i, c: c + 1, 0)) == 0  # empty range


def test_map_and_batch_size():
    xs = np.arange(7.0, dtype=np.float32)
    want = np.sin(xs) * 2
    np.testing.assert_allclose(np.asarray(lax.map(lambda x: jnp.sin(x) * 2, xs)), want,
                               rtol=1e-6)
    for bs in (1, 3, 7, 10):
        got = lax.map(lambda x: jnp.sin(x) * 2, xs, batch_size=bs)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    tree = lax.map(lambda d: {"a": d["x"] + 1, "b": d["x"].sum()}, {"x": np.ones((3, 2))})
    np.testing.assert_allclose(np.asarray(tree["a"]), 2 * np.ones((3, 2)))
    np.testing.assert_allclose(np.asarray(tree["b"]), [2.0, 2.0, 2.0])


# ---- derivatives ----

@pytest.mark.parametrize("reverse", [False, True])
def test_grad_rnn_against_finite_differences(x64, reverse):
    w, h0, xs = _rnn_data()

    def loss(w, h0, xs):
        h, ys = _rnn(w, h0, xs, reverse)
        return jnp.sum(ys) + jnp.sum(h)

    def loss_np(w, h0, xs):
        h, ys = _rnn_np(w, h0, xs, reverse)
        return np.sum(ys) + np.sum(h)

    np.testing.assert_allclose(float(loss(w, h0, xs)), loss_np(w, h0, xs), rtol=1e-12)
    _check_rev(loss, (w, h0, xs))
    gw, gh, gx = pyjax.grad(loss, argnums=(0, 1, 2))(w, h0, xs)
    for g, want in zip((gw, gh, gx), pyjax.vjp(loss, w, h0, xs)[1](1.0)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-12)
    gw_jit = pyjax.jit(pyjax.grad(loss))(w, h0, xs)
    np.testing.assert_allclose(np.asarray(gw_jit), np.asarray(gw), rtol=1e-10)


def test_jvp_of_scan_matches_finite_differences(x64):
    w, h0, xs = _rnn_data()
    h, ys = _rnn(w, h0, xs)
    h_np, ys_np = _rnn_np(w, h0, xs)
    np.testing.assert_allclose(np.asarray(h), h_np, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ys), ys_np, rtol=1e-12)
    # check_grads multiplies tolerances by an output's size: divide by the largest one
    n = ys.size
    check_grads(lambda w: _rnn(w, h0, xs), (w,), order=1, modes=("fwd",), rtol=1e-6 / n,
                atol=1e-8 / n, eps=1e-6)


def test_grad_fori_loop_static_bounds_and_second_order(x64):
    def f(x):
        return lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * x + i, x)

    def f_np(x):
        c = x
        for i in range(4):
            c = np.sin(c) * x + i
        return c

    x = 0.7
    np.testing.assert_allclose(float(f(x)), f_np(x), rtol=1e-12)
    tol = dict(rtol=1e-6, atol=1e-8, eps=1e-6)
    check_grads(f, (x,), order=2, **tol)
    check_grads(pyjax.grad(f), (x,), order=1, **tol)  # grad(grad(f)) is its VJP
    g = float(pyjax.grad(f)(x))
    np.testing.assert_allclose(float(pyjax.jit(pyjax.grad(f))(x)), g, rtol=1e-12)


def test_grad_with_integer_carry_and_unused_outputs(x64):
    def f(x):
        (n, c), ys = lax.scan(lambda carry, xi: ((carry[0] + 1, carry[1] * xi), xi * 2.0),
                              (0, 1.0), x)
        return c  # ys unused: its cotangent is a symbolic zero

    x = np.array([1.5, 2.0, -0.5])
    np.testing.assert_allclose(np.asarray(pyjax.grad(f)(x)),
                               [2.0 * -0.5, 1.5 * -0.5, 1.5 * 2.0])


# ---- vmap ----

def test_vmap_of_scan_matches_python_loop():
    w, h0, xs = _rnn_data(t=5)
    rng = np.random.default_rng(3)
    xs_b = rng.normal(size=(4,) + xs.shape).astype(np.float32)
    h0_b = rng.normal(size=(4,) + h0.shape).astype(np.float32)
    w32 = w.astype(np.float32)
    # batched xs only: the carry becomes batched through the body (the fixpoint)
    h, ys = pyjax.vmap(lambda xs: _rnn(w32, h0.astype(np.float32), xs))(xs_b)
    for i in range(4):
        hi, ysi = _rnn_np(w32, h0.astype(np.float32), xs_b[i])
        np.testing.assert_allclose(np.asarray(h[i]), hi, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(ys[i]), ysi, rtol=1e-5, atol=1e-6)
    # batched init only, at axis 1 of the input
    h, ys = pyjax.vmap(lambda h0: _rnn(w32, h0, xs.astype(np.float32)), in_axes=1)(h0_b.T)
    for i in range(4):
        hi, ysi = _rnn_np(w32, h0_b[i], xs.astype(np.float32))
        np.testing.assert_allclose(np.asarray(h[i]), hi, rtol=1e-5, atol=1e-6)
    # batched const (the weights, closed over)
    ws = rng.normal(size=(3,) + w.shape).astype(np.float32) * 0.5
    h, ys = pyjax.vmap(lambda w: _rnn(w, h0.astype(np.float32), xs.astype(np.float32)))(ws)
    for i in range(3):
        hi, ysi = _rnn_np(ws[i], h0.astype(np.float32), xs.astype(np.float32))
        np.testing.assert_allclose(np.asarray(ys[i]), ysi, rtol=1e-5, atol=1e-6)


def test_jit_grad_vmap_composition(x64):
    w, h0, xs = _rnn_data(t=4)
    xs_b = np.stack([xs, 2 * xs, -xs])

    def loss(w):
        h, ys = pyjax.vmap(lambda x: _rnn(w, h0, x))(xs_b)
        return jnp.sum(ys)

    def loss_np(w):
        return sum(np.sum(_rnn_np(w, h0, x)[1]) for x in xs_b)

    np.testing.assert_allclose(float(loss(w)), loss_np(w), rtol=1e-12)
    _check_rev(loss, (w,))
    g = pyjax.jit(pyjax.grad(loss))(w)
    np.testing.assert_allclose(np.asarray(g), np.asarray(pyjax.vjp(loss, w)[1](1.0)[0]),
                               rtol=1e-12)
    # per-example gradients: vmap of grad, against each example's checked gradient
    single = lambda w, x: jnp.sum(_rnn(w, h0, x)[1])  # noqa: E731
    per = pyjax.vmap(pyjax.grad(single), (None, 0))(w, xs_b)
    for i in range(3):
        _check_rev(single, (w, xs_b[i]))
        np.testing.assert_allclose(np.asarray(per[i]),
                                   np.asarray(pyjax.vjp(single, w, xs_b[i])[1](1.0)[0]),
                                   rtol=1e-12)


def test_vmap_of_fori_loop_with_named_axis():
    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: c + lax.psum(c, "b"), x)

    x = np.array([1.0, 2.0], np.float32)
    got = pyjax.vmap(f, axis_name="b")(x)
    ref = x.copy()
    for _ in range(3):
        ref = ref + ref.sum()
    np.testing.assert_allclose(np.asarray(got), ref)


# ---- errors ----

def test_carry_type_errors_name_the_component():
    with pytest.raises(TypeError, match=r"carry input and carry output must have equal types"
                       r"[\s\S]*\[1\][\s\S]*float32\[\][\s\S]*int32\[\][\s\S]*dtypes"):
        lax.scan(lambda c, x: ((c[0], 1), x), (0.0, jnp.float32(1.0)), np.ones(3))
    with pytest.raises(TypeError, match=r"float32\[3\][\s\S]*float32\[\][\s\S]*shapes"):
        lax.scan(lambda c, x: (c.sum(), x), jnp.zeros(3), np.ones(3))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.scan(lambda c, x: ((c, c), x), 0.0, np.ones(3))
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))
    with pytest.raises(TypeError, match=r"fori_loop|carry"):
        lax.fori_loop(0, 3, lambda i, c: c.astype(np.int32), jnp.float32(0.0))


def test_scan_length_errors():
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, None), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="disagrees with leading axis"):
        lax.scan(lambda c, x: (c, None), 0.0, np.ones(3), length=4)
    with pytest.raises(ValueError, match="no values to scan over"):
        lax.scan(lambda c, x: (c, None), 0.0, None)
    with pytest.raises(ValueError, match="no leading axis"):
        lax.scan(lambda c, x: (c, None), 0.0, np.float32(1.0))
    with pytest.raises(TypeError, match="callable"):
        lax.scan(3, 0.0, np.ones(3))


def test_weak_init_promoted_to_body_type():
    c, _ = lax.scan(lambda c, x: (c + jnp.float32(1.0), None), 0.0, None, length=3)
    assert c.dtype == np.float32 and not c.aval.weak_type and float(c) == 3.0


def test_weak_carry_returned_strong_keeps_the_body_weak_types():
    # JAX 0.10.2 (observed): a weak carry the body returns strong with the same dtype is not
    # retraced, so carries computed from it in that one trace stay weak (blackjax's window
    # adaptation returns a weak step size through this); a strong carry returned weak is weak
    strong = jnp.float32(1.0)

    def body(c, x):
        a, b = c
        return (a + strong, b * 2.0 + a), None
    (a, b), _ = lax.scan(body, (0.0, 1.0), None, length=3)
    assert not a.aval.weak_type and b.aval.weak_type
    assert (float(a), float(b)) == (3.0, 12.0)  # b: 1 -> 2 -> 5 -> 12
    (a, b), _ = pyjax.jit(lambda c: lax.scan(body, c, None, length=3))((0.0, 1.0))
    assert not a.aval.weak_type and b.aval.weak_type  # Python scalars stay weak under jit
    c, _ = lax.scan(lambda c, x: (jnp.asarray(2.0), None), strong, None, length=2)
    assert c.aval.weak_type and float(c) == 2.0


def test_grad_of_jit_with_scan_inside_splits_the_scan(x64):
    # partial evaluation of the jitted body splits the scan (known primal scan, staged
    # linear scan) instead of staging it whole, which could not be transposed
    w, h0, xs = _rnn_data(t=4)

    def loss(w):
        h, ys = _rnn(w, h0, xs)
        return jnp.sum(ys)

    np.testing.assert_allclose(float(loss(w)), np.sum(_rnn_np(w, h0, xs)[1]), rtol=1e-12)
    _check_rev(pyjax.jit(loss), (w,))
    jaxpr = pyjax.make_jaxpr(pyjax.grad(pyjax.jit(loss)))(w)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit", "jit"]


def test_fori_loop_dynamic_bounds_is_a_while_loop():
    body = lambda i, c: c * 1.5 + i  # noqa: E731
    f = pyjax.jit(lambda n, x: lax.fori_loop(1, n, body, x))
    for n in (0, 1, 4, 7):
        want = 2.0
        for i in range(1, n):
            want = want * 1.5 + i
        np.testing.assert_allclose(float(f(n, 2.0)), want, rtol=1e-6)
    jaxpr = pyjax.make_jaxpr(lambda n, x: lax.fori_loop(1, n, body, x))(3, 2.0)
    assert [e.primitive.name for e in jaxpr.eqns].count("while") == 1
    # forward mode works; reverse mode raises JAX's error
    _, t = pyjax.jvp(lambda x: f(4, x), (2.0,), (1.0,))
    assert float(t) == 1.5 ** 3
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        pyjax.grad(lambda x: f(4, x))(2.0)
    with pytest.raises(ValueError, match="statically known"):
        pyjax.jit(lambda n: lax.fori_loop(0, n, body, 1.0, unroll=2))(3)
    with pytest.raises(TypeError, match="scalar integer"):
        lax.fori_loop(np.zeros(2), 3, body, 1.0)  # float bounds are allowed (a while_loop)


def test_eager_loops_reuse_the_compiled_body():
    from pyjax.test_util import count_compiles

    def body(i, x):
        return x * 0.5 + i

    def sq(x):
        return x * x

    x = np.ones(3, np.float32)
    first = lax.fori_loop(0, 5, body, x), lax.map(sq, x), lax.scan(_cumsum_body, 0.0, x)
    with count_compiles() as n:
        again = lax.fori_loop(0, 5, body, x), lax.map(sq, x), lax.scan(_cumsum_body, 0.0, x)
    assert n() == 0
    np.testing.assert_array_equal(np.asarray(first[0]), np.asarray(again[0]))


def test_loop_invariant_residuals_are_recomputed_not_stacked(x64):
    # W.T and exp(W[0]) depend only on the weights: reverse mode must not store them once per
    # iteration (a (100, 4, 4) residual), but recompute them in the backward scan.
    def loss(w, xs):
        def step(h, x):
            return jnp.tanh(h @ w.T + x) * jnp.exp(w[0]), None
        return jnp.sum(lax.scan(step, jnp.zeros(4), xs)[0])

    def loss_np(w, xs):
        h = np.zeros(4)
        for x in xs:
            h = np.tanh(h @ w.T + x) * np.exp(w[0])
        return h.sum()

    rng = np.random.default_rng(5)
    w, xs = rng.normal(size=(4, 4)) * 0.3, rng.normal(size=(100, 4))
    np.testing.assert_allclose(float(loss(w, xs)), loss_np(w, xs), rtol=1e-12)
    _check_rev(loss, (w, xs))
    _check_rev(pyjax.jit(loss), (w, xs))
    g = pyjax.vjp(loss, w, xs)[1](1.0)[0]
    np.testing.assert_allclose(np.asarray(pyjax.jit(pyjax.grad(loss))(w, xs)), np.asarray(g),
                               rtol=1e-12)
    for jaxpr in (pyjax.make_jaxpr(pyjax.grad(loss))(w, xs),
                  pyjax.make_jaxpr(pyjax.grad(pyjax.jit(loss)))(w, xs).eqns[0].params["jaxpr"]):
        scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
        shapes = [v.aval.shape for e in scans for v in e.outvars]
        assert (100, 4, 4) not in shapes, shapes


def _weights_step(c, x):
    w, h = c
    h = jnp.tanh(w @ h + x)
    return (w, h), jnp.sum(h)


def test_eager_grad_of_scan_stops_compiling_after_warm_up():
    from pyjax.test_util import count_compiles

    def loss(w, xs):
        return jnp.sum(lax.scan(_weights_step, (w, jnp.zeros(2)), xs)[1])

    w = np.array([[0.5, 0.1], [0.2, 0.3]], np.float32)
    xs = np.full((4, 2), 0.3, np.float32)
    g = pyjax.grad(loss)
    first = g(w, xs)
    g(w, xs)
    with count_compiles() as n:
        again = g(w, xs)
    assert n() == 0  # derived Jaxprs are cached: params hash equal
    np.testing.assert_allclose(np.asarray(again), np.asarray(first), rtol=1e-6)


# Read by tests/lax/test_registry.py.
TESTED_PRIMITIVES = {"scan"}
JVP_TESTED = {"scan"}  # test_jvp_of_scan_matches_finite_differences


def test_carries_returned_unchanged_are_the_callers_own_values():
    # JAX 0.10.2 forwards a carry the body returns unchanged: observed
    # fori_loop(0, 3, lambda i, c: c, 5) -> the Python int 5, scan's carry likewise,
    # while_loop(lambda c: False, lambda c: c, 5) -> 5; a changed carry is a weak int32 Array
    assert type(lax.fori_loop(0, 3, lambda i, c: c, 5)) is int
    carry, ys = lax.scan(lambda c, x: (c, x), 5, jnp.arange(3))
    assert type(carry) is int and carry == 5
    np.testing.assert_array_equal(ys, np.arange(3))
    assert lax.while_loop(lambda c: False, lambda c: c, 5) == 5
    assert type(lax.while_loop(lambda c: False, lambda c: c, 5)) is int
    pair = lax.fori_loop(0, 3, lambda i, c: (c[0] + 1, c[1]), (5, 2.0))
    assert type(pair[1]) is float and int(pair[0]) == 8 and pair[0].aval.weak_type
    out = pyjax.jit(lambda: lax.fori_loop(0, 3, lambda i, c: c, 5))()
    assert out.dtype == np.int32 and out.aval.weak_type and int(out) == 5
    # forwarding keeps differentiation through the other carries intact
    g = pyjax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: (c[0] * c[1], c[1]), (1.0, x))[0])
    np.testing.assert_allclose(g(2.0), 12.0)
