"""Foundation benchmarks (run by hand): per-op dispatch, cached jit calls, a large fused kernel,
first-call compile time and import time, side by side with NumPy (and JAX / PyTorch when
installed).

    python benchmarks/bench_foundation.py
"""
import os
import subprocess
import sys
import time

import numpy as np
from timing import ms, per_call_us, print_table


def import_time(module):
    """Best of 5 fresh interpreters, with bytecode caching on (as a user's Python has it; some
    sandboxes set PYTHONDONTWRITEBYTECODE, which makes every import compile from source)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = [float(subprocess.check_output([sys.executable, "-c", code], env=env).decode())
            for _ in range(6)][1:]  # the first run may write the bytecode cache
    return min(runs) * 1e3


def calculate(x):
    return x * x + x * 2.0


def pjrt_floor(x, y):
    """The PJRT calls of one eager ``x + y`` alone (Execute + Buffer_Destroy through the
    prepared structs pyjax uses), without any of pyjax's Python: the floor under the rows."""
    from ctypes import byref

    from pyjax._src.core.primitive import registry
    from pyjax._src.dispatch import eager as dispatch
    from pyjax._src.runtime import capi
    exe, _ = dispatch._cached_executable(registry["add"], {}, (x.aval, y.aval))
    eargs, eref, argv, outv, keep = exe._new_pool_structs()
    argv[0], argv[1] = x._buf._ptr, y._buf._ptr
    destroy = capi.Buffer_Destroy_Args()
    dref = byref(destroy)
    execute, destroy_fn = exe._api.LoadedExecutable_Execute, exe._api.Buffer_Destroy

    def raw():
        execute(eref)
        destroy.buffer = outv[0]
        destroy_fn(dref)
    return per_call_us(raw)


def bench_pyjax():
    import pyjax
    import pyjax.numpy as jnp
    r = {}
    x = jnp.ones(4, jnp.float32)
    r["eager x + 1.0 (us)"] = per_call_us(lambda: x + 1.0)
    r["eager x * y, two f32[4] (us)"] = per_call_us(lambda: x * x)
    r["eager jnp.sin(x) (us)"] = per_call_us(lambda: jnp.sin(x))
    f = pyjax.jit(lambda a: a + 1.0)
    r["cached jit call f32[4] (us)"] = per_call_us(lambda: f(x))
    r["PJRT floor: Execute + Buffer_Destroy f32[4] (us)"] = pjrt_floor(x, x)
    big = jnp.ones((5000, 5000))
    fast = pyjax.jit(calculate)
    t = time.perf_counter()
    fast(big).block_until_ready()
    r["first call calculate 5000^2: trace+compile+run (ms)"] = (time.perf_counter() - t) * 1e3
    r["jit calculate 5000^2 (ms)"] = ms(lambda: fast(big).block_until_ready())
    g = pyjax.jit(lambda a: jnp.tanh(a) * 3.0 + jnp.sin(a))
    t = time.perf_counter()
    g(x).block_until_ready()
    r["first call small fn: trace+compile (ms)"] = (time.perf_counter() - t) * 1e3
    r["import (ms)"] = import_time("pyjax")
    return r


def bench_numpy():
    r = {}
    x = np.ones(4, np.float32)
    r["eager x + 1.0 (us)"] = per_call_us(lambda: x + 1.0)
    r["eager x * y, two f32[4] (us)"] = per_call_us(lambda: x * x)
    r["eager jnp.sin(x) (us)"] = per_call_us(lambda: np.sin(x))
    big = np.ones((5000, 5000), np.float32)
    r["jit calculate 5000^2 (ms)"] = ms(lambda: calculate(big))
    r["import (ms)"] = import_time("numpy")
    return r


def bench_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    r = {}
    x = jnp.ones(4, jnp.float32)
    r["eager x + 1.0 (us)"] = per_call_us(lambda: (x + 1.0), n=5000)
    r["eager x * y, two f32[4] (us)"] = per_call_us(lambda: x * x, n=5000)
    r["eager jnp.sin(x) (us)"] = per_call_us(lambda: jnp.sin(x), n=5000)
    f = jax.jit(lambda a: a + 1.0)
    r["cached jit call f32[4] (us)"] = per_call_us(lambda: f(x), n=5000)
    big = jnp.ones((5000, 5000))
    fast = jax.jit(calculate)
    r["jit calculate 5000^2 (ms)"] = ms(lambda: fast(big).block_until_ready())
    r["import (ms)"] = import_time("jax")
    return r


def main():
    results = {"pyjax": bench_pyjax(), "numpy": bench_numpy()}
    jx = bench_jax()
    if jx:
        results["jax"] = jx
    print_table(results, width=55)


if __name__ == "__main__":
    main()
