"""A small causal character-level transformer trained on the source code of a Python standard
library module (it ships with Python: no download), with ``jax.nn.dot_product_attention``,
``jax.nn.gelu``, ``jax.nn.initializers``, layer norm, one jit-compiled training step and a
hand-written Adam. The printed loss (cross-entropy per character, in nats) falls from about
``log(vocabulary size)``.

    python examples/transformer.py [--quick]
"""
import argparse
import inspect
import textwrap
import time

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import nn, random
from pyjax.nn import initializers


def load_text():
    """The characters of ``textwrap``'s source, and the vocabulary it uses."""
    text = inspect.getsource(textwrap)
    vocab = sorted(set(text))
    lookup = {c: i for i, c in enumerate(vocab)}
    return np.array([lookup[c] for c in text], np.int32), vocab


def init_params(key, vocab_size, seq_len, d_model, n_heads, n_layers, d_mlp):
    dense = initializers.glorot_uniform()
    keys = iter(random.split(key, 3 + 4 * n_layers))
    params = {
        "embed": initializers.normal(0.02)(next(keys), (vocab_size, d_model)),
        "pos": initializers.normal(0.02)(next(keys), (seq_len, d_model)),
        "out": dense(next(keys), (d_model, vocab_size)),
        "ln_f": {"scale": jnp.ones(d_model), "bias": jnp.zeros(d_model)},
        "blocks": [],
    }
    for _ in range(n_layers):
        params["blocks"].append({
            "ln1": {"scale": jnp.ones(d_model), "bias": jnp.zeros(d_model)},
            "qkv": dense(next(keys), (d_model, 3 * d_model)),
            "proj": dense(next(keys), (d_model, d_model)),
            "ln2": {"scale": jnp.ones(d_model), "bias": jnp.zeros(d_model)},
            "mlp_in": {"w": initializers.he_normal()(next(keys), (d_model, d_mlp)),
                       "b": jnp.zeros(d_mlp)},
            "mlp_out": {"w": dense(next(keys), (d_mlp, d_model)), "b": jnp.zeros(d_model)},
        })
    return params


def layer_norm(p, x):
    return nn.standardize(x, axis=-1, epsilon=1e-5) * p["scale"] + p["bias"]


def block(p, x, n_heads):
    """Pre-LayerNorm transformer block: causal self-attention, then a gelu MLP."""
    batch, seq, d_model = x.shape
    q, k, v = jnp.split(layer_norm(p["ln1"], x) @ p["qkv"], 3, axis=-1)
    heads = lambda a: a.reshape(batch, seq, n_heads, d_model // n_heads)  # noqa: E731
    attn = nn.dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
    x = x + attn.reshape(batch, seq, d_model) @ p["proj"]
    h = nn.gelu(layer_norm(p["ln2"], x) @ p["mlp_in"]["w"] + p["mlp_in"]["b"])
    return x + h @ p["mlp_out"]["w"] + p["mlp_out"]["b"]


def logits_fn(params, tokens, n_heads):
    x = params["embed"][tokens] + params["pos"][:tokens.shape[-1]]
    for p in params["blocks"]:
        x = block(p, x, n_heads)
    return layer_norm(params["ln_f"], x) @ params["out"]


def loss_fn(params, tokens, targets, n_heads):
    """Mean cross-entropy of the next character."""
    logp = nn.log_softmax(logits_fn(params, tokens, n_heads))
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


def adam_init(params):
    zeros = jax.tree.map(jnp.zeros_like, params)
    return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}


def adam_update(params, grads, state, lr, b1=0.9, b2=0.99, eps=1e-8):
    t = state["t"] + 1
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    # bias correction of the running moments
    step = lr * jnp.sqrt(1 - b2 ** t.astype(jnp.float32)) / (1 - b1 ** t.astype(jnp.float32))
    params = jax.tree.map(lambda p, m, v: p - step * m / (jnp.sqrt(v) + eps), params, m, v)
    return params, {"m": m, "v": v, "t": t}


def make_train_step(n_heads, lr):
    def train_step(params, state, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets, n_heads)
        params, state = adam_update(params, grads, state, lr)
        return params, state, loss
    return jax.jit(train_step)


def sample(params, data_window, vocab, n_heads, n_chars, key):
    """Continue ``data_window`` (seq_len ids) by sampling one character at a time."""
    forward = jax.jit(lambda p, t: logits_fn(p, t[None], n_heads)[0, -1])
    window, out = np.array(data_window), []
    for k in random.split(key, n_chars):
        nxt = int(random.categorical(k, forward(params, window)))
        out.append(vocab[nxt])
        window = np.concatenate([window[1:], [nxt]])
    return "".join(out)


def main(quick=False):
    if quick:
        cfg = dict(seq_len=32, d_model=32, n_heads=2, n_layers=1, d_mlp=64, batch=16,
                   steps=50, lr=1e-2)
    else:
        cfg = dict(seq_len=64, d_model=96, n_heads=4, n_layers=2, d_mlp=384, batch=32,
                   steps=300, lr=3e-3)
    data, vocab = load_text()
    seq = cfg["seq_len"]
    params = init_params(random.key(0), len(vocab), seq, cfg["d_model"], cfg["n_heads"],
                         cfg["n_layers"], cfg["d_mlp"])
    state = adam_init(params)
    train_step = make_train_step(cfg["n_heads"], cfg["lr"])
    rng = np.random.default_rng(0)
    print(f"{len(data)} characters of textwrap's source, vocabulary {len(vocab)} "
          f"(log {len(vocab)} = {np.log(len(vocab)):.3f} nats)")

    losses, start = [], time.perf_counter()
    report = max(1, cfg["steps"] // 10)
    for step in range(cfg["steps"]):
        starts = rng.integers(0, len(data) - seq - 1, cfg["batch"])
        windows = np.stack([data[s:s + seq + 1] for s in starts])
        params, state, loss = train_step(params, state, windows[:, :-1], windows[:, 1:])
        losses.append(float(loss))
        if step % report == 0 or step == cfg["steps"] - 1:
            print(f"step {step + 1:4d}: loss {np.mean(losses[-report:]):.4f}")
    train_s = time.perf_counter() - start
    print(f"{cfg['steps']} steps in {train_s:.2f} s; loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    if not quick:
        text = sample(params, data[:seq], vocab, cfg["n_heads"], 200, random.key(1))
        print("sample:\n" + text)
    return {"losses": losses, "vocab_size": len(vocab), "train_s": train_s, "params": params,
            "config": cfg}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny model, 50 steps")
    main(quick=parser.parse_args().quick)
