"""Mixed operations from many threads at once, every result checked exactly: eager
arithmetic, shared jitted functions, grad, vmap, device_put transfers between the CPU devices,
deletes, and reads of a shared array racing with its deletion (a read either returns the
right value or raises the deleted-array error).

Run by tests/guard/test_threads.py (in a subprocess: a crash must not take pytest with it)
and by benchmarks/stress_threads.py with larger counts. ``python thread_workload.py THREADS
OPS`` prints one line ``RESULT {json}``."""
import json
import os
import sys
import threading
import time

os.environ.setdefault("PYJAX_CPU_DEVICES", "8")

import numpy as np  # noqa: E402

import pyjax as jax  # noqa: E402
import pyjax.numpy as jnp  # noqa: E402
from pyjax._src.runtime.errors import DeletedBufferError  # noqa: E402

N = 64


@jax.jit
def _affine(a, b):
    return a * 3.0 + b


@jax.jit
def _sum_rows(a):
    return jnp.sum(a.reshape(8, N // 8), axis=1)


_grad = jax.grad(lambda a: jnp.sum(a * a))
_vmapped = jax.vmap(lambda r: r[::-1] + 1.0)


def _worker(k, n_ops, devices, shared, victims, all_stats, errors):
    stats = all_stats[k]  # one per thread: += on a shared dict would lose counts
    rng = np.random.default_rng(k)
    base = np.arange(N, dtype=np.float32)
    try:
        for op in range(n_ops):
            c = float(rng.integers(-8, 8))
            want = base + c
            kind = op % 9
            if kind == 0:  # eager arithmetic
                got = np.asarray(jnp.asarray(base) + c)
            elif kind == 1:  # shared jitted function, NumPy and pyjax operands
                got = (np.asarray(_affine(base, jnp.full(N, c))) - 2 * base)
            elif kind == 2:  # transfer to another device and compute there
                dev = devices[(k + op) % len(devices)]
                y = jax.device_put(jnp.asarray(base), dev) + c
                assert y.devices() == {dev}, (y.devices(), dev)
                got = np.asarray(y)
            elif kind == 3:  # a chain of transfers, deleting each source
                y = jnp.asarray(want)
                for step in range(3):
                    z = jax.device_put(y, devices[(k + op + step) % len(devices)])
                    if z is not y and z._buf is not y._buf:
                        y.delete()
                    y = z
                got = np.asarray(y)
            elif kind == 4:  # delete, then every use raises the deleted error
                y = jnp.asarray(base) + c
                got = np.asarray(y)
                y.delete()
                try:
                    np.asarray(y + 1)
                    raise AssertionError("a deleted array was usable")
                except DeletedBufferError:
                    stats["deleted_errors"] += 1
            elif kind == 5:  # grad (eager record/replay) and vmap
                got = np.asarray(_grad(jnp.asarray(want))) / 2
                rows = np.stack([base, want])
                v = np.asarray(_vmapped(rows))
                assert np.array_equal(v, rows[:, ::-1] + 1), "vmap"
            elif kind == 6:  # reads of one shared array from every thread
                got = np.asarray(shared + c)
                assert np.array_equal(np.asarray(_sum_rows(shared)),
                                      base.reshape(8, -1).sum(1)), "sum_rows"
            elif kind == 7:  # read a victim that some thread may be deleting right now
                i = int(rng.integers(len(victims)))
                try:
                    if op % 2:  # read its memory (not the cached host copy)
                        v = np.asarray(victims[i]._buf)
                    else:  # compute with it (the execution holds it) and on another device
                        v = np.asarray(jax.device_put(victims[i] * 1.0, devices[k % len(devices)]))
                    assert np.array_equal(v, base + i), "victim value"
                    stats["victim_reads"] += 1
                except DeletedBufferError:
                    stats["deleted_errors"] += 1
                got = want
            else:  # delete a victim (several threads may race to delete the same one)
                i = int(rng.integers(len(victims)))
                victims[i].delete()
                got = want
            if not np.array_equal(got, want):
                raise AssertionError(f"thread {k} op {op} kind {kind}: {got[:4]} != {want[:4]}")
            stats["ops"] += 1
    except BaseException as e:  # reported by the caller
        errors.append(f"thread {k}: {type(e).__name__}: {e}")


def run(threads=8, ops=300):
    devices = jax.devices()
    shared = jnp.arange(N, dtype=jnp.float32)
    victims = [jnp.arange(N, dtype=jnp.float32) + i for i in range(threads * ops // 9 + 1)]
    per_thread = [{"ops": 0, "deleted_errors": 0, "victim_reads": 0} for _ in range(threads)]
    errors = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: more interleavings
    t0 = time.perf_counter()
    ts = [threading.Thread(target=_worker, args=(k, ops, devices, shared, victims, per_thread,
                                                 errors)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    sys.setswitchinterval(old)
    stats = {key: sum(s[key] for s in per_thread) for key in per_thread[0]}
    return dict(stats, threads=threads, ops_per_thread=ops, devices=len(devices),
                errors=errors[:5], seconds=round(time.perf_counter() - t0, 2))


if __name__ == "__main__":
    threads, ops = (int(a) for a in sys.argv[1:3])
    print("RESULT", json.dumps(run(threads, ops)), flush=True)
