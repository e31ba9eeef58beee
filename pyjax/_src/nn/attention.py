"""``jax.nn.dot_product_attention`` (the XLA implementation); the scaled-matmul names are
re-exported from ``scaled_matmul.py``.

Shapes follow JAX's letters: B batch, T query length, S key/value length, N query heads,
K key/value heads (N a multiple of K: grouped-query attention), H head size. Masked logits are
set to ``-0.7 * finfo.max`` (as JAX), not ``-inf``, so a fully masked row is uniform rather than
NaN; rows of padded queries (``query_seq_lengths``) are zeroed in the output.
"""
from __future__ import annotations

import numpy as np

from pyjax import lax
from pyjax import numpy as jnp
from pyjax._src.nn.functions import softmax
from pyjax._src.numpy.eager_compiled import compiled_when_eager
from pyjax._src.numpy.util import check_arraylike


def _large_negative(dtype):
    # a NumPy scalar, not an Array: it stays a literal of the program (an Array constant
    # becomes an argument of the compiled module that XLA cannot fold)
    return np.asarray(-0.7 * float(jnp.finfo(dtype).max), dtype)


def _ensure_4d(a):
    a = jnp.asarray(a)
    if a.ndim < 4:
        return jnp.reshape(a, (1,) * (4 - a.ndim) + a.shape)
    return a


def _check_heads(query, key, value):
    if key.shape != value.shape:
        raise ValueError("dot_product_attention: key and value must have the same shape, got "
                         f"{key.shape} and {value.shape}")
    B, T, N, H = query.shape
    if key.shape[0] != B or key.shape[3] != H:
        raise ValueError("dot_product_attention: query (B, T, N, H) and key (B, S, K, H) must "
                         f"agree in B and H, got {query.shape} and {key.shape}")
    K = key.shape[2]
    if K == 0 or N % K:
        raise ValueError("dot_product_attention: the number of query heads N must be a "
                         f"multiple of the key/value heads K, got N={N}, K={K}")


def _seq_lengths(name, lengths, B):
    if lengths is None:
        return None
    lengths = jnp.asarray(lengths)
    if lengths.shape != (B,) or not jnp.issubdtype(lengths.dtype, jnp.integer):
        raise ValueError(f"dot_product_attention: {name} must be an int array of shape ({B},), "
                         f"got {lengths.dtype}{list(lengths.shape)}")
    return lengths


def _window(local_window_size):
    if local_window_size is None:
        return None
    if isinstance(local_window_size, int):
        return (local_window_size, local_window_size)
    if (isinstance(local_window_size, tuple) and len(local_window_size) == 2
            and all(isinstance(w, int) for w in local_window_size)):
        return local_window_size
    raise ValueError("dot_product_attention: local_window_size must be an int or a pair "
                     f"(left, right) of ints, got {local_window_size!r}")


def _combined_mask(B, T, S, mask, is_causal, q_len, kv_len, window):
    """A boolean mask broadcastable to (B, N, T, S) (None if nothing is masked)."""
    masks = []
    if mask is not None:
        masks.append(jnp.asarray(mask).astype(bool))
    row = lax.broadcasted_iota(np.int32, (T, S), 0)
    col = lax.broadcasted_iota(np.int32, (T, S), 1)
    if is_causal:
        masks.append(col <= row)
    if window is not None:
        left, right = window
        masks.append((col >= row - left) & (col <= row + right))
    if q_len is not None:
        masks.append((jnp.arange(T, dtype=q_len.dtype)[None, :] < q_len[:, None])
                     [:, None, :, None])
    if kv_len is not None:
        masks.append((jnp.arange(S, dtype=kv_len.dtype)[None, :] < kv_len[:, None])
                     [:, None, None, :])
    if not masks:
        return None
    out = masks[0]
    for m in masks[1:]:
        out = out & m
    return out


@compiled_when_eager("is_causal", "window")
def _attention_xla(query, key, value, bias, mask, scale, is_causal, q_len, kv_len, window):
    B, T, N, H = query.shape
    S, K = key.shape[1], key.shape[2]
    G = N // K
    logits_dtype = jnp.promote_types(query.dtype, jnp.float32)
    q = jnp.reshape(query, (B, T, K, G, H))
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", q, key, preferred_element_type=logits_dtype)
    logits = jnp.reshape(logits, (B, N, T, S))
    logits = logits * (np.asarray(scale, logits.dtype)
                       if isinstance(scale, (int, float, np.number)) else
                       jnp.asarray(scale, logits.dtype))
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    combined = _combined_mask(B, T, S, mask, is_causal, q_len, kv_len, window)
    if combined is not None:
        # float32's large negative: the softmax runs in float32, where float64's would be -inf
        # (and a fully masked row NaN instead of uniform)
        logits = jnp.where(combined, logits, _large_negative(np.float32).astype(logits.dtype))
    probs = softmax(logits.astype(np.float32), axis=-1).astype(key.dtype)
    probs = jnp.reshape(probs, (B, K, G, T, S))
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, value)
    encoded = jnp.reshape(encoded, (B, T, N, H))
    if q_len is not None:
        keep = jnp.arange(T, dtype=q_len.dtype)[None, :] < q_len[:, None]
        encoded = encoded * keep[:, :, None, None].astype(encoded.dtype)
    return encoded


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """``softmax(Q K^T * scale + bias, masked) V`` per head.

    ``query``: (B, T, N, H) or (T, N, H); ``key``/``value``: (B, S, K, H) with N a multiple of
    K; ``bias`` and the boolean ``mask`` (True = attend) broadcast to (B, N, T, S); ``scale``
    defaults to ``1/sqrt(H)``; ``is_causal`` lets query ``i`` see keys ``j <= i``;
    ``local_window_size=(left, right)`` keys ``i - left <= j <= i + right``; the sequence
    lengths mask padding. ``implementation``: None or ``'xla'`` (``'cudnn'`` needs a GPU)."""
    if implementation not in (None, "xla", "cudnn"):
        raise ValueError(f"Unsupported implementation option: {implementation!r}")
    if implementation == "cudnn":
        raise NotImplementedError(
            "dot_product_attention: implementation='cudnn' needs an NVIDIA GPU with cuDNN; "
            "pyjax runs on CPU here. Use implementation=None or 'xla'.")
    if return_residual:
        raise NotImplementedError("dot_product_attention: return_residual=True is not "
                                  "supported (it belongs to the cuDNN implementation)")
    check_arraylike("dot_product_attention", query, key, value)
    output_shape = jnp.shape(query)
    for name, a in (("query", query), ("key", key), ("value", value)):
        if jnp.ndim(a) not in (3, 4) or jnp.ndim(a) != len(output_shape):
            raise ValueError(f"dot_product_attention: query, key and value must all have rank "
                             f"3 (T, N, H) or all rank 4 (B, T, N, H), got {name} of shape "
                             f"{jnp.shape(a)} with query of shape {output_shape}")
    # rank-3 (unbatched) operands and lower-rank bias/mask get leading axes, as JAX
    query, key, value = (_ensure_4d(a) for a in (query, key, value))
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    _check_heads(query, key, value)
    B, T, N, H = query.shape
    S = key.shape[1]
    for name, a in (("bias", bias), ("mask", mask)):
        if a is not None:
            shape = jnp.shape(a)
            try:
                np.broadcast_shapes(shape, (B, N, T, S))
            except ValueError:
                raise ValueError(f"dot_product_attention: {name} of shape {shape} does not "
                                 f"broadcast to (B, N, T, S) = {(B, N, T, S)}") from None
    q_len = _seq_lengths("query_seq_lengths", query_seq_lengths, B)
    kv_len = _seq_lengths("key_value_seq_lengths", key_value_seq_lengths, B)
    window = _window(local_window_size)
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    out = _attention_xla(query, key, value, bias, mask, scale, bool(is_causal), q_len, kv_len,
                         window)
    return jnp.reshape(out, output_shape)


from pyjax._src.nn.scaled_matmul import (  # noqa: E402
    get_scaled_dot_general_config as get_scaled_dot_general_config,
    scaled_dot_general as scaled_dot_general, scaled_matmul as scaled_matmul)


__all__ = ["dot_product_attention", "scaled_matmul", "scaled_dot_general",
           "get_scaled_dot_general_config"]
