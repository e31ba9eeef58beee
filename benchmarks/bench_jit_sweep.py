"""Jitted programs on 512x512 matrices and 10^6-element vectors, pyjax beside JAX 0.10.2.

Each side runs every program in its own process (two rounds, alternating; min of 7 x 5 calls,
microseconds). Run by hand from the repository root: ``python benchmarks/bench_jit_sweep.py``
(the JAX side runs with benchmarks/.jaxvenv, setup_jax_side.sh, or $JAX_PYTHON; skipped when
absent). docs/performance.md, "Jitted programs on larger arrays", has results.
"""
import json
import os
import subprocess
import sys

from timing import JAX_PYTHON

PROGRAMS = """
jnp.exp(V)
jnp.log(jnp.abs(V) + 1)
jnp.tanh(V)
jnp.sin(V)
jax.nn.sigmoid(V)
jax.nn.gelu(V)
sp.erf(V)
sp.gammaln(jnp.abs(V) + 1)
jnp.sqrt(jnp.abs(V))
V ** 3
jnp.sum(V)
jnp.sum(X, axis=0)
jnp.sum(X, axis=1)
jnp.max(X, axis=0)
jnp.argmax(X, axis=1)
jnp.argmax(V)
jnp.cumsum(V)
jnp.cumsum(X, axis=0)
jnp.mean(X, axis=1) + jnp.var(X, axis=1)
jax.nn.softmax(X, axis=-1)
jax.nn.logsumexp(X, axis=-1)
X @ X
X @ X.T
X.T @ X
jnp.einsum('ij,kj->ik', X, X)
X[I]
X[:, I[:512]]
jnp.take_along_axis(X, I[:512].reshape(512, 1) % 512 * jnp.ones((1, 4), jnp.int32), axis=1)
X.at[I].add(1.0)
X.at[I % 512, I % 7].set(0.0)
jnp.where(X > 0, X, 0.1 * X)
jnp.clip(V, -1, 1)
jnp.transpose(X)
jnp.reshape(X, (256, 1024)).T
jnp.concatenate([X, X], axis=1)
jnp.pad(X, 3)
jnp.flip(X, axis=0)
jnp.roll(V, 7)
jnp.tile(X, (2, 1))
jnp.repeat(X, 2, axis=0)
jnp.sort(V)
jnp.argsort(X, axis=1)
lax.top_k(X, 8)
jnp.cumprod(X[:16], axis=1)
jnp.fft.fft(V)
jnp.fft.rfft(X, axis=1)
jnp.linalg.inv(X)
jnp.linalg.solve(X, X[:, :8])
jnp.linalg.cholesky(X @ X.T + 512 * jnp.eye(512))
jnp.linalg.qr(X)
jnp.linalg.eigh(X + X.T)
jnp.linalg.svd(X[:128, :128])
lax.conv_general_dilated(B, K, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))
lax.reduce_window(B, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID')
random.normal(key, (1 << 20,))
random.uniform(key, (1 << 20,))
random.bernoulli(key, 0.3, (1 << 20,))
random.randint(key, (1 << 20,), 0, 100)
random.permutation(key, 4096)
random.categorical(key, X)
jnp.unique(I, size=512)
jnp.bincount(I, length=512)
jnp.histogram(V, bins=32)[0]
jnp.searchsorted(jnp.sort(V[:4096]), V[:4096])
jnp.isclose(X, X.T)
jnp.nan_to_num(V)
jnp.linalg.norm(X, axis=1)
jnp.outer(V[:512], V[:512])
jnp.tril(X)
jnp.diag(X)
jnp.meshgrid(V[:256], V[:256])[0]
jnp.polyval(V[:8], V)
jnp.interp(V, jnp.sort(V[:64]), V[:64])
""".strip().splitlines()

WORKER = r'''
import sys, time, json
import numpy as np
LIB = sys.argv[1]
if LIB == "jax":
    import jax, jax.numpy as jnp
    from jax import nn, random, lax
    import jax.scipy.special as sp
else:
    import pyjax as jax, pyjax.numpy as jnp
    from pyjax import nn, random, lax
    import pyjax.scipy.special as sp
rng = np.random.default_rng(0)
X = jnp.asarray(rng.normal(size=(512, 512)).astype(np.float32))
V = jnp.asarray(rng.normal(size=(1 << 20,)).astype(np.float32))
I = jnp.asarray(rng.integers(0, 512, size=(4096,)).astype(np.int32))
B = jnp.asarray(rng.normal(size=(32, 64, 64, 16)).astype(np.float32))
K = jnp.asarray(rng.normal(size=(3, 3, 16, 32)).astype(np.float32))
key = random.key(0)
exprs = json.loads(sys.argv[2])
out = {}
for expr in exprs:
    try:
        f = jax.jit(eval("lambda X, V, I, B, K, key: " + expr))
        args = (X, V, I, B, K, key)
        for _ in range(3): jax.block_until_ready(f(*args))
        best = 1e9
        for _ in range(7):
            t = time.perf_counter()
            for _ in range(5): r = f(*args)
            jax.block_until_ready(r)
            best = min(best, (time.perf_counter() - t) / 5 * 1e6)
        out[expr] = best
    except Exception as e:
        out[expr] = "ERR " + type(e).__name__ + ": " + str(e)[:100]
print(json.dumps(out))
'''


def run(python, lib):
    p = subprocess.run([python, "-c", WORKER, lib, json.dumps(PROGRAMS)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{lib} worker failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    sides = [("pyjax", sys.executable)] + ([("jax", JAX_PYTHON)] if os.path.exists(JAX_PYTHON)
                                            else [])
    best = {}
    for _ in range(2):
        for lib, python in sides:
            for expr, v in run(python, lib).items():
                old = best.get((lib, expr))
                best[(lib, expr)] = min(old, v) if isinstance(old, float) and \
                    isinstance(v, float) else v
    for expr in PROGRAMS:
        p, j = best.get(("pyjax", expr)), best.get(("jax", expr))
        line = f"{expr[:60]:60s} pyjax {p:10.1f}" if isinstance(p, float) else f"{expr[:60]:60s} pyjax {p}"
        if isinstance(p, float) and isinstance(j, float):
            line += f"  jax {j:10.1f}  ratio {p / j:5.2f}"
        elif j is not None:
            line += f"  jax {j}"
        print(line)


if __name__ == "__main__":
    main()
