"""Linear algebra benchmarks (run by hand), jitted, side by side with NumPy/SciPy (LAPACK) and
JAX when installed (skipped otherwise).

    python benchmarks/bench_linalg.py [--quick] [--jax PATH_TO_PYTHON] [--rounds R | --interleaved [ROUNDS]]

(From a git worktree, put it first on the path: ``PYTHONPATH=. python benchmarks/...``,
or Python imports the installed checkout's pyjax. docs/linalg.md's numbers were taken with
``OPENBLAS_NUM_THREADS=1 PYJAX_COMPILATION_CACHE=0``.)

* solve (8 right-hand sides), inv, det, qr, eigh, svd of n x n float32 matrices,
  n = 64, 256, 512 (``--quick``: 64, 128), cholesky and eig at the middle size;
* a vmapped solve of 10,000 3x3 systems (NumPy: its batched ``np.linalg.solve``).

``--interleaved [ROUNDS]`` instead times only solve, inv and det at 512² (the issue-14
targets): ROUNDS (default 5) rounds, each a pyjax then a JAX subprocess taking the minimum of
40 calls, and prints each library's minimum over the rounds and the ratio (the machine's load
changes between runs; interleaving gives both sides the same share of it).

Milliseconds per call: the minimum of 10 calls after a warm-up call, and for pyjax and JAX the
first call (trace + compile + run); with ``--rounds R`` pyjax and the JAX subprocess alternate
R times and each cell keeps its best round (the machine is shared: min and ratios are steadier
than medians). JAX runs in a subprocess with the interpreter given by ``--jax``
(default benchmarks/.jaxvenv, made by setup_jax_side.sh, when it exists): pyjax never imports jax. docs/linalg.md
records the numbers and what each primitive is computed with.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import JAX_PYTHON as _DEFAULT_JAX_PYTHON, best_ms as ms, print_table  # noqa: E402

QUICK = "--quick" in sys.argv
SIZES = (64, 128) if QUICK else (64, 256, 512)
N_SYS = 1000 if QUICK else 10000
JAX_PYTHON = (sys.argv[sys.argv.index("--jax") + 1] if "--jax" in sys.argv
              else _DEFAULT_JAX_PYTHON)


def inputs(n):
    rng = np.random.default_rng(0)
    a = (rng.normal(size=(n, n)) / np.sqrt(n)).astype(np.float32)
    spd = (a @ a.T + np.eye(n)).astype(np.float32)
    b = rng.normal(size=(n, 8)).astype(np.float32)
    return a, spd, b, (a + a.T).astype(np.float32)


def cases(jnp, vmap=None):
    out = {}
    for n in SIZES:
        a, spd, b, sym = inputs(n)
        out.update({
            f"solve {n}² (8 rhs)": (jnp.linalg.solve, (a, b)),
            f"inv {n}²": (jnp.linalg.inv, (a,)),
            f"det {n}²": (jnp.linalg.det, (a,)),
            f"qr {n}²": (jnp.linalg.qr, (a,)),
            f"eigh {n}²": (jnp.linalg.eigh, (sym,)),
            f"svd {n}²": (jnp.linalg.svd, (a,)),
        })
    for n in sorted({SIZES[len(SIZES) // 2], SIZES[-1]}):
        out[f"cholesky {n}²"] = (jnp.linalg.cholesky, (inputs(n)[1],))
    n = SIZES[len(SIZES) // 2]
    a, spd, b, sym = inputs(n)
    out[f"eig {n}²"] = (jnp.linalg.eig, (a,))
    rng = np.random.default_rng(1)
    sa = rng.normal(size=(N_SYS, 3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    sb = rng.normal(size=(N_SYS, 3)).astype(np.float32)
    batched = (vmap(jnp.linalg.solve) if vmap else
               lambda x, y: jnp.linalg.solve(x, y[..., None])[..., 0])
    out[f"vmap solve {N_SYS} 3x3"] = (batched, (sa, sb))
    return out


def run_numpy():
    import scipy.linalg
    out = {}
    for name, (f, args) in cases(np).items():
        if name.startswith("cholesky"):
            f = lambda x: scipy.linalg.cholesky(x, lower=True)  # noqa: E731
        out[name] = ms(lambda: f(*args))
        print(f"numpy {name}: {out[name]:.2f} ms", file=sys.stderr, flush=True)
    return out


def run_jaxlike(mod_name):
    jax = __import__(mod_name)
    jnp = __import__(mod_name + ".numpy", fromlist=["numpy"])
    out, first = {}, {}
    for name, (f, args) in cases(jnp, jax.vmap).items():
        jf = jax.jit(f)
        dev = [jnp.asarray(x) for x in args]
        t = time.perf_counter()
        jax.block_until_ready(jf(*dev))
        first[name] = (time.perf_counter() - t) * 1e3
        out[name] = ms(lambda: jax.block_until_ready(jf(*dev)))
        print(f"{mod_name} {name}: {out[name]:.2f} ms (first {first[name]:.0f})",
              file=sys.stderr, flush=True)
    return out, first


def run_jax_subprocess():
    if not os.path.exists(JAX_PYTHON):
        return None, None
    cmd = [JAX_PYTHON, os.path.abspath(__file__), "--worker-jax"] + (["--quick"] if QUICK
                                                                      else [])
    try:
        res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=1800,
                             env=dict(os.environ, JAX_PLATFORMS="cpu"))
        got = json.loads(res.stdout.strip().splitlines()[-1])
        return got["steady"], got["first"]
    except (subprocess.SubprocessError, ValueError, IndexError, KeyError) as e:
        print(f"(JAX run skipped: {e})", file=sys.stderr)
        return None, None


FOCUS = ("solve 512² (8 rhs)", "inv 512²", "det 512²")


def run_focus(mod_name):
    """The minimum of 40 calls of each FOCUS case (``--interleaved``)."""
    jax = __import__(mod_name)
    jnp = __import__(mod_name + ".numpy", fromlist=["numpy"])
    out = {}
    for n in (512,):
        a, spd, b, sym = inputs(n)
        for name, f, args in ((FOCUS[0], jnp.linalg.solve, (a, b)),
                              (FOCUS[1], jnp.linalg.inv, (a,)), (FOCUS[2], jnp.linalg.det, (a,))):
            jf = jax.jit(f)
            dev = [jnp.asarray(x) for x in args]
            jax.block_until_ready(jf(*dev))
            times = []
            for _ in range(40):
                t = time.perf_counter()
                jax.block_until_ready(jf(*dev))
                times.append((time.perf_counter() - t) * 1e3)
            out[name] = min(times)
    return out


def interleaved(rounds):
    here = os.path.abspath(__file__)
    best = {"pyjax": {}, "jax": {}}
    for r in range(rounds):
        for lib, python in (("pyjax", sys.executable), ("jax", JAX_PYTHON)):
            if lib == "jax" and not os.path.exists(JAX_PYTHON):
                continue
            res = subprocess.run([python, here, "--worker-focus", lib], stdout=subprocess.PIPE,
                                 text=True, timeout=600, env=dict(os.environ, JAX_PLATFORMS="cpu"))
            got = json.loads(res.stdout.strip().splitlines()[-1])
            for k, v in got.items():
                best[lib][k] = min(v, best[lib].get(k, v))
            print(f"round {r} {lib}: " + ", ".join(f"{k} {v:.2f}" for k, v in got.items()),
                  file=sys.stderr, flush=True)
    if best["jax"]:
        best["ratio"] = {k: best["pyjax"][k] / best["jax"][k] for k in best["pyjax"]}
    print_table(best, rows=list(FOCUS), label=f"ms per call (jit), min of 40 x {rounds} rounds")


def accuracy(jnp, n):
    """Relative errors of pyjax's float32 results against float64 LAPACK."""
    a, spd, b, sym = inputs(n)
    a64 = a.astype(np.float64)
    rel = lambda x, y: float(np.abs(np.asarray(x) - y).max() / np.abs(y).max())  # noqa: E731
    errs = {
        "solve": rel(jnp.linalg.solve(a, b), np.linalg.solve(a64, b)),
        "inv": rel(jnp.linalg.inv(a), np.linalg.inv(a64)),
        # (det itself underflows float32 at 512², as NumPy's: about 1e-112)
        "slogdet": rel(jnp.linalg.slogdet(a)[1], np.linalg.slogdet(a64)[1]),
        "cholesky": rel(jnp.linalg.cholesky(spd), np.linalg.cholesky(spd.astype(np.float64))),
        "eigvalsh": rel(jnp.linalg.eigvalsh(sym), np.linalg.eigvalsh(sym.astype(np.float64))),
        "svdvals": rel(jnp.linalg.svdvals(a), np.linalg.svd(a64, compute_uv=False)),
    }
    q, r = jnp.linalg.qr(a)
    errs["qr: |q r - a|"] = rel(np.asarray(q, np.float64) @ np.asarray(r), a64)
    u, s, vh = jnp.linalg.svd(a)
    errs["svd: |u s vh - a|"] = rel((np.asarray(u, np.float64) * np.asarray(s)) @
                                    np.asarray(vh), a64)
    w, v = jnp.linalg.eig(a)
    v = np.asarray(v, np.complex128)
    errs["eig: |a v - v w|"] = rel(a64 @ v, v * np.asarray(w))
    return errs


def main():
    if "--worker-focus" in sys.argv:
        print(json.dumps(run_focus(sys.argv[sys.argv.index("--worker-focus") + 1])))
        return
    if "--interleaved" in sys.argv:
        i = sys.argv.index("--interleaved") + 1
        interleaved(int(sys.argv[i]) if i < len(sys.argv) and sys.argv[i].isdigit() else 5)
        return
    if "--worker-jax" in sys.argv:  # inside the JAX interpreter: print the results as JSON
        steady, first = run_jaxlike("jax")
        print(json.dumps({"steady": steady, "first": first}))
        return
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
    results = {"numpy/scipy": run_numpy()}
    runs = {"pyjax": [], "pyjax 1st": [], "jax": [], "jax 1st": []}
    for _ in range(rounds):  # interleaved: both sides see the same machine load
        ours, first = run_jaxlike("pyjax")
        runs["pyjax"].append(ours)
        runs["pyjax 1st"].append(first)
        theirs, theirs_first = run_jax_subprocess()
        if theirs is not None:
            runs["jax"].append(theirs)
            runs["jax 1st"].append(theirs_first)
    for key, rs in runs.items():
        if rs:
            results[key] = {k: min(r[k] for r in rs) for k in rs[0]}
    if runs["jax"]:
        results["pyjax/jax"] = {k: v / results["jax"][k] for k, v in results["pyjax"].items()}
    print_table(results, label="ms per call (jit), float32")
    print()
    import pyjax.numpy
    n = SIZES[-1]
    for k, v in accuracy(pyjax.numpy, n).items():
        print(f"{k:30s} {n}²: rel. error vs float64 LAPACK {v:.1e}")


if __name__ == "__main__":
    main()
