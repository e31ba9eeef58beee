"""``pyjax.test_util.check_grads`` (and ``check_jvp``/``check_vjp``): silent for correct
derivatives in float32 and float64, AssertionError for wrong ones at the order and in the mode
where they are wrong."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads, check_jvp, check_vjp

@pytest.fixture(params=["float32", "float64"])
def dtype(request):
    if request.param == "float64":
        request.getfixturevalue("x64")
    return np.dtype(request.param)


def normal(dtype, *shape, seed=0):
    # seeded per call, so that a test's data don't depend on which tests ran before it
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def step(dtype):
    """A finite-difference step for ``dtype``: in float32 the default 1e-4 leaves a rounding
    error of ~1e-7 |f| / 1e-4, near the default tolerance for outputs of size ~1 or more."""
    return 1e-3 if dtype == np.float32 else None


# ---- correct derivatives pass ----

def test_tanh_to_third_order(dtype):
    check_grads(jnp.tanh, (dtype.type(0.7),), order=3)
    check_grads(jnp.tanh, (0.7,), order=3)  # a Python scalar argument


def test_two_array_arguments(dtype):
    def f(x, y):
        return jnp.sum(jnp.sin(x) * y) + x @ y
    check_grads(f, (normal(dtype, 4), normal(dtype, 4, seed=1)), order=2, eps=step(dtype))


def test_pytree_arguments_and_outputs(dtype):
    def f(p, x):
        h = jnp.tanh(x @ p["w"] + p["b"])
        return {"h": h, "norm": jnp.sum(h ** 2)}, jnp.exp(p["b"])
    params = {"w": normal(dtype, 3, 2), "b": normal(dtype, 2, seed=1)}
    check_grads(f, (params, normal(dtype, 5, 3, seed=2)), order=2, eps=step(dtype))


def test_jitted_and_control_flow(dtype):
    def f(w, xs):
        def step(h, x):
            h = jnp.tanh(w * h + x)
            return h, h ** 2
        h, ys = lax.scan(step, jnp.zeros_like(xs[0]), xs)
        return jnp.sum(ys) + lax.cond(h[0] > 0, jnp.sin, jnp.cos, h[1])
    args = (dtype.type(0.8), normal(dtype, 5, 2))
    check_grads(jax.jit(f), args, order=2, eps=step(dtype))


def test_custom_jvp_with_a_correct_rule(dtype):
    @jax.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))
    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] / (1 + jnp.exp(-p[0]))))
    check_grads(softplus, (normal(dtype, 3),), order=3)


def test_custom_vjp_reverse_mode(dtype):
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x) * x
    f.defvjp(lambda x: (f(x), x), lambda x, ct: (ct * (jnp.cos(x) * x + jnp.sin(x)),))
    check_grads(f, (normal(dtype, 3),), order=1, modes=("rev",))
    with pytest.raises(TypeError, match="custom_vjp"):  # no forward mode, as in JAX
        check_grads(f, (normal(dtype, 3),), order=1, modes=("fwd",))


def test_complex_holomorphic(x64):
    z = normal(np.float64, 3) + 1j * normal(np.float64, 3, seed=1)
    check_grads(lambda z: jnp.sin(z) * z + jnp.exp(z), (z,), order=2)


def test_forward_mode_only_where_reverse_mode_is_refused():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]
    check_grads(f, (1.1,), order=2, modes=("fwd",))
    with pytest.raises(ValueError, match="Reverse-mode"):
        check_grads(f, (1.1,), order=1, modes=("rev",))


# ---- wrong derivatives are caught ----

def sin_with_rule(rule):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)
    f.defjvp(lambda p, t: (jnp.sin(p[0]), rule(p[0]) * t[0]))
    return f


@pytest.mark.parametrize("mode,what", [("fwd", "JVP"), ("rev", "VJP")])
def test_wrong_first_derivative(dtype, mode, what):
    f = sin_with_rule(lambda x: 1.1 * jnp.cos(x))  # 10% off
    x = normal(dtype, 3)
    with pytest.raises(AssertionError, match=what):
        check_grads(f, (x,), order=1, modes=(mode,))
    check_grads(sin_with_rule(jnp.cos), (x,), order=1, modes=(mode,))


@pytest.mark.parametrize("mode,what", [("fwd", "JVP of JVP"), ("rev", "VJP of VJP")])
def test_wrong_second_derivative_only(dtype, mode, what):
    # sin's rule is right, but the cos it uses has a rule with the wrong sign: the first
    # derivative is correct and only the second is wrong.
    @jax.custom_jvp
    def bad_cos(x):
        return jnp.cos(x)
    bad_cos.defjvp(lambda p, t: (jnp.cos(p[0]), jnp.sin(p[0]) * t[0]))
    f = sin_with_rule(bad_cos)
    x = normal(dtype, 3)
    check_grads(f, (x,), order=1, modes=(mode,))
    with pytest.raises(AssertionError, match=what):
        check_grads(f, (x,), order=2, modes=(mode,))


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_wrong_derivative_in_the_second_argument(dtype, mode):
    @jax.custom_jvp
    def mul(x, y):
        return x * y
    mul.defjvp(lambda p, t: (p[0] * p[1], t[0] * p[1] + t[1] * p[0] * 1.05))
    with pytest.raises(AssertionError):
        check_grads(mul, (normal(dtype, 2), normal(dtype, 2, seed=1)), order=1,
                    modes=(mode,))


def test_wrong_custom_vjp(dtype):
    @jax.custom_vjp
    def f(x):
        return jnp.exp(x)
    f.defvjp(lambda x: (f(x), x), lambda x, ct: (ct * jnp.exp(x) * 0.95,))
    with pytest.raises(AssertionError, match="VJP"):
        check_grads(f, (normal(dtype, 3),), order=1, modes=("rev",))


# ---- tolerances, step size, the primal checks ----

def test_tolerances_scalar_and_per_dtype(x64):
    f = sin_with_rule(lambda x: (1 + 1e-3) * jnp.cos(x))  # off by 0.1%
    x = np.array([0.3, -1.2])
    with pytest.raises(AssertionError):
        check_grads(f, (x,), order=1)  # float64's default tolerance is 1e-5
    check_grads(f, (x,), order=1, atol=1e-2, rtol=1e-2)
    check_grads(f, (x,), order=1, atol={np.float64: 1e-2}, rtol={np.float64: 1e-2})
    with pytest.raises(AssertionError):  # a tolerance for another dtype doesn't apply
        check_grads(f, (x,), order=1, atol={np.float32: 1e-2}, rtol={np.float32: 1e-2})


def test_step_size_is_used(x64):
    x = np.array([0.3, -1.2])
    check_grads(jnp.sin, (x,), order=1)
    with pytest.raises(AssertionError):  # central differences err by ~eps^2/6 * |sin'''|
        check_grads(jnp.sin, (x,), order=1, eps=0.1)
    check_grads(jnp.sin, (x,), order=1, eps=0.1, atol=1e-2, rtol=1e-2)


def test_check_jvp_and_check_vjp_compare_primal_outputs(dtype):
    x = (normal(dtype, 3),)
    check_jvp(jnp.sin, lambda p, t: jax.jvp(jnp.sin, p, t), x)
    check_vjp(jnp.sin, lambda *p: jax.vjp(jnp.sin, *p), x)

    def shifted_jvp(p, t):
        out, t_out = jax.jvp(jnp.sin, p, t)
        return out + 1, t_out

    def shifted_vjp(*p):
        out, pullback = jax.vjp(jnp.sin, *p)
        return out + 1, pullback
    with pytest.raises(AssertionError, match="primal"):
        check_jvp(jnp.sin, shifted_jvp, x)
    with pytest.raises(AssertionError, match="primal"):
        check_vjp(jnp.sin, shifted_vjp, x)


def test_tangent_dtype_must_match_the_primal(x64):
    def f_jvp(p, t):
        out, t_out = jax.jvp(jnp.sin, p, t)
        return out, t_out.astype(np.float64)
    with pytest.raises(AssertionError, match="dtype"):
        check_jvp(jnp.sin, f_jvp, (np.ones(2, np.float32),))
