"""optax under pyjax: training an MLP with optax's optimizers gives the losses of the same
optimizer formulas written in NumPy (float64, hand-written backprop)."""
import numpy as np
import pytest

from tests.ecosystem import numpy_reference as ref
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


def _np_train(update_fn):
    x, y, params = _data()
    return ref.train(update_fn, params, x, y, STEPS)


def _pyjax_train(opt, pass_value=False):
    """Losses of STEPS jitted steps; with pass_value the loss goes to `update` as `value=`."""
    import jax
    import jax.numpy as jnp
    x, y, params = _data()

    def loss_fn(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    @jax.jit
    def step(p, s):
        loss, g = jax.value_and_grad(loss_fn)(p)
        extra = {"value": loss} if pass_value else {}
        u, s = opt.update(g, s, p, **extra)
        return optax_apply(p, u), s, loss

    optax_apply = import_library("optax").apply_updates
    p = jax.tree_util.tree_map(jnp.asarray, params)
    s = opt.init(p)
    losses = []
    for _ in range(STEPS):
        p, s, loss = step(p, s)
        losses.append(float(loss))
    return (np.array(losses), s) if pass_value else np.array(losses)


def test_adam(lib):
    got = _pyjax_train(lib.adam(1e-2))
    want = _np_train(ref.adam(1e-2))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert got[-1] < got[0]


def test_adamw_cosine_clipping(lib):
    sched = lib.cosine_decay_schedule(init_value=5e-2, decay_steps=STEPS)
    opt = lib.chain(lib.clip_by_global_norm(0.5), lib.adamw(sched, weight_decay=1e-2))
    got = _pyjax_train(opt)
    want = _np_train(ref.adam(None, wd=1e-2, schedule=ref.cosine(5e-2, STEPS), clip=0.5))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_sgd_momentum(lib):
    got = _pyjax_train(lib.sgd(0.1, momentum=0.9))
    want = _np_train(ref.sgd_momentum(0.1, 0.9))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_lamb(lib):
    got = _pyjax_train(lib.lamb(1e-2, weight_decay=1e-3))
    want = _np_train(ref.lamb(1e-2, wd=1e-3))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


def test_reduce_on_plateau_after_adam(lib):
    # rtol=0.1 asks for a 10% drop; with patience 2 and cooldown 1 the scale halves twice in
    # 12 steps, with every improvement test at least ~4% away from its threshold.
    kw = dict(factor=0.5, patience=2, rtol=0.1, cooldown=1)
    opt = lib.chain(lib.adam(5e-2), lib.contrib.reduce_on_plateau(**kw))
    got, state = _pyjax_train(opt, pass_value=True)
    ref_state = {}
    x, y, params = _data()
    want = ref.train(ref.reduce_on_plateau(ref.adam(5e-2), **kw), params, x, y, STEPS, ref_state)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    scales = ref_state["plateau"]["scales"]
    assert scales[-1] == 0.25 and scales[0] == 1.0  # the plateau rule did act, twice
    assert float(state[1].scale) == scales[-1]
