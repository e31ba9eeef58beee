"""pyjax.nn activations, logsumexp, softmax, standardize and one_hot against NumPy/SciPy
definitions, finite differences in float64, vmap against a loop and jit against eager."""
import numpy as np
import pytest
import scipy.special as sp

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import nn
from pyjax.test_util import check_grads

EDGE = np.array([-100., -20., -6., -3., -1.5, -1., -0.5, 0., 0.5, 1., 1.5, 3., 6., 20., 100.])
SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _softplus(x):
    return np.logaddexp(x, 0)


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": sp.expit,
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "softplus": _softplus,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "log_sigmoid": lambda x: -_softplus(-x),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * sp.expit(x),
    "swish": lambda x: x * sp.expit(x),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0))),
    "gelu": lambda x: x / 2 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "tanh": np.tanh,
    "identity": lambda x: x,
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_matches_definition(name):
    f, ref = getattr(nn, name), REFERENCES[name]
    x32 = EDGE.astype(np.float32)
    got = np.asarray(f(x32))
    assert got.dtype == np.float32
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, ref(EDGE), rtol=2e-6, atol=1e-6)
    # integer input is promoted to float, as JAX, except by the piecewise-linear ones
    keeps_int = name in ("identity", "relu", "hard_tanh")
    assert np.asarray(f(np.arange(3))).dtype == (np.int32 if keeps_int else np.float32)


def test_extreme_values_are_finite_and_correct():
    assert float(nn.softplus(100.)) == 100.0
    assert float(nn.log_sigmoid(-100.)) == -100.0
    assert float(nn.softplus(-100.)) == pytest.approx(np.exp(-100.), rel=1e-6)
    assert float(nn.log_sigmoid(100.)) == pytest.approx(-np.exp(-100.), rel=1e-6)
    assert float(nn.elu(1000.)) == 1000.0 and float(nn.selu(-1000.)) == pytest.approx(
        -SELU_S * SELU_A)


def test_gelu_exact_and_half_precision():
    x = EDGE[2:-2]
    np.testing.assert_allclose(np.asarray(nn.gelu(x.astype(np.float32), approximate=False)),
                               x * sp.ndtr(x), rtol=2e-6, atol=1e-6)
    assert nn.gelu(jnp.ones(3, jnp.bfloat16)).dtype == jnp.bfloat16
    assert nn.gelu(jnp.ones(3, jnp.float16), approximate=False).dtype == jnp.float16


def test_log1mexp():
    x = np.array([1e-6, 0.1, 0.6931, 0.6932, 1., 10., 50.])
    want = np.log1p(-np.exp(-x))  # accurate in float64 for x > 1e-6
    want[:2] = np.log(-np.expm1(-x[:2]))
    np.testing.assert_allclose(np.asarray(nn.log1mexp(x.astype(np.float32))), want, rtol=1e-5)


def test_glu_and_parameters():
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(nn.glu(x, axis=0 if False else -1)),
                               x[:, :2] * sp.expit(x[:, 2:]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.glu(x[:2], axis=0)),
                               x[:1] * sp.expit(x[1:2]), rtol=1e-6)
    with pytest.raises(ValueError, match="even"):
        nn.glu(x, axis=0)
    np.testing.assert_allclose(np.asarray(nn.leaky_relu(x, negative_slope=0.2)),
                               np.where(x >= 0, x, 0.2 * x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.elu(x, alpha=2.)),
                               np.where(x > 0, x, 2 * np.expm1(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.celu(x, alpha=0.5)),
                               np.maximum(x, 0) + 0.5 * np.expm1(np.minimum(x, 0) / 0.5),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.squareplus(x, b=1.)),
                               (x + np.sqrt(x * x + 1)) / 2, rtol=1e-6)


def test_kink_derivatives_are_jaxs():
    assert float(jax.grad(nn.relu)(0.)) == 0.0
    assert float(jax.grad(nn.relu)(2.)) == 1.0
    assert float(jax.grad(nn.relu6)(0.)) == 0.0
    assert float(jax.grad(nn.relu6)(6.)) == 0.0
    assert float(jax.grad(nn.relu6)(3.)) == 1.0
    assert float(jax.grad(nn.hard_tanh)(0.5)) == 1.0
    assert float(jax.grad(nn.softplus)(100.)) == 1.0
    assert float(jax.grad(nn.log_sigmoid)(-100.)) == 1.0


SMOOTH = ["sigmoid", "softplus", "log_sigmoid", "squareplus", "soft_sign", "silu", "mish",
          "elu", "celu", "selu", "gelu", "tanh", "log1mexp"]


def test_grads_in_float64(x64):
    # all functions at once (one compiled program per derivative), then the parameters
    x = np.array([-2.3, -0.7, 0.4, 1.9])
    smooth = jax.jit(lambda x: jnp.stack(
        [getattr(nn, n)(x) for n in SMOOTH if n != "log1mexp"]
        + [nn.log1mexp(jnp.abs(x) + 0.1), nn.gelu(x, approximate=False), jnp.tile(nn.glu(x), 2)]))
    check_grads(smooth, (x,), order=1)
    kinked = jax.jit(lambda x: jnp.stack([getattr(nn, n)(x) for n in (
        "relu", "relu6", "hard_sigmoid", "hard_silu", "hard_tanh", "leaky_relu",
        "sparse_plus", "sparse_sigmoid")]))
    check_grads(kinked, (np.array([-3.7, -0.6, 0.3, 1.4, 7.5]),), order=1)


def test_logsumexp_against_scipy():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 4)).astype(np.float32) * 30
    b = rng.uniform(0.1, 2, size=(3, 4)).astype(np.float32)
    for axis in (None, 0, 1, -1, (0, 1)):
        for keepdims in (False, True):
            np.testing.assert_allclose(np.asarray(nn.logsumexp(a, axis=axis, keepdims=keepdims)),
                                       sp.logsumexp(a, axis=axis, keepdims=keepdims), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logsumexp(a, axis=1, b=b)),
                               sp.logsumexp(a, axis=1, b=b), rtol=1e-6)
    # rows of -inf give -inf, not nan; a row with +inf gives +inf
    rows = np.array([[-np.inf, -np.inf], [1., -np.inf], [np.inf, 0.]], np.float32)
    np.testing.assert_array_equal(np.asarray(nn.logsumexp(rows, axis=1)),
                                  [-np.inf, 1., np.inf])


def test_logsumexp_sign_and_where():
    a = np.array([[0., 1.], [2., 2.]], np.float32)
    b = np.array([[1., -2.], [1., -1.]], np.float32)
    out, sign = nn.logsumexp(a, axis=1, b=b, return_sign=True)
    want, want_sign = sp.logsumexp(a, axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(sign), want_sign)
    # without return_sign a negative sum is nan, as JAX
    assert np.isnan(np.asarray(nn.logsumexp(a, axis=1, b=b))[0])
    where = np.array([[True, False], [True, True]])
    np.testing.assert_allclose(np.asarray(nn.logsumexp(a, axis=1, where=where)),
                               [0., 2 + np.log(2)], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(a, axis=1, where=where)),
                               [0., 2.], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(a)), np.log(np.mean(np.exp(a))),
                               rtol=1e-6)


def test_softmax_and_log_softmax():
    rng = np.random.default_rng(2)
    x = (rng.normal(size=(2, 3, 4)) * 40).astype(np.float32)
    for axis in (-1, 0, 1, (1, 2)):
        np.testing.assert_allclose(np.asarray(nn.softmax(x, axis=axis)),
                                   sp.softmax(x, axis=axis), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(np.asarray(nn.log_softmax(x, axis=axis)),
                                   sp.log_softmax(x, axis=axis), rtol=1e-5, atol=1e-4)
    where = rng.uniform(size=x.shape) > 0.3
    masked = np.where(where, x, -np.inf)
    want = sp.softmax(masked, axis=-1)
    np.testing.assert_allclose(np.asarray(nn.softmax(x, where=where)), want, atol=1e-6)
    got = np.asarray(nn.log_softmax(x, where=where))
    np.testing.assert_array_equal(got == -np.inf, ~where)
    np.testing.assert_allclose(got[where], sp.log_softmax(masked, axis=-1)[where], rtol=1e-5,
                               atol=1e-4)


def test_softmax_custom_derivative(x64):
    x = np.array([[0.3, -1.2, 2.0], [1.0, 0.5, -0.5]])
    check_grads(lambda x: nn.softmax(x), (x,), order=2)
    check_grads(lambda x: nn.softmax(x, axis=0), (x,), order=1)
    check_grads(lambda x: nn.log_softmax(x), (x,), order=1)
    check_grads(lambda x: nn.logsumexp(x, axis=1, b=np.array([1., 2., 3.])), (x,), order=1)
    where = np.array([[True, False, True], [True, True, True]])
    check_grads(lambda x: nn.softmax(x, where=where), (x,), order=1)
    # masked logits of -inf: JAX's rule keeps the derivative finite (y * (t - sum y t))
    g = jax.grad(lambda x: nn.softmax(x)[0])(np.array([1., -np.inf, 0.]))
    assert np.all(np.isfinite(np.asarray(g)))
    np.testing.assert_allclose(np.asarray(g)[[0, 2]], [0.19661193, -0.19661193], rtol=1e-7)


def test_standardize():
    rng = np.random.default_rng(3)
    x = rng.normal(2, 3, size=(4, 5)).astype(np.float32)
    for axis in (-1, 0):
        m, v = x.mean(axis, keepdims=True), x.var(axis, keepdims=True)
        np.testing.assert_allclose(np.asarray(nn.standardize(x, axis=axis)),
                                   (x - m) / np.sqrt(v + 1e-5), rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(x, mean=1., variance=4., epsilon=0.)),
                               (x - 1) / 2, rtol=1e-6)


def test_one_hot():
    x = np.array([[0, 2], [5, -1]])
    got = nn.one_hot(x, 3)
    assert got.dtype == np.float32 and got.shape == (2, 2, 3)
    np.testing.assert_array_equal(np.asarray(got), (x[..., None] == np.arange(3)).astype(float))
    got = nn.one_hot(x, 3, axis=0, dtype=jnp.int8)
    assert got.dtype == np.int8 and got.shape == (3, 2, 2)
    np.testing.assert_array_equal(np.asarray(got),
                                  np.moveaxis(x[..., None] == np.arange(3), -1, 0))
    with pytest.raises(TypeError, match="num_classes"):
        nn.one_hot(x, 2.5)
    with pytest.raises(TypeError, match="num_classes"):
        jax.jit(lambda n: nn.one_hot(x, n))(3)


def test_vmap_and_jit_agree_with_eager():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 5)).astype(np.float32)
    fns = [nn.gelu, nn.softmax, lambda v: nn.logsumexp(v), nn.standardize]
    for f in fns:
        eager = np.stack([np.asarray(f(row)) for row in x])
        np.testing.assert_allclose(np.asarray(jax.vmap(f)(x)), eager, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.jit(f)(x[0])), eager[0], rtol=1e-6,
                                   atol=1e-6)


def test_bad_input_errors():
    with pytest.raises(TypeError):
        nn.relu([1., 2.])
    with pytest.raises(ValueError):
        nn.softmax(np.ones(3), axis=2)
    with pytest.raises(ValueError):
        nn.logsumexp(np.ones((2, 3)), axis=(0, 0))
