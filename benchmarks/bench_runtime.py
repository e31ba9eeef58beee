"""Per-call overhead of the runtime layer (layer 0), in microseconds.

Run: python benchmarks/bench_runtime.py [--n 20000]

Reports the median over many calls (after warm-up), with numpy for scale.
"""

import argparse
import gc
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pyjax._src.runtime import get_client  # noqa: E402

ADD = """module {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}"""


def median_us(fn, n, batch=20):
    """Median time per call of fn(), timing batches of `batch` calls."""
    for _ in range(min(n // 10, 2000)):
        fn()
    times = []
    perf = time.perf_counter
    gc.disable()
    try:
        for _ in range(max(1, n // batch)):
            t0 = perf()
            for _ in range(batch):
                fn()
            times.append((perf() - t0) / batch)
    finally:
        gc.enable()
    return float(np.median(times)) * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20000)
    n = parser.parse_args().n

    client = get_client()
    x_host = np.arange(4, dtype=np.float32)
    x = client.buffer_from_pyval(x_host)
    exe = client.compile(ADD, [(np.float32, (4,))] * 2, [(np.float32, (4,))])
    exe.execute([x, x])[0].block_until_ready()
    args = [x, x]
    big = np.ones(1 << 18, np.float32)  # 1 MiB
    xb = client.buffer_from_pyval(big)

    rows = [
        ("H2D f32[4] (buffer_from_pyval)", lambda: client.buffer_from_pyval(x_host)),
        ("D2H f32[4] (to_numpy, ready buffer)", x.to_numpy),
        ("execute_unchecked add f32[4] (dispatch + free)",
         lambda: exe.execute_unchecked(args)),
        ("execute (checked) add f32[4]", lambda: exe.execute(args)),
        ("execute_unchecked + to_numpy (fresh result)",
         lambda: exe.execute_unchecked(args)[0].to_numpy()),
        ("execute_unchecked + block_until_ready",
         lambda: exe.execute_unchecked(args)[0].block_until_ready()),
        ("H2D 1 MiB", lambda: client.buffer_from_pyval(big)),
        ("D2H 1 MiB", xb.to_numpy),
        ("numpy x + x f32[4] (reference)", lambda: np.add(x_host, x_host)),
        ("numpy copy f32[4] (reference)", x_host.copy),
    ]
    print(f"pyjax runtime, {client.platform} plugin {client.plugin_attributes}, "
          f"{len(client.devices)} device(s), median of {n} calls")
    print(f"{'operation':50s} {'us/call':>10s}")
    print("-" * 61)
    for name, fn in rows:
        reps = n if "MiB" not in name else max(200, n // 50)
        print(f"{name:50s} {median_us(fn, reps):10.2f}")


if __name__ == "__main__":
    main()
