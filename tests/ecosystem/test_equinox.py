"""equinox under pyjax: eqx.nn.MLP forward against NumPy, a model trained with filter_jit,
filter_value_and_grad and optax against the NumPy reference, eqx.Module trees."""
import numpy as np
import pytest

from tests.ecosystem import numpy_reference as ref
from tests.ecosystem.conftest import import_library


@pytest.fixture(scope="module")
def eqx():
    import_library("optax")
    return import_library("equinox")


def test_mlp_trained_with_filter_jit_and_optax(eqx):
    import jax
    import jax.numpy as jnp
    import optax

    mlp = eqx.nn.MLP(3, 1, 8, 1, activation=jnp.tanh, key=jax.random.PRNGKey(0))
    rng = np.random.RandomState(4)
    x = rng.randn(16, 3).astype(np.float32)
    y = np.sin(x.sum(1, keepdims=True)).astype(np.float32)
    l0, l1 = mlp.layers
    p_np = {"w1": np.asarray(l0.weight).T, "b1": np.asarray(l0.bias),
            "w2": np.asarray(l1.weight).T, "b2": np.asarray(l1.bias)}
    want_out = np.tanh(x @ p_np["w1"] + p_np["b1"]) @ p_np["w2"] + p_np["b2"]
    np.testing.assert_allclose(jax.vmap(mlp)(x), want_out, rtol=1e-5, atol=1e-6)

    tx = optax.adam(1e-2)

    @eqx.filter_jit
    def step(model, state):
        loss, g = eqx.filter_value_and_grad(
            lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2))(model)
        updates, state = tx.update(g, state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), state, loss

    state, losses = tx.init(eqx.filter(mlp, eqx.is_array)), []
    for _ in range(10):
        mlp, state, loss = step(mlp, state)
        losses.append(float(loss))
    np.testing.assert_allclose(losses, ref.train(ref.adam(1e-2), p_np, x, y, 10), rtol=2e-5, atol=1e-6)


def test_module_trees_and_filter_grad(eqx):
    import jax
    import jax.numpy as jnp

    class Scale(eqx.Module):
        w: jax.Array
        name: str = eqx.field(static=True)

        def __call__(self, x):
            return self.w * x

    m = Scale(jnp.array([1.0, 2.0]), "s")
    assert [np.asarray(v).tolist() for v in jax.tree_util.tree_leaves(m)] == [[1.0, 2.0]]
    g = eqx.filter_grad(lambda m, x: jnp.sum(m(x) ** 2))(m, jnp.array([3.0, 4.0]))
    np.testing.assert_allclose(g.w, 2 * np.array([1.0, 2.0]) * np.array([3.0, 4.0]) ** 2)
    assert g.name == "s"
    m2 = eqx.tree_at(lambda t: t.w, m, jnp.zeros(2))
    np.testing.assert_array_equal(m2.w, [0.0, 0.0])
    with pytest.raises(Exception):  # modules are frozen
        m.w = jnp.zeros(2)
