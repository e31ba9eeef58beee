"""Linear algebra benchmarks (run by hand), jitted, side by side with NumPy/SciPy (LAPACK) and
JAX / PyTorch when installed (skipped otherwise).

    python benchmarks/bench_linalg.py [--quick]

* solve, cholesky, qr, inv, det of a 512x512 float32 matrix;
* eigh and svd of a 256x256 float32 matrix;
* a vmapped solve of 10,000 3x3 systems (NumPy: its batched ``np.linalg.solve``).

Milliseconds per call (median after a warm-up call that compiles); the first-call column for
pyjax is trace + compile + run. docs/linalg.md records the numbers and what each primitive
is computed with.
"""
import sys
import time

import numpy as np
import scipy.linalg
from timing import ms, print_table

QUICK = "--quick" in sys.argv
N_BIG = 128 if QUICK else 512
N_EIG = 64 if QUICK else 256
N_SYS = 1000 if QUICK else 10000


def inputs():
    rng = np.random.default_rng(0)
    a = (rng.normal(size=(N_BIG, N_BIG)) / np.sqrt(N_BIG)).astype(np.float32)  # det ~ 1
    spd = (a @ a.T + np.eye(N_BIG)).astype(np.float32)
    b = rng.normal(size=(N_BIG, 8)).astype(np.float32)
    e = rng.normal(size=(N_EIG, N_EIG)).astype(np.float32)
    sym = (e + e.T).astype(np.float32)
    sa = rng.normal(size=(N_SYS, 3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    sb = rng.normal(size=(N_SYS, 3)).astype(np.float32)
    return a, spd, b, e, sym, sa, sb


def cases(jnp, vmap=None):
    a, spd, b, e, sym, sa, sb = inputs()
    batched = (vmap(jnp.linalg.solve) if vmap else
               lambda x, y: jnp.linalg.solve(x, y[..., None])[..., 0])
    return {
        f"solve {N_BIG}x{N_BIG} (8 rhs)": (jnp.linalg.solve, (a, b)),
        f"cholesky {N_BIG}x{N_BIG}": (jnp.linalg.cholesky, (spd,)),
        f"qr {N_BIG}x{N_BIG}": (jnp.linalg.qr, (a,)),
        f"inv {N_BIG}x{N_BIG}": (jnp.linalg.inv, (a,)),
        f"det {N_BIG}x{N_BIG}": (jnp.linalg.det, (a,)),
        f"eigh {N_EIG}x{N_EIG}": (jnp.linalg.eigh, (sym,)),
        f"svd {N_EIG}x{N_EIG}": (jnp.linalg.svd, (e,)),
        f"vmap solve {N_SYS} 3x3": (batched, (sa, sb)),
    }


def run_numpy():
    out = {}
    for name, (f, args) in cases(np).items():
        if name.startswith("cholesky"):
            f = lambda x: scipy.linalg.cholesky(x, lower=True)  # noqa: E731
        out[name] = ms(lambda: f(*args))
    return out


def run_jaxlike(mod_name):
    try:
        jax = __import__(mod_name)
        jnp = __import__(mod_name + ".numpy", fromlist=["numpy"])
    except ImportError:
        return None, None
    out, first = {}, {}
    for name, (f, args) in cases(jnp, jax.vmap).items():
        jf = jax.jit(f)
        dev = [jnp.asarray(x) for x in args]
        t = time.perf_counter()
        jax.block_until_ready(jf(*dev))
        first[name] = (time.perf_counter() - t) * 1e3
        out[name] = ms(lambda: jax.block_until_ready(jf(*dev)))
    return out, first


def accuracy(jnp):
    """Relative errors of pyjax's results (float32) against float64 LAPACK."""
    a, spd, b, e, sym, sa, sb = inputs()
    a64 = a.astype(np.float64)
    rel = lambda x, y: float(np.abs(np.asarray(x) - y).max() / np.abs(y).max())  # noqa: E731
    errs = {
        "solve": rel(jnp.linalg.solve(a, b), np.linalg.solve(a64, b)),
        "inv": rel(jnp.linalg.inv(a), np.linalg.inv(a64)),
        "cholesky": rel(jnp.linalg.cholesky(spd), np.linalg.cholesky(spd.astype(np.float64))),
        "eigvalsh": rel(jnp.linalg.eigvalsh(sym), np.linalg.eigvalsh(sym.astype(np.float64))),
        "svdvals": rel(jnp.linalg.svdvals(e), np.linalg.svd(e.astype(np.float64),
                                                           compute_uv=False)),
    }
    q, r = jnp.linalg.qr(a)
    errs["qr: |q r - a|"] = rel(np.asarray(q) @ np.asarray(r), a64)
    u, s, vh = jnp.linalg.svd(e)
    errs["svd: |u s vh - a|"] = rel((np.asarray(u) * np.asarray(s)) @ np.asarray(vh), e)
    return errs


def main():
    results = {"numpy/scipy": run_numpy()}
    import pyjax
    ours, first = run_jaxlike("pyjax")
    results["pyjax"] = ours
    results["pyjax 1st"] = first
    for other in ("jax",):
        got, _ = run_jaxlike(other)
        if got is not None:
            results[other] = got
    print_table(results, label="ms per call (jit)")
    print()
    for k, v in accuracy(pyjax.numpy).items():
        print(f"{k:30s} rel. error vs float64 LAPACK {v:.1e}")


if __name__ == "__main__":
    main()
