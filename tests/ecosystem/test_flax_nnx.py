"""flax.nnx under pyjax: an `nnx.Module` of `nnx.Linear` layers gives NumPy's forward pass and
gradients, `nnx.split`/`nnx.merge` round-trip it, and training with `nnx.Optimizer(model,
optax.adam, wrt=nnx.Param)` inside `nnx.jit` gives the NumPy reference's losses."""
import numpy as np
import pytest

from tests.ecosystem import numpy_reference as ref
from tests.ecosystem.conftest import import_library


@pytest.fixture(scope="module")
def nnx():
    import_library("optax")
    return import_library("flax.nnx")


def _mlp(nnx, seed):
    import jax

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(3, 8, rngs=rngs)
            self.l2 = nnx.Linear(8, 1, rngs=rngs)

        def __call__(self, x):
            return self.l2(jax.nn.tanh(self.l1(x)))

    return MLP(nnx.Rngs(seed))


def _data():
    rng = np.random.RandomState(1)
    x = rng.randn(16, 3).astype(np.float32)
    return x, np.cos(x.sum(1, keepdims=True)).astype(np.float32)


def _params(model):
    return {"w1": np.asarray(model.l1.kernel[...]), "b1": np.asarray(model.l1.bias[...]),
            "w2": np.asarray(model.l2.kernel[...]), "b2": np.asarray(model.l2.bias[...])}


def test_forward_grad_split_merge(nnx):
    import jax.numpy as jnp

    x, y = _data()
    model = _mlp(nnx, 0)
    p = _params(model)
    assert p["w1"].shape == (3, 8) and p["w2"].shape == (8, 1) and not p["b1"].any()
    want = np.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    np.testing.assert_allclose(model(x), want, rtol=1e-5, atol=1e-6)
    # another seed draws other weights
    assert not np.allclose(_params(_mlp(nnx, 1))["w1"], p["w1"])

    grads = nnx.grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
    _, want_g = ref.mlp_loss_grad({k: v.astype(np.float64) for k, v in p.items()}, x, y)
    np.testing.assert_allclose(grads["l1"]["kernel"][...], want_g["w1"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["l2"]["bias"][...], want_g["b2"], rtol=1e-4, atol=1e-6)

    graphdef, state = nnx.split(model)
    np.testing.assert_allclose(nnx.merge(graphdef, state)(x), want, rtol=1e-5, atol=1e-6)
    # merging a changed state gives a model with those weights
    state["l2"]["bias"][...] = state["l2"]["bias"][...] + 1.0
    np.testing.assert_allclose(nnx.merge(graphdef, state)(x), want + 1.0, rtol=1e-5, atol=1e-5)


def test_optimizer_adam_training_in_nnx_jit(nnx):
    import jax.numpy as jnp
    import optax

    x, y = _data()
    model = _mlp(nnx, 0)
    p0 = _params(model)
    opt = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

    @nnx.jit
    def step(model, opt, x, y):
        loss, g = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        opt.update(model, g)  # updates the model's parameters in place
        return loss

    losses = [float(step(model, opt, x, y)) for _ in range(10)]
    np.testing.assert_allclose(losses, ref.train(ref.adam(1e-2), p0, x, y, 10),
                               rtol=2e-5, atol=1e-6)
    assert int(opt.step[...]) == 10


def test_conv_batchnorm_dropout(nnx):
    import jax.numpy as jnp
    import optax

    class CNN(nnx.Module):
        def __init__(self, rngs):
            self.conv = nnx.Conv(1, 4, (3, 3), rngs=rngs)
            self.bn = nnx.BatchNorm(4, rngs=rngs)
            self.drop = nnx.Dropout(0.5, rngs=rngs)
            self.lin = nnx.Linear(4 * 6 * 6, 2, rngs=rngs)

        def __call__(self, x):
            x = nnx.relu(self.bn(self.conv(x)))
            return self.lin(self.drop(x.reshape(x.shape[0], -1)))

    x = np.random.RandomState(0).randn(2, 6, 6, 1).astype(np.float32)
    model = CNN(nnx.Rngs(0, dropout=1))
    model.eval()  # running statistics (mean 0, var 1), no dropout
    conv = ref.conv_same(x, np.asarray(model.conv.kernel[...])) + np.asarray(model.conv.bias[...])
    h = np.maximum(conv / np.sqrt(1 + 1e-5), 0).reshape(2, -1)
    want = h @ np.asarray(model.lin.kernel[...]) + np.asarray(model.lin.bias[...])
    np.testing.assert_allclose(model(x), want, rtol=1e-4, atol=1e-5)

    model.train()
    drop = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=3))
    y = np.asarray(drop(jnp.ones(1000)))
    assert set(np.unique(y)) == {0.0, 2.0} and 400 < (y == 0).sum() < 600  # kept ones scaled 1/p
    opt = nnx.Optimizer(model, optax.sgd(1e-3), wrt=nnx.Param)

    @nnx.jit
    def step(model, opt, x):
        loss, g = nnx.value_and_grad(lambda m: jnp.mean(m(x) ** 2))(model)
        opt.update(model, g)
        return loss

    first = float(step(model, opt, x))
    # the step's forward pass moved the running mean toward the batch's (momentum 0.99)
    np.testing.assert_allclose(model.bn.mean[...], 0.01 * conv.mean(axis=(0, 1, 2)),
                               rtol=1e-4, atol=1e-6)
    assert np.isfinite(first) and np.isfinite(float(step(model, opt, x)))


def test_scan_over_vmapped_layers_with_per_layer_rngs(nnx):
    # nnx's prefix-tree helpers need key arrays to be pytree leaves, as in JAX
    import jax

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.linear = nnx.Linear(4, 4, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x):
            return jax.nn.tanh(self.dropout(self.linear(x)))

    @nnx.split_rngs(splits=3)
    @nnx.vmap(in_axes=(0,), out_axes=0)
    def make_stack(rngs):
        return Block(rngs)

    @nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry)
    def forward(block, x):
        return block(x)

    stack = make_stack(nnx.Rngs(0))
    rng_state = nnx.state(stack, nnx.RngState)
    kinds = jax.tree.map(lambda t: (t.shape, str(t.dtype)), rng_state)
    assert kinds["dropout"]["rngs"]["key"].get_value() == ((3,), "key<fry>")
    keys = jax.random.key_data(rng_state["dropout"]["rngs"]["key"].get_value())
    assert len({tuple(np.asarray(k)) for k in keys}) == 3  # one key per layer
    x = np.ones((2, 4), np.float32)
    stack.eval()
    w, b = np.asarray(stack.linear.kernel[...]), np.asarray(stack.linear.bias[...])
    h = x
    for i in range(3):
        h = np.tanh(h @ w[i] + b[i])
    np.testing.assert_allclose(np.asarray(forward(stack, x)), h, rtol=1e-5, atol=1e-6)
    stack.train()
    step = nnx.jit(forward)
    y1, y2 = np.asarray(step(stack, x)), np.asarray(step(stack, x))
    assert y1.shape == (2, 4) and np.isfinite(y1).all() and not np.allclose(y1, y2)
    counts = np.asarray(nnx.state(stack, nnx.RngState)["dropout"]["rngs"]["count"].get_value())
    np.testing.assert_array_equal(counts, [2, 2, 2])  # each layer drew twice
