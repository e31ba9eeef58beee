"""What the late-filled public names cost on hot paths, side by side with JAX 0.10.2.

* eager ``x + 1.0`` and a cached one-array ``jit`` call: the runtime now reads one global per
  execution (``jax_no_execution``); compare with JAX and, with ``--baseline PATH``, with the
  pyjax of another checkout (e.g. /work/main, before the gate);
* ``lax.split``/``lax.tile`` eagerly (now primitives of their own) and ``ffi_call`` of a tiny C
  handler under ``jit`` (pyjax only: the handler is written for the plugin's FFI layouts).

Rounds alternate the sides in one time window; min and median over rounds are printed.
Run: ``python benchmarks/bench_names.py [--rounds 5] [--baseline /work/main]``."""
import argparse
import json
import os
import statistics
import subprocess
import sys

from timing import IS_JAX_WORKER, jax_side, per_call_us, print_table, worker_print

HANDLER_C = r"""
#include <stdint.h>
#define AT(p, off, T) (*(T*)((char*)(p) + (off)))
void* add_one(void* f) {
  for (void* e = AT(f, 8, void*); e; e = AT(e, 16, void*))
    if (AT(e, 8, int32_t) == 1) { char* m = AT(e, 24, char*); AT(m, 24, int32_t) = 0; AT(m, 28, int32_t) = 1; AT(m, 32, uint32_t) = 0; return 0; }
  if (AT(f, 32, int32_t) != 3) return 0;
  void** args = AT(f, 72, void**); void** rets = AT(f, 112, void**);
  float* x = AT(args[0], 24, float*); float* y = AT(rets[0], 24, float*);
  int64_t* dims = AT(args[0], 40, int64_t*); int64_t n = AT(args[0], 32, int64_t) ? dims[0] : 1;
  for (int64_t i = 0; i < n; i++) y[i] = x[i] + 1.0f;
  return 0;
}
"""


def measure(jax, with_ffi):
    import numpy as np
    jnp, lax = jax.numpy, jax.lax
    x = jnp.ones(8, jnp.float32)
    f = jax.jit(lambda v: v * 2.0)
    out = {"eager x + 1.0 (us)": per_call_us(lambda: x + 1.0, n=5000),
           "cached jit call (us)": per_call_us(lambda: f(x), n=5000),
           "eager lax.split (us)": per_call_us(lambda: lax.split(x, (3, 5)), n=2000),
           "eager lax.tile (us)": per_call_us(lambda: lax.tile(x, (2,)), n=2000)}
    if with_ffi:
        import ctypes
        import shutil
        import tempfile
        cc = shutil.which("cc")
        if cc:
            d = tempfile.mkdtemp()
            with open(os.path.join(d, "h.c"), "w") as fh:
                fh.write(HANDLER_C)
            subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", os.path.join(d, "h.so"),
                            os.path.join(d, "h.c")], check=True)
            lib = ctypes.CDLL(os.path.join(d, "h.so"))
            jax.ffi.register_ffi_target("bench_add_one", jax.ffi.pycapsule(lib.add_one))
            call = jax.jit(jax.ffi.ffi_call("bench_add_one",
                                            jax.ShapeDtypeStruct((8,), np.float32)))
            assert np.asarray(call(x)).tolist() == [2.0] * 8
            out["jit(ffi_call) of a C add-one (us)"] = per_call_us(lambda: call(x), n=5000)
    return out


def _pyjax_side(path, with_ffi):
    code = ("import sys, json; sys.path[:0] = [%r, %r]; import pyjax; "
            "import bench_names as b; print(json.dumps(b.measure(pyjax, %r)))"
            % (path, os.path.dirname(os.path.abspath(__file__)), with_ffi))
    res = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         timeout=900, env=dict(os.environ, PYTHONPATH=path))
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    if IS_JAX_WORKER:
        import jax
        worker_print(measure(jax, False))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", default=None, help="another checkout's root (its pyjax)")
    args, _ = ap.parse_known_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"pyjax": lambda: _pyjax_side(here, True)}
    if args.baseline:
        sides["pyjax-baseline"] = lambda: _pyjax_side(args.baseline, False)
    sides["jax"] = lambda: jax_side(__file__)
    rounds = {name: [] for name in sides}
    for _ in range(args.rounds):  # interleaved: each round runs every side once
        for name, run in sides.items():
            r = run()
            if r is not None:
                rounds[name].append(r)
    print(f"load: {os.getloadavg()}")
    for stat, fn in (("min", min), ("median", statistics.median)):
        table = {n: {k: fn(r[k] for r in rs if k in r) for k in rs[0]}
                 for n, rs in rounds.items() if rs}
        print_table(table, rows=list(table["pyjax"]), label=f"{stat} over {args.rounds} rounds",
                    cell=16)


if __name__ == "__main__":
    main()
