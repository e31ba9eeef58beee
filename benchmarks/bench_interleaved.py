"""pyjax and JAX 0.10.2 timed in alternating short bursts (run by hand), for a shared machine
whose load moves faster than one benchmark round: this process runs pyjax, a JAX worker
(benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON, ``--worker-jax``; skipped when absent) runs the
same workloads, and each round asks both sides in turn (alternating who goes first) for a few
calls of every workload. Prints, per workload and side, the min and median wall time and the
median CPU time of the process per call (ms), and the pyjax/JAX ratios.

    python benchmarks/bench_interleaved.py [--suite transformer|numpy] [--rounds 8]

Suites: ``transformer``: the pre-LN block of bench_nn_transformer.py (forward, jit(grad) + SGD
step); ``numpy``: ``interp`` (10^6 points on 1000) and ``histogram2d`` (10^6 points, 32x32
bins) of bench_numpy_extra.py, ``min`` + ``max`` of 10^6 floats, and ``pad`` of 1000x1000 by 16
in modes reflect (odd), constant, edge, symmetric and wrap. ``--only TEXT`` keeps the workloads
whose name contains TEXT. ``--jax-module``: also time JAX's own StableHLO module of each
transformer workload (``jax.jit(f).lower(...).as_text()``, from the worker) compiled and run by
pyjax's runtime with pyjax's XLA options, its results first checked against pyjax's.
"""
import argparse
import importlib
import json
import os
import subprocess
import sys
import time

import numpy as np
from timing import IS_JAX_WORKER, JAX_PYTHON

import bench_nn_transformer as transformer


def workloads(mod_name, suite):
    """``{name: (zero-argument callable that blocks on its result, calls per burst)}``, and
    ``{name: (jitted function, arguments)}`` of the workloads ``--jax-module`` can swap."""
    jax = importlib.import_module(mod_name)
    jnp = importlib.import_module(mod_name + ".numpy")
    rng = np.random.default_rng(0)
    if suite == "transformer":
        forward, step = transformer.jax_like(jax, jnp, importlib.import_module(mod_name + ".nn"))
        params = jax.tree.map(jnp.asarray, transformer.init(rng))
        shape = (transformer.BATCH, transformer.SEQ, transformer.D)
        x, y = (jnp.asarray(rng.normal(size=shape).astype(np.float32)) for _ in range(2))
        return ({"forward": (lambda: forward(params, x).block_until_ready(), 5),
                 "train step": (lambda: jax.block_until_ready(step(params, x, y)), 3)},
                {"forward": (forward, (params, x)), "train step": (step, (params, x, y))})
    a, b = (jnp.asarray(rng.normal(size=1_000_000).astype(np.float32)) for _ in range(2))
    xp = np.sort(rng.normal(size=1000)).astype(np.float32)
    fp = rng.normal(size=1000).astype(np.float32)
    interp = jax.jit(lambda a: jnp.interp(a, xp, fp))
    hist = jax.jit(lambda a, b: jnp.histogram2d(a, b, bins=32)[0])
    minmax = jax.jit(lambda a: (jnp.min(a), jnp.max(a)))
    work = {"interp 1e6 on 1000": (lambda: interp(a).block_until_ready(), 5),
            "histogram2d 1e6, 32x32": (lambda: hist(a, b).block_until_ready(), 5),
            "min + max of 1e6": (lambda: jax.block_until_ready(minmax(a)), 5)}
    square = jnp.asarray(rng.normal(size=(1000, 1000)).astype(np.float32))
    for mode, kw in (("reflect", {"reflect_type": "odd"}), ("constant", {}), ("edge", {}),
                     ("symmetric", {}), ("wrap", {})):
        fn = jax.jit(lambda x, mode=mode, kw=kw: jnp.pad(x, 16, mode=mode, **kw))
        name = f"pad 1000^2 by 16 {mode}" + (" odd" if kw else "")
        work[name] = (lambda fn=fn: fn(square).block_until_ready(), 10)
    return work, {}


def burst(fn, n):
    walls, cpus = [], []
    for _ in range(n):
        c, t = time.process_time(), time.perf_counter()
        fn()
        walls.append((time.perf_counter() - t) * 1e3)
        cpus.append((time.process_time() - c) * 1e3)
    return walls, cpus


def warm(work):
    for fn, _ in work.values():
        for _ in range(3):
            fn()


def worker(suite):
    work, lowerable = workloads("jax", suite)
    warm(work)
    print("ready", flush=True)
    for line in sys.stdin:  # a workload name: one burst; "lower NAME": its module's text
        name = line.rstrip("\n")
        if name.startswith("lower "):
            fn, args = lowerable[name[len("lower "):]]
            print(json.dumps(fn.lower(*args).as_text()), flush=True)
        else:
            print(json.dumps(burst(*work[name])), flush=True)


def jax_module_workloads(jax_worker, lowerable, work):
    """JAX's module of each lowerable workload, compiled by pyjax's runtime (pyjax's XLA
    options), as bursts of ``work``'s length; results checked against pyjax's own."""
    import pyjax
    from pyjax._src import runtime
    from pyjax._src.runtime.compile_options import DEFAULT_OPTION_OVERRIDES
    out = {}
    for name, (fn, args) in lowerable.items():
        if name not in work:
            continue
        jax_worker.stdin.write(f"lower {name}\n")
        jax_worker.stdin.flush()
        text = json.loads(jax_worker.stdout.readline())
        flat = pyjax.tree.flatten(args)[0]
        want = pyjax.tree.flatten(fn(*args))[0]
        exe = runtime.get_client().compile(
            text, [(a.dtype, a.shape) for a in flat], [(a.dtype, a.shape) for a in want],
            env_option_overrides=DEFAULT_OPTION_OVERRIDES)
        bufs = [a._buf for a in flat]
        for got, w in zip(exe.execute(bufs), want):
            np.testing.assert_allclose(got.to_numpy(), np.asarray(w), rtol=1e-4, atol=1e-5)

        def run(exe=exe, bufs=bufs):
            for r in exe.execute(bufs):
                r.block_until_ready()
        out[name + ", JAX's module"] = (run, work[name][1])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", choices=["transformer", "numpy"], default="transformer")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--only", default="", help="keep workloads whose name contains this")
    parser.add_argument("--worker-jax", action="store_true")
    parser.add_argument("--jax-module", action="store_true",
                        help="also time JAX's module of each workload on pyjax's runtime")
    args = parser.parse_args()
    if IS_JAX_WORKER:
        worker(args.suite)
        return
    work, lowerable = workloads("pyjax", args.suite)
    work = {k: v for k, v in work.items() if args.only in k}
    warm(work)
    # the full builds of tiered programs land (runtime/tiered.py): on a loaded machine they
    # can take longer than any fixed pause, and the low tier runs ~1.3x slower
    from pyjax._src.runtime import tiered
    tiered.wait_for_upgrades(timeout=300)
    warm(work)
    if not os.path.exists(JAX_PYTHON):
        print(f"(JAX side skipped: {JAX_PYTHON} not found)")
        jax = None
    else:
        jax = subprocess.Popen([JAX_PYTHON, os.path.abspath(__file__), "--worker-jax", "--suite",
                                args.suite], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env=dict(os.environ, JAX_PLATFORMS="cpu"))
        if jax.stdout.readline().strip() != "ready":
            raise RuntimeError("the JAX worker did not start")
        if args.jax_module:
            swapped = jax_module_workloads(jax, lowerable, work)
            warm(swapped)
            work.update(swapped)
    sides = ["pyjax"] + (["jax"] if jax else [])
    got = {(s, name): ([], []) for s in sides for name in work}
    for r in range(args.rounds):
        for name, (fn, n) in work.items():
            for side in (sides if r % 2 == 0 else sides[::-1]):
                if side == "pyjax":
                    walls, cpus = burst(fn, n)
                else:
                    jax.stdin.write(name.removesuffix(", JAX's module") + "\n")
                    jax.stdin.flush()
                    walls, cpus = json.loads(jax.stdout.readline())
                got[(side, name)][0].extend(walls)
                got[(side, name)][1].extend(cpus)
    if jax:
        jax.stdin.close()
        jax.wait()
    print(f"{args.suite}: {args.rounds} interleaved rounds; ms per call: min / median wall, "
          "median CPU")
    for name in work:
        cells = {s: (min(got[(s, name)][0]), float(np.median(got[(s, name)][0])),
                     float(np.median(got[(s, name)][1]))) for s in sides}
        line = "  ".join(f"{s} {c[0]:8.2f} {c[1]:8.2f} {c[2]:8.2f}" for s, c in cells.items())
        if jax:
            p, j = cells["pyjax"], cells["jax"]
            line += f"   pyjax/jax {p[0] / j[0]:.2f} {p[1] / j[1]:.2f} {p[2] / j[2]:.2f}"
        print(f"{name:26s} {line}")


if __name__ == "__main__":
    main()
