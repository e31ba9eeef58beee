"""JAX 0.10.2 public names filled in late (the rest of the reference list): behaviour against
NumPy, finite differences and Python loops. The config flags among them are tested in
tests/core/test_config.py, jax.ffi in tests/test_ffi.py, the split/stack/tile primitives in
tests/lax/test_split_stack_tile.py."""
import threading
import time

import numpy as np
import pytest

import pyjax
import pyjax.experimental
import pyjax.numpy as jnp
from pyjax.test_util import check_grads, count_compiles


@pytest.fixture
def x64():
    prev = pyjax.config.jax_enable_x64
    pyjax.config.update("jax_enable_x64", True)
    yield
    pyjax.config.update("jax_enable_x64", prev)


def test_ds_dynamic_slices_read_and_update():
    x = np.arange(20).reshape(2, 10)
    get = pyjax.jit(lambda x, i: (x[:, pyjax.ds(i, 3)], x[1, pyjax.ds(i, 2, 3)],
                                  x[..., pyjax.ds(i, 4)]))
    a, b, c = get(x, 2)
    np.testing.assert_array_equal(a, x[:, 2:5])
    np.testing.assert_array_equal(b, x[1, 2:6:3])
    np.testing.assert_array_equal(c, x[:, 2:6])
    # a start past the end moves back, as lax.dynamic_slice: the slice keeps its size
    np.testing.assert_array_equal(get(x, 9)[0], x[:, 7:10])
    put = pyjax.jit(lambda x, i: x.at[:, pyjax.ds(i, 2, 2)].add(100))
    want = x.copy()
    want[:, 3:6:2] += 100
    np.testing.assert_array_equal(put(x, 3), want)
    assert pyjax.ds(None) == slice(None)
    assert pyjax.ds(4) == pyjax.ds(0, 4) and pyjax.ds(2, 3, 2) != pyjax.ds(2, 3)
    np.testing.assert_array_equal(jnp.asarray(x[0])[pyjax.ds(4)], x[0, :4])
    # vmap over the start, against a loop
    starts = np.array([0, 3, 8])
    got = pyjax.vmap(lambda i: jnp.asarray(x[0])[pyjax.ds(i, 2)])(starts)
    np.testing.assert_array_equal(got, [x[0, min(i, 8):min(i, 8) + 2] for i in starts])
    with pytest.raises(ValueError, match="size must be >= 0"):
        pyjax.ds(0, -1)


def test_fwd_and_bwd_reuses_one_compiled_backward(x64):
    def f(x, w):
        return jnp.sin(x @ w), jnp.sum(w)

    x, w = np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0, 1, 6).reshape(3, 2)
    fwd, bwd = pyjax.fwd_and_bwd(f, argnums=(0, 1), has_aux=True)
    ct = np.ones((2, 2))
    y, res, aux = fwd(x, w)
    np.testing.assert_allclose(y, np.sin(x @ w))
    assert float(aux) == w.sum()
    gx, gw = bwd(res, ct)
    np.testing.assert_allclose(gx, (np.cos(x @ w) * ct) @ w.T, rtol=1e-12)
    np.testing.assert_allclose(gw, x.T @ (np.cos(x @ w) * ct), rtol=1e-12)
    with count_compiles() as n:
        for k in range(3):
            y, res, _ = fwd(x + k, w)
            bwd(res, ct)
    assert n() == 0  # both compiled once, above
    fwd1, bwd1 = pyjax.fwd_and_bwd(lambda x, w: jnp.sum(jnp.sin(x @ w)), argnums=1,
                                   jitted=False)
    _, res = fwd1(x, w)
    np.testing.assert_allclose(bwd1(res, 1.0), x.T @ np.cos(x @ w), rtol=1e-12)
    check_grads(lambda w: bwd1(fwd1(x, w)[1], 1.0), (w,), order=1, modes=["rev"])
    with pytest.raises(ValueError, match="argnums must be distinct"):
        pyjax.fwd_and_bwd(f, argnums=(0, 0))


def test_make_user_context_retraces_on_change():
    ctx = pyjax.make_user_context(default_value=2.0)
    traces = []

    @pyjax.jit
    def f(x):
        traces.append(ctx.value)
        return x * ctx.value

    assert float(f(1.0)) == 2.0
    with ctx(5.0):
        assert ctx.value == 5.0 and float(f(1.0)) == 5.0
        assert float(f(1.0)) == 5.0  # a hit under the same value
    assert ctx.value == 2.0 and float(f(1.0)) == 2.0
    assert traces == [2.0, 5.0, 2.0]


def test_effects_barrier_after_an_io_callback():
    seen = []

    def slow(v):
        time.sleep(0.05)
        seen.append(int(v))

    f = pyjax.jit(lambda x: pyjax.experimental.io_callback(slow, None, x))
    f(np.int32(7))
    pyjax.effects_barrier()
    assert seen == [7]
    done = []
    t = threading.Thread(target=lambda: (f(np.int32(8)), pyjax.effects_barrier(),
                                         done.append(list(seen))))
    t.start()
    t.join()
    assert done == [[7, 8]]
