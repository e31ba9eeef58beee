"""flax.linen under pyjax: a Dense MLP trained with optax gives the NumPy reference's losses;
a CNN (Conv, BatchNorm, Dropout, avg_pool, Dense) gives NumPy's forward pass and JAX's
documented batch-statistics and dropout behaviour."""
import numpy as np
import pytest

from tests.ecosystem import numpy_reference as ref
from tests.ecosystem.conftest import import_library


@pytest.fixture(scope="module")
def nn():
    import_library("optax")
    return import_library("flax.linen")


def test_mlp_init_apply_and_adam_training(nn):
    import jax
    import jax.numpy as jnp
    import optax

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = nn.tanh(nn.Dense(8)(x))  # Dense_0 (flax numbers modules as they are built)
            return nn.Dense(1)(h)

    rng = np.random.RandomState(1)
    x = rng.randn(16, 3).astype(np.float32)
    y = np.cos(x.sum(1, keepdims=True)).astype(np.float32)
    model = MLP()
    params = model.init(jax.random.PRNGKey(0), jnp.asarray(x))["params"]
    p_np = {"w1": np.asarray(params["Dense_0"]["kernel"]), "b1": np.asarray(params["Dense_0"]["bias"]),
            "w2": np.asarray(params["Dense_1"]["kernel"]), "b2": np.asarray(params["Dense_1"]["bias"])}
    assert p_np["w1"].shape == (3, 8) and not p_np["b1"].any()  # zeros bias init
    want_out = np.tanh(x @ p_np["w1"] + p_np["b1"]) @ p_np["w2"] + p_np["b2"]
    np.testing.assert_allclose(model.apply({"params": params}, x), want_out, rtol=1e-5, atol=1e-6)

    tx = optax.adam(1e-2)

    @jax.jit
    def step(p, s):
        loss, g = jax.value_and_grad(lambda p: jnp.mean((model.apply({"params": p}, x) - y) ** 2))(p)
        u, s = tx.update(g, s, p)
        return optax.apply_updates(p, u), s, loss

    s, losses = tx.init(params), []
    for _ in range(10):
        params, s, loss = step(params, s)
        losses.append(float(loss))
    want = ref.train(ref.adam(1e-2), p_np, x, y, 10)
    np.testing.assert_allclose(losses, want, rtol=2e-5, atol=1e-6)


def test_cnn_batchnorm_dropout(nn):
    import jax

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train: bool):
            x = nn.Conv(4, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
            x = nn.avg_pool(nn.relu(x), (2, 2), strides=(2, 2))
            x = x.reshape((x.shape[0], -1))
            x = nn.Dropout(0.5, deterministic=not train)(x)
            return nn.Dense(2)(x)

    x = np.random.RandomState(0).randn(2, 6, 6, 1).astype(np.float32)
    model = CNN()
    v = model.init(jax.random.PRNGKey(0), x, train=False)
    p, bs = v["params"], v["batch_stats"]
    # eval mode: running statistics (initially mean 0, var 1), no dropout
    conv = ref.conv_same(x, np.asarray(p["Conv_0"]["kernel"])) + np.asarray(p["Conv_0"]["bias"])
    bn = conv / np.sqrt(1 + 1e-5) * np.asarray(p["BatchNorm_0"]["scale"]) + np.asarray(p["BatchNorm_0"]["bias"])
    r = np.maximum(bn, 0)
    pooled = r.reshape(2, 3, 2, 3, 2, 4).mean(axis=(2, 4)).reshape(2, -1)
    want = pooled @ np.asarray(p["Dense_0"]["kernel"]) + np.asarray(p["Dense_0"]["bias"])
    np.testing.assert_allclose(model.apply(v, x, train=False), want, rtol=1e-4, atol=1e-5)

    # train mode: batch statistics are used and the running ones move by 1 - momentum
    out, upd = model.apply(v, x, train=True, rngs={"dropout": jax.random.PRNGKey(3)},
                           mutable=["batch_stats"])
    new = upd["batch_stats"]["BatchNorm_0"]
    np.testing.assert_allclose(new["mean"], 0.1 * conv.mean(axis=(0, 1, 2)), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(new["var"], 0.9 + 0.1 * conv.var(axis=(0, 1, 2)), rtol=1e-4, atol=1e-6)
    assert out.shape == (2, 2)

    # Dropout alone: kept values scaled by 1 / (1 - rate), the rest zero, keys matter
    drop = nn.Dropout(0.5, deterministic=False)
    ones = np.ones((1000,), np.float32)
    d1 = np.asarray(drop.apply({}, ones, rngs={"dropout": jax.random.PRNGKey(0)}))
    d2 = np.asarray(drop.apply({}, ones, rngs={"dropout": jax.random.PRNGKey(1)}))
    assert set(np.unique(d1)) <= {0.0, 2.0} and 400 < (d1 == 0).sum() < 600
    assert (d1 != d2).any()
    with pytest.raises(Exception, match="dropout"):
        drop.apply({}, ones)  # no "dropout" rng given


def test_linen_scan_rnn_matches_a_python_loop(nn):
    import jax
    import jax.numpy as jnp

    class Cell(nn.Module):
        @nn.compact
        def __call__(self, c, x):
            h = nn.tanh(nn.Dense(4)(jnp.concatenate([c, x], -1)))
            return h, 2.0 * h

    class RNN(nn.Module):
        @nn.compact
        def __call__(self, c, xs):
            scan = nn.scan(Cell, variable_broadcast="params", split_rngs={"params": False},
                           in_axes=0, out_axes=0)
            return scan()(c, xs)

    xs = np.random.RandomState(0).randn(5, 2, 3).astype(np.float32)
    c0 = np.zeros((2, 4), np.float32)
    model = RNN()
    v = model.init(jax.random.PRNGKey(0), c0, xs)
    k = np.asarray(v["params"]["ScanCell_0"]["Dense_0"]["kernel"])
    b = np.asarray(v["params"]["ScanCell_0"]["Dense_0"]["bias"])
    assert k.shape == (7, 4)  # one set of weights, broadcast over the steps
    c, want = c0, []
    for x in xs:
        c = np.tanh(np.concatenate([c, x], -1) @ k + b)
        want.append(2 * c)
    cT, ys = jax.jit(model.apply)(v, c0, xs)
    np.testing.assert_allclose(cT, c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ys, np.stack(want), rtol=1e-5, atol=1e-6)
    g = jax.grad(lambda v: jnp.sum(model.apply(v, c0, xs)[1]))(v)
    assert g["params"]["ScanCell_0"]["Dense_0"]["kernel"].shape == (7, 4)
