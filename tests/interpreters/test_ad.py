"""Autodiff: jvp, linearize, vjp, grad, value_and_grad, jacobians, hessian, linear_transpose,
stop_gradient; nesting, Python control flow, jit interplay, symbolic zeros, errors.

Oracles: analytic derivatives written with NumPy, and central finite differences (float64).
"""
import math

import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax import errors
from pyjax._src.core.jaxpr import check_jaxpr
from pyjax._src.interpreters import ad
from pyjax._src.dispatch import eager_grad
from pyjax.test_util import check_grads, count_compiles

float0 = pyjax.dtypes.float0


def tanh_exp(x):
    y = jnp.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


# ---- the examples ----

def test_grad_tanh_prints_like_jax():
    g = pyjax.grad(tanh_exp)(1.0)
    assert str(g) == "0.4199743"
    assert g.dtype == np.float32
    np.testing.assert_allclose(float(g), 1 - math.tanh(1.0) ** 2, rtol=1e-6)


def test_third_derivative_of_sin():
    g3 = pyjax.grad(pyjax.grad(pyjax.grad(jnp.sin)))(1.0)
    np.testing.assert_allclose(float(g3), -math.cos(1.0), rtol=1e-6)
    assert str(g3) == "-0.5403023"


def test_fourth_order():
    d4 = pyjax.grad(pyjax.grad(pyjax.grad(pyjax.grad(jnp.sin))))(0.7)
    np.testing.assert_allclose(float(d4), math.sin(0.7), rtol=1e-5)
    p4 = pyjax.grad(pyjax.grad(pyjax.grad(pyjax.grad(lambda x: x ** 5))))(1.5)
    np.testing.assert_allclose(float(p4), 120 * 1.5, rtol=1e-5)
    d4_jit = pyjax.jit(pyjax.grad(pyjax.grad(pyjax.grad(pyjax.grad(jnp.cos)))))(0.3)
    np.testing.assert_allclose(float(d4_jit), math.cos(0.3), rtol=1e-5)


def test_grad_through_python_if():
    def f(x):
        if x > 0:
            return x ** 2
        return -x ** 3
    assert float(pyjax.grad(f)(2.0)) == 4.0
    assert float(pyjax.grad(f)(-1.0)) == -3.0


def test_grad_through_recursion_and_while():
    def power(x, n):
        return 1.0 if n == 0 else x * power(x, n - 1)
    np.testing.assert_allclose(float(pyjax.grad(power)(2.0, 4)), 4 * 2.0 ** 3)

    def halve(x):  # recursion depth depends on the value of x
        return x if x < 1.0 else 2.0 * halve(x / 2.0)
    assert float(pyjax.grad(halve)(13.0)) == 1.0

    def doubling(x):
        while x < 10.0:
            x = x * 3.0
        return x
    assert float(pyjax.grad(doubling)(1.5)) == 9.0  # 1.5 -> 4.5 -> 13.5


def test_argnums_tuple():
    def f(x, y, z):
        return x + 2 * y + z ** 2
    gx, gy, gz = pyjax.grad(f, argnums=(0, 1, 2))(1.0, 2.0, 3.0)
    assert (float(gx), float(gy), float(gz)) == (1.0, 2.0, 6.0)
    assert float(pyjax.grad(f, argnums=2)(1.0, 2.0, -4.0)) == -8.0
    assert float(pyjax.grad(f, argnums=-1)(1.0, 2.0, 5.0)) == 10.0


def test_nested_grad_no_perturbation_confusion():
    assert float(pyjax.grad(lambda x: pyjax.grad(lambda y: x * y)(2.0))(3.0)) == 1.0
    # the same with jvp: d/dx [d/dy (x*y)] = 1
    out = pyjax.jvp(lambda x: pyjax.jvp(lambda y: x * y, (2.0,), (1.0,))[1], (3.0,), (1.0,))
    assert float(out[1]) == 1.0
    # closure over the outer variable inside the inner differentiated function
    f = lambda x: pyjax.grad(lambda y: jnp.sin(x * y))(x)  # noqa: E731
    x = 0.8
    # f(x) = x cos(x^2); f'(x) = cos(x^2) - 2 x^2 sin(x^2)
    np.testing.assert_allclose(float(pyjax.grad(f)(x)),
                               math.cos(x * x) - 2 * x * x * math.sin(x * x), rtol=1e-5)


# ---- Jacobians and Hessians ----

def _f_nonsquare(x):
    return jnp.stack([x[0] * x[1] * jnp.sin(x[2]), x[0] ** 2 + jnp.exp(x[2])])


def test_jacfwd_equals_jacrev_nonsquare(x64):
    x = np.array([0.3, -1.2, 0.7])
    jf = np.asarray(pyjax.jacfwd(_f_nonsquare)(x))
    jr = np.asarray(pyjax.jacrev(_f_nonsquare)(x))
    expected = np.array([[x[1] * np.sin(x[2]), x[0] * np.sin(x[2]), x[0] * x[1] * np.cos(x[2])],
                         [2 * x[0], 0.0, np.exp(x[2])]])
    assert jf.shape == jr.shape == (2, 3)
    np.testing.assert_allclose(jf, expected, rtol=1e-12)
    np.testing.assert_allclose(jr, expected, rtol=1e-12)


def test_jacobian_pytrees_and_argnums(x64):
    def f(p, s):
        return {"a": p["w"] * s, "b": jnp.sum(p["v"] ** 2)}
    p = {"w": np.arange(3.0), "v": np.array([[1.0, 2.0], [3.0, 4.0]])}
    for jac in (pyjax.jacfwd, pyjax.jacrev):
        j = jac(f)(p, 2.0)
        assert j["a"]["w"].shape == (3, 3) and j["a"]["v"].shape == (3, 2, 2)
        assert j["b"]["v"].shape == (2, 2) and j["b"]["w"].shape == (3,)
        np.testing.assert_allclose(np.asarray(j["a"]["w"]), 2.0 * np.eye(3))
        np.testing.assert_allclose(np.asarray(j["b"]["v"]), 2 * p["v"])
        np.testing.assert_allclose(np.asarray(j["a"]["v"]), 0.0)
        js = jac(f, argnums=(0, 1))(p, 2.0)
        assert isinstance(js["a"], tuple) and len(js["a"]) == 2
        np.testing.assert_allclose(np.asarray(js["a"][1]), p["w"])


def test_jacobians_are_vmapped_not_looped():
    # vmap of jvp / vjp over the standard basis: the traced program does not grow with the
    # number of basis vectors
    f = lambda x: jnp.sin(x) * jnp.sum(x ** 2)  # noqa: E731
    for jac in (pyjax.jacfwd, pyjax.jacrev):
        sizes = {len(pyjax.make_jaxpr(jac(f))(jnp.ones(n)).eqns) for n in (2, 7, 40)}
        assert len(sizes) == 1, (jac, sizes)
        x = np.linspace(-1, 1, 7).astype(np.float32)
        expected = np.diag(np.cos(x) * np.sum(x ** 2)) + np.outer(np.sin(x), 2 * x)
        np.testing.assert_allclose(np.asarray(jac(f)(x)), expected, rtol=1e-5, atol=1e-6)
    # integer outputs have float0 Jacobians; empty inputs give empty blocks
    j = pyjax.jacfwd(lambda x: (x * 2, (x > 0).astype(int)))(jnp.ones(2))
    assert j[1].dtype == float0 and j[1].shape == (2, 2)
    assert pyjax.jacfwd(jnp.sum)(jnp.zeros(0)).shape == (0,)
    assert pyjax.jacrev(lambda x: x * 2)(jnp.zeros(0)).shape == (0, 0)


def test_hessian_rosenbrock(x64):
    def rosen(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def rosen_hess(x):
        n = len(x)
        h = np.zeros((n, n))
        for i in range(n - 1):
            h[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
            h[i, i + 1] += -400 * x[i]
            h[i + 1, i] += -400 * x[i]
            h[i + 1, i + 1] += 200
        return h
    x = np.array([0.5, -0.3, 1.2, 0.9])
    np.testing.assert_allclose(np.asarray(pyjax.hessian(rosen)(x)), rosen_hess(x), rtol=1e-10)
    g = np.asarray(pyjax.grad(rosen)(x))
    gf = np.asarray(pyjax.jacfwd(rosen)(x))
    np.testing.assert_allclose(g, gf, rtol=1e-12)


# ---- an MLP against finite differences ----

def _mlp_loss(params, x, y):
    h = x
    for i in range(3):
        h = h @ params[f"w{i}"] + params[f"b{i}"]
        if i < 2:
            h = jnp.tanh(h)
    return jnp.mean((h - y) ** 2)


def test_value_and_grad_mlp_vs_finite_differences(x64):
    rng = np.random.default_rng(1)
    sizes = [4, 6, 5, 2]
    params = {}
    for i in range(3):
        params[f"w{i}"] = rng.normal(size=(sizes[i], sizes[i + 1])) / np.sqrt(sizes[i])
        params[f"b{i}"] = rng.normal(size=(sizes[i + 1],)) * 0.1
    x, y = rng.normal(size=(7, 4)), rng.normal(size=(7, 2))
    val, g = pyjax.value_and_grad(_mlp_loss)(params, x, y)
    np.testing.assert_allclose(float(val), float(_mlp_loss(params, x, y)), rtol=1e-12)
    assert set(g) == set(params)
    # first and second derivatives in random directions against central differences
    check_grads(lambda p: _mlp_loss(p, x, y), (params,), order=2, rtol=1e-6, atol=1e-8,
                eps=1e-6)
    # value_and_grad's gradient is the checked VJP's, and the jitted one agrees
    (want,) = pyjax.vjp(lambda p: _mlp_loss(p, x, y), params)[1](1.0)
    gj = pyjax.jit(pyjax.grad(_mlp_loss))(params, x, y)
    for k in params:
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(want[k]), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(gj[k]), np.asarray(g[k]), rtol=1e-10)


# ---- jit interplay ----

def test_jit_of_grad_and_grad_of_jit():
    f = lambda x: jnp.sin(x) * x  # noqa: E731
    expected = math.cos(1.0) + math.sin(1.0)
    np.testing.assert_allclose(float(pyjax.jit(pyjax.grad(f))(1.0)), expected, rtol=1e-6)
    jf = pyjax.jit(f)
    np.testing.assert_allclose(float(pyjax.grad(jf)(1.0)), expected, rtol=1e-6)
    # the jitted function is not inlined: a forward call (primal outputs and residuals) and
    # its transpose (the backward call), as in JAX; nothing else at the top level
    jaxpr = pyjax.make_jaxpr(pyjax.grad(jf))(1.0)
    check_jaxpr(jaxpr.jaxpr)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit", "jit"]
    fwd, bwd = jaxpr.eqns
    assert "sin" in [e.primitive.name for e in fwd.params["jaxpr"].eqns]
    assert {e.primitive.name for e in bwd.params["jaxpr"].eqns} <= {"mul", "add"}
    # jvp of a jitted function is exactly one call
    jaxpr = pyjax.make_jaxpr(lambda x: pyjax.jvp(jf, (x,), (1.0,)))(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
    # jit(grad(f)) is one call at the top
    jaxpr = pyjax.make_jaxpr(pyjax.jit(pyjax.grad(f)))(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]


def test_grad_of_jit_reuses_compiled_calls():
    jf = pyjax.jit(lambda x: jnp.tanh(x) * 3.0)
    g1 = pyjax.grad(jf)(0.5)
    pyjax.grad(jf)(0.75)  # (the second sighting of its backward pass compiles it)
    with count_compiles() as n:
        g2 = pyjax.grad(jf)(0.25)
    assert n() == 0  # the jitted calls and the backward pass are compiled once
    np.testing.assert_allclose(float(g1), 3 * (1 - math.tanh(0.5) ** 2), rtol=1e-6)
    np.testing.assert_allclose(float(g2), 3 * (1 - math.tanh(0.25) ** 2), rtol=1e-6)


def test_grad_of_jit_with_closure_and_second_order():
    def outer(a):
        return pyjax.grad(pyjax.jit(lambda x: a * x ** 3))(2.0)  # 3 a x^2 = 12 a
    assert float(pyjax.grad(outer)(5.0)) == 12.0
    jf = pyjax.jit(lambda x: jnp.sin(x) * x)
    np.testing.assert_allclose(float(pyjax.grad(pyjax.grad(jf))(1.0)),
                               2 * math.cos(1.0) - math.sin(1.0), rtol=1e-5)


def test_python_control_flow_under_jit_of_grad_is_an_error():
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(errors.ConcretizationTypeError):
        pyjax.jit(pyjax.grad(f))(1.0)


def test_concretization_error_names_the_jit_argument():
    def f(x, flag):
        return x if x > 0 else -x * flag
    with pytest.raises(errors.ConcretizationTypeError, match="the argument x"):
        pyjax.jit(pyjax.grad(f))(1.0, 1.0)


def test_hessian_vector_product_forward_over_reverse(x64):
    def f(x):
        return jnp.sum(jnp.sin(x) * x[::-1]) + jnp.prod(x)
    x, v = np.array([0.3, -0.7, 1.1]), np.array([1.0, 2.0, -0.5])
    _, hvp = pyjax.jvp(pyjax.grad(f), (x,), (v,))
    np.testing.assert_allclose(np.asarray(hvp), np.asarray(pyjax.hessian(f)(x)) @ v,
                               rtol=1e-10)
    # reverse over forward agrees
    rof = pyjax.grad(lambda x: jnp.vdot(pyjax.jvp(f, (x,), (v,))[1], 1.0))(x)
    np.testing.assert_allclose(np.asarray(rof), np.asarray(hvp), rtol=1e-10)


def test_concrete_values_under_eager_grad():
    def f(x):
        scale = float(x)  # would drop the derivative of x: d(x*x)/dx is 6, not 3
        return x * scale
    with pytest.raises(errors.ConcretizationTypeError, match="derivative"):
        pyjax.grad(f)(3.0)

    def g(x):  # a constant on purpose: stop_gradient makes the primal concrete and tangent-free
        return x * float(lax.stop_gradient(x))
    assert float(pyjax.grad(g)(3.0)) == 3.0


# ---- symbolic zeros, integer inputs ----

def test_unused_inputs_get_zero_gradients_and_cost_nothing():
    g = pyjax.grad(lambda x, y: jnp.sin(x), argnums=(0, 1))(1.0, jnp.ones(3))
    assert np.asarray(g[1]).shape == (3,) and not np.asarray(g[1]).any()
    _, lin = ad.linearize_flat(lambda x, y: [jnp.sin(x)],
                               [pyjax.device_put(1.0), pyjax.device_put(np.ones(3, "f4"))])
    # the tangent of y is never touched: one multiplication by cos(x)
    assert [e.primitive.name for e in lin.jaxpr.eqns] == ["mul"]
    # an output that does not depend on the input has a symbolic zero tangent
    _, lin = ad.linearize_flat(lambda x: [x * 2.0, jnp.ones(2)], [pyjax.device_put(1.0)])
    assert lin.out_nonzero == [True, False]


def test_integer_inputs_float0():
    out, t = pyjax.jvp(lambda x, n: x * n, (2.0, 3), (1.0, np.zeros((), float0)))
    assert float(out) == 6.0 and float(t) == 3.0
    _, t = pyjax.jvp(lambda n: n * 2, (3,), (np.zeros((), float0),))
    assert t.dtype == float0
    g = pyjax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0 and g[1].dtype == float0 and g[1].shape == ()
    _, vjp_fun = pyjax.vjp(lambda x, n: x * n, 2.0, 3)
    cx, cn = vjp_fun(1.0)
    assert float(cx) == 3.0 and cn.dtype == float0


def test_holomorphic_and_complex():
    z = np.complex64(1.0 + 2.0j)
    g = pyjax.grad(lambda z: z ** 2, holomorphic=True)(z)
    np.testing.assert_allclose(complex(g), 2 * complex(z), rtol=1e-6)
    g = pyjax.grad(lambda z: jnp.sin(z) * z, holomorphic=True)(z)
    zc = complex(z)
    np.testing.assert_allclose(complex(g), np.cos(zc) * zc + np.sin(zc), rtol=1e-5)
    # real output of a complex input: JAX's convention gives conj of the Wirtinger gradient
    g = pyjax.grad(lambda z: jnp.real(z * jnp.conj(z)))(z)
    np.testing.assert_allclose(complex(g), 2 * np.conj(zc), rtol=1e-6)


# ---- jvp / linearize / vjp / linear_transpose ----

def test_jvp_pytrees_and_has_aux():
    def f(p):
        return {"s": jnp.sum(p["a"] * p["b"])}, p["a"] * 2
    p = {"a": jnp.arange(3.0), "b": jnp.ones(3)}
    t = {"a": jnp.ones(3), "b": jnp.arange(3.0)}
    out, tout, aux = pyjax.jvp(f, (p,), (t,), has_aux=True)
    assert float(out["s"]) == 3.0 and float(tout["s"]) == 3.0 + 5.0
    np.testing.assert_array_equal(np.asarray(aux), [0, 2, 4])
    assert not isinstance(aux, ad.JVPTracer)


def test_linearize_matches_jvp():
    f = lambda x, y: jnp.sin(x) * jnp.exp(y)  # noqa: E731
    out, f_jvp = pyjax.linearize(f, 0.5, 0.25)
    np.testing.assert_allclose(float(out), math.sin(0.5) * math.exp(0.25), rtol=1e-6)
    for tx, ty in [(1.0, 0.0), (0.0, 1.0), (0.3, -2.0)]:
        _, expected = pyjax.jvp(f, (0.5, 0.25), (tx, ty))
        np.testing.assert_allclose(float(f_jvp(tx, ty)), float(expected), rtol=1e-6)


def test_vjp_has_aux_and_multiple_outputs():
    def f(x, y):
        return (x * y, jnp.sin(x)), {"aux": x + 1}
    (a, b), vjp_fun, aux = pyjax.vjp(f, 2.0, 3.0, has_aux=True)
    assert float(a) == 6.0 and float(aux["aux"]) == 3.0
    cx, cy = vjp_fun((1.0, 2.0))
    np.testing.assert_allclose(float(cx), 3.0 + 2 * math.cos(2.0), rtol=1e-6)
    assert float(cy) == 2.0


def test_value_and_grad_has_aux():
    def loss(w):
        pred = w * 3.0
        return pred ** 2, {"pred": pred}
    (val, aux), g = pyjax.value_and_grad(loss, has_aux=True)(2.0)
    assert float(val) == 36.0 and float(aux["pred"]) == 6.0 and float(g) == 36.0
    g2, aux2 = pyjax.grad(loss, has_aux=True)(2.0)
    assert float(g2) == 36.0 and float(aux2["pred"]) == 6.0


def test_linear_transpose():
    f = lambda x, y: 0.5 * x - 0.5 * y  # noqa: E731
    ft = pyjax.linear_transpose(f, 1.0, 1.0)
    cx, cy = ft(1.0)
    assert (float(cx), float(cy)) == (0.5, -0.5)
    w = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    g = pyjax.linear_transpose(lambda v: w @ v, pyjax.ShapeDtypeStruct((3,), np.float32))
    ct = np.array([1.0, -1.0], np.float32)
    np.testing.assert_allclose(np.asarray(g(ct)[0]), w.T @ ct)
    with pytest.raises(TypeError, match="cotangent type does not match"):
        g(np.ones(3, np.float32))


def test_stop_gradient():
    assert float(pyjax.grad(lambda x: x * lax.stop_gradient(x))(3.0)) == 3.0
    jaxpr = pyjax.make_jaxpr(lax.stop_gradient)(1.0)
    assert str(jaxpr) == "{ lambda ; a:f32[]. let b:f32[] = stop_gradient a in (b,) }"
    out = pyjax.jit(lambda x: lax.stop_gradient(x) * 2.0)(np.arange(3.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0])
    tree = lax.stop_gradient({"i": np.int32(3), "f": 1.0})
    assert int(tree["i"]) == 3 and float(tree["f"]) == 1.0
    g = pyjax.grad(lambda p: jnp.sum(lax.stop_gradient(p["a"]) * p["b"]))(
        {"a": jnp.ones(2) * 4.0, "b": jnp.ones(2)})
    np.testing.assert_array_equal(np.asarray(g["a"]), [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(g["b"]), [4.0, 4.0])


# ---- errors ----

def test_grad_errors_worded_as_in_jax():
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions\. "
                                        r"Output had shape: \(3,\)\."):
        pyjax.grad(lambda x: x * jnp.ones(3))(1.0)
    with pytest.raises(TypeError, match=r"grad requires real- or complex-valued inputs \(input "
                                        r"dtype that is a sub-dtype of np\.inexact\), but got "
                                        r"int32\. If you want to use Boolean- or integer-valued "
                                        r"inputs, use vjp or set allow_int to True\."):
        pyjax.grad(lambda x: x * 2.0)(3)
    with pytest.raises(TypeError, match="grad with holomorphic=True requires inputs with "
                                        "complex dtype, but got float32"):
        pyjax.grad(lambda x: x * 2.0, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        pyjax.grad(lambda x: x * (1 + 1j))(1.0)
    with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
        pyjax.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        pyjax.jacfwd(lambda x: x)(np.arange(3))


def test_jvp_and_vjp_argument_errors():
    with pytest.raises(TypeError, match="must be tuples or lists"):
        pyjax.jvp(jnp.sin, 1.0, 1.0)
    with pytest.raises(TypeError, match="dtypes must be equal"):
        pyjax.jvp(jnp.sin, (np.float32(1.0),), (np.float16(1.0),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        pyjax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))
    _, vjp_fun = pyjax.vjp(jnp.sin, jnp.ones(3))
    with pytest.raises(ValueError, match="unexpected JAX type"):
        vjp_fun(jnp.ones(2))
    with pytest.raises(TypeError, match="Tree structure of cotangent"):
        vjp_fun((jnp.ones(3),))


def test_missing_rule_is_reported():
    from pyjax._src.core.primitive import Primitive, registry
    p = Primitive("test_ad_no_jvp", abstract_eval=lambda x: x, lower=lambda ctx, x: x,
                  impl=lambda x: x)
    try:
        with pytest.raises(NotImplementedError,
                           match="Differentiation rule for 'test_ad_no_jvp' not implemented"):
            pyjax.jvp(lambda x: p.bind(x), (1.0,), (1.0,))
    finally:
        del registry["test_ad_no_jvp"]  # keep the registry's completeness tests meaningful


def test_leaked_tracer_is_an_error():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0
    pyjax.grad(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        jnp.sin(leaked[0])


def test_eager_backward_pass_is_compiled_per_structure():
    def f(x, y):
        return jnp.sum(jnp.sin(x) * y) / 3.0
    x, y = np.linspace(0, 1, 5, dtype=np.float32), np.arange(5, dtype=np.float32)
    vjps = [pyjax.vjp(f, x + k, y)[1] for k in range(4)]
    counts = []
    for k, vjp in enumerate(vjps):  # op by op first, then one compiled call
        with count_compiles() as n:
            r = np.asarray(vjp(np.float32(1.0))[0])
        counts.append(n())
        np.testing.assert_allclose(r, np.cos(x + k) * y / 3.0, rtol=1e-6)
    assert counts[1] == 1 and counts[2:] == [0, 0], counts  # the second sighting compiles


def _record_of(fun):
    hits = [v for k, v in eager_grad._records.entries.items() if k[0] is fun.__code__]
    assert len(hits) == 1
    return hits[0]


def _count_eager_ops(fn):
    from pyjax._src.core import primitive as primitive_mod
    orig, n = primitive_mod._eager_apply, [0]

    def counting(*a):
        n[0] += 1
        return orig(*a)
    primitive_mod._eager_apply = counting
    try:
        out = fn()
    finally:
        primitive_mod._eager_apply = orig
    return out, n[0]


def test_eager_grad_is_replayed_as_one_executable():
    calls = []

    def f(x, y):
        calls.append(1)  # Python side effects run on every call
        return jnp.sum(jnp.sin(x) * y) / 3.0
    g = pyjax.grad(f)
    x, y = jnp.linspace(0, 1, 5), jnp.arange(5.0)
    for k in range(4):
        xk = x + k
        r, n_ops = _count_eager_ops(lambda: g(xk, y))
        np.testing.assert_allclose(np.asarray(r), np.cos(np.asarray(xk)) * np.asarray(y) / 3,
                                   rtol=1e-6)
        if k >= 2:  # recorded, then compiled: no op-by-op work any more
            assert n_ops == 0
    assert len(calls) == 4
    rec = _record_of(f)
    assert type(rec) is eager_grad._Record and rec.fused is not None
    fused = rec.fused
    pyjax.grad(f)(x, y)  # another grad of the same function replays the same executable
    assert _record_of(f).fused is fused
    # value_and_grad: the value comes out of the same call
    vg = pyjax.value_and_grad(f)
    for _ in range(3):
        v, gx = vg(x, y)
        np.testing.assert_allclose(float(v), float(f(x, y)), rtol=1e-6)


def test_eager_grad_replay_follows_python_control_flow_and_closures():
    state = {"scale": 2.0, "w": jnp.ones(3)}

    def f(x):
        y = jnp.sum(x * state["w"]) * state["scale"]
        if y > 0:  # a concrete value: the replay catches up and goes on eagerly
            return y ** 2
        return -y
    g = pyjax.grad(f)
    x = jnp.asarray([0.5, -0.25, 1.0])
    for k, (scale, sign) in enumerate([(2.0, 1), (2.0, 1), (3.0, 1), (2.0, -1), (2.0, 1),
                                       (0.5, -1), (2.0, 1)]):
        state["scale"] = scale
        state["w"] = jnp.full(3, float(k + 1))
        xs = x * sign
        w = np.full(3, k + 1.0, np.float32)
        y = float(np.sum(np.asarray(xs) * w) * scale)
        expected = 2 * y * scale * w if y > 0 else -scale * w
        np.testing.assert_allclose(np.asarray(g(xs)), expected, rtol=1e-6)

    def h(x):  # the mask of a comparison flows into select without being concrete
        return jnp.sum(jnp.where(x > 0, x ** 2, -x) + jnp.maximum(x, 0.0))
    gh = pyjax.grad(h)
    for k in range(4):
        xs = jnp.asarray([1.5, -2.0, 0.5]) * (k - 1.5)
        xv = np.asarray(xs)
        expected = np.where(xv > 0, 2 * xv, -1.0) + (xv > 0)
        np.testing.assert_allclose(np.asarray(gh(xs)), expected, rtol=1e-6)


def test_eager_grad_replay_keeps_eager_semantics():
    reprs, floats = [], []

    def f(x):
        reprs.append(repr(x))
        # concrete under eager grad, every call (stop_gradient: a float has no derivative)
        floats.append(float(lax.stop_gradient(jnp.sum(x))))
        return jnp.sum(jnp.sin(x))
    g = pyjax.grad(f)
    for k in range(4):
        np.testing.assert_allclose(np.asarray(g(jnp.full(2, 0.1 * k))), np.cos(0.1 * k),
                                   rtol=1e-6)
    assert len(set(reprs)) == 1 and "JVPTrace" in reprs[0]
    np.testing.assert_allclose(floats, [0.0, 0.2, 0.4, 0.6], rtol=1e-6)

    def boom(x):
        if x > 10.0:
            raise ValueError("too big")
        return x * 3.0
    gb = pyjax.grad(boom)
    assert [float(gb(v)) for v in (1.0, 2.0, 3.0)] == [3.0, 3.0, 3.0]
    with pytest.raises(ValueError, match="too big"):
        gb(11.0)
    assert float(gb(4.0)) == 3.0

    leaked = []

    def leak(x):
        leaked.append(x)
        return x * 2.0
    gl = pyjax.grad(leak)
    for _ in range(3):
        gl(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        jnp.sin(leaked[-1])


def test_eager_grad_replay_with_aux_argnums_and_nesting():
    def f(x, n, y):
        out = jnp.sum(x * y) * n
        return out, {"norm": jnp.sum(x * x), "n": n, "const": jnp.ones(2)}
    g = pyjax.grad(f, argnums=(0, 2), has_aux=True)
    for k in range(4):
        x, y = jnp.arange(3.0) + k, jnp.ones(3) * 2
        (gx, gy), aux = g(x, 3, y)
        np.testing.assert_allclose(np.asarray(gx), 6 * np.ones(3))
        np.testing.assert_allclose(np.asarray(gy), 3 * np.asarray(x))
        np.testing.assert_allclose(float(aux["norm"]), float(np.sum(np.asarray(x) ** 2)))
        assert int(aux["n"]) == 3 and np.asarray(aux["const"]).tolist() == [1.0, 1.0]
    gi = pyjax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)
    for _ in range(3):
        a, b = gi(2.0, 3)
        assert float(a) == 3.0 and b.dtype == float0
    d2 = pyjax.grad(pyjax.grad(lambda x: jnp.sin(x) * x))
    for v in (0.3, 0.6, 0.9):
        np.testing.assert_allclose(float(d2(v)), 2 * math.cos(v) - v * math.sin(v), rtol=1e-5)

    @pyjax.custom_jvp
    def cube(x):
        return x ** 3
    cube.defjvp(lambda p, t: (cube(p[0]), 3 * p[0] ** 2 * t[0]))
    gc = pyjax.grad(lambda x: cube(x) * 2.0)
    assert [float(gc(v)) for v in (1.0, 2.0, 1.0)] == [6.0, 24.0, 6.0]


def test_eager_grad_replay_of_calls_vmap_and_what_it_leaves_alone():
    jsin = pyjax.jit(jnp.sin)
    g = pyjax.grad(lambda x: jnp.sum(jsin(x) * 2.0 + pyjax.vmap(lambda r: r * r)(x * x)))
    for v in (0.1, 0.2, 0.3, 0.4):  # a jitted call is replayed into the fused program
        x = np.array([v, -v], np.float32)
        np.testing.assert_allclose(np.asarray(g(x)), 2 * np.cos(x) + 4 * x ** 3, rtol=1e-5)
    # integer intermediates may be used as static values: such programs run op by op
    gi = pyjax.grad(lambda x: jnp.sum(jnp.repeat(x, 2) * (x > 0).sum()))
    for k in range(4):
        x = jnp.arange(3.0) - k
        n = float(np.sum(np.asarray(x) > 0))
        np.testing.assert_allclose(np.asarray(gi(x)), 2 * n * np.ones(3))
    gc = pyjax.grad(lambda x: lax.cond(x > 0, lambda: x * 2, lambda: -x))
    assert [float(gc(v)) for v in (1.0, -1.0, 2.0, 3.0, -2.0)] == [2.0, -1.0, 2.0, 2.0, -1.0]
    gk = pyjax.grad(lambda x, scale=1.0: jnp.sum(x * scale))
    assert [float(gk(jnp.ones(2), scale=s)[0]) for s in (2.0, 2.0, 2.0, 3.0, 2.0, -0.0)] == [
        2.0, 2.0, 2.0, 3.0, 2.0, -0.0]
    assert math.copysign(1.0, float(gk(jnp.ones(2), scale=-0.0)[0])) == -1.0
    gx = pyjax.grad(lambda x: jnp.sin(x) * 2.0)
    for x64 in (False, True, True, True, False):  # the x64 flag is part of a record's key
        pyjax.config.update("jax_enable_x64", x64)
        assert gx(np.float64(0.5)).dtype == (np.float64 if x64 else np.float32)


def test_custom_vjp_bwd_runs_eagerly_every_time():
    seen = []

    @pyjax.custom_vjp
    def f(x):
        return x * 2.0

    def bwd(res, ct):
        seen.append(float(ct))  # needs a concrete cotangent: never compiled away
        return (ct * 5.0,)
    f.defvjp(lambda x: (f(x), None), bwd)
    for _ in range(3):
        assert float(pyjax.grad(lambda x: f(x) * 3.0)(1.0)) == 15.0
    assert seen == [3.0, 3.0, 3.0]


# Read by tests/lax/test_registry.py.
TESTED_PRIMITIVES = {"stop_gradient"}  # test_stop_gradient
JVP_TESTED = {"jit"}  # grad and jvp of jitted functions against closed forms and differences
