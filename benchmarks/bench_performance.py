"""Compiled-program speed side by side with JAX (issue 19), run by hand:

    python benchmarks/bench_performance.py                  # all workloads, pyjax vs JAX
    python benchmarks/bench_performance.py --only sgd,rnn --rounds 9
    python benchmarks/bench_performance.py --side pyjax --side 'pyjax:xnn=pyjax{"xla_cpu_use_xnnpack": true}'
    python benchmarks/bench_performance.py --side pyjax --side 'B=pyjax@/tmp/plugins/b/lib.so'

Workloads (same code, inputs and seeds on every side; float32):

* ``sgd``: MLP 784-512-512-10, batch 128, one jitted step = ``grad(loss)`` + SGD update;
* ``sgd_donate``: the same step with ``donate_argnums=0`` (the parameters are donated);
* ``rnn``: ``lax.scan`` tanh RNN, 256 steps, hidden 256, batch 32, ``jit(grad(loss))``;
* ``fwd``: the jitted MLP forward at batch 32;
* ``dot_nt``: one jitted ``x @ w.T``, 128x512 @ (512x512)ᵀ (backprop's input-gradient dot);
* ``scan_dot_nt``: that dot on every trip of a 32-step ``lax.scan`` capturing ``w``;
* ``call``: a cached one-array ``jit`` call (``x + 1`` on 16 floats), µs per call, 200 calls
  dispatched back to back and then waited for.

Every side is a long-lived worker process (``--worker``) that builds and warms a workload once
and then times ``reps`` runs of it when asked. The driver interleaves the sides: each round asks
every side in turn (alternating which goes first) for the same workload, so a burst of load from
other processes on this shared 2-core machine hits both sides alike. Reported: median and min
wall time over all runs of all rounds, the median process CPU time per run (all threads), and
the first side's ratio to each other side. Trust the mins and the ratios more than the medians
when the machine is busy.

A side is ``NAME=LIB[@PLUGIN][{compiler options JSON}][;VAR=VALUE...]``: LIB is ``pyjax`` or
``jax`` (JAX runs with benchmarks/.jaxvenv's Python, skipped when that interpreter or its jax is
missing); PLUGIN sets ``PYJAX_PLUGIN_PATH`` for that worker; the JSON replaces pyjax's default
compile-option overrides (``runtime/compile_options.DEFAULT_OPTION_OVERRIDES``) in that worker,
to weigh one option at a time; each ``;VAR=VALUE`` sets an environment variable of that worker
(e.g. ``'host1=pyjax;OPENBLAS_NUM_THREADS=1'``, ``'t0=pyjax;PYJAX_TIERED_COMPILATION=0'``).
``--xla-flags`` sets ``XLA_FLAGS`` for every worker.

Hooks for more measurements: add ``setup_<name>(lib, np)`` returning a zero-argument callable
that runs one timed unit and waits for its result, and register it in ``WORKLOADS`` (with the
unit it reports). ``first_call_ms(side, name)`` starts a fresh worker and times the first call
of a workload there (trace + lower + compile + run): the first-call and training-loop
measurements of issue 19 (items 3 and 4) can be written on top of it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from timing import JAX_PYTHON  # noqa: E402

SIZES = [784, 512, 512, 10]
SGD_BATCH, FWD_BATCH, LR = 128, 32, 0.01
RNN_STEPS, RNN_HIDDEN, RNN_BATCH = 256, 256, 32
CALL_N = 200


# ---------------------------------------------------------------------------------------------
# Workloads: written once against a JAX-like module ``lib`` (pyjax or jax).

def _mlp_params(np, rng):
    return [(rng.normal(size=(m, n)).astype(np.float32) / np.float32(np.sqrt(m)),
             np.zeros(n, np.float32)) for m, n in zip(SIZES[:-1], SIZES[1:])]


def _mlp_logits(lib, params, x):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = lib.numpy.tanh(h)
    return h


def _mlp_loss(lib, params, x, y):
    jnp = lib.numpy
    h = _mlp_logits(lib, params, x)
    m = jnp.max(h, axis=1, keepdims=True)
    logz = jnp.log(jnp.sum(jnp.exp(h - m), axis=1, keepdims=True)) + m
    return -jnp.mean(jnp.sum(y * (h - logz), axis=1))


def _sgd_setup(lib, np, donate):
    rng = np.random.default_rng(0)
    params = _mlp_params(np, rng)
    x = rng.normal(size=(SGD_BATCH, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], size=SGD_BATCH)]

    def step(params, x, y):
        grads = lib.grad(lambda p: _mlp_loss(lib, p, x, y))(params)
        return lib.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)

    step = lib.jit(step, donate_argnums=(0,) if donate else ())
    state = [lib.device_put(params), lib.device_put(x), lib.device_put(y)]

    def run():
        state[0] = step(*state)
        lib.block_until_ready(state[0])
    return run


def setup_sgd(lib, np):
    return _sgd_setup(lib, np, donate=False)


def setup_sgd_donate(lib, np):
    return _sgd_setup(lib, np, donate=True)


def setup_rnn(lib, np):
    rng = np.random.default_rng(1)
    h = RNN_HIDDEN
    w = (rng.normal(size=(h, h)) / np.sqrt(h)).astype(np.float32)
    u = (rng.normal(size=(h, h)) / np.sqrt(h)).astype(np.float32)
    b = np.zeros(h, np.float32)
    xs = rng.normal(size=(RNN_STEPS, RNN_BATCH, h)).astype(np.float32)
    h0 = np.zeros((RNN_BATCH, h), np.float32)

    def loss(params, h0, xs):
        w, u, b = params

        def cell(carry, x):
            carry = lib.numpy.tanh(carry @ w + x @ u + b)
            return carry, carry
        last, hs = lib.lax.scan(cell, h0, xs)
        return lib.numpy.mean(hs * hs) + lib.numpy.mean(last)

    grad = lib.jit(lib.grad(loss))
    args = [lib.device_put((w, u, b)), lib.device_put(h0), lib.device_put(xs)]
    return lambda: lib.block_until_ready(grad(*args))


def setup_fwd(lib, np):
    rng = np.random.default_rng(2)
    params = lib.device_put(_mlp_params(np, rng))
    x = lib.device_put(rng.normal(size=(FWD_BATCH, SIZES[0])).astype(np.float32))
    fwd = lib.jit(lambda p, x: _mlp_logits(lib, p, x))
    return lambda: lib.block_until_ready(fwd(params, x))


def setup_call(lib, np):
    f = lib.jit(lambda x: x + 1)
    x = lib.device_put(np.arange(16, dtype=np.float32))

    def run():
        for _ in range(CALL_N):
            y = f(x)
        lib.block_until_ready(y)
    return run


def _nt_operands(np, steps=None):
    rng = np.random.default_rng(3)
    x_shape = (SGD_BATCH, 512) if steps is None else (steps, SGD_BATCH, 512)
    return (rng.normal(size=x_shape).astype(np.float32),
            (rng.normal(size=(512, 512)) / np.sqrt(512)).astype(np.float32))


def setup_dot_nt(lib, np):
    """The input-gradient dot of backprop, alone: 128x512 @ (512x512).T."""
    x, w = (lib.device_put(a) for a in _nt_operands(np))
    f = lib.jit(lambda x, w: x @ w.T)
    return lambda: lib.block_until_ready(f(x, w))


def setup_scan_dot_nt(lib, np):
    """The same dot on every trip of a 32-step scan whose body captures W (docs/performance.md,
    "Transposed right operands": pyjax hoists a physical transpose of W out of the loop)."""
    xs, w = (lib.device_put(a) for a in _nt_operands(np, steps=32))

    def f(xs, w):
        def body(c, x):
            return c + lib.numpy.tanh(x @ w.T), None
        return lib.lax.scan(body, lib.numpy.zeros((SGD_BATCH, 512), np.float32), xs)[0]
    f = lib.jit(f)
    return lambda: lib.block_until_ready(f(xs, w))


# ---- float sums (issues 15 and 19: folding row sums in halves, lax/reductions.py) ----------

def _sum_setup(lib, np, shape, axis, dtype="float32", fn="sum"):
    rng = np.random.default_rng(4)
    x = lib.numpy.asarray(rng.normal(size=shape).astype(np.float32)).astype(dtype)
    f = lib.jit(lambda x: getattr(lib.numpy, fn)(x, axis=axis))
    return lambda: lib.block_until_ready(f(x))


def setup_sum_row3(lib, np):
    return _sum_setup(lib, np, (8, 128, 256), -1)


def setup_sum_row4(lib, np):
    return _sum_setup(lib, np, (8, 4, 128, 128), -1)


def setup_sum_row4_bf16(lib, np):
    return _sum_setup(lib, np, (8, 4, 128, 128), -1, "bfloat16")


def setup_var_row3(lib, np):
    return _sum_setup(lib, np, (8, 128, 256), -1, fn="var")


def setup_sum_col(lib, np):
    return _sum_setup(lib, np, (128, 512), 0)


def setup_sum_col_small(lib, np):
    return _sum_setup(lib, np, (32, 256), 0)


def setup_sum_all(lib, np):
    return _sum_setup(lib, np, (1_000_000,), None)


def setup_sum_all_f16(lib, np):
    return _sum_setup(lib, np, (1_000_000,), None, "float16")


def setup_transformer_fwd(lib, np):
    return _transformer(lib, np)[0]


def setup_transformer_step(lib, np):
    return _transformer(lib, np)[1]


def _transformer(lib, np):
    import importlib
    import bench_nn_transformer as tr
    forward, step = tr.jax_like(lib, lib.numpy, importlib.import_module(lib.__name__ + ".nn"))
    rng = np.random.default_rng(0)
    params = lib.tree.map(lib.numpy.asarray, tr.init(rng))
    shape = (tr.BATCH, tr.SEQ, tr.D)
    x, y = (lib.numpy.asarray(rng.normal(size=shape).astype(np.float32)) for _ in range(2))
    return (lambda: lib.block_until_ready(forward(params, x)),
            lambda: lib.block_until_ready(step(params, x, y)))


def setup_maxpool(lib, np):
    """2x2 max-pool forward + backward (grad of the pooled sum) on 64x32x32x32 NHWC."""
    rng = np.random.default_rng(5)
    x = lib.device_put(rng.normal(size=(64, 32, 32, 32)).astype(np.float32))

    def pool_sum(x):
        pooled = lib.lax.reduce_window(x, -np.inf, lib.lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                       "VALID")
        return (pooled * pooled).sum()
    f = lib.jit(lib.value_and_grad(pool_sum))
    return lambda: lib.block_until_ready(f(x))


def _cummax_input(lib, np):
    rng = np.random.default_rng(6)
    return lib.device_put(rng.normal(size=(8, 4096)).astype(np.float32))


def setup_cummax(lib, np):
    """lax.cummax along the last axis of 8x4096 float32."""
    x = _cummax_input(lib, np)
    f = lib.jit(lambda x: lib.lax.cummax(x, axis=1))
    return lambda: lib.block_until_ready(f(x))


def setup_cummax_grad(lib, np):
    """Gradient of sum(cummax(x)**2) along the last axis of 8x4096 float32."""
    x = _cummax_input(lib, np)
    f = lib.jit(lib.grad(lambda x: (lib.lax.cummax(x, axis=1) ** 2).sum()))
    return lambda: lib.block_until_ready(f(x))


def _pool3(lib, x):
    return lib.lax.reduce_window(x, -float("inf"), lib.lax.max, (1, 3, 3, 1), (1, 1, 1, 1),
                                 "SAME")


def _pool3_input(lib, np):
    rng = np.random.default_rng(7)
    return lib.device_put(rng.normal(size=(8, 64, 64, 32)).astype(np.float32))


def setup_maxpool3(lib, np):
    """3x3 stride-1 'SAME' max pool of 8x64x64x32 NHWC float32, forward."""
    x = _pool3_input(lib, np)
    f = lib.jit(lambda x: _pool3(lib, x))
    return lambda: lib.block_until_ready(f(x))


def setup_maxpool3_grad(lib, np):
    """Gradient of sum(pool(x)**2) for that pool."""
    x = _pool3_input(lib, np)
    f = lib.jit(lib.grad(lambda x: (_pool3(lib, x) ** 2).sum()))
    return lambda: lib.block_until_ready(f(x))


# name -> (setup, unit, factor from seconds per run to the unit)
WORKLOADS = {
    "sgd": (setup_sgd, "ms", 1e3),
    "sgd_donate": (setup_sgd_donate, "ms", 1e3),
    "rnn": (setup_rnn, "ms", 1e3),
    "fwd": (setup_fwd, "ms", 1e3),
    "call": (setup_call, "us/call", 1e6 / CALL_N),
    "dot_nt": (setup_dot_nt, "ms", 1e3),
    "scan_dot_nt": (setup_scan_dot_nt, "ms", 1e3),
    "sum_row3": (setup_sum_row3, "ms", 1e3),
    "sum_row4": (setup_sum_row4, "ms", 1e3),
    "sum_row4_bf16": (setup_sum_row4_bf16, "ms", 1e3),
    "var_row3": (setup_var_row3, "ms", 1e3),
    "sum_col": (setup_sum_col, "ms", 1e3),
    "sum_col_small": (setup_sum_col_small, "ms", 1e3),
    "sum_all": (setup_sum_all, "ms", 1e3),
    "sum_all_f16": (setup_sum_all_f16, "ms", 1e3),
    "tr_fwd": (setup_transformer_fwd, "ms", 1e3),
    "tr_step": (setup_transformer_step, "ms", 1e3),
    "maxpool": (setup_maxpool, "ms", 1e3),
    "cummax": (setup_cummax, "ms", 1e3),
    "cummax_grad": (setup_cummax_grad, "ms", 1e3),
    "maxpool3": (setup_maxpool3, "ms", 1e3),
    "maxpool3_grad": (setup_maxpool3_grad, "ms", 1e3),
}
DESCRIPTIONS = {
    "sgd": "MLP SGD step 784-512-512-10 b128",
    "sgd_donate": "  same, params donated",
    "rnn": "scan tanh RNN 256x256 b32, jit(grad)",
    "fwd": "jitted MLP forward b32",
    "call": "cached one-array jit call",
    "dot_nt": "jitted dot 128x512 @ (512x512).T",
    "scan_dot_nt": "scan 32x of the same, W captured",
    "sum_row3": "sum last axis 8x128x256 f32",
    "sum_row4": "sum last axis 8x4x128x128 f32",
    "sum_row4_bf16": "  same, bfloat16",
    "var_row3": "var last axis 8x128x256 f32",
    "sum_col": "sum axis 0 of 128x512 f32",
    "sum_col_small": "sum axis 0 of 32x256 f32",
    "sum_all": "sum of 10^6 f32",
    "sum_all_f16": "sum of 10^6 f16",
    "tr_fwd": "transformer block forward",
    "tr_step": "transformer block SGD step",
    "maxpool": "2x2 max-pool fwd+bwd 64x32x32x32",
    "cummax": "cummax last axis 8x4096 f32",
    "cummax_grad": "  its gradient",
    "maxpool3": "3x3 s1 SAME max pool 8x64x64x32",
    "maxpool3_grad": "  its gradient",
}


# ---------------------------------------------------------------------------------------------
# Worker: one per side, commands on stdin, one JSON line per answer on stdout.

def worker(lib_name, compiler_options):
    import numpy as np
    if lib_name == "jax":
        import jax as lib
    else:
        # PYJAX_BENCH_ROOT: another checkout's pyjax (a "before" side, e.g.
        # 'before=pyjax;PYJAX_BENCH_ROOT=/tmp/old'); default: this checkout's
        sys.path.insert(0, os.environ.get("PYJAX_BENCH_ROOT") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), ".."))
        import pyjax as lib
        if compiler_options is not None:
            from pyjax._src.runtime import compile_options
            compile_options.DEFAULT_OPTION_OVERRIDES.clear()
            compile_options.DEFAULT_OPTION_OVERRIDES.update(json.loads(compiler_options))
    runs = {}
    out = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not break the protocol
    out.write(json.dumps({"ready": lib_name, "info": _info(lib_name, lib)}) + "\n")
    out.flush()
    for line in sys.stdin:
        cmd, name, reps = line.split()
        try:
            times = _run(runs, cmd, name, int(reps), lib, np)
        except Exception as e:  # reported beside the table: one option may not compile
            times = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        out.write(json.dumps(times) + "\n")
        out.flush()


def _run(runs, cmd, name, reps, lib, np):
    if cmd == "first":
        t, c = time.perf_counter(), time.process_time()
        runs[name] = WORKLOADS[name][0](lib, np)
        runs[name]()
        return [(time.perf_counter() - t, time.process_time() - c)]
    if name not in runs:
        run = WORKLOADS[name][0](lib, np)
        for _ in range(3):
            run()
        runs[name] = run
    times = []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        runs[name]()
        times.append((time.perf_counter() - t, time.process_time() - c))
    return times


def _info(lib_name, lib):
    if lib_name == "jax":
        return f"jax {lib.__version__}"
    from pyjax._src.runtime import compile_options, plugin
    api = plugin.load_plugin()
    return (f"pyjax, plugin {api.path} (PJRT {api.version[0]}.{api.version[1]}, "
            f"StableHLO {api.attributes.get('stablehlo_current_version')}), "
            f"options {compile_options.DEFAULT_OPTION_OVERRIDES}")


# ---------------------------------------------------------------------------------------------
# Driver.

class Side:
    def __init__(self, spec, xla_flags=None):
        self.spec = spec
        spec, *env_items = spec.split(";")
        name, _, rest = spec.partition("=") if "=" in spec.split("{")[0] else (spec, "", spec)
        options = None
        if "{" in rest:
            rest, options = rest[:rest.index("{")], rest[rest.index("{"):]
        lib, _, plugin_path = rest.partition("@")
        if lib not in ("pyjax", "jax"):
            raise SystemExit(f"side {spec!r}: the library must be pyjax or jax, got {lib!r}")
        self.name, self.lib, self.plugin, self.options = name, lib, plugin_path or None, options
        self.env = dict(os.environ)
        if xla_flags is not None:
            self.env["XLA_FLAGS"] = xla_flags
        if self.plugin:
            self.env["PYJAX_PLUGIN_PATH"] = self.plugin
        for item in env_items:
            var, eq, value = item.partition("=")
            if not eq:
                raise SystemExit(f"side {self.spec!r}: {item!r} is not VAR=VALUE")
            self.env[var] = value
        self.python = JAX_PYTHON if lib == "jax" else sys.executable
        self.proc = None

    def available(self):
        if self.lib != "jax":
            return True
        if not os.path.exists(self.python):
            return False
        return subprocess.run([self.python, "-c", "import jax"], capture_output=True,
                              timeout=120).returncode == 0

    def start(self):
        cmd = [self.python, os.path.abspath(__file__), "--worker", self.lib]
        if self.options:
            cmd += ["--compiler-options", self.options]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=self.env)
        hello = json.loads(self._readline())
        self.info = hello["info"]

    def _readline(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} ended (exit code {self.proc.wait()})")
        return line

    def ask(self, cmd, name, reps):
        self.proc.stdin.write(f"{cmd} {name} {reps}\n")
        self.proc.stdin.flush()
        return json.loads(self._readline())

    def stop(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
            self.proc = None


def first_call_ms(side, name):
    """The first call of workload ``name`` in a fresh worker of ``side`` (ms): build, trace,
    lower, compile and run once. Hook for issue 19's first-call measurements."""
    fresh = Side(side.spec)
    fresh.env = side.env
    fresh.start()
    try:
        got = fresh.ask("first", name, 1)
        return float("nan") if isinstance(got, dict) else got[0][0] * 1e3
    finally:
        fresh.stop()


def measure(sides, names, rounds, reps):
    """{side name: {workload: [(wall, cpu) per run, in the workload's unit]}}, interleaved.
    cpu is the worker's process CPU time (all its threads): less sensitive than wall time to
    other processes' load, but it counts the time XLA's worker threads spin waiting."""
    results = {s.name: {n: [] for n in names} for s in sides}
    for name in names:
        factor = WORKLOADS[name][2]
        for r in range(rounds):
            order = sides if r % 2 == 0 else sides[::-1]
            for side in order:
                got = side.ask("run", name, reps)
                if isinstance(got, dict):
                    print(f"{side.name} {name}: {got['error']}")
                    got = [(float("nan"), float("nan"))]
                results[side.name][name] += [(t * factor, c * factor) for t, c in got]
    return results


def report(sides, results, names):
    base = sides[0].name
    print()
    header = f"{'workload':38s}{'unit':>8s}"
    for s in sides:
        header += "".join(f"{s.name + ' ' + k:>12s}" for k in ("med", "min", "cpu"))
    for s in sides[1:]:
        header += f"{base + '/' + s.name + ' med,min,cpu':>24s}"
    print(header)
    for name in names:
        unit = WORKLOADS[name][1]
        row = f"{DESCRIPTIONS[name]:38s}{unit:>8s}"
        stats = {}
        for s in sides:
            wall = [w for w, _ in results[s.name][name] if w == w] or [float("nan")]
            cpu = [c for _, c in results[s.name][name] if c == c] or [float("nan")]
            stats[s.name] = (statistics.median(wall), min(wall), statistics.median(cpu))
            row += "".join(f"{v:12.3f}" for v in stats[s.name])
        for s in sides[1:]:
            ratios = [a / b for a, b in zip(stats[base], stats[s.name])]
            row += f"{', '.join(f'{r:.2f}' for r in ratios):>24s}"
        print(row)
    print(f"\nratios are {base}/other: below 1 means {base} is faster. med, min: wall time over "
          "all runs of all interleaved rounds; cpu: median process CPU time per run.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", choices=["pyjax", "jax"], help=argparse.SUPPRESS)
    parser.add_argument("--compiler-options", help=argparse.SUPPRESS)
    parser.add_argument("--side", action="append",
                        help="NAME=LIB[@PLUGIN][{options JSON}][;VAR=VALUE...] (default: "
                             "pyjax, then jax)")
    parser.add_argument("--only", help="comma-separated workloads: " + ",".join(WORKLOADS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=10, help="timed runs per side per round")
    parser.add_argument("--xla-flags", help="XLA_FLAGS for every worker")
    parser.add_argument("--first-call", action="store_true",
                        help="also time each workload's first call in fresh workers")
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.compiler_options)

    names = args.only.split(",") if args.only else list(WORKLOADS)
    for n in names:
        if n not in WORKLOADS:
            raise SystemExit(f"unknown workload {n!r}; known: {', '.join(WORKLOADS)}")
    sides = [Side(s, args.xla_flags) for s in (args.side or ["pyjax", "jax"])]
    kept = []
    for s in sides:
        if s.available():
            kept.append(s)
        else:
            print(f"skipping side {s.name}: {JAX_PYTHON} with jax is not available")
    sides = kept
    try:
        for s in sides:
            s.start()
            print(f"{s.name}: {s.info}")
        results = measure(sides, names, args.rounds, args.reps)
        report(sides, results, names)
        if args.first_call:
            print(f"\n{'first call (fresh worker, ms)':38s}" +
                  "".join(f"{s.name:>14s}" for s in sides))
            for name in names:
                print(f"{DESCRIPTIONS[name]:38s}" +
                      "".join(f"{first_call_ms(s, name):14.1f}" for s in sides))
    finally:
        for s in sides:
            s.stop()


if __name__ == "__main__":
    main()
