"""Differential guard: random small programs (random_programs.py) run by pyjax eagerly, under
``jit``, ``vmap``, ``grad`` and ``lax.scan``, with NumPy operands and changing shapes, against
the same program run by NumPy (a Python loop for vmap and scan; central finite differences in
float64 for gradients). Each program is seeded: a failure prints its seed and its code."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

from .random_programs import random_program

SHAPES = [(3,), (4, 3), (2, 3, 2), (5,), (1, 4), (3, 1)]


def _program(seed, **kw):
    rng = np.random.default_rng(seed)
    shape = SHAPES[seed % len(SHAPES)]
    return rng, random_program(rng, shape, n_steps=int(rng.integers(2, 7)), **kw)


def _close(got, want, seed, prog, what, rtol=1e-4):
    got = np.asarray(got)
    want = np.asarray(want)
    msg = f"{what} differs from NumPy; seed {seed}, program:\n{prog}"
    assert got.shape == want.shape, msg + f"\nshapes {got.shape} vs {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=msg)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_random_programs_match_numpy(mode):
    for seed in range(24):
        rng, prog = _program(seed)
        x = rng.standard_normal(prog.shape).astype(np.float32)
        want = prog(np, x)
        if mode == "eager":
            got = prog(jnp, jnp.asarray(x))
        else:  # a NumPy operand straight into jit (one compilation per program and shape)
            got = jax.jit(lambda a: prog(jnp, a))(x)
        _close(got, want, seed, prog, mode)


def test_random_programs_under_vmap_match_a_loop():
    for seed in range(100, 115):
        rng, prog = _program(seed)
        xs = rng.standard_normal((3,) + prog.shape).astype(np.float32)
        want = np.stack([prog(np, xi) for xi in xs])
        f = jax.vmap(lambda a: prog(jnp, a))
        _close(f(xs) if seed % 2 else jax.jit(f)(xs), want, seed, prog, "vmap")


def test_random_programs_under_scan_match_a_loop():
    for seed in range(200, 212):
        rng, prog = _program(seed)
        xs = rng.standard_normal((4,) + prog.shape).astype(np.float32)
        out_shape = np.shape(prog(np, xs[0]))

        def body(carry, xi):
            y = prog(jnp, xi)
            return carry + y, jnp.sum(y)

        carry, ys = lax.scan(body, jnp.zeros(out_shape, jnp.float32), xs)
        want_ys = [prog(np, xi) for xi in xs]
        _close(carry, np.sum(want_ys, axis=0), seed, prog, "scan carry")
        _close(ys, [np.sum(y) for y in want_ys], seed, prog, "scan outputs")


def test_random_program_gradients_match_finite_differences(x64):
    for seed in range(300, 312):
        rng, prog = _program(seed, smooth_only=True)
        x = rng.standard_normal(prog.shape)
        w = rng.standard_normal(np.shape(prog(np, x)))  # a random cotangent

        def f(m, a):
            return m.sum(prog(m, a) * w)

        g = jax.grad(lambda a: f(jnp, a))
        got = g(x) if seed % 2 else jax.jit(g)(x)
        v = rng.standard_normal(prog.shape)  # directional derivative along v
        eps = 1e-6
        fd = (f(np, x + eps * v) - f(np, x - eps * v)) / (2 * eps)
        _close(np.sum(np.asarray(got) * v), fd, seed, prog, "grad . v", rtol=1e-5)
