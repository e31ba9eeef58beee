"""Timing helpers shared by the benchmark scripts (run from this folder's parent as
``python benchmarks/bench_x.py``; Python puts this folder on the path)."""
import statistics
import time


def per_call_us(fn, n=20000, repeat=5):
    """Best-of-``repeat`` mean time of one call, in microseconds, after a warm-up call."""
    fn()
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t) / n * 1e6)
    return min(best)


def ms(fn, repeat=10):
    """Median time of one call, in milliseconds, after a warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)
