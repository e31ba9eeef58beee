"""pyjax.nn.initializers: JAX's golden numbers, each initializer against its definition in
terms of pyjax.random (same key), the fans of variance_scaling, orthogonality, errors."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import random
from pyjax.nn import initializers as init


@pytest.fixture(scope="module")
def key():
    return random.key(0)


def test_golden_values_of_jax(key):
    np.testing.assert_allclose(
        np.asarray(init.glorot_normal()(key, (2, 3))),
        [[1.0468423, 1.2329134, -0.29671577], [-0.05394943, 0.12079362, -0.65617436]],
        rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(init.he_uniform()(key, (3, 2))),
        [[1.2661935, 1.3536283], [-0.47435132, -0.08861897], [0.19767512, -0.9461003]],
        rtol=1e-6)


def test_simple_initializers(key):
    shape = (3, 4)
    assert np.asarray(init.zeros(key, shape)).tolist() == np.zeros(shape).tolist()
    assert init.ones(key, shape, jnp.int8).dtype == np.int8
    np.testing.assert_array_equal(np.asarray(init.constant(2.5)(key, shape)), np.full(shape, 2.5))
    assert init.constant(1, dtype=jnp.int32)(key, (2,)).dtype == np.int32
    np.testing.assert_allclose(np.asarray(init.uniform(0.5)(key, shape)),
                               np.asarray(random.uniform(key, shape)) * np.float32(0.5))
    np.testing.assert_allclose(np.asarray(init.normal(0.3)(key, shape)),
                               np.asarray(random.normal(key, shape)) * np.float32(0.3))
    np.testing.assert_allclose(
        np.asarray(init.truncated_normal(2., lower=-1., upper=3.)(key, shape)),
        np.asarray(random.truncated_normal(key, -1., 3., shape)) * 2.)
    assert init.normal()(key, shape, jnp.bfloat16).dtype == jnp.bfloat16
    assert isinstance(init.normal(), init.Initializer)


@pytest.mark.parametrize("mode,distribution", [
    ("fan_in", "normal"), ("fan_out", "uniform"), ("fan_avg", "truncated_normal"),
    ("fan_geo_avg", "normal")])
def test_variance_scaling_definition(key, mode, distribution):
    shape = (3, 5, 2, 4)   # receptive field 3 * 5, in 2, out 4
    fan_in, fan_out = 15 * 2, 15 * 4
    denom = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
             "fan_geo_avg": np.sqrt(fan_in * fan_out)}[mode]
    var = np.float32(2.0 / denom)
    got = np.asarray(init.variance_scaling(2.0, mode, distribution)(key, shape))
    if distribution == "normal":
        want = np.asarray(random.normal(key, shape)) * np.sqrt(var)
    elif distribution == "uniform":
        want = np.asarray(random.uniform(key, shape, minval=-1)) * np.sqrt(3 * var)
    else:
        want = (np.asarray(random.truncated_normal(key, -2, 2, shape))
                * (np.sqrt(var) / np.float32(.87962566103423978)))
    np.testing.assert_allclose(got, want, rtol=2e-6)


def test_fans_follow_axes(key):
    # in_axis / out_axis / batch_axis change only the variance: compare ratios of samples
    shape = (2, 3, 4, 5)
    base = np.asarray(init.variance_scaling(1., "fan_in", "normal")(key, shape))
    other = np.asarray(init.variance_scaling(1., "fan_in", "normal", in_axis=(0, 1),
                                             out_axis=-1, batch_axis=2)(key, shape))
    # base: fan_in = 4 * (2*3); other: fan_in = 6 * 1
    np.testing.assert_allclose(other / base, np.sqrt(24 / 6), rtol=1e-5)
    out_fan = np.asarray(init.variance_scaling(1., "fan_out", "normal", out_axis=0)(key, shape))
    np.testing.assert_allclose(out_fan / base, np.sqrt(24 / (2 * 3 * 5 * 2 / 2)), rtol=1e-5)
    for a, b in [(init.xavier_uniform, init.glorot_uniform), (init.kaiming_normal,
                                                                 init.he_normal)]:
        np.testing.assert_array_equal(np.asarray(a()(key, (4, 3))), np.asarray(b()(key, (4, 3))))
    np.testing.assert_allclose(np.asarray(init.lecun_normal()(key, (4, 3))) * np.sqrt(2),
                               np.asarray(init.he_normal()(key, (4, 3))), rtol=1e-6)


def test_variance_scaling_statistics(key):
    w = np.asarray(init.he_normal()(key, (400, 300)), np.float64)
    assert abs(w.var() - 2 / 400) < 0.05 * 2 / 400
    assert np.abs(w).max() <= 2 * np.sqrt(2 / 400) / .87962566103423978 + 1e-6
    w = np.asarray(init.lecun_uniform()(key, (400, 300)), np.float64)
    assert abs(w.var() - 1 / 400) < 0.05 / 400
    c = np.asarray(init.glorot_uniform(dtype=jnp.complex64)(key, (200, 300)))
    assert c.dtype == np.complex64 and abs(np.mean(np.abs(c) ** 2) - 1 / 250) < 0.05 / 250
    c = np.asarray(init.glorot_normal()(key, (200, 300), jnp.complex64))
    assert abs(np.mean(np.abs(c) ** 2) - 1 / 250) < 0.05 / 250


def test_orthogonal(key):
    for shape, col in [((4, 6), -1), ((5, 2, 3), 0)]:   # wide, and tall with axis 0
        w = np.asarray(init.orthogonal(scale=2.0, column_axis=col)(key, shape), np.float64)
        assert w.shape == shape
        mat = np.moveaxis(w, col, -1).reshape(-1, shape[col])
        small = min(mat.shape)
        gram = mat.T @ mat if mat.shape[0] >= mat.shape[1] else mat @ mat.T
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)
    w = init.delta_orthogonal()(key, (3, 3, 2, 4))
    w = np.asarray(w, np.float64)
    centre = w[1, 1]
    np.testing.assert_allclose(centre @ centre.T, np.eye(2), atol=1e-5)
    w[1, 1] = 0
    assert not w.any()


def test_inside_jit(key):
    f = jax.jit(lambda k: init.glorot_uniform()(k, (3, 4)))
    np.testing.assert_array_equal(np.asarray(f(key)),
                                  np.asarray(init.glorot_uniform()(key, (3, 4))))


def test_errors(key):
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1., "fan_sum", "normal")
    with pytest.raises(ValueError, match="invalid distribution"):
        init.variance_scaling(1., "fan_in", "cauchy")
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_normal()(key, (3,))
    with pytest.raises(ValueError, match="2D"):
        init.orthogonal()(key, (3,))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(key, (3, 3))
    with pytest.raises(ValueError, match="fan_in"):
        init.delta_orthogonal()(key, (3, 3, 4, 2))
    with pytest.raises((TypeError, ValueError)):
        init.normal()(key, (2, -1))
