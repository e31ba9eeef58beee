"""First calls with a warm persistent compilation cache, side by side with JAX 0.10.2.

Fresh processes, interleaved rounds; ``jit(grad(MLP loss))`` as in bench_first_call.py:
- pyjax with a cache filled by an earlier process, its first call split into trace, lowering
  key, text read, executable read, deserialization and first run;
- JAX cold (its cache off) and JAX warm (its cache filled by an earlier process,
  ``jax_persistent_cache_min_compile_time_secs=0``).

Run by hand: ``python benchmarks/bench_warm_cache.py [--repeats 5]``. Reports min / median.
"""
import argparse
import os
import shutil
import statistics
import tempfile

from bench_first_call import COMMON, child, have_jax

SPANS = r"""
spans = {}
if LIB != "jax":
    from pyjax._src.dispatch import compiler
    try:
        from pyjax._src.dispatch import jaxpr_key
    except ImportError:  # a pyjax before the lowering key (for comparisons)
        jaxpr_key = None
    from pyjax._src.interpreters import lowering
    from pyjax._src.runtime import client as client_mod, disk_cache
    main = threading.main_thread()
    def timed(obj, attr, what):
        fn = getattr(obj, attr, None)
        if fn is None:
            return
        def wrapper(*a, **k):
            if threading.current_thread() is not main:
                return fn(*a, **k)
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spans[what] = spans.get(what, 0.0) + time.perf_counter() - t
        setattr(obj, attr, wrapper)
    for obj, attr, what in [(jaxpr_key, "lowering_key", "lowering_key"),
                            (disk_cache, "load_text", "read_text"),
                            (lowering, "lower_module", "lower"),
                            (disk_cache, "key_of", "module_key"),
                            (disk_cache, "load", "read_executable"),
                            (client_mod.Client, "_deserialize_loaded", "deserialize"),
                            (client_mod.Client, "_compile_loaded", "compile"),
                            (compiler, "compile_jaxpr", "compile_jaxpr")]:
        timed(obj, attr, what)
step = jax.jit(jax.grad(loss))
t = time.perf_counter()
if LIB != "jax":
    step.trace(params, xd[0], yd[0])
t1 = time.perf_counter()
out = step(params, xd[0], yd[0])
t2 = time.perf_counter()
jax.block_until_ready(out)
t3 = time.perf_counter()
res = {"first_call": t3 - t, "import": t_import}
if LIB != "jax":
    # read_executable and module_key are inside compile_jaxpr; run: dispatch + first execution
    res.update(trace=t1 - t, run=t3 - t1 - spans.get("compile_jaxpr", 0.0), **spans)
res["steady_step"] = steady(lambda: step(params, xd[0], yd[0]))
print(json.dumps(res))
"""
PROGRAM = COMMON + SPANS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", help="another pyjax checkout's root, measured alongside "
                                       "(e.g. the main branch)")
    args = ap.parse_args()
    jax_ok = have_jax()
    pj_dir = tempfile.mkdtemp(prefix="bench-warm-pyjax-")
    jx_dir = tempfile.mkdtemp(prefix="bench-warm-jax-")
    pj = {"PYJAX_COMPILATION_CACHE": "1", "PYJAX_COMPILATION_CACHE_DIR": pj_dir}
    jx = {"JAX_ENABLE_COMPILATION_CACHE": "1", "JAX_COMPILATION_CACHE_DIR": jx_dir,
          "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
          "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}
    modes = {"pyjax warm cache": ("pyjax", pj)}
    if args.baseline:
        base_dir = tempfile.mkdtemp(prefix="bench-warm-base-")
        base = {"PYJAX_COMPILATION_CACHE": "1", "PYJAX_COMPILATION_CACHE_DIR": base_dir,
                "PYTHONPATH": os.path.abspath(args.baseline)}
        modes["baseline warm cache"] = ("pyjax", base)
    if jax_ok:
        modes["jax cold"] = ("jax", {})
        modes["jax warm cache"] = ("jax", jx)
    try:
        child("pyjax", PROGRAM, **pj)  # fill the caches (pyjax waits for its full build)
        child("pyjax", PROGRAM + "\nwait_upgrades()\n", **pj)
        if args.baseline:
            child("pyjax", PROGRAM + "\nwait_upgrades()\n", **base)
        if jax_ok:
            child("jax", PROGRAM, **jx)
        runs = {m: [] for m in modes}
        for _ in range(args.repeats):
            for m, (lib, env) in modes.items():
                runs[m].append(child(lib, PROGRAM, **env))
    finally:
        shutil.rmtree(pj_dir, ignore_errors=True)
        shutil.rmtree(jx_dir, ignore_errors=True)
    print(f"load average: {os.getloadavg()}")
    print(f"ms, min / median of {args.repeats} fresh processes")
    cols = ["first_call", "trace", "lowering_key", "read_text", "lower", "module_key",
            "read_executable", "deserialize", "compile", "run", "steady_step", "import"]
    for m, rs in runs.items():
        print(m)
        for c in cols:
            v = [r[c] * 1e3 for r in rs if c in r]
            if v:
                print(f"  {c:16s}{min(v):9.2f} /{statistics.median(v):9.2f}")
    if jax_ok:
        mine = [r["first_call"] for r in runs["pyjax warm cache"]]
        for m in ("jax cold", "jax warm cache"):
            theirs = [r["first_call"] for r in runs[m]]
            print(f"pyjax warm / {m}: min {min(mine) / min(theirs):.3f}, median "
                  f"{statistics.median(mine) / statistics.median(theirs):.3f}")


if __name__ == "__main__":
    main()
