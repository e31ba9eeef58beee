"""Host callbacks: the per-call cost of ``jax.debug.print`` of one scalar and of a
``pure_callback`` inside a jitted function, against the same function without them.
Printing goes to an in-memory stream. Run by hand: ``python benchmarks/bench_callbacks.py``.
JAX is timed beside pyjax when it is installed."""
import contextlib
import io

import numpy as np

from timing import per_call_us, print_table


def measure(jax, jnp):
    x = jnp.float32(1.5)
    plain = jax.jit(lambda v: v * 2 + 1)
    printing = jax.jit(lambda v: (jax.debug.print("v={}", v), v * 2 + 1)[1])
    host = jax.jit(lambda v: jax.pure_callback(lambda a: a * 2, jax.ShapeDtypeStruct((), np.float32), v) + 1)
    out = {}
    with contextlib.redirect_stdout(io.StringIO()):
        out["jit, no callback"] = per_call_us(lambda: plain(x).block_until_ready(), n=3000)
        out["jit with debug.print(scalar)"] = per_call_us(
            lambda: printing(x).block_until_ready(), n=3000)
        out["jit with pure_callback(scalar)"] = per_call_us(
            lambda: host(x).block_until_ready(), n=3000)
    return out


def main():
    import pyjax
    import pyjax.numpy as pjnp
    results = {"pyjax": measure(pyjax, pjnp)}
    try:
        import jax
        import jax.numpy as jjnp
        results["jax"] = measure(jax, jjnp)
    except ImportError:
        pass
    print_table(results, label="per call, µs")


if __name__ == "__main__":
    main()
