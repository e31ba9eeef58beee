"""dot_product_attention against a NumPy loop over batches and heads (every option), its
gradients in float64, vmap against a loop, jit against eager; the scaled-matmul names refuse."""
import numpy as np
import pytest
import scipy.special as sp

import pyjax as jax
from pyjax import nn
from pyjax.test_util import check_grads

B, T, S, N, K, H = 2, 4, 5, 4, 2, 3


def reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None,
              kv_len=None, window=None):
    """Per batch and head, with explicit loops; masked logits are JAX's large negative."""
    b_, t_, n_, h_ = q.shape
    s_, k_ = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(h_) if scale is None else scale
    bias = np.broadcast_to(0. if bias is None else bias, (b_, n_, t_, s_))
    mask = np.broadcast_to(True if mask is None else mask, (b_, n_, t_, s_))
    out = np.zeros(q.shape)
    neg = -0.7 * np.finfo(np.float32).max
    for b in range(b_):
        for n in range(n_):
            kv_head = n // (n_ // k_)
            logits = q[b, :, n] @ k[b, :, kv_head].T * scale + bias[b, n]
            keep = mask[b, n].copy()
            for i in range(t_):
                for j in range(s_):
                    if is_causal and j > i:
                        keep[i, j] = False
                    if window is not None and not (i - window[0] <= j <= i + window[1]):
                        keep[i, j] = False
                    if q_len is not None and i >= q_len[b]:
                        keep[i, j] = False
                    if kv_len is not None and j >= kv_len[b]:
                        keep[i, j] = False
            logits = np.where(keep, logits, neg)
            out[b, :, n] = sp.softmax(logits, axis=-1) @ v[b, :, kv_head]
            if q_len is not None:
                out[b, q_len[b]:, n] = 0
    return out


@pytest.fixture(scope="module")
def qkv():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(B, T, N, H)).astype(np.float32),
            rng.normal(size=(B, S, K, H)).astype(np.float32),
            rng.normal(size=(B, S, K, H)).astype(np.float32))


def test_plain_and_grouped_query(qkv):
    q, k, v = qkv
    got = nn.dot_product_attention(q, k, v)
    assert got.shape == q.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), reference(q, k, v), rtol=1e-5, atol=1e-6)
    # multi-head (K == N) and unbatched (T, N, H) operands
    k4, v4 = np.repeat(k, 2, axis=2), np.repeat(v, 2, axis=2)
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q[0], k4[0], v4[0])),
                               reference(q[:1], k4[:1], v4[:1])[0], rtol=1e-5, atol=1e-6)


def test_every_option(qkv):
    q, k, v = qkv
    rng = np.random.default_rng(1)
    bias = rng.normal(size=(1, N, T, S)).astype(np.float32)
    mask = rng.uniform(size=(B, 1, T, S)) > 0.3
    q_len, kv_len = np.array([3, 4], np.int32), np.array([5, 2], np.int32)
    cases = [
        dict(bias=bias), dict(mask=mask), dict(scale=0.37), dict(is_causal=True),
        dict(q_len=q_len, kv_len=kv_len), dict(window=(1, 0)), dict(window=(2, 1)),
        dict(bias=bias, mask=mask, is_causal=True, q_len=q_len, kv_len=kv_len, scale=0.5),
    ]
    for case in cases:
        got = nn.dot_product_attention(
            q, k, v, bias=case.get("bias"), mask=case.get("mask"), scale=case.get("scale"),
            is_causal=case.get("is_causal", False), query_seq_lengths=case.get("q_len"),
            key_value_seq_lengths=case.get("kv_len"), local_window_size=case.get("window"),
            implementation="xla")
        np.testing.assert_allclose(np.asarray(got), reference(q, k, v, **case), rtol=1e-5,
                                   atol=1e-6, err_msg=str(sorted(case)))
    # an int window means (w, w)
    np.testing.assert_allclose(np.asarray(nn.dot_product_attention(q, k, v, local_window_size=1)),
                               reference(q, k, v, window=(1, 1)), rtol=1e-5, atol=1e-6)


def test_gradients_vmap_and_jit(qkv, x64):
    q, k, v = (a.astype(np.float64)[:1, :3] for a in qkv)
    # the softmax runs in float32 whatever the input dtype (as JAX), hence the wide step
    check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True),
                (q, k, v), order=1, modes=("rev",), eps=1e-2, rtol=2e-3, atol=2e-3)
    q, k, v = qkv
    f = jax.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True))
    loop = np.stack([reference(q[b:b + 1], k[b:b + 1], v[b:b + 1], is_causal=True)[0]
                     for b in range(B)])
    np.testing.assert_allclose(np.asarray(f(q, k, v)), loop, rtol=1e-5, atol=1e-6)
    vm = jax.vmap(lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True))(q, k, v)
    np.testing.assert_allclose(np.asarray(vm), loop, rtol=1e-5, atol=1e-6)


def test_half_precision_keeps_dtype(qkv):
    q, k, v = (a.astype(np.float16) for a in qkv)
    got = nn.dot_product_attention(q, k, v)
    assert got.dtype == np.float16
    np.testing.assert_allclose(np.asarray(got, np.float32),
                               reference(*(a.astype(np.float32) for a in (q, k, v))),
                               atol=5e-3)


def test_errors(qkv):
    q, k, v = qkv
    with pytest.raises(NotImplementedError, match="cudnn"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
    with pytest.raises(ValueError, match="implementation"):
        nn.dot_product_attention(q, k, v, implementation="flash")
    with pytest.raises(ValueError, match="multiple"):
        nn.dot_product_attention(q[:, :, :3], k, v)
    with pytest.raises(ValueError, match="rank"):
        nn.dot_product_attention(q[0, 0], k[0, 0], v[0, 0])
    with pytest.raises(ValueError, match="broadcast"):
        nn.dot_product_attention(q, k, v, bias=np.zeros((3, 3)))
    with pytest.raises(NotImplementedError, match="return_residual"):
        nn.dot_product_attention(q, k, v, return_residual=True)
    with pytest.raises(ValueError, match="3-D"):  # (tests/nn/test_scaled_matmul.py)
        nn.scaled_matmul(q, k, v, v)
