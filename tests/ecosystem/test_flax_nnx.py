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
