"""GPU benchmarks, pyjax beside JAX: an MLP SGD step, a transformer-block SGD step and a bf16
matrix product (TFLOP/s). One script for a session that is lent a GPU (docs/gpu.md):

    python benchmarks/bench_gpu.py            # from the repository root

Each side runs in its own subprocess, one after the other (each takes most of the GPU's
memory, as JAX does by default). The JAX side uses $JAX_PYTHON, else benchmarks/.jaxvenv (setup_jax_side.sh),
else this interpreter if it can import jax; it is skipped when none has a GPU JAX. Without a
GPU for pyjax the script says "no GPU" and exits 0.
"""
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from timing import JAX_PYTHON  # noqa: E402

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


# --- the workloads, written once against a JAX-like module (pyjax or jax) -------------------

def _timed(fn, repeat):
    """Median milliseconds of one blocked call, after a warm-up (compile) call."""
    out = fn()
    _block(out)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        _block(fn())
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


_LIB = []   # the module under test (pyjax or jax), set by run_side


def _block(tree):
    _LIB[0].block_until_ready(tree)


def mlp_step(jax, jnp, batch=1024, sizes=(784, 2048, 2048, 10)):
    rng = np.random.default_rng(0)
    params = [(jnp.asarray(rng.standard_normal((m, n), np.float32) / np.sqrt(m)),
               jnp.zeros(n, jnp.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
    x = jnp.asarray(rng.standard_normal((batch, sizes[0]), np.float32))
    y = jnp.asarray(np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)])

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        logits = h @ params[-1][0] + params[-1][1]
        m = jnp.max(logits, axis=1, keepdims=True)
        lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True)) + m
        return -jnp.mean(jnp.sum(y * (logits - lse), axis=1))

    @jax.jit
    def step(params, x, y):
        g = jax.grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, params, g)

    flops = 6 * batch * sum(m * n for m, n in zip(sizes[:-1], sizes[1:]))
    return (lambda: step(params, x, y)), flops


def transformer_step(jax, jnp, batch=8, seq=512, d=1024, heads=16):
    rng = np.random.default_rng(1)

    def w(m, n):
        return jnp.asarray(rng.standard_normal((m, n), np.float32) / np.sqrt(m))
    p = {"qkv": w(d, 3 * d), "o": w(d, d), "up": w(d, 4 * d), "down": w(4 * d, d),
         "s1": jnp.ones(d, jnp.float32), "s2": jnp.ones(d, jnp.float32)}
    x = jnp.asarray(rng.standard_normal((batch, seq, d), np.float32))

    def ln(h, s):
        mu = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean((h - mu) ** 2, axis=-1, keepdims=True)
        return (h - mu) / jnp.sqrt(var + 1e-5) * s

    def block(p, x):
        b, t, _ = x.shape
        q, k, v = jnp.split(ln(x, p["s1"]) @ p["qkv"], 3, axis=-1)
        q, k, v = (a.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3) for a in (q, k, v))
        att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads)
        att = jnp.exp(att - jnp.max(att, axis=-1, keepdims=True))
        att = att / jnp.sum(att, axis=-1, keepdims=True)
        h = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, d) @ p["o"] + x
        return jnp.tanh(ln(h, p["s2"]) @ p["up"]) @ p["down"] + h

    @jax.jit
    def step(p, x):
        g = jax.grad(lambda p: jnp.mean(block(p, x) ** 2))(p)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g)

    flops = 3 * 2 * batch * seq * (d * 3 * d + d * d + 8 * d * d) \
        + 3 * 2 * 2 * batch * seq * seq * d
    return (lambda: step(p, x)), flops


def matmul_bf16(jax, jnp, n=8192):
    rng = np.random.default_rng(2)
    a = jnp.asarray(rng.standard_normal((n, n), np.float32)).astype(jnp.bfloat16)
    b = jnp.asarray(rng.standard_normal((n, n), np.float32)).astype(jnp.bfloat16)
    f = jax.jit(lambda a, b: a @ b)
    return (lambda: f(a, b)), 2 * n ** 3


WORKLOADS = {"MLP SGD step 784-2048-2048-10, batch 1024": (mlp_step, 20),
             "transformer block SGD step, 8x512x1024, 16 heads": (transformer_step, 20),
             "matmul bf16 8192^3": (matmul_bf16, 10)}


def run_side(lib):
    """In a subprocess: run every workload with ``lib`` ('pyjax' or 'jax'); print JSON."""
    if lib == "pyjax":
        sys.path.insert(0, ROOT)
    jax = __import__(lib)
    import importlib
    jnp = importlib.import_module(f"{lib}.numpy")
    _LIB.append(jax)
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        print(json.dumps({"no_gpu": str(e)}))
        return
    out = {"device": str(gpus[0].device_kind), "backend": jax.default_backend(),
           "version": getattr(jax, "__version__", "?")}
    for name, (make, repeat) in WORKLOADS.items():
        try:
            fn, flops = make(jax, jnp)
            t = _timed(fn, repeat)
            out[name] = {"ms": t, "tflops": flops / (t * 1e-3) / 1e12}
        except Exception as e:  # noqa: BLE001 - report and go on with the next workload
            out[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    print(json.dumps(out))


# --- the driver ---------------------------------------------------------------------------------

def _jax_python():
    for cand in (JAX_PYTHON,):
        if cand and os.path.exists(cand):
            return cand
    if importlib.util.find_spec("jax") is not None:   # finds, does not import
        return sys.executable
    return None


def _side(python, lib):
    proc = subprocess.run([python, HERE, f"--side={lib}"], capture_output=True, text=True,
                          cwd=ROOT, timeout=1200)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr or proc.stdout)[-2000:]}
    return json.loads(lines[-1])


def main():
    pyjax_res = _side(sys.executable, "pyjax")
    if "no_gpu" in pyjax_res:
        print(f"no GPU for pyjax ({pyjax_res['no_gpu']}); nothing to measure. "
              "Install the CUDA plugin with pip install 'pyjax[cuda13]' on a machine with an "
              "NVIDIA GPU.")
        return 0
    if "error" in pyjax_res and len(pyjax_res) == 1:
        print("pyjax side failed:\n" + pyjax_res["error"])
        return 1
    jax_py = _jax_python()
    jax_res = _side(jax_py, "jax") if jax_py else {"no_gpu": "JAX not installed"}
    print(f"pyjax on {pyjax_res['device']} (backend {pyjax_res['backend']})")
    if "no_gpu" in jax_res or ("error" in jax_res and len(jax_res) == 1):
        print(f"JAX side skipped: {jax_res.get('no_gpu') or jax_res.get('error')}")
        jax_res = {}
    else:
        print(f"JAX {jax_res['version']} on {jax_res['device']}")
    print(f"{'workload':52s}{'pyjax ms':>10s}{'JAX ms':>10s}{'ratio':>8s}"
          f"{'pyjax TF/s':>12s}{'JAX TF/s':>10s}")
    for name in WORKLOADS:
        p, j = pyjax_res.get(name, {}), jax_res.get(name, {})
        if "error" in p:
            print(f"{name:52s}  pyjax error: {p['error']}")
            continue
        jm = j.get("ms")
        print(f"{name:52s}{p['ms']:10.3f}{(jm or float('nan')):10.3f}"
              f"{(p['ms'] / jm if jm else float('nan')):8.2f}{p['tflops']:12.1f}"
              f"{j.get('tflops', float('nan')):10.1f}")
        if "error" in j:
            print(f"{'':52s}  JAX error: {j['error']}")
    return 0


if __name__ == "__main__":
    side = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--side=")), None)
    if side:
        run_side(side)
    else:
        sys.exit(main())
