"""The CPU lowering of ``dot_general`` with a right operand contracted on its minor dimension,
captured by a loop body (``g @ W.T`` in a ``scan``): it transposes ``W`` physically so XLA
hoists the copy and runs the fast dot (lax/dot.py, docs/performance.md). Checked here: where the
rewrite applies and where not, and that values, gradients and ``vmap`` are unchanged."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads

M, K, N, L = 16, 8, 5, 3  # M >= the rewrite's minimum number of lhs rows
NT = (((1,), (1,)), ((), ()))  # x (m, k) . W (n, k) -> (m, n)


def _rng():
    return np.random.default_rng(0)


def _scan_nt(xs, w, dims=NT):
    """sum over t of tanh(dot_general(xs[t], w)), W captured by the scan body."""
    out_shape = lax.dot_general(xs[0], w, dims).shape

    def body(c, x):
        return c + jnp.tanh(lax.dot_general(x, w, dims)), None
    return lax.scan(body, jnp.zeros(out_shape, xs.dtype), xs)[0]


def _np_scan_nt(xs, w, contract_lhs=1):
    out = 0
    for x in xs:
        out = out + np.tanh(np.tensordot(x, w, axes=([contract_lhs], [1])))
    return out


scan_nt = pyjax.jit(_scan_nt, static_argnums=2)


def _text(f, *args):
    return pyjax.jit(f).lower(*args).as_text()


def test_rewrite_applies_only_to_a_captured_rhs_in_a_loop_body():
    xs = np.ones((L, M, K), np.float32)
    w = np.ones((N, K), np.float32)
    assert "optimization_barrier" in _text(_scan_nt, xs, w)
    # top level: the plain dot (the copy would cost what it saves)
    top = _text(lambda x, w: lax.dot_general(x, w, NT), xs[0], w)
    assert "optimization_barrier" not in top and "stablehlo.transpose" not in top
    # W made inside the body is not loop-invariant: no copy per trip
    inner = _text(lambda xs, w: lax.scan(
        lambda c, x: (c + lax.dot_general(x, w * c[0, 0], NT), None),
        jnp.ones((M, N), np.float32), xs)[0], xs, w)
    assert "optimization_barrier" not in inner
    # matrix-vector products gain nothing: left alone
    vec = _text(lambda xs, w: lax.scan(lambda c, x: (c + x @ w.T, None),
                                       jnp.zeros((N,), np.float32), xs)[0], xs[:, 0], w)
    assert "optimization_barrier" not in vec


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_values_match_numpy(dtype):
    rng = _rng()
    xs = rng.standard_normal((L, M, K)).astype(dtype)
    w = rng.standard_normal((N, K)).astype(dtype)
    if dtype == np.int32:  # exact: compare the dots themselves, not through tanh
        f = pyjax.jit(lambda xs, w: lax.scan(
            lambda c, x: (c + lax.dot_general(x, w, NT), None),
            jnp.zeros((M, N), np.int32), xs)[0])
        np.testing.assert_array_equal(np.asarray(f(xs, w)), sum(x @ w.T for x in xs))
        return
    if dtype == np.complex64:
        xs = xs + 1j * rng.standard_normal(xs.shape).astype(np.float32)
    np.testing.assert_allclose(np.asarray(scan_nt(xs, w)), _np_scan_nt(xs, w),
                               rtol=1e-5, atol=1e-5)


def test_lhs_contracted_on_its_major_dimension_and_rank_3_lhs():
    rng = _rng()
    w = rng.standard_normal((N, K)).astype(np.float32)
    xs_t = rng.standard_normal((L, K, M)).astype(np.float32)  # lhs (k, m): both "transposed"
    got = scan_nt(xs_t, w, (((0,), (1,)), ((), ())))
    np.testing.assert_allclose(np.asarray(got), _np_scan_nt(xs_t, w, 0), rtol=1e-5, atol=1e-5)
    xs3 = rng.standard_normal((L, 2, K, 8)).astype(np.float32)  # lhs (2, k, 8), 16 rows
    got = scan_nt(xs3, w, (((1,), (1,)), ((), ())))
    np.testing.assert_allclose(np.asarray(got), _np_scan_nt(xs3, w, 1), rtol=1e-5, atol=1e-5)


def test_cond_branch_capturing_w():
    rng = _rng()
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    f = pyjax.jit(lambda p, x: lax.cond(p, lambda x: x @ w.T, lambda x: -(x @ w.T), x))
    np.testing.assert_allclose(np.asarray(f(True, x)), x @ w.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(f(False, x)), -(x @ w.T), rtol=1e-5, atol=1e-5)


def test_grads(x64):
    rng = _rng()
    xs = rng.standard_normal((L, M, K))
    w = rng.standard_normal((N, K)) / 3
    check_grads(_scan_nt, (xs, w), order=1, modes=("fwd", "rev"), rtol=1e-6, atol=1e-6)
    # the RNN pattern: the backward loop runs g @ W.T with W captured
    h0 = rng.standard_normal((M, N)) / 3
    wh = rng.standard_normal((N, N)) / 3

    def rnn(h0, wh, xs):
        def cell(h, x):
            h = jnp.tanh(h @ wh + x[:, :N])
            return h, h
        return jnp.sum(lax.scan(cell, h0, xs)[1] ** 2)
    check_grads(rnn, (h0, wh, xs), order=1, modes=("rev",), rtol=1e-6, atol=1e-6)


def test_vmap_matches_a_loop():
    rng = _rng()
    xs = rng.standard_normal((2, L, M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    got = pyjax.vmap(_scan_nt, in_axes=(0, None))(xs, w)
    want = np.stack([np.asarray(_scan_nt(x, w)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
    ws = rng.standard_normal((2, N, K)).astype(np.float32)  # W batched: a batch dimension
    got = pyjax.vmap(_scan_nt)(xs, ws)
    want = np.stack([_np_scan_nt(x, wi) for x, wi in zip(xs, ws)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
