"""optax under pyjax: training an MLP with optax's optimizers gives the losses of the same
optimizer formulas written in NumPy (float64, hand-written backprop)."""
import numpy as np
import pytest

from tests.ecosystem.conftest import import_library


IN, HID, N, STEPS = 3, 8, 16, 12


@pytest.fixture(scope="module")
def lib():
    return import_library("optax")


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(N, IN).astype(np.float32)
    y = np.sin(x.sum(1, keepdims=True)).astype(np.float32)
    params = {"w1": (rng.randn(IN, HID) * 0.5).astype(np.float32),
              "b1": np.zeros(HID, np.float32),
              "w2": (rng.randn(HID, 1) * 0.5).astype(np.float32),
              "b2": np.zeros(1, np.float32)}
    return x, y, params


def _np_loss_grad(p, x, y):
    h = np.tanh(x @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    r = out - y
    loss = np.mean(r ** 2)
    dout = 2 * r / r.size
    dh = (dout @ p["w2"].T) * (1 - h ** 2)
    return loss, {"w1": x.T @ dh, "b1": dh.sum(0), "w2": h.T @ dout, "b2": dout.sum(0)}


def _np_train(update_fn, params):
    x, y, _ = _data()
    p = {k: v.astype(np.float64) for k, v in params.items()}
    state, losses = {}, []
    for t in range(STEPS):
        loss, g = _np_loss_grad(p, x, y)
        losses.append(loss)
        p = update_fn(t, p, g, state)
    return np.array(losses)


def _pyjax_train(opt):
    import jax
    import jax.numpy as jnp
    x, y, params = _data()

    def loss_fn(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    @jax.jit
    def step(p, s):
        loss, g = jax.value_and_grad(loss_fn)(p)
        u, s = opt.update(g, s, p)
        return optax_apply(p, u), s, loss

    optax_apply = import_library("optax").apply_updates
    p = jax.tree_util.tree_map(jnp.asarray, params)
    s = opt.init(p)
    losses = []
    for _ in range(STEPS):
        p, s, loss = step(p, s)
        losses.append(float(loss))
    return np.array(losses)


def _adam_np(lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, schedule=None, clip=None):
    def update(t, p, g, st):
        if clip is not None:
            norm = np.sqrt(sum(np.sum(v ** 2) for v in g.values()))
            if norm >= clip:
                g = {k: v / norm * clip for k, v in g.items()}
        st.setdefault("m", {k: 0 * v for k, v in p.items()})
        st.setdefault("v", {k: 0 * v for k, v in p.items()})
        rate = schedule(t) if schedule else lr
        out = {}
        for k in p:
            st["m"][k] = b1 * st["m"][k] + (1 - b1) * g[k]
            st["v"][k] = b2 * st["v"][k] + (1 - b2) * g[k] ** 2
            mh = st["m"][k] / (1 - b1 ** (t + 1))
            vh = st["v"][k] / (1 - b2 ** (t + 1))
            out[k] = p[k] - rate * (mh / (np.sqrt(vh) + eps) + wd * p[k])
        return out
    return update


def _sgd_momentum_np(lr, momentum):
    def update(t, p, g, st):
        st.setdefault("tr", {k: 0 * v for k, v in p.items()})
        for k in p:
            st["tr"][k] = g[k] + momentum * st["tr"][k]
        return {k: p[k] - lr * st["tr"][k] for k in p}
    return update


def _cosine(init, steps):
    return lambda t: init * 0.5 * (1 + np.cos(np.pi * min(t, steps) / steps))


def test_adam(lib):
    got = _pyjax_train(lib.adam(1e-2))
    want = _np_train(_adam_np(1e-2), _data()[2])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert got[-1] < got[0]


def test_adamw_cosine_clipping(lib):
    sched = lib.cosine_decay_schedule(init_value=5e-2, decay_steps=STEPS)
    opt = lib.chain(lib.clip_by_global_norm(0.5), lib.adamw(sched, weight_decay=1e-2))
    got = _pyjax_train(opt)
    want = _np_train(_adam_np(None, wd=1e-2, schedule=_cosine(5e-2, STEPS), clip=0.5),
                     _data()[2])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_sgd_momentum(lib):
    got = _pyjax_train(lib.sgd(0.1, momentum=0.9))
    want = _np_train(_sgd_momentum_np(0.1, 0.9), _data()[2])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
