"""lax.while_loop and the ``while`` primitive: eager and jit evaluation, pytree carries,
closures, the Jaxpr and StableHLO it stages to, forward-mode AD (jvp, jacfwd, linearize), the
reverse-mode error, vmap with unbatched and batched predicates, weak-type promotion and the
carry/predicate type errors.

Oracles: Python loops, NumPy, and central finite differences (``check_grads``, float64).
"""
import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax._src.control_flow.while_loop import while_p
from pyjax._src.core.jaxpr import check_jaxpr
from pyjax.test_util import check_grads, count_compiles


def collatz_steps(n):
    def cond(c):
        return c[0] != 1

    def body(c):
        n, k = c
        return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1
    return lax.while_loop(cond, body, (n, 0))[1]


def py_collatz(n):
    k = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k


def grow(x):  # x -> x * 1.1 until it exceeds 10
    return lax.while_loop(lambda x: x <= 10.0, lambda x: x * 1.1, x)


def py_grow(x):
    while x <= 10.0:
        x = x * 1.1
    return x


def power_loop(x):  # a trip count of 5 from an integer carry: sin applied 5 times
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, jnp.sin(c[1]) * c[1]),
                          (0, x))[1]


def py_power_loop(x):
    for _ in range(5):
        x = np.sin(x) * x
    return x


def check_fwd(f, x, order=1):
    """f's forward-mode derivatives at x against central differences of f (float64)."""
    check_grads(f, (x,), order=order, modes=("fwd",), rtol=1e-6, atol=1e-8, eps=1e-6)


def while_eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive is while_p]


# ---- evaluation ----

@pytest.mark.parametrize("n", [1, 6, 27])
def test_collatz_eager_and_jit(n):
    assert int(collatz_steps(jnp.int32(n))) == py_collatz(n)
    assert int(pyjax.jit(collatz_steps)(n)) == py_collatz(n)


def test_zero_trips_returns_init():
    x = jnp.arange(3.0)
    out = lax.while_loop(lambda c: False, lambda c: c + 1, x)
    np.testing.assert_array_equal(out, np.arange(3.0))
    assert lax.while_loop(lambda c: False, lambda c: c, ()) == ()


def test_pytree_carry():
    def body(c):
        return {"i": c["i"] + 1, "xs": (c["xs"][0] * 2, c["xs"][1] + 1.0)}
    init = {"i": 0, "xs": (jnp.ones(2), jnp.zeros(()))}
    for f in (lambda c: lax.while_loop(lambda c: c["i"] < 4, body, c),
              pyjax.jit(lambda c: lax.while_loop(lambda c: c["i"] < 4, body, c))):
        out = f(init)
        assert set(out) == {"i", "xs"} and isinstance(out["xs"], tuple)
        assert int(out["i"]) == 4
        np.testing.assert_allclose(out["xs"][0], [16.0, 16.0])
        np.testing.assert_allclose(out["xs"][1], 4.0)


def test_closure_over_arrays():
    limit = jnp.float32(7.0)
    step = np.array([1.0, 2.0], np.float32)
    out = lax.while_loop(lambda x: x[0] < limit, lambda x: x + step, jnp.zeros(2))
    np.testing.assert_allclose(out, [7.0, 14.0])


def test_closure_over_outer_tracers_in_jit():
    @pyjax.jit
    def f(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]
    assert float(f(2.0, 5)) == 32.0
    assert float(f(3.0, 2)) == 9.0


def test_nested_while():
    def inner(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + x), (0, 0.0))[1]

    def outer(x):
        return lax.while_loop(lambda c: c[0] < 2,
                              lambda c: (c[0] + 1, c[1] + inner(c[1] + x)), (0, x))[1]
    assert float(outer(1.0)) == 31.0
    assert float(pyjax.jit(outer)(1.0)) == 31.0
    _, t = pyjax.jvp(outer, (1.0,), (1.0,))
    assert float(t) == 31.0


def test_eager_calls_reuse_the_compiled_loop():
    def cond(c):
        return c[0] < 3

    def body(c):
        return c[0] + 1, c[1] * 2
    lax.while_loop(cond, body, (0, 1.0))
    with count_compiles() as n:
        out = lax.while_loop(cond, body, (0, 1.0))
    assert n() == 0
    assert float(out[1]) == 8.0


def test_disable_jit_runs_python_loop():
    pyjax.config.update("jax_disable_jit", True)
    try:
        out = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, 1.0))
    finally:
        pyjax.config.update("jax_disable_jit", False)
    assert int(out[0]) == 3 and float(out[1]) == 8.0


# ---- the Jaxpr and the lowering ----

def test_make_jaxpr_shows_one_while():
    closed = pyjax.make_jaxpr(collatz_steps)(27)
    eqns = while_eqns(closed)
    assert len(eqns) == 1
    e = eqns[0]
    assert set(e.params) == {"cond_jaxpr", "body_jaxpr", "cond_nconsts", "body_nconsts"}
    assert e.params["cond_nconsts"] == 0 and e.params["body_nconsts"] == 0
    text = str(closed)
    assert "while[" in text and "cond_jaxpr={ lambda" in text and "body_jaxpr={ lambda" in text
    check_jaxpr(closed.jaxpr)


def test_consts_are_leading_operands():
    def f(x, y):
        return lax.while_loop(lambda c: c < y, lambda c: c + x, 0.0)
    closed = pyjax.make_jaxpr(f)(1.0, 5.0)
    e, = while_eqns(closed)
    assert e.params["cond_nconsts"] == 1 and e.params["body_nconsts"] == 1
    assert len(e.invars) == 3
    check_jaxpr(closed.jaxpr)


def test_lowered_text_has_stablehlo_while():
    text = pyjax.jit(collatz_steps).lower(27).as_text()
    assert '"stablehlo.while"' in text


# ---- forward-mode differentiation ----

def test_jvp_against_finite_differences(x64):
    for f, py, x in ((grow, py_grow, 1.3), (power_loop, py_power_loop, 0.7)):
        y, t = pyjax.jvp(f, (x,), (1.0,))
        np.testing.assert_allclose(float(y), py(x), rtol=1e-12)
        check_fwd(f, x, order=2)
        _, tj = pyjax.jit(lambda x: pyjax.jvp(f, (x,), (1.0,)))(x)
        np.testing.assert_allclose(float(tj), float(t), rtol=1e-12)


def test_jvp_fixpoint_tangent_enters_through_body(x64):
    # the carry ``y`` starts with a zero tangent; the body makes it depend on ``x``
    def f(x):
        return lax.while_loop(lambda c: c[0] < 4,
                              lambda c: (c[0] + 1, c[1] + c[2], c[2] * x), (0, 0.0, 1.0))[1]

    def py(x):
        y, z = 0.0, 1.0
        for _ in range(4):
            y, z = y + z, z * x
        return y
    np.testing.assert_allclose(float(f(1.5)), py(1.5), rtol=1e-12)
    check_fwd(f, 1.5)


def test_jvp_of_closure_const(x64):
    def f(a):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * a + 1.0),
                              (0, 1.0))[1]
    np.testing.assert_allclose(float(f(2.0)), ((2.0 + 1) * 2.0 + 1) * 2.0 + 1, rtol=1e-12)
    check_fwd(f, 2.0)


def test_jacfwd():
    f = lambda x: lax.while_loop(lambda x: jnp.all(x < 10.0), lambda x: x * 1.1, x)  # noqa
    j = pyjax.jacfwd(f)(jnp.array([1.0, 2.0]))
    k = 17  # 2 * 1.1**17 > 10 first
    np.testing.assert_allclose(j, np.eye(2) * 1.1 ** k, rtol=1e-5)


def test_linearize():
    y, lin = pyjax.linearize(grow, 1.0)
    np.testing.assert_allclose(float(y), py_grow(1.0), rtol=1e-5)
    np.testing.assert_allclose(float(lin(2.0)), 2 * py_grow(1.0), rtol=1e-5)
    y, lin = pyjax.linearize(pyjax.jit(grow), 1.0)
    np.testing.assert_allclose(float(y), py_grow(1.0), rtol=1e-5)
    np.testing.assert_allclose(float(lin(1.0)), py_grow(1.0), rtol=1e-5)


def test_grad_raises_reverse_mode_error():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop or lax.fori_loop"):
        pyjax.grad(grow)(1.0)
    with pytest.raises(ValueError, match="Try using lax.scan"):
        pyjax.grad(pyjax.jit(power_loop))(1.0)


def test_grad_works_when_the_carry_does_not_depend_on_the_input():
    def f(x):
        k = lax.while_loop(lambda k: 2.0 ** k < x, lambda k: k + 1.0, 0.0)  # depends via cond
        return x * k
    assert float(pyjax.grad(f)(5.0)) == 3.0


# ---- vmap ----

def test_vmap_unbatched_predicate():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[1]), (0, x))[1]
    xs = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(pyjax.vmap(f)(xs), np.array([1.0, 2.0, 3.0]) ** 8)
    closed = pyjax.make_jaxpr(pyjax.vmap(f))(xs)
    e, = while_eqns(closed)
    assert "reduce_or" not in str(e.params["cond_jaxpr"])
    check_jaxpr(closed.jaxpr)


def test_vmap_batched_predicate_per_element_trip_counts():
    ns = [1, 2, 3, 6, 7, 27]
    out = pyjax.vmap(collatz_steps)(jnp.array(ns, jnp.int32))
    np.testing.assert_array_equal(out, [py_collatz(n) for n in ns])
    closed = pyjax.make_jaxpr(pyjax.vmap(collatz_steps))(jnp.array(ns, jnp.int32))
    e, = while_eqns(closed)
    assert "reduce_or" in str(e.params["cond_jaxpr"])
    assert "select_n" in str(e.params["body_jaxpr"])
    check_jaxpr(closed.jaxpr)


def test_vmap_batched_predicate_float_carry():
    xs = np.array([0.5, 3.0, 12.0], np.float32)
    np.testing.assert_allclose(pyjax.vmap(grow)(jnp.asarray(xs)),
                               [py_grow(np.float32(x)) for x in xs], rtol=1e-5)


def test_vmap_closure_over_batched_value():
    def f(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]
    xs, ns = jnp.array([1.0, 2.0, 3.0]), jnp.array([1, 2, 3])
    expect = [1.0, 4.0, 27.0]
    np.testing.assert_allclose(pyjax.vmap(f)(xs, ns), expect)
    np.testing.assert_allclose(pyjax.vmap(f, (0, None))(xs, 3), [1.0, 8.0, 27.0])
    np.testing.assert_allclose(pyjax.jit(pyjax.vmap(f))(xs, ns), expect)
    np.testing.assert_allclose(pyjax.vmap(pyjax.jit(f))(xs, ns), expect)


def test_vmap_batch_axis_not_leading():
    def f(v):  # v: f32[2]; grows until its first entry exceeds 10
        return lax.while_loop(lambda v: v[0] <= 10.0, lambda v: v * 1.1, v)

    def py(v):
        while v[0] <= 10.0:
            v = v * np.float32(1.1)
        return v
    x = np.array([[1.0, 20.0, 4.0], [2.0, 0.5, 1.0]], np.float32)  # map over axis 1
    out = pyjax.vmap(f, in_axes=1)(jnp.asarray(x))
    np.testing.assert_allclose(out, np.stack([py(col) for col in x.T]), rtol=1e-5)


def test_vmap_of_jvp(x64):
    xs = np.array([0.3, 0.7])
    ts = pyjax.vmap(lambda x: pyjax.jvp(power_loop, (x,), (1.0,))[1])(jnp.asarray(xs))
    for x in xs:
        check_fwd(power_loop, x)
    np.testing.assert_allclose(
        ts, [float(pyjax.jvp(power_loop, (x,), (1.0,))[1]) for x in xs], rtol=1e-12)


def test_vmap_collective_in_cond():
    def f(x):
        return lax.while_loop(lambda c: lax.psum(c, "i") < 10.0, lambda c: c + 1.0, x)
    np.testing.assert_allclose(pyjax.vmap(f, axis_name="i")(jnp.array([0.0, 1.0])), [5.0, 6.0])


# ---- types ----

def test_weak_type_init_is_promoted():
    out = lax.while_loop(lambda x: x < 3, lambda x: x + jnp.float32(1), 0.0)
    assert out.dtype == np.float32 and not out.weak_type
    assert float(out) == 3.0
    out = pyjax.jit(lambda: lax.while_loop(lambda x: x < 3, lambda x: x + jnp.float32(1),
                                           0.0))()
    assert out.dtype == np.float32 and not out.weak_type


def test_result_takes_the_body_weak_types():
    # JAX 0.10.2 (observed): while_loop's result has the body's output weak types
    strong = jnp.float32(1.0)
    a, b = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + strong, c[1] * 2.0 + c[0]),
                          (0.0, 1.0))
    assert not a.weak_type and b.weak_type and (float(a), float(b)) == (3.0, 12.0)
    out = lax.while_loop(lambda c: False, lambda c: jnp.asarray(2.0), strong)
    assert out.weak_type and float(out) == 1.0


def test_carry_dtype_change_error():
    def body(c):
        return c[0], c[1].astype(jnp.int32)
    with pytest.raises(TypeError, match=r"carry input and carry output must have equal types"
                                        r"(.|\n)*component c\[1\] has type float32\[\] but the "
                                        r"corresponding output carry component has type "
                                        r"int32\[\], so the dtypes do not match"):
        lax.while_loop(lambda c: False, body, (1.0, jnp.float32(2)))


def test_carry_shape_change_error():
    with pytest.raises(TypeError, match="the shapes do not match"):
        lax.while_loop(lambda c: False, lambda c: jnp.concatenate([c, c]), jnp.ones(2))


def test_carry_structure_change_error():
    with pytest.raises(TypeError, match="must have the same pytree structure"):
        lax.while_loop(lambda c: False, lambda c: (c[0],), (1.0, 2.0))


@pytest.mark.parametrize("cond", [lambda c: 1, lambda c: c,
                                  lambda c: jnp.array([True, False])])
def test_cond_must_return_bool_scalar(cond):
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, but got "
                                        r"output type\(s\) \[ShapedArray\("):
        lax.while_loop(cond, lambda c: c, 1.0)


def test_cond_returning_pytree_error():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar, but got pytree"):
        lax.while_loop(lambda c: (True, True), lambda c: c, 1.0)


# Read by tests/lax/test_registry.py.
TESTED_PRIMITIVES = {"while"}
JVP_TESTED = {"while"}  # test_jvp_against_finite_differences
