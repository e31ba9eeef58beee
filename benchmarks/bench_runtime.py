"""Per-call overhead of the runtime layer (layer 0), in microseconds.

Run: python benchmarks/bench_runtime.py [--n 20000]

Reports the median over many calls (after warm-up), with numpy for scale. Results
are kept alive for 64 calls and then freed (as in real use): freeing a result that is
still being computed costs several microseconds more (see the "freed at once" row).
"""

import argparse
import collections
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


def batch_times_us(fn, n, batch=20):
    """Times of `n // batch` batches of `batch` calls of fn(), in us per call."""
    for _ in range(min(n // 10, 1000)):
        fn()
    times = []
    perf = time.perf_counter
    gc.disable()
    try:
        for _ in range(max(1, n // batch)):
            t0 = perf()
            for _ in range(batch):
                fn()
            times.append((perf() - t0) / batch * 1e6)
    finally:
        gc.enable()
    return times


def median_us(fn, n, batch=20):
    return float(np.median(batch_times_us(fn, n, batch)))


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

    # The floor: the PJRT calls alone, through the executable's prepared structs (those
    # pyjax uses: the build specialised to device 0, execute_device NULL).
    from ctypes import byref
    from pyjax._src.runtime import capi
    prepared = exe._new_pool_structs()  # keep all of it alive
    eargs, eref, argv, outv, _ = prepared
    argv[0] = argv[1] = x._ptr
    # The same program's portable build, told its device per call (execute_device set):
    # PJRT then re-reads the compile options on every call.
    portable = exe._new_execute_structs(1, 2, exe._portable_build())
    peargs, peref, pargv, poutv, _ = portable
    pargv[0] = pargv[1] = x._ptr
    peargs.execute_device = x.device._ptr
    destroy = capi.Buffer_Destroy_Args()
    destroy_ref = byref(destroy)
    api = client._api

    ring = collections.deque(maxlen=64)  # results are freed 64 calls later, when done

    def raw_execute_and_free():
        api.LoadedExecutable_Execute(eref)
        if len(ring) == ring.maxlen:
            destroy.buffer = ring.popleft()
            api.Buffer_Destroy(destroy_ref)
        ring.append(outv[0])

    def raw_execute_and_free_at_once():
        api.LoadedExecutable_Execute(eref)
        destroy.buffer = outv[0]
        api.Buffer_Destroy(destroy_ref)

    def raw_portable_execute_and_free_at_once():
        api.LoadedExecutable_Execute(peref)
        destroy.buffer = poutv[0]
        api.Buffer_Destroy(destroy_ref)

    h2d, h2d_ref, dims, ev, ev_ref = client._new_h2d_scratch()
    h2d.data = x_host.__array_interface__["data"][0]
    h2d.type, dims[0], h2d.num_dims, h2d.device = 11, 4, 1, x.device._ptr
    ring2 = collections.deque(maxlen=64)

    def raw_h2d_and_free():
        api.Client_BufferFromHostBuffer(h2d_ref)
        ev.event = h2d.done_with_host_buffer
        api.Event_Destroy(ev_ref)
        if len(ring2) == ring2.maxlen:
            destroy.buffer = ring2.popleft()
            api.Buffer_Destroy(destroy_ref)
        ring2.append(h2d.buffer)

    runner = exe.single_result_runner()

    def keep(fn):
        held = collections.deque(maxlen=64)
        return lambda: held.append(fn())

    rows = [
        ("PJRT floor: raw Execute + Buffer_Destroy", raw_execute_and_free),
        ("PJRT floor: ... result destroyed at once", raw_execute_and_free_at_once),
        ("PJRT floor: ... portable build + execute_device",
         raw_portable_execute_and_free_at_once),
        ("PJRT floor: raw BufferFromHostBuffer + 2 Destroys", raw_h2d_and_free),
        ("H2D f32[4] (buffer_from_pyval)", keep(lambda: client.buffer_from_pyval(x_host))),
        ("D2H f32[4] (to_numpy, ready buffer)", x.to_numpy),
        ("execute_unchecked add f32[4]", keep(lambda: exe.execute_unchecked(args))),
        ("execute (checked) add f32[4]", keep(lambda: exe.execute(args))),
        ("single_result_runner add f32[4] (the eager hot path)",
         keep(lambda: runner(x, x, x.device))),
        ("execute_unchecked, result freed at once (pending)",
         lambda: exe.execute_unchecked(args)),
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
          f"{len(client.devices)} device(s); us per call over {n} calls in 3 interleaved "
          "rounds: median and 10th percentile of 20-call batches")
    times = {name: [] for name, _ in rows}
    for _ in range(3):  # interleaved rounds, so a burst of machine noise hits all rows
        for name, fn in rows:
            reps = n // 3 if "MiB" not in name else max(60, n // 150)
            times[name] += batch_times_us(fn, reps)
    print(f"{'operation':52s} {'median':>8s} {'p10':>8s}")
    print("-" * 70)
    for name, _ in rows:
        t = times[name]
        print(f"{name:52s} {np.median(t):8.2f} {np.percentile(t, 10):8.2f}")


if __name__ == "__main__":
    main()
