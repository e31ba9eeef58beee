"""Turning a differentiated value into a Python or NumPy value.

As in JAX, ``float``, ``complex``, ``item()``, ``tolist()`` and ``__array__`` (``np.asarray``,
``np.array``, NumPy functions) of a value that carries a nonzero tangent raise
(``ConcretizationTypeError`` / ``TracerArrayConversionError``) instead of silently dropping its
derivative; values with a symbolic-zero tangent stay concrete. ``bool``, ``int`` and
``__index__`` take the concrete primal when there is one, as JAX's ``Tracer.__bool__`` and
``__int__`` do: Python control flow works under eager differentiation, and the functions those
conversions make of a value are piecewise constant, so dropping the tangent is the right
derivative (checked against finite differences below).
"""
import math

import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax import errors
from pyjax._src.core import trace as trace_mod
from pyjax.test_util import check_grads

CTE = errors.ConcretizationTypeError
TACE = errors.TracerArrayConversionError

# name -> (f: R^3 -> R using the conversion on a differentiated value, error type, text naming
# the conversion in the message)
CONVERSIONS = {
    "float": (lambda x: float(x[0]) * jnp.sum(x), CTE, "`float`"),
    "complex": (lambda x: jnp.real(complex(x[0]) * jnp.sum(x)), CTE, "`complex`"),
    "item": (lambda x: x[0].item() * jnp.sum(x), CTE, "item()"),
    "tolist": (lambda x: jnp.sum(jnp.asarray(x.tolist()) * x), CTE, "tolist()"),
    "np.asarray": (lambda x: jnp.sum(jnp.asarray(np.asarray(x)) * x), TACE, "__array__"),
    "np.array": (lambda x: jnp.sum(jnp.asarray(np.array(x)) * x), TACE, "__array__"),
    "np.sin": (lambda x: jnp.sum(jnp.asarray(np.sin(x)) * x), TACE, "__array__"),
}
X = np.array([0.5, 1.5, -2.0], np.float32)
XS = np.array([[0.5, 1.5, -2.0], [1.0, 0.25, 3.0]], np.float32)


def _raises(err, what, fun, *args, derivative=True):
    with pytest.raises(err) as e:
        fun(*args)
    msg = str(e.value)
    assert what in msg, msg
    if derivative:  # the message says why: a derivative would be dropped
        assert "differentiated" in msg and "derivative" in msg and "stop_gradient" in msg, msg
    assert trace_mod.is_eager()  # the failed transformation left no trace behind
    return e.value


def test_error_types_are_jax_s():
    assert issubclass(errors.TracerBoolConversionError, CTE)
    assert issubclass(errors.TracerIntegerConversionError, CTE)
    assert issubclass(CTE, TypeError) and issubclass(TACE, TypeError)
    assert not issubclass(TACE, CTE)


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_eager_grad_first_call_raises(name):
    f, err, what = CONVERSIONS[name]
    _raises(err, what, pyjax.grad(f), X)
    _raises(err, what, pyjax.value_and_grad(f), X)
    # the failed call recorded nothing that a later call could replay wrongly
    _raises(err, what, pyjax.grad(f), X + 1.0)


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_eager_grad_replayed_call_raises(name):
    conv, err, what = CONVERSIONS[name]
    state = {"convert": False}

    def f(x):
        y = jnp.sin(x) * x  # a derived value: the conversion asks the replay for it
        if state["convert"]:
            return conv(y)
        return jnp.sum(y * x)

    g = pyjax.grad(f)
    want = lambda x: 2 * x * np.sin(x) + x * x * np.cos(x)  # noqa: E731
    for k in range(3):  # records, then replays
        np.testing.assert_allclose(np.asarray(g(X + k)), want(X + k), rtol=1e-5)
    state["convert"] = True
    _raises(err, what, g, X + 3.0)
    _raises(err, what, g, X + 4.0)
    state["convert"] = False  # and the call site still gives right gradients afterwards
    for k in range(5, 7):
        np.testing.assert_allclose(np.asarray(g(X + k)), want(X + k), rtol=1e-5)


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_forward_linearize_and_vjp_raise(name):
    f, err, what = CONVERSIONS[name]
    _raises(err, what, pyjax.jvp, f, (X,), (np.ones(3, np.float32),))
    _raises(err, what, pyjax.linearize, f, X)
    _raises(err, what, pyjax.vjp, f, X)


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_jacobians_raise(name):
    f, err, what = CONVERSIONS[name]
    _raises(err, what, pyjax.jacfwd(f), X)
    _raises(err, what, pyjax.jacrev(f), X)
    _raises(err, what, pyjax.hessian(f), X)


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_abstract_values_raise_under_jit_and_vmap_of_grad(name):
    f, err, what = CONVERSIONS[name]
    _raises(err, what, pyjax.jit(pyjax.grad(f)), X, derivative=False)
    _raises(err, what, pyjax.grad(pyjax.jit(f)), X, derivative=False)
    _raises(err, what, pyjax.vmap(pyjax.grad(f)), XS, derivative=False)
    _raises(err, what, pyjax.grad(lambda x: jnp.sum(pyjax.vmap(f)(x))), XS, derivative=False)


def test_the_examples_of_the_issue():
    _raises(CTE, "`float`", pyjax.grad(lambda x: float(x) * x), 3.0)
    _raises(TACE, "__array__", pyjax.grad(lambda x: jnp.sum(np.asarray(x))), jnp.ones(3))
    _raises(CTE, "`float`", pyjax.grad(lambda x: x * math.sin(x)), 3.0)
    # a closed-over value of an outer grad keeps its derivative too
    _raises(CTE, "`float`", pyjax.grad(lambda x: pyjax.grad(lambda y: y * float(x))(1.0)), 3.0)
    _raises(CTE, "`float`", pyjax.grad(pyjax.grad(lambda x: x * float(x * x))), 3.0)


# ---- what stays concrete ----

def test_zero_tangent_values_stay_concrete():
    # a non-differentiated argument
    def f(x, n):
        return x * int(n) + x * float(n) + x * jnp.asarray(np.asarray(n)) + x * n.item()
    n = jnp.float32(2.0)
    g = pyjax.grad(f, argnums=0)
    for x in (1.5, 2.5, 3.5):  # first call and replays
        assert float(g(x, n)) == 8.0
    check_grads(lambda x: f(x, n), (1.5,), order=2)
    # values that do not depend on the differentiated input, and stop_gradient
    def h(x):
        c = jnp.cos(jnp.float32(0.5))
        s = lax.stop_gradient(x * x)
        k = jnp.argmax(x)  # an integer: no tangent
        return jnp.sum(x * float(c) + x * np.asarray(s) + x * float(k) + x * s.tolist()[0])
    x = np.array([0.5, 2.0], np.float32)
    want = math.cos(0.5) + x * x + 1.0 + x[0] ** 2
    for k in range(3):
        np.testing.assert_allclose(np.asarray(pyjax.grad(h)(x)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.jacrev(h)(x)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.jacfwd(h)(x)), want, rtol=1e-6)
    _, t = pyjax.jvp(h, (x,), (np.ones(2, np.float32),))
    np.testing.assert_allclose(float(t), want.sum(), rtol=1e-6)


def test_integer_inputs_with_float0_tangents_stay_concrete():
    def f(x, n):
        return x * float(n) ** 2 + x * np.asarray(n)
    t0 = np.zeros((), pyjax.dtypes.float0)
    out, t = pyjax.jvp(f, (2.0, 3), (1.0, t0))
    assert float(out) == 24.0 and float(t) == 12.0
    out, lin = pyjax.linearize(f, 2.0, 3)
    assert float(out) == 24.0 and float(lin(1.0, t0)) == 12.0


def _fd(f, x, eps=1e-3):
    x = np.float64(x)
    return (float(f(np.float32(x + eps))) - float(f(np.float32(x - eps)))) / (2 * eps)


def test_python_control_flow_on_comparisons():
    def f(x):
        y = x
        if x > 0:
            y = y * jnp.sin(x)
        else:
            y = y * y + 1.0
        n = 0
        while y < 10.0 and n < 50:  # a data-dependent Python loop (y > 0 grows)
            y = y * 2.0 + x * x
            n += 1
        return y
    g = pyjax.grad(f)
    for x in (0.7, 1.3, 2.1, -0.4, 0.9, -1.1):  # branch and trip count change between calls
        np.testing.assert_allclose(float(g(x)), _fd(f, x), rtol=2e-3)
    for x in (0.7, -0.4):
        check_grads(f, (x,), order=2, rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(float(pyjax.jacfwd(f)(x)), _fd(f, x), rtol=2e-3)
        np.testing.assert_allclose(float(pyjax.jacrev(f)(x)), _fd(f, x), rtol=2e-3)
        np.testing.assert_allclose(float(pyjax.hessian(f)(x)), _fd(g, x), rtol=2e-2)


def test_bool_int_and_index_take_the_primal_as_in_jax():
    # piecewise-constant functions of x: their derivative is zero, so the results are right
    def f(x):
        n = int(x)              # 2 at x = 2.5
        y = x * n + x * bool(x)
        for i in range(n):      # Python loop with a data-dependent trip count
            y = y + x ** (i + 2)
        return y + jnp.ones(5)[jnp.int32(n)] * x
    g = pyjax.grad(f)
    for x in (2.5, 2.25, 3.5, 1.75):
        np.testing.assert_allclose(float(g(x)), _fd(f, x), rtol=2e-3)
    check_grads(f, (2.5,), order=2, rtol=2e-2, atol=2e-2)
    # abstract values still raise JAX's subclasses
    with pytest.raises(errors.TracerIntegerConversionError):
        pyjax.jit(pyjax.grad(f))(2.5)
    with pytest.raises(errors.TracerBoolConversionError):
        pyjax.jit(pyjax.grad(lambda x: x * bool(x)))(2.5)


def test_a_failed_conversion_leaves_later_calls_right():
    f = lambda x: float(x) * x  # noqa: E731
    for _ in range(2):
        with pytest.raises(CTE):
            pyjax.grad(f)(3.0)
    assert float(pyjax.grad(lambda x: x * x)(3.0)) == 6.0
    assert float(jnp.sin(jnp.float32(0.0))) == 0.0
