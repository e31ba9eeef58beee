"""A randomized differential test of the whole execution path against NumPy.

Eager and jitted calls are interleaved with NumPy operands, temporaries that die right after
use (so device memory is freed and its addresses reused), and changing shapes and dtypes;
every result is compared with NumPy. It was written after eager ``jnp.dot`` returned stale
numbers: the CPU plugin's XNNPACK dot kept the packed right operand of the previous call
keyed by its address, so a new buffer at a freed one's address gave the old product.
"""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

# Large enough for the plugin's library dot kernels (128x256 @ 256x256 hit the stale-operand
# bug; smaller dots are emitted inline), small enough to run hundreds of calls quickly.
_SHAPES = [((128, 256), (256, 256)), ((64, 256), (256, 192)), ((128, 192), (192, 256))]
_DTYPES = [np.float32, np.float32, np.int32]


@jax.jit
def _jit_dot(a, b):
    return a @ b


@jax.jit
def _jit_affine(a, b, c):
    return jnp.tanh(a @ b) * 0.5 + c


@jax.jit
def _jit_grad_step(w, x):
    g = jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
    return w - 1e-3 * g


def _np_grad_step(w, x):
    h = np.tanh(x @ w)
    return (w - 1e-3 * (x.T @ (2 * h * (1 - h * h)))).astype(np.float32)


def _close(got, want, what):
    got = np.asarray(got)
    assert got.shape == want.shape, what
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * scale, err_msg=what)


def _operand(rs, shape, dtype, as_numpy):
    if dtype == np.int32:
        host = rs.randint(-3, 4, size=shape).astype(np.int32)
    else:
        host = rs.standard_normal(shape).astype(np.float32)
    return host, (host if as_numpy else jnp.asarray(host))


@pytest.mark.parametrize("seed", [0, 1])
def test_interleaved_calls_match_numpy(seed):
    rs = np.random.RandomState(seed)
    # a pool of long-lived weights that jitted steps replace (their old buffers die)
    weights = {}
    for i, (_, (k, n)) in enumerate(_SHAPES):
        host = (rs.standard_normal((k, n)) * 0.1).astype(np.float32)
        weights[i] = (host, jnp.asarray(host))
    for step in range(160):
        i = rs.randint(len(_SHAPES))
        (m, k), (_, n) = _SHAPES[i]
        dtype = _DTYPES[rs.randint(len(_DTYPES))]
        op = rs.randint(7)
        what = f"seed {seed} step {step} op {op} shapes {_SHAPES[i]} {np.dtype(dtype)}"
        a_host, a = _operand(rs, (m, k), dtype, as_numpy=rs.rand() < 0.5)
        if op == 0:    # eager jnp.dot of a (maybe NumPy) operand and a trained weight
            w_host, w = weights[i]
            if dtype == np.int32:
                a_host = a_host.astype(np.float32)
                a = a_host if type(a) is np.ndarray else jnp.asarray(a_host)
            _close(jnp.dot(a, w), a_host @ w_host, what)
        elif op == 1:  # a jitted training step replaces the weight
            w_host, w = weights[i]
            x_host = rs.standard_normal((m, k)).astype(np.float32)
            new = _jit_grad_step(w, x_host if rs.rand() < 0.5 else jnp.asarray(x_host))
            want = _np_grad_step(w_host, x_host)
            _close(new, want, what)
            weights[i] = (np.asarray(new), new)
        elif op == 2:  # eager matmul of two fresh temporaries
            b_host, b = _operand(rs, (k, n), dtype, as_numpy=rs.rand() < 0.5)
            _close(jnp.matmul(a, b), a_host @ b_host, what)
        elif op == 3:  # jitted dot of fresh temporaries
            b_host, b = _operand(rs, (k, n), dtype, as_numpy=False)
            _close(_jit_dot(a, b), a_host @ b_host, what)
        elif op == 4:  # the operator, with a Python scalar on the way
            b_host, b = _operand(rs, (k, n), dtype, as_numpy=False)
            s = 2 if dtype == np.int32 else 0.5
            got = (jnp.asarray(a) * s) @ b
            _close(got, (a_host * np.asarray(s, dtype)) @ b_host, what)
        elif op == 5:  # fused jitted function with three operands
            if dtype == np.int32:
                continue
            b_host, b = _operand(rs, (k, n), dtype, as_numpy=rs.rand() < 0.5)
            c_host, c = _operand(rs, (m, n), dtype, as_numpy=rs.rand() < 0.5)
            want = np.tanh(a_host @ b_host) * np.float32(0.5) + c_host
            _close(_jit_affine(a, b, c), want, what)
        else:          # eager elementwise and reductions
            got = jnp.sum(jnp.abs(a) + 1, axis=1)
            _close(got, (np.abs(a_host) + np.asarray(1, dtype)).sum(axis=1), what)
        del a  # the temporary dies now: its memory is free for the next step
