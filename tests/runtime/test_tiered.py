"""Tiered compilation (runtime/tiered.py): a long-compiling program runs first from a build
compiled at a low optimisation level, and the fully optimised build replaces it when the
background compile ends. The tiers agree to a few float32 ulps (not bit for bit: see
docs/first_call.md), only the full build is persisted, the flag turns it off, and a process
exits cleanly with a compile in flight."""
import gc
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.dispatch import compiler
from pyjax._src.runtime import disk_cache, tiered

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def tier_everything(monkeypatch):
    """Tiers every program with a matrix product (however small), with the flag on."""
    monkeypatch.setattr(compiler, "TIERED_MIN_OPS", 0)
    old = pyjax.config.read("pyjax_tiered_compilation")
    pyjax.config.update("pyjax_tiered_compilation", True)
    yield
    assert tiered.wait_for_upgrades(timeout=60)
    pyjax.config.update("pyjax_tiered_compilation", old)


def _entry(jitted):
    """The compiled entry of a jitted function called once."""
    (entry,) = jitted._cache.entries.values()
    return entry


def _mlp_grad(k):
    def loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = jnp.tanh(x @ w1 + b1) * k
        logits = h @ w2 + b2
        logp = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
        return -jnp.mean(jnp.sum(logp * y, axis=1))
    return pyjax.jit(pyjax.grad(loss))


def _mlp_args(rng):
    params = [(rng.normal(size=(24, 32)).astype(np.float32) * 0.3,
               rng.normal(size=32).astype(np.float32) * 0.1),
              (rng.normal(size=(32, 5)).astype(np.float32) * 0.3,
               rng.normal(size=5).astype(np.float32) * 0.1)]
    x = rng.normal(size=(16, 24)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[np.arange(16) % 5]
    return params, x, y


def _conv(x, w):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME")
    return jnp.sum(jnp.maximum(y, 0.0) * y, axis=(2, 3)) + jnp.tanh(x[:, :, 0, 0] @ w[:, :, 0, 0].T)


def _fma_chain(a, b):
    h = a @ b
    for _ in range(4):
        h = h * a[:, :8] + jnp.tanh(h) * 0.5
    return h


def _assert_ulp_close(low, full):
    """The documented tolerance between tiers: a few float32 ulps of the result's scale."""
    for lo, hi in zip(pyjax.tree.leaves(low), pyjax.tree.leaves(full)):
        lo, hi = np.asarray(lo), np.asarray(hi)
        assert lo.dtype == hi.dtype and lo.shape == hi.shape
        scale = float(np.max(np.abs(hi))) or 1.0
        np.testing.assert_allclose(lo, hi, rtol=2e-6, atol=8 * np.finfo(np.float32).eps * scale)


def test_low_and_full_tiers_agree(tier_everything):
    rng = np.random.default_rng(0)
    mlp_args = _mlp_args(rng)
    x = rng.normal(size=(2, 3, 6, 6)).astype(np.float32)
    w = rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
    a = rng.normal(size=(8, 8)).astype(np.float32)
    b = rng.normal(size=(8, 8)).astype(np.float32) * 0.3
    cases = [(_mlp_grad(1.25), mlp_args), (pyjax.jit(_conv), (x, w)),
             (pyjax.jit(_fma_chain), (a, b))]
    lows = []
    with tiered.hold():
        for f, args in cases:
            lows.append(f(*args))
            assert _entry(f).exe.tier == "low"
        assert tiered.pending() == len(cases)
        with pytest.raises(RuntimeError, match="inside tiered.hold"):
            tiered.wait_for_upgrades()  # would never return
    assert tiered.wait_for_upgrades(timeout=60)
    for (f, args), low in zip(cases, lows):
        assert _entry(f).exe.tier == "full"
        full = f(*args)
        _assert_ulp_close(low, full)
    # and both are right (NumPy oracle for the product chain)
    h = a @ b
    for _ in range(4):
        h = h * a[:, :8] + np.tanh(h) * 0.5
    np.testing.assert_allclose(np.asarray(lows[2]), h, rtol=1e-4, atol=1e-5)


def test_calls_racing_the_swap_stay_correct(tier_everything):
    """Calls from two threads while the full build is installed: every result is one of the
    two tiers' (no struct left pointing at freed code, no crash)."""
    a = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    f = pyjax.jit(_fma_chain)
    want = _fma_chain(a, a)  # eager: per-operation programs, not tiered
    results = []

    def loop():
        for _ in range(60):
            results.append(np.asarray(f(a, a)))

    f(a, a)
    threads = [threading.Thread(target=loop) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tiered.wait_for_upgrades(timeout=60)
    assert _entry(f).exe.tier == "full"
    for r in results + [np.asarray(f(a, a))]:
        _assert_ulp_close(r, want)


def test_flag_off_and_small_programs_compile_once(monkeypatch):
    a = np.ones((4, 4), np.float32)
    before = dict(tiered.stats)
    small = pyjax.jit(lambda u: u @ u + 1.0)  # below TIERED_MIN_OPS
    small(a)
    assert _entry(small).exe.tier == "full"
    monkeypatch.setattr(compiler, "TIERED_MIN_OPS", 0)
    pyjax.config.update("pyjax_tiered_compilation", False)
    try:
        off = pyjax.jit(lambda u: u @ u + 2.0)
        off(a)
        assert _entry(off).exe.tier == "full"
    finally:
        pyjax.config.update("pyjax_tiered_compilation", True)
    no_dot = pyjax.jit(lambda u: jnp.tanh(u) * 3.0)  # nothing for the low tier to save
    no_dot(a)
    assert _entry(no_dot).exe.tier == "full"
    assert tiered.stats["low"] == before["low"]


def test_user_compiler_options_are_not_tiered(tier_everything):
    f = pyjax.jit(lambda u: u @ u + 3.0,
                  compiler_options={"xla_backend_optimization_level": 2})
    f(np.ones((4, 4), np.float32))
    assert _entry(f).exe.tier == "full"


def test_only_the_full_tier_is_persisted(tier_everything, tmp_path):
    names = ("jax_compilation_cache_dir", "jax_enable_compilation_cache")
    old = {n: pyjax.config.read(n) for n in names}
    pyjax.config.update("jax_compilation_cache_dir", str(tmp_path))
    pyjax.config.update("jax_enable_compilation_cache", True)
    try:
        a = np.eye(4, dtype=np.float32)
        make = lambda: pyjax.jit(lambda u: u @ u + 4.5)  # noqa: E731
        with tiered.hold():
            f = make()  # kept: a program freed before its turn is not upgraded
            f(a)
            assert disk_cache.entries() == []  # the low tier is never stored
        assert tiered.wait_for_upgrades(timeout=60)
        assert len(disk_cache.entries()) == 1  # the full one is
        pyjax.clear_caches()
        loaded = tiered.stats["loaded_full"]
        g = make()
        np.testing.assert_array_equal(np.asarray(g(a)), a @ a + 4.5)
        assert _entry(g).exe.tier == "full"  # loaded from disk: no low tier
        assert tiered.stats["loaded_full"] == loaded + 1
    finally:
        for n, v in old.items():
            pyjax.config.update(n, v)


def test_freed_programs_are_not_upgraded(tier_everything):
    skipped = tiered.stats["skipped"]
    with tiered.hold():
        f = pyjax.jit(lambda u: u @ u + 5.5)
        f(np.ones((4, 4), np.float32))
        del f
        pyjax.clear_caches()
        gc.collect()
    assert tiered.wait_for_upgrades(timeout=60)
    assert tiered.stats["skipped"] == skipped + 1


EXIT_PROGRAM = textwrap.dedent("""
    import threading, time, numpy as np, pyjax, pyjax.numpy as jnp
    from pyjax._src.dispatch import compiler
    from pyjax._src.runtime import tiered
    from pyjax.test_util import count_xla_compiles
    compiler.TIERED_MIN_OPS = 0
    x = np.ones((8, 8), np.float32)
    with count_xla_compiles() as n:
        f = pyjax.jit(lambda a: jnp.tanh(a @ a) @ a)
        f(x).block_until_ready()
        assert tiered.wait_for_upgrades(60)
        # a worker thread ends just after it signals the upgrade: give it time to return
        deadline = time.monotonic() + 30
        while len(threading.enumerate()) > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        print("threads", len(threading.enumerate()), "compiles", n(), flush=True)
    keep = pyjax.jit(lambda a: jnp.sin(a @ a) @ a)
    keep(x).block_until_ready()
    print("pending", tiered.pending(), flush=True)  # and exits with that compile in flight
""")


def test_threads_end_and_exit_with_an_upgrade_in_flight():
    env = dict(os.environ, PYTHONPATH=ROOT, PYJAX_COMPILATION_CACHE="0",
               PYJAX_TIERED_COMPILATION="1")
    p = subprocess.run([sys.executable, "-c", EXIT_PROGRAM], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # the worker and warm-up threads end; the warm-up is not a user's compile
    assert "threads 1 compiles 2" in p.stdout
    assert "pending 1" in p.stdout


def test_warm_up_program_runs_its_product():
    # the warm-up swallows its errors (it is only a speed-up): check here that its program
    # compiles and computes on the installed plugin
    from pyjax._src.runtime.client import get_client
    (plain,) = (b.to_numpy() for b in tiered._warm_up_products(get_client("cpu")))
    a = np.ones((64, 64), np.float32)
    np.testing.assert_array_equal(plain, a @ a)
