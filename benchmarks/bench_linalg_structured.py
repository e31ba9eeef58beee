"""Structured linear algebra, ms per jitted call (median), side by side with SciPy and with
JAX 0.10.2 when benchmarks/.jaxvenv (setup_jax_side.sh) exists (run in a subprocess): tridiagonal_solve, hessenberg,
tridiagonal, schur, cholesky_update, expm, sqrtm, cg, gmres. Also prints the accuracy of each
pyjax result against SciPy in float64.

    python benchmarks/bench_linalg_structured.py [--quick]
"""
import json
import os
import tempfile
import subprocess
import sys
import textwrap

import numpy as np
import scipy.linalg as sl  # noqa: F401  (used by the expressions in CASES)
import scipy.sparse.linalg as ssl  # noqa: F401

from timing import ms, print_table

QUICK = "--quick" in sys.argv
M = 256 if QUICK else 4096        # tridiagonal system size
N = 32 if QUICK else 128          # dense matrix size
RNG = np.random.default_rng(0)


def inputs():
    dl, d, du = RNG.normal(size=(3, M))
    b = RNG.normal(size=(M, 4))
    a = RNG.normal(size=(N, N))
    spd = a @ a.T / N + np.eye(N)
    r = np.linalg.cholesky(spd).T
    w = RNG.normal(size=N)
    return dict(dl=dl, d=d + 4, du=du, b=b, a=a, sym=a + a.T, spd=spd, r=r, w=w,
                small=a / np.abs(a).sum(0).max())


CASES = {  # name -> (pyjax/jax expression, SciPy expression); `L` is lax.linalg
    f"tridiagonal_solve m={M}, 4 rhs": (
        "L.tridiagonal_solve(dl, d, du, b)",
        "sl.solve_banded((1, 1), np.stack([np.r_[0, du[:-1]], d, np.r_[dl[1:], 0]]), b)"),
    f"hessenberg {N}": ("L.hessenberg(a)[0]", "sl.hessenberg(a)"),
    f"tridiagonal {N}": ("L.tridiagonal(sym)[1]", "sl.lapack.dsytrd(sym)[1]"),
    f"schur {N}": ("L.schur(a)[0]", "sl.schur(a)[0]"),
    f"cholesky_update {N}": ("L.cholesky_update(r, w)",
                             "np.linalg.cholesky(r.T @ r + np.outer(w, w)).T"),
    f"expm {N}": ("jsl.expm(small * 4)", "sl.expm(small * 4)"),
    f"sqrtm {N}": ("jsl.sqrtm(spd)", "sl.sqrtm(spd)"),
    f"cg {N} (dense matvec)": (f"jss.cg(spd, b[:{N}, 0], tol=1e-10)[0]",
                              f"ssl.cg(spd, b[:{N}, 0], rtol=1e-10)[0]"),
    f"gmres {N} (dense matvec)": (f"jss.gmres(spd, b[:{N}, 0], tol=1e-10)[0]",
                                 f"ssl.gmres(spd, b[:{N}, 0], rtol=1e-10)[0]"),
}

_RUNNER = textwrap.dedent("""
    import json, sys, numpy as np
    sys.path.insert(0, {bench!r})
    from timing import ms
    import {mod} as jax
    jax.config.update("jax_enable_x64", True)
    from {mod}.lax import linalg as L
    import {mod}.scipy.linalg as jsl
    import {mod}.scipy.sparse.linalg as jss
    data = dict(np.load({path!r}))
    out, vals = {{}}, {{}}
    names = list(json.loads({cases!r}))
    for name, expr in json.loads({cases!r}).items():
        try:
            f = jax.jit(eval("lambda " + ", ".join(data) + ": " + expr))
            args = [jax.device_put(v) for v in data.values()]
            out[name] = ms(lambda: jax.block_until_ready(f(*args)), repeat=7)
            vals[str(len(vals))] = np.asarray(f(*args))
        except Exception as e:  # a name JAX lacks on this machine, or an error: no number
            out[name] = None
            vals[str(len(vals))] = np.zeros(0)
            print(name, type(e).__name__, str(e)[:100], file=sys.stderr)
    np.savez({path!r} + "." + {mod!r} + ".npz", **vals)
    print(json.dumps(out))
""")


def run(python, mod, path):
    cases = json.dumps({k: v[0] for k, v in CASES.items()})
    code = _RUNNER.format(bench=os.path.dirname(os.path.abspath(__file__)), mod=mod, path=path,
                          cases=cases)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))))
    res = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                         timeout=1800)
    if res.returncode:
        print(res.stderr[-2000:], file=sys.stderr)
        return {}, {}
    sys.stderr.write(res.stderr)
    vals = np.load(path + "." + mod + ".npz")
    return json.loads(res.stdout.splitlines()[-1]), {n: vals[str(i)] for i, n in
                                                     enumerate(CASES)}


def main():
    data = inputs()
    path = os.path.join(tempfile.mkdtemp(), "bench_linalg_structured.npz")
    np.savez(path, **data)
    scipy_ms, scipy_vals = {}, {}
    for name, (_, expr) in CASES.items():
        f = eval("lambda " + ", ".join(data) + ": " + expr)
        scipy_ms[name] = ms(lambda: f(**data), repeat=7)
        scipy_vals[name] = f(**data)
    results = {"SciPy": scipy_ms}
    py_ms, py_vals = run(sys.executable, "pyjax", path)
    results["pyjax"] = {k: v for k, v in py_ms.items() if v is not None}
    from timing import JAX_PYTHON as jax_python
    if os.path.exists(jax_python):
        jax_ms, _ = run(jax_python, "jax", path)
        results["JAX"] = {k: v for k, v in jax_ms.items() if v is not None}
    print_table(results, rows=list(CASES), label="ms per call (float64)")
    print("\nlargest difference from SciPy, relative to the largest entry:")
    for name, got in py_vals.items():
        want = np.asarray(scipy_vals[name])
        if name.startswith(("tridiagonal_", "cholesky", "expm", "sqrtm", "cg", "gmres")):
            if got.shape == want.shape:
                print(f"  {name:40s} {np.abs(got - want).max() / np.abs(want).max():.1e}")


if __name__ == "__main__":
    main()
