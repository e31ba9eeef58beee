"""Host callbacks in SPMD programs (run by hand, 8 virtual CPU devices): a cached jitted
``pure_callback`` (the identity on the host, then ``+ x``) on f32[8,1024] split over 8 devices
on ``P('x')`` (Explicit axes), against the same call on one device. JAX 0.10.2 is timed side
by side in a subprocess (benchmarks/.jaxvenv (``sh benchmarks/setup_jax_side.sh``) or $JAX_PYTHON), the two sides
alternating round by round; the table gives min and median over rounds of each round's
best-of mean per call.

    python benchmarks/bench_spmd_callbacks.py [--rounds 5]
"""
import os
import sys

from timing import use_eight_cpu_devices  # noqa: E402

use_eight_cpu_devices()

import numpy as np  # noqa: E402
from timing import (IS_JAX_WORKER, interleaved_rounds, per_call_us, print_table,  # noqa: E402
                    worker_print)

ONE = "pure_callback + x, f32[8,1024], one device (us)"
EIGHT = "the same split on P('x') over 8 devices (us)"


def bench_library(jax):
    AxisType, NamedSharding = jax.sharding.AxisType, jax.sharding.NamedSharding
    P = jax.sharding.PartitionSpec
    value = np.arange(8 * 1024, dtype=np.float32).reshape(8, 1024)

    def f(a):
        y = jax.pure_callback(np.asarray, jax.ShapeDtypeStruct(a.shape, a.dtype), a)
        return y + a

    one = jax.jit(f)
    x1 = jax.device_put(value)
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
    x8 = jax.device_put(value, NamedSharding(mesh, P("x")))
    eight = jax.jit(f)
    np.testing.assert_array_equal(np.asarray(eight(x8)), 2 * value)
    return {ONE: per_call_us(lambda: one(x1).block_until_ready(), n=300),
            EIGHT: per_call_us(lambda: eight(x8).block_until_ready(), n=300)}


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    if IS_JAX_WORKER:
        import jax
        worker_print(bench_library(jax))
        return
    import pyjax
    results = interleaved_rounds(lambda: bench_library(pyjax), __file__, rounds)
    print(f"load: {os.getloadavg()}, rounds: {rounds}")
    print_table(results, label=f"({len(pyjax.devices())} devices)", width=48, cell=11)


if __name__ == "__main__":
    main()
