"""custom_jvp and custom_vjp: the user's rule is the one used, eagerly, under jit, under grad,
nested, with nondiff_argnums, pytrees and JAX's errors."""
import functools
import math

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr
from pyjax._src.transformations.custom_derivatives import (
    CustomJVPException, CustomVJPException, custom_lin_p)


def eqn_names(jaxpr):
    j = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    out = []
    for e in j.eqns:
        out.append(e.primitive.name)
        for p in e.params.values():
            if isinstance(p, (Jaxpr, ClosedJaxpr)):
                out += eqn_names(p)
    return out


# ---- custom_jvp ----

@pyjax.custom_jvp
def f_jvp(x):
    return jnp.sin(x)


@f_jvp.defjvp
def _f_jvp_rule(primals, tangents):
    (x,), (t,) = primals, tangents
    return f_jvp(x), 100.0 * jnp.cos(x) * t  # deliberately 100x the true derivative


def test_custom_jvp_rule_is_used_everywhere():
    x = 0.5
    expected = 100.0 * math.cos(x)
    assert float(f_jvp(x)) == pytest.approx(math.sin(x))
    out, t = pyjax.jvp(f_jvp, (x,), (1.0,))
    assert float(out) == pytest.approx(math.sin(x)) and float(t) == pytest.approx(expected)
    assert float(pyjax.grad(f_jvp)(x)) == pytest.approx(expected)
    assert float(pyjax.jit(pyjax.grad(f_jvp))(x)) == pytest.approx(expected)
    assert float(pyjax.grad(pyjax.jit(f_jvp))(x)) == pytest.approx(expected)
    assert float(pyjax.jit(f_jvp)(x)) == pytest.approx(math.sin(x))
    # second derivative: differentiate through the rule itself: d/dx 100 cos(x)
    assert float(pyjax.grad(pyjax.grad(f_jvp))(x)) == pytest.approx(-100.0 * math.sin(x))


def test_custom_jvp_jaxpr():
    jaxpr = pyjax.make_jaxpr(f_jvp)(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["custom_jvp_call"]
    assert eqn_names(jaxpr) == ["custom_jvp_call", "sin"]
    text = pyjax.jit(f_jvp).lower(1.0).as_text()
    assert "stablehlo.sine" in text and "func.call" not in text  # lowered inline


def test_numerically_stable_log1pexp():
    @pyjax.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def _rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), (1.0 - 1.0 / (1.0 + jnp.exp(x))) * t

    naive = pyjax.grad(lambda x: jnp.log(1.0 + jnp.exp(x)))(100.0)
    assert math.isnan(float(naive))
    assert float(pyjax.grad(log1pexp)(100.0)) == 1.0
    assert float(pyjax.jit(pyjax.grad(log1pexp))(100.0)) == 1.0


def test_custom_jvp_nondiff_argnums_and_pytrees():
    @functools.partial(pyjax.custom_jvp, nondiff_argnums=(0,))
    def app(fn, p):
        return {"y": fn(p["a"]) * p["b"]}

    @app.defjvp
    def _app_jvp(fn, primals, tangents):
        (p,), (tp,) = primals, tangents
        out = app(fn, p)
        return out, {"y": 2.0 * tp["a"] + 3.0 * tp["b"]}

    p = {"a": 1.0, "b": 2.0}
    g = pyjax.grad(lambda p: app(jnp.sin, p)["y"])(p)
    assert (float(g["a"]), float(g["b"])) == (2.0, 3.0)
    g = pyjax.jit(pyjax.grad(lambda p: app(jnp.cos, p)["y"]))(p)
    assert (float(g["a"]), float(g["b"])) == (2.0, 3.0)


def test_defjvps():
    @pyjax.custom_jvp
    def h(x, y):
        return x * y

    h.defjvps(lambda g, ans, x, y: 10.0 * g, None)
    gx, gy = pyjax.grad(h, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (10.0, 0.0)


def test_custom_jvp_errors():
    @pyjax.custom_jvp
    def nojvp(x):
        return x
    with pytest.raises(AttributeError, match="No JVP defined"):
        nojvp(1.0)

    @pyjax.custom_jvp
    def bad(x):
        return x * 2.0
    bad.defjvp(lambda p, t: (bad(p[0]), (t[0], t[0])))
    with pytest.raises(TypeError, match="equal container"):
        pyjax.jvp(bad, (1.0,), (1.0,))

    def closes_over(y):
        @pyjax.custom_jvp
        def g(x):
            return x * y
        g.defjvp(lambda p, t: (g(p[0]), t[0] * y))
        return g(2.0)
    with pytest.raises(CustomJVPException, match="closed-over value"):
        pyjax.grad(closes_over)(3.0)


# ---- custom_vjp ----

@pyjax.custom_vjp
def f_vjp(x, y):
    return jnp.sin(x) * y


def _f_fwd(x, y):
    return f_vjp(x, y), {"cos": jnp.cos(x), "parts": (jnp.sin(x), y)}


def _f_bwd(res, ct):
    sin_x, y = res["parts"]
    return (7.0 * res["cos"] * y * ct, sin_x * ct)  # 7x the true d/dx


f_vjp.defvjp(_f_fwd, _f_bwd)


def test_custom_vjp_bwd_is_the_one_used():
    x, y = 0.5, 2.0
    gx = 7.0 * math.cos(x) * y
    gy = math.sin(x)
    assert float(f_vjp(x, y)) == pytest.approx(math.sin(x) * y)
    g = pyjax.grad(f_vjp, argnums=(0, 1))(x, y)
    assert (float(g[0]), float(g[1])) == pytest.approx((gx, gy))
    g = pyjax.jit(pyjax.grad(f_vjp, argnums=(0, 1)))(x, y)
    assert (float(g[0]), float(g[1])) == pytest.approx((gx, gy))
    g = pyjax.grad(pyjax.jit(f_vjp), argnums=(0, 1))(x, y)
    assert (float(g[0]), float(g[1])) == pytest.approx((gx, gy))
    _, vjp_fun = pyjax.vjp(f_vjp, x, y)
    assert float(vjp_fun(2.0)[0]) == pytest.approx(2 * gx)
    jaxpr = pyjax.make_jaxpr(f_vjp)(x, y)
    assert [e.primitive.name for e in jaxpr.eqns] == ["custom_vjp_call"]


def test_custom_vjp_nested_grad_differentiates_bwd():
    # d/dx of bwd's x-cotangent (7 cos(x) y) is -7 sin(x) y
    x, y = 0.3, 2.0
    gg = pyjax.grad(lambda x: pyjax.grad(f_vjp)(x, y))(x)
    assert float(gg) == pytest.approx(-7.0 * math.sin(x) * y, rel=1e-5)


def test_custom_vjp_forward_mode_is_an_error():
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        pyjax.jvp(f_vjp, (1.0, 2.0), (1.0, 0.0))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        custom_lin_p.bind(1.0, num_res=0, rules=None, res_tree=None, lin_mask=(True,),
                          out_avals=())


def test_clip_gradient_with_nondiff_argnums():
    @functools.partial(pyjax.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, None

    def bwd(lo, hi, _, g):
        return (jnp.clip(g, lo, hi),)

    clip_gradient.defvjp(fwd, bwd)
    g = pyjax.grad(lambda x: 3.0 * clip_gradient(-0.75, 0.75, jnp.sin(x)))
    assert float(g(0.0)) == 0.75
    assert float(pyjax.jit(g)(0.0)) == 0.75
    # grad of sin(x)*3 at pi/2 is ~0: within the clip range
    assert abs(float(g(math.pi / 2))) < 1e-5


def test_custom_vjp_none_cotangent_and_int_argument():
    @pyjax.custom_vjp
    def scale(x, n):
        return x * n

    scale.defvjp(lambda x, n: (scale(x, n), n), lambda n, ct: (ct * n, None))
    assert float(pyjax.grad(scale)(2.0, 3)) == 3.0
    g = pyjax.grad(scale, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0 and g[1].dtype == pyjax.dtypes.float0


def test_custom_vjp_errors():
    @pyjax.custom_vjp
    def h(x):
        return x

    with pytest.raises(AttributeError, match="No VJP defined"):
        h(1.0)
    h.defvjp(lambda x: (h(x), None), lambda r, ct: (ct, ct))
    with pytest.raises(TypeError, match="must produce a tuple of length"):
        pyjax.grad(h)(1.0)

    @pyjax.custom_vjp
    def k(x):
        return x
    k.defvjp(lambda x: h(x), lambda r, ct: (ct,))
    with pytest.raises(TypeError, match="must produce a pair"):
        pyjax.grad(k)(1.0)

    def closes_over(y):
        @pyjax.custom_vjp
        def g(x):
            return x * y
        g.defvjp(lambda x: (g(x), None), lambda r, ct: (ct * y,))
        return g(2.0)
    with pytest.raises(CustomVJPException, match="closed-over value"):
        pyjax.grad(closes_over)(3.0)


def test_custom_vjp_inside_jit_inside_grad_pytree_outputs():
    @pyjax.custom_vjp
    def two(x):
        return {"a": x * 2.0, "b": x * 3.0}

    two.defvjp(lambda x: (two(x), x), lambda x, ct: (ct["a"] + 10.0 * ct["b"],))
    f = pyjax.jit(lambda x: jnp.sum(two(x)["a"] + two(x)["b"]))
    g = pyjax.grad(f)(np.ones(3, np.float32))
    # each call gets its own cotangent: {a: 1, b: 0} -> 1 and {a: 0, b: 1} -> 10
    np.testing.assert_allclose(np.asarray(g), 11.0)


# ---- vmap ----

def test_vmap_of_custom_jvp_and_its_grad():
    xs = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(pyjax.vmap(f_jvp)(xs)), np.sin(xs), rtol=1e-6)
    expected = 100.0 * np.cos(xs)
    np.testing.assert_allclose(np.asarray(pyjax.vmap(pyjax.grad(f_jvp))(xs)), expected,
                               rtol=1e-5)
    g = pyjax.grad(lambda x: jnp.sum(pyjax.vmap(f_jvp)(x)))(xs)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5)


def test_vmap_of_custom_vjp_and_its_grad():
    xs = np.arange(3.0, dtype=np.float32)
    ys = np.full(3, 2.0, np.float32)
    gx = pyjax.vmap(pyjax.grad(f_vjp))(xs, ys)
    np.testing.assert_allclose(np.asarray(gx), 7.0 * np.cos(xs) * 2.0, rtol=1e-5)
    # an unbatched argument gets the sum of the per-example cotangents
    gx, gy = pyjax.grad(lambda x, y: jnp.sum(pyjax.vmap(f_vjp, in_axes=(0, None))(x, y)),
                        argnums=(0, 1))(xs, 2.0)
    np.testing.assert_allclose(np.asarray(gx), 7.0 * np.cos(xs) * 2.0, rtol=1e-5)
    np.testing.assert_allclose(float(gy), np.sum(np.sin(xs)), rtol=1e-5)



def test_custom_jvp_function_applied_to_tangents_in_its_rule_is_transposed():
    # the rule reuses the (linear) function on the tangent, as lineax's rules do: that call is
    # in the linear part of the linearization, and reverse mode transposes its body
    @pyjax.custom_jvp
    def triple(x):
        return 3.0 * x
    triple.defjvp(lambda primals, tangents: (triple(primals[0]), triple(tangents[0])))

    def g(x):
        return jnp.sin(triple(x))
    expected = 3.0 * np.cos(0.9)
    np.testing.assert_allclose(float(pyjax.grad(g)(0.3)), expected, rtol=1e-5)
    np.testing.assert_allclose(float(pyjax.jit(pyjax.grad(g))(0.3)), expected, rtol=1e-5)

# Read by tests/lax/test_registry.py. custom_lin is never lowered and its JVP rule is the
# forward-mode error (test_custom_vjp_forward_mode_is_an_error).
TESTED_PRIMITIVES = {"custom_jvp_call", "custom_vjp_call", "custom_lin"}
JVP_TESTED = {"custom_jvp_call", "custom_vjp_call", "custom_lin"}
