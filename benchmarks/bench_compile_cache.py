"""First call of ``jit(grad(MLP loss))`` in a new process: cold (empty persistent compilation
cache) against warm (the cache filled by an earlier process), and with the cache off.

Run by hand: ``python benchmarks/bench_compile_cache.py [--repeats 5]``. Each measurement is a
fresh interpreter; the figure is the time from the first call to its result (tracing,
lowering, and compiling or loading every program it needs), beside the import time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PROGRAM = r"""
import json, time
t0 = time.perf_counter()
import pyjax, pyjax.numpy as jnp
from pyjax.test_util import count_xla_compiles
t1 = time.perf_counter()

def loss(params, x, y):
    (w1, b1), (w2, b2), (w3, b3) = params
    h = jnp.tanh(x @ w1 + b1)
    h = jnp.tanh(h @ w2 + b2)
    logits = h @ w3 + b3
    logp = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(logp * y, axis=1))

key = pyjax.random.key(0)
ks = pyjax.random.split(key, 4)
sizes = [(64, 256), (256, 256), (256, 10)]
params = [(pyjax.random.normal(k, s) * 0.05, jnp.zeros(s[1])) for k, s in zip(ks, sizes)]
x = pyjax.random.normal(ks[3], (128, 64))
y = jnp.eye(10)[jnp.arange(128) % 10]
for leaf in pyjax.tree.leaves((params, x, y)):
    leaf.block_until_ready()
step = pyjax.jit(pyjax.grad(loss))
with count_xla_compiles() as n:
    t2 = time.perf_counter()
    g = step(params, x, y)
    pyjax.block_until_ready(g)
    t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first_call": t3 - t2, "xla_compiles": n()}))
"""


def run(env):
    p = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = dict(os.environ, PYTHONPATH=root)
    rows = {"cold (empty cache)": [], "warm (filled cache)": [], "cache off": []}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as d:
            env = dict(base, PYJAX_COMPILATION_CACHE="1", PYJAX_COMPILATION_CACHE_DIR=d)
            rows["cold (empty cache)"].append(run(env))
            rows["warm (filled cache)"].append(run(env))
        rows["cache off"].append(run(dict(base, PYJAX_COMPILATION_CACHE="0")))
    print(f"{'first call of jit(grad(mlp))':28s} {'median ms':>10s} {'min ms':>8s} "
          f"{'xla compiles':>13s} {'import s':>9s}")
    for name, rs in rows.items():
        t = [r["first_call"] * 1e3 for r in rs]
        print(f"{name:28s} {statistics.median(t):10.1f} {min(t):8.1f} "
              f"{rs[0]['xla_compiles']:13d} {statistics.median(r['import'] for r in rs):9.2f}")
    cold = statistics.median(r["first_call"] for r in rows["cold (empty cache)"])
    warm = statistics.median(r["first_call"] for r in rows["warm (filled cache)"])
    print(f"warm / cold: {warm / cold:.2f}")


if __name__ == "__main__":
    main()
