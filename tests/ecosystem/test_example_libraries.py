"""jax.example_libraries: stax layers against NumPy, optimizers against their formulas."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.example_libraries import optimizers as O
from pyjax.example_libraries import stax
from tests.ecosystem import numpy_reference as ref

KEY = pyjax.random.PRNGKey(0)


def test_dense_conv_pool_serial_against_numpy():
    init, apply = stax.serial(stax.Conv(3, (3, 3), padding="SAME"), stax.Relu,
                              stax.AvgPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(4),
                              stax.LogSoftmax)
    x = np.random.RandomState(0).randn(2, 4, 4, 2).astype(np.float32)
    out_shape, params = init(KEY, x.shape)
    out = np.asarray(apply(params, x))
    assert out_shape == out.shape == (2, 4)
    (w, b), _, _, _, (wd, bd), _ = [tuple(np.asarray(a) for a in p) for p in params]
    h = np.maximum(ref.conv_same(x, w) + b, 0)
    h = h.reshape(2, 2, 2, 2, 2, 3).mean(axis=(2, 4)).reshape(2, -1) @ wd + bd
    want = h - np.log(np.exp(h).sum(-1, keepdims=True))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_maxpool_batchnorm_dropout_and_fan_layers():
    x = np.random.RandomState(1).randn(2, 4, 4, 3).astype(np.float32)
    init, apply = stax.MaxPool((2, 2), strides=(2, 2))
    assert init(KEY, x.shape)[0] == (2, 2, 2, 3)
    np.testing.assert_allclose(apply((), x), x.reshape(2, 2, 2, 2, 2, 3).max(axis=(2, 4)))
    init, apply = stax.BatchNorm()
    _, (beta, gamma) = init(KEY, x.shape)
    want = (x - x.mean((0, 1, 2))) / np.sqrt(x.var((0, 1, 2)) + 1e-5)
    np.testing.assert_allclose(apply((beta + 1, gamma * 2), x), 2 * want + 1, rtol=1e-4, atol=1e-4)
    _, apply = stax.Dropout(0.25)  # stax's rate is the probability of keeping a unit
    d = np.asarray(apply((), jnp.ones(4000), rng=KEY))
    assert set(np.unique(d)) == {0.0, 4.0} and 900 < (d != 0).sum() < 1100
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), jnp.ones(3))
    init, apply = stax.serial(stax.FanOut(3), stax.parallel(stax.Identity, stax.Exp, stax.Tanh),
                              stax.FanInConcat(axis=-1))
    v = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    shape, params = init(KEY, v.shape)
    assert shape == (2, 9)
    np.testing.assert_allclose(apply(params, v), np.concatenate([v, np.exp(v), np.tanh(v)], -1),
                               rtol=1e-6)
    _, apply = stax.serial(stax.FanOut(2), stax.FanInSum)
    np.testing.assert_allclose(apply([(), ()], v), 2 * v)


def test_stax_mlp_trained_with_optimizers_adam():
    init, apply = stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(1))
    rng = np.random.RandomState(2)
    x = rng.randn(16, 3).astype(np.float32)
    y = np.sin(x.sum(1, keepdims=True)).astype(np.float32)
    _, params = init(KEY, x.shape)
    (w1, b1), _, (w2, b2) = params
    p_np = {"w1": np.asarray(w1), "b1": np.asarray(b1), "w2": np.asarray(w2), "b2": np.asarray(b2)}
    opt_init, opt_update, get_params = O.adam(1e-2)

    @pyjax.jit
    def step(i, state):
        loss, g = pyjax.value_and_grad(lambda p: jnp.mean((apply(p, x) - y) ** 2))(get_params(state))
        return opt_update(i, g, state), loss

    state, losses = opt_init(params), []
    for i in range(10):
        state, loss = step(i, state)
        losses.append(float(loss))
    np.testing.assert_allclose(losses, ref.train(ref.adam(1e-2), p_np, x, y, 10), rtol=2e-5, atol=1e-6)


def _np_steps(kind, x, grads, lr=0.1):
    """The optimizers' update formulas in NumPy (float64)."""
    st = {}
    for i, g in enumerate(grads):
        if kind == "momentum":
            st["v"] = 0.9 * st.get("v", 0) + g
            x = x - lr * st["v"]
        elif kind == "nesterov":
            st["v"] = 0.9 * st.get("v", 0) + g
            x = x - lr * (0.9 * st["v"] + g)
        elif kind == "adagrad":
            st["s"] = st.get("s", 0) + g ** 2
            st["m"] = 0.1 * g / np.sqrt(st["s"]) + 0.9 * st.get("m", 0)
            x = x - lr * st["m"]
        elif kind == "rmsprop":
            st["a"] = 0.9 * st.get("a", 0) + 0.1 * g ** 2
            x = x - lr * g / np.sqrt(st["a"] + 1e-8)
        elif kind == "adamax":
            st["m"] = 0.1 * g + 0.9 * st.get("m", 0)
            st["u"] = np.maximum(0.999 * st.get("u", 0), np.abs(g))
            x = x - lr / (1 - 0.9 ** (i + 1)) * st["m"] / (st["u"] + 1e-8)
        elif kind == "sm3":
            rows, cols = st.get("r", np.zeros(x.shape[0])), st.get("c", np.zeros(x.shape[1]))
            acc = np.minimum(rows[:, None], cols[None, :]) + g ** 2
            st["m"] = 0.1 * g / np.sqrt(acc) + 0.9 * st.get("m", 0)
            st["r"], st["c"] = acc.max(1), acc.max(0)
            x = x - lr * st["m"]
    return x


@pytest.mark.parametrize("kind", ["momentum", "nesterov", "adagrad", "rmsprop", "adamax", "sm3"])
def test_optimizer_formulas(kind):
    opt = {"momentum": O.momentum(0.1, 0.9), "nesterov": O.nesterov(0.1, 0.9),
           "adagrad": O.adagrad(0.1), "rmsprop": O.rmsprop(0.1), "adamax": O.adamax(0.1),
           "sm3": O.sm3(0.1)}[kind]
    rng = np.random.RandomState(3)
    x0 = rng.randn(2, 3)
    grads = [rng.randn(2, 3) for _ in range(3)]
    init, update, get_params = opt
    state = init({"x": jnp.asarray(x0, jnp.float32)})
    for i, g in enumerate(grads):
        state = update(i, {"x": jnp.asarray(g, jnp.float32)}, state)
    np.testing.assert_allclose(get_params(state)["x"], _np_steps(kind, x0, grads), rtol=1e-5, atol=1e-6)


def test_schedules_clipping_and_state_packing():
    i = np.arange(6)
    np.testing.assert_allclose([O.exponential_decay(0.5, 2, 0.1)(k) for k in i], 0.5 * 0.1 ** (i / 2),
                               rtol=1e-6)
    np.testing.assert_allclose([O.inverse_time_decay(1.0, 2, 0.5, staircase=True)(k) for k in i],
                               1 / (1 + 0.5 * np.floor(i / 2)), rtol=1e-6)
    np.testing.assert_allclose([O.polynomial_decay(1.0, 4, 0.2, power=2)(k) for k in i],
                               (1 - np.minimum(i, 4) / 4) ** 2 * 0.8 + 0.2, rtol=1e-6)
    np.testing.assert_allclose([O.piecewise_constant([1, 3], [1.0, 0.5, 0.1])(k) for k in i],
                               [1.0, 1.0, 0.5, 0.5, 0.1, 0.1])
    with pytest.raises(ValueError, match="one shorter"):
        O.piecewise_constant([1, 3], [1.0, 0.5])
    g = {"a": jnp.array([3.0, 0.0]), "b": jnp.array([[4.0]])}
    assert float(O.l2_norm(g)) == pytest.approx(5.0)
    clipped = O.clip_grads(g, 1.0)
    np.testing.assert_allclose(clipped["a"], [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(O.clip_grads(g, 10.0)["b"], [[4.0]])
    init, update, get_params = O.momentum(0.1, 0.9)
    state = update(0, g, init(g))
    again = O.pack_optimizer_state(O.unpack_optimizer_state(state))
    assert pyjax.tree_util.tree_structure(again) == pyjax.tree_util.tree_structure(state)
    np.testing.assert_allclose(get_params(again)["a"], get_params(state)["a"])
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(1, {"a": g["a"]}, state)
