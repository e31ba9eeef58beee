"""Reruns the trial of issue 12 and prints its figures: bad-input cases tried, crashes,
hangs, silent wrong results, unclear messages, memory growth per 100k eager ops, threads x
ops.

* the guard's table (tests/guard/bad_input_cases.py: each case has an expected exception and
  message, or JAX's documented result);
* a fuzz of public functions x bad argument values, each bad value tried in each position:
  there the only demands are no crash, no hang, a Python exception of an ordinary kind
  (TypeError/ValueError/IndexError/OverflowError/RuntimeError/NotImplementedError...) whose
  message is not a raw compiler dump, and no result silently accepted for a negative or
  float shape;
* the thread workload (tests/guard/thread_workload.py) and the memory workload
  (tests/guard/memory_workload.py), each in a fresh interpreter.

Cases run in a child interpreter that reports one line per case; when the child dies the
case is counted as a crash and the next child resumes after it.

Run: python benchmarks/reliability_trial.py [--threads 16] [--ops 1000] [--eager 100000]
     [--compilations 1000] [--quick]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
GUARD = os.path.join(ROOT, "tests", "guard")
ENV = dict(os.environ, PYJAX_CPU_DEVICES="8",
           PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

# --- the fuzz: functions (with a placeholder per argument) x bad values ---------------------
FUNCS = [
    "jnp.zeros({0})", "jnp.ones({0}, {1})", "jnp.full({0}, {1})", "jnp.arange({0}, {1})",
    "jnp.linspace(0, 1, {0})", "jnp.eye({0}, {1})", "jnp.reshape(x, {0})",
    "jnp.transpose(x, {0})", "jnp.squeeze(x, {0})", "jnp.expand_dims(x, {0})",
    "jnp.concatenate([x, {0}])", "jnp.stack([x, {0}])", "jnp.split(x, {0})",
    "jnp.broadcast_to(x, {0})", "jnp.sum(x, axis={0})", "jnp.max({0}, axis={1})",
    "jnp.argmax({0}, axis={1})", "jnp.cumsum({0}, axis={1})", "jnp.sort({0}, axis={1})",
    "jnp.take(x, {0})", "x[{0}]", "x.at[{0}].set({1})", "jnp.dot(x, {0})", "x + {0}",
    "jnp.where({0}, x, {1})", "jnp.asarray({0}, dtype={1})",
    "lax.add(x, {0})", "lax.pad(x, {0}, {1})", "lax.reduce_precision(x, {0}, {1})",
    "lax.bitcast_convert_type({0}, {1})", "lax.convert_element_type({0}, {1})",
    "lax.integer_pow(x, {0})", "lax.slice(x, {0}, {1})", "lax.dynamic_slice(x, {0}, {1})",
    "lax.dot_general(x, {0}, {1})", "lax.full({0}, {1})", "lax.iota({0}, {1})",
    "jax.jit(lambda a: a, static_argnums={0})(x)", "jax.jit(lambda a: a, donate_argnums={0})(x)",
    "jax.grad(lambda a: a.sum(), argnums={0})(x)", "jax.vmap(lambda a: a, in_axes={0})(x)",
    "jax.vmap(lambda a: a, out_axes={0})(x)", "jax.device_put(x, {0})",
    "random.normal(key, {0})", "random.uniform(key, {0}, minval={1})",
    "random.randint(key, {0}, 0, {1})", "random.split(key, {0})", "random.fold_in(key, {0})",
    "random.choice(key, {0}, {1})", "random.permutation(key, {0})",
    "random.categorical(key, {0}, axis={1})", "random.gamma(key, {0}, {1})",
]
VALUES = ["-1", "2**62", "(2**31, 2**31)", "1.5", "'a'", "None", "()", "[[]]", "np.nan",
          "d", "s", "e", "1j", "True", "jnp.ones((2, 2))", "object", "(-3, 2)",
          "[(1, 2)]", "jnp.int32", "'cpu:1'", "-2**40", "((0,), (0,))"]
OK_EXCEPTIONS = ("TypeError", "ValueError", "IndexError", "OverflowError", "RuntimeError",
                 "NotImplementedError", "AxisError", "NegativeDimensionError",
                 "ZeroDivisionError", "DeletedBufferError", "ConcretizationTypeError",
                 "TracerIntegerConversionError", "TracerBoolConversionError",
                 "TracerArrayConversionError", "KeyError", "XlaRuntimeError")


# samplers at extreme parameters: must finish (no rejection loop spinning forever), no crash
EXTREMES = [
    # allocations that fit in int64 bytes but not in memory: RESOURCE_EXHAUSTED, not an abort
    'jnp.zeros((2**40,), jnp.int8).block_until_ready()',
    'jax.jit(lambda: jnp.ones((2**38,)))().block_until_ready()',
    'random.poisson(key, 1e30, (3,))',
    'random.poisson(key, np.inf, (3,))',
    'random.poisson(key, np.nan, (3,))',
    'random.poisson(key, 1e9, (3,))',
    'random.binomial(key, 1e30, 0.5, (3,))',
    'random.binomial(key, np.inf, 0.5, (3,))',
    'random.binomial(key, 1e9, 0.3, (3,))',
    'random.binomial(key, 10.0, np.nan, (3,))',
    'random.gamma(key, np.nan, (3,))',
    'random.gamma(key, 1e-30, (3,))',
    'random.gamma(key, 1e30, (3,))',
    'random.gamma(key, np.inf, (3,))',
    'random.beta(key, 1e-30, 1e-30, (3,))',
    'random.truncated_normal(key, 10.0, 11.0, (3,))',
    'random.truncated_normal(key, 50.0, 60.0, (3,))',
    'random.truncated_normal(key, np.nan, 1.0, (3,))',
    'random.dirichlet(key, jnp.array([1e-30, 1e-30]))',
    'random.geometric(key, 1e-30, (3,))',
    'random.t(key, 1e-30, (3,))',
    'random.chisquare(key, np.inf, (3,))',
    'random.loggamma(key, 1e-30, (3,))',
    'random.categorical(key, jnp.array([-np.inf, -np.inf]))',
    'random.categorical(key, jnp.array([np.nan, 1.0]))',
    'random.choice(key, 3, (2,), p=jnp.array([0.0, 0.0, 0.0]))',
    'random.choice(key, 3, (2,), replace=False, p=jnp.array([np.nan, 1.0, 1.0]))',
    'random.multivariate_normal(key, jnp.zeros(2), jnp.array([[1.0, 2.0], [2.0, 1.0]]))',
    'random.orthogonal(key, 0)',
    'random.permutation(key, 0)',
    'random.split(key, 0)',
    'random.randint(key, (3,), -2**31, 2**31 - 1)',
    'random.randint(key, (3,), 0, 2**40)',
    'random.uniform(key, (3,), minval=np.nan)',
    'random.normal(key, (3,), jnp.complex64)',
    'random.ball(key, 0)',
    'random.ball(key, 3, p=0.0)',
    'random.generalized_normal(key, 0.0, (3,))',
    'random.weibull_min(key, 0.0, 0.0, (3,))',
    'random.pareto(key, 0.0, (3,))',
    'random.wald(key, 0.0, (3,))',
    'random.triangular(key, 1.0, 0.0, 0.5, (3,))',
]


def fuzz_cases():
    out = []
    for f in FUNCS:
        n = f.count("{")
        for v in VALUES:
            for pos in range(n):
                args = ["1"] * n  # the other arguments harmless
                args[pos] = v
                out.append(f.format(*args))
    return out + EXTREMES


_CHILD = r"""
import json, re, sys, signal, faulthandler
sys.path.insert(0, GUARD)
from bad_input_cases import CASES, CRASH_PRONE, namespace, run_case
import numpy as np
start = int(sys.argv[1]); fuzz = json.loads(sys.stdin.read())
table = CASES + CRASH_PRONE
ns = namespace()
for k in range(start, len(table) + len(fuzz)):
    if k < len(table):
        problem = run_case(table[k], ns)
        kind = "ok" if problem is None else (
            "wrong" if problem.startswith("wrong result") else
            "accepted" if problem.startswith("no error") else
            "unclear" if "unclear" in problem or "raw compiler" in problem else "type")
        print(json.dumps([k, kind, table[k].expr, problem]), flush=True)
        continue
    expr = fuzz[k - len(table)]
    try:
        r = eval(expr, ns)
        np.asarray(r) if not callable(r) else None
        kind, detail = "ok", None
    except BaseException as e:
        msg = str(e)
        name = type(e).__name__
        if "error: " in msg and ("-:" in msg or "stablehlo" in msg.lower()):
            kind, detail = "unclear", f"raw compiler dump: {msg[:200]}"
        elif name not in OK:
            kind, detail = "unclear", f"{name}: {msg[:200]}"
        elif not msg.strip():
            kind, detail = "unclear", f"{name} with an empty message"
        else:
            kind, detail = "ok", None
    print(json.dumps([k, kind, expr, detail]), flush=True)
print("DONE", flush=True)
"""


def run_cases(fuzz, per_child_timeout):
    """Runs table + fuzz, restarting the child after a crash or hang."""
    from bad_input_cases import CASES, CRASH_PRONE  # noqa: F401 (counts)
    total = len(CASES) + len(CRASH_PRONE) + len(fuzz)
    results, crashes, hangs, start = {}, [], [], 0
    code = _CHILD.replace("GUARD", repr(GUARD)).replace("OK", repr(OK_EXCEPTIONS))
    while start < total:
        p = subprocess.Popen([sys.executable, "-c", code, str(start)], env=ENV, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        try:
            out, err = p.communicate(json.dumps(fuzz), timeout=per_child_timeout)
            hung = False
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            hung = True
        last = start - 1
        for line in out.splitlines():
            if line.startswith("["):
                k, kind, expr, detail = json.loads(line)
                results[k] = (kind, expr, detail)
                last = k
        if "DONE" in out:
            break
        bad_k = last + 1
        (hangs if hung else crashes).append((bad_k, p.returncode, err[-300:]))
        results[bad_k] = ("hang" if hung else "crash", f"case #{bad_k}", err[-300:])
        start = bad_k + 1
    return results, crashes, hangs


def run_json(script, *args, timeout=3600):
    r = subprocess.run([sys.executable, os.path.join(GUARD, script), *map(str, args)],
                       env=ENV, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
    if r.returncode or not lines:
        return {"crash": r.returncode, "stderr": r.stderr[-500:]}
    return json.loads(lines[-1][7:])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--ops", type=int, default=1000)
    p.add_argument("--eager", type=int, default=100_000)
    p.add_argument("--compilations", type=int, default=1000)
    p.add_argument("--quick", action="store_true", help="small thread/memory counts")
    a = p.parse_args()
    if a.quick:
        a.threads, a.ops, a.eager, a.compilations = 8, 300, 20_000, 100
    sys.path.insert(0, GUARD)
    fuzz = fuzz_cases()
    t = time.perf_counter()
    results, crashes, hangs = run_cases(fuzz, per_child_timeout=900)
    kinds = {}
    for kind, _, _ in results.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"bad-input cases tried: {len(results)} ({len(results) - len(fuzz)} table, "
          f"{len(fuzz)} fuzz) in {time.perf_counter() - t:.0f} s")
    print(f"  crashes: {len(crashes)}  hangs: {len(hangs)}  "
          f"silent wrong results: {kinds.get('wrong', 0)}  "
          f"bad input silently accepted: {kinds.get('accepted', 0)}  "
          f"unclear messages: {kinds.get('unclear', 0)}  "
          f"wrong exception type: {kinds.get('type', 0)}")
    for k in sorted(results):
        kind, expr, detail = results[k]
        if kind != "ok":
            print(f"  [{kind}] {expr}: {detail}")
    res = run_json("thread_workload.py", a.threads, a.ops)
    print(f"threads x ops: {a.threads} x {a.ops} on {res.get('devices')} devices: "
          f"{res.get('ops')} checked ops, {len(res.get('errors', []))} threads failed, "
          f"crash: {res.get('crash', 0)}, {res.get('seconds')} s {res.get('errors', '')}")
    res = run_json("memory_workload.py", a.eager, a.compilations)
    if "crash" in res:
        print("memory workload crashed:", res)
    else:
        print(f"leak: {res['eager_growth_mb_per_100k']:.2f} MB per 100k eager ops "
              f"({res['eager_ops']} ops, {res['eager_us_per_op']:.0f} us/op); "
              f"{res['compilations']} distinct compilations: +{res['compile_growth_mb']:.1f} MB")


if __name__ == "__main__":
    main()
